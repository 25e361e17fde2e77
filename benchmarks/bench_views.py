"""The explorer's table on a million frames, in real JupyterLab and Chromium: medians.

Usage::

    python benchmarks/bench_views.py                  # 1,000,000 frames (the issue's size)
    python benchmarks/bench_views.py --frames 100000  # a quicker run

The capture is a tap JSONL made by ``gen_capture.py`` under ``benchmarks/out/views/``
(git-ignored, reused when present). A JupyterLab on 127.0.0.1 opens a notebook whose first
cell loads the capture (and builds frames, pairs and violations: not timed here, see
``bench_load.py``); then, each time in the browser, with ``performance.now()``:

- ``first_paint``: from running ``ex = explore(t); ex`` until the table shows rows and the
  timeline has drawn its first view (Python builds the views, the widgets render);
- ``all_ready``: the same start until the parts left for after the first paint (latency
  percentiles, histograms: "computing…" until then) are on the page;
- ``first_payload``: the bytes of the widget messages (``comm_open`` and ``comm_msg``, JSON
  and binary buffers) the page received from the cell's start until its first paint, counted
  in the page on the kernel connection, without the widgets' own code (``_esm``/``_css``,
  ``first_code_bytes``) and the ipywidgets layout and style models (``first_layout_bytes``),
  which are counted apart; also the cell's display message (``display_bytes``: the static
  picture every widget carries) and, in Python, the size of every widget's state after the
  cell (``state_bytes``, everything included);
- ``inspector_open``: from running ``ins = inspect(t); ins`` until its table shows rows
  (issue 18, target 5);
- ``sort``: a click on a heading until the first row is the new first row;
- ``search``: Enter in the filter box until the count line gives the new count;
- ``scroll``: moving the table far away until every row on screen has arrived from Python;
- ``select``: a click on a row until the detail pane shows that frame;
- ``key``: ↓ until the next row is marked selected.

Targets: first paint ≤ 1.5 s, sort ≤ 1 s, search ≤ 1.5 s, round trips ≤ 200 ms (issue 20);
the inspector open in ≤ 0.5 s, the explorer's first payload under 100 KB (issue 18).
Results go to ``benchmarks/out/views/results.json`` and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out" / "views"
CHROMIUM = "/usr/bin/chromium"
TARGETS_MS = {"first_paint": 1500, "sort": 1000, "search": 1500, "scroll": 200, "select": 200,
              "key": 200, "inspector_open": 500}
TARGET_PAYLOAD_BYTES = 100_000
#: counts the kernel messages the page receives (installed once per page)
LISTEN = """() => { if (window.__mnListen) return; window.__mnListen = true; window.__msgs = [];
  const enc = new TextEncoder();
  const hook = () => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    k.anyMessage.connect((_, a) => { if (a.direction !== 'recv') return; const m = a.msg;
      let n = enc.encode(JSON.stringify([m.header, m.parent_header, m.metadata, m.content])).length;
      for (const b of (m.buffers || [])) n += b.byteLength;
      let type = m.header.msg_type;
      const st = (m.content.data || {}).state || {};
      if (type === 'comm_open') {  // a widget's state: its code, the framework's, or data
        const code = enc.encode((st._esm || '') + (st._css || '')).length;
        if (code) window.__msgs.push([performance.now(), 'widget_code', code]);
        n -= code;
        if (/Layout|Style/.test(st._model_name || '')) type = 'layout_style';
      }
      window.__msgs.push([performance.now(), type, n]); }); };
  hook(); }"""
PAYLOAD = """(t1) => { const by = {}; for (const [t, type, n] of window.__msgs) {
  if (t < window.__t0 || t > t1) continue; by[type] = (by[type] || 0) + n; } return by; }"""
STATE_BYTES = """import json as _j
from ipywidgets import Widget as _W
def _tree(w, seen):
    if id(w) in seen or not isinstance(w, _W): return
    seen[id(w)] = w
    for name in w.keys:
        v = getattr(w, name, None)
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            _tree(x, seen)
_seen = {}
_tree(ex, _seen)
_n = 0
for _w in _seen.values():
    _st, _bp, _bufs = __import__('ipywidgets').widgets.widget._remove_buffers(_w.get_state())
    _n += len(_j.dumps(_st, separators=(',', ':'))) + sum(len(b) for b in _bufs)
print(_n, len(_seen))"""

RUN_CELL = """async (i) => { const app = window.jupyterapp; const panel = app.shell.currentWidget;
  panel.content.activeCellIndex = i; await app.commands.execute('notebook:run-cell'); }"""
KERNEL_EXEC = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const fut = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '';
  fut.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text;
    if (msg.header.msg_type === 'error') out += 'ERROR ' + msg.content.evalue; };
  await fut.done; return out; }"""
READY = """() => { const app = window.jupyterapp; return app && app.shell.currentWidget &&
  app.shell.currentWidget.sessionContext && app.shell.currentWidget.sessionContext.session &&
  app.shell.currentWidget.sessionContext.session.kernel &&
  app.shell.currentWidget.sessionContext.session.kernel.status === 'idle'; }"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def capture(frames: int) -> Path:
    path = OUT / f"c{frames}.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(HERE / "gen_capture.py"), "--frames", str(frames),
                        "--format", "tap", "--out", str(path)], check=True)
    return path


def notebook(root: Path, name: str) -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(
        f"import mcp_notebook as mn\nfrom mcp_notebook.widgets import explore\n"
        f"t = mn.load({name!r})\n_ = (t.frames, t.pairs, t.violations)\nprint('loaded')"),
        nbformat.v4.new_code_cell("ex = explore(t)\nex"),
        nbformat.v4.new_code_cell("from mcp_notebook.widgets import inspect\nins = inspect(t)\nins")]
    nbformat.write(nb, root / "bench_views.ipynb")
    return "bench_views.ipynb"


def lab(root: Path, state: Path) -> tuple[subprocess.Popen, str, str]:
    port, token = _port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               JUPYTER_CONFIG_DIR=str(state / "config"), IPYTHONDIR=str(state / "ipython"),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=None", "--ServerApp.terminals_enabled=False",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           f"--LabApp.workspaces_dir={state / 'ws'}"]
    log = open(state / "lab.log", "w")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return proc, base, token
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((state / "lab.log").read_text()) from None
            time.sleep(0.3)


def kernel_exec(page, code: str) -> str:
    return page.evaluate(KERNEL_EXEC, code)


def timed(page, start_js: str, done_js: str, arg=None, timeout: float = 120_000) -> float:
    """ms from running ``start_js`` in the page until ``done_js`` is true (both in-page)."""
    page.evaluate("(a) => { window.__arg = a; }", arg)
    page.evaluate(f"async () => {{ window.__t0 = performance.now(); {start_js} }}")
    try:
        page.wait_for_function(done_js, arg=arg, timeout=timeout, polling="raf")
    except Exception:
        page.screenshot(path=str(OUT / "timeout.png"))
        print("timed out waiting for", done_js, page.evaluate(
            "() => [document.querySelectorAll('.mnf-tr').length, "
            "document.querySelectorAll('.mnf-tr[data-seq]').length, "
            "(document.querySelector('.mnt-canvas') || {}).mntBoxes?.length]"), file=sys.stderr)
        raise
    return page.evaluate("performance.now() - window.__t0")


def run(frames: int, repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    path = capture(frames)
    root = OUT / "root"
    state = OUT / "state"
    for d in (root, state):
        d.mkdir(parents=True, exist_ok=True)
    link = root / path.name
    if not link.exists():
        os.link(path, link)
    rel = notebook(root, path.name)
    proc, base, token = lab(root, state)
    res: dict[str, list[float]] = {k: [] for k in [
        *TARGETS_MS, "all_ready", "first_payload", "first_code_bytes", "first_layout_bytes",
        "display_bytes", "state_bytes", "widgets"]}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(
                ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else r.abort())
            page.goto(f"{base}/lab/tree/{rel}?token={token}&reset")
            page.wait_for_function(READY, timeout=120_000, polling=500)
            page.evaluate(RUN_CELL, 0)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                ".some(o => o.textContent.includes('loaded'))", timeout=900_000, polling=1000)
            page.evaluate(LISTEN)
            for _ in range(repeats):
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'notebook:clear-all-cell-outputs')")
                page.wait_for_function(READY, timeout=60_000)
                res["first_paint"].append(timed(
                    page, "await (async () => { const app = window.jupyterapp; "
                          "app.shell.currentWidget.content.activeCellIndex = 1; "
                          "app.commands.execute('notebook:run-cell'); })();",
                    "() => document.querySelector('.mn-inspector .mnf-tr[data-seq]') && "
                    "(document.querySelector('.mn-explorer .mnt')?.dataset.views || 0) > 0"))
                t1 = page.evaluate("performance.now()")
                page.wait_for_function(
                    "() => document.querySelector('.mn-explorer:not(.mn-computing)') && "
                    "!document.querySelector('.mn-explorer .mn-pending, .mn-explorer "
                    ".mnh-pending')", timeout=120_000, polling="raf")
                res["all_ready"].append(page.evaluate("performance.now() - window.__t0"))
                by = page.evaluate(PAYLOAD, t1)
                # the trace's data in the widgets' state; the widgets' code and the
                # ipywidgets layout/style models travel with it, counted apart
                res["first_payload"].append(by.get("comm_open", 0) + by.get("comm_msg", 0))
                res["first_code_bytes"].append(by.get("widget_code", 0))
                res["first_layout_bytes"].append(by.get("layout_style", 0))
                res["display_bytes"].append(by.get("execute_result", 0)
                                            + by.get("display_data", 0))
                page.wait_for_function(READY, timeout=60_000)
                n_bytes, n_widgets = kernel_exec(page, STATE_BYTES).split()
                res["state_bytes"].append(int(n_bytes))
                res["widgets"].append(int(n_widgets))
            ins = ".mn-inspector"
            page.wait_for_function(READY, timeout=60_000)
            for key in ["latency", "size", "method", "latency", "session"][:repeats]:
                before = page.evaluate(f"document.querySelector('{ins} .mnf-note').textContent")
                res["sort"].append(timed(
                    page, f"document.querySelector('{ins} .mnf-th[data-key=\"{key}\"]').click();",
                    f"(b) => document.querySelector('{ins} .mnf-note').textContent !== b && "
                    f"!document.querySelector('{ins} .mnf-wait')", before))
            words = ["weather", "Tokyo", "résumé", "error", "zzz-no-such"]
            box = page.locator(f"{ins} input[type='text']").first
            for w in words[:repeats]:
                box.fill(w)
                page.evaluate("() => { window.__t0 = performance.now(); }")
                box.press("Enter")  # the Text widget submits on a real Enter only
                page.wait_for_function(
                    "(w) => { const e = document.querySelector('.mn-inspector .mn-split .mnw');"
                    " return e && e.textContent.includes(' frames') && "
                    "!e.textContent.includes('searching') && e.innerHTML.includes(w); }",
                    arg=w, timeout=120_000, polling="raf")
                res["search"].append(page.evaluate("performance.now() - window.__t0"))
            box.fill("")
            box.press("Enter")
            page.wait_for_function(READY, timeout=60_000)
            total = int(kernel_exec(page, "print(ex.inspector._grid.total)").strip())
            for k in range(repeats * 2):
                y = int((k + 1) / (repeats * 2 + 1) * total) * 22
                res["scroll"].append(timed(
                    page, f"const s = document.querySelector('{ins} .mnf-scroll'); "
                          f"s.scrollTop = {y}; s.dispatchEvent(new Event('scroll'));",
                    f"() => !document.querySelector('{ins} .mnf-wait') && "
                    f"document.querySelector('{ins} .mnf-tr[data-seq]')"))
                row = page.locator(f"{ins} .mnf-tr[data-seq]").nth(3)
                seq = row.get_attribute("data-seq")
                res["select"].append(timed(
                    page, f"document.querySelector('{ins} .mnf-tr[data-seq=\"{seq}\"]').click();",
                    f"(s) => [...document.querySelectorAll('{ins} .mn-detail .mnw-h')].some("
                    "e => e.textContent.includes('#' + s + ' '))", seq))
                nxt = page.locator(f"{ins} .mnf-tr[data-seq]").nth(4).get_attribute("data-seq")
                res["key"].append(timed(
                    page, f"document.querySelector('{ins} .mnf').dispatchEvent(new KeyboardEvent("
                          "'keydown', {key: 'ArrowDown', bubbles: true}));",
                    f"(s) => document.querySelector('{ins} .mnf-tr.mnf-sel')?.dataset.seq === s",
                    nxt))
            # issue 18 target 5: the inspector alone, on the same trace
            for _ in range(repeats):
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'notebook:clear-all-cell-outputs')")
                page.wait_for_function(READY, timeout=60_000)
                res["inspector_open"].append(timed(
                    page, "await (async () => { const app = window.jupyterapp; "
                          "app.shell.currentWidget.content.activeCellIndex = 2; "
                          "app.commands.execute('notebook:run-cell'); })();",
                    "() => document.querySelector('.mn-inspector .mnf-tr[data-seq]')"))
                page.wait_for_function(READY, timeout=60_000)
            res["inspector_python"] = [float(kernel_exec(
                page, "import time as _t; _a = _t.perf_counter(); inspect(t); "
                      "print(1000 * (_t.perf_counter() - _a))")) for _ in range(3)]
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    out = {"frames": frames, "repeats": repeats, "median": {
        k: round(statistics.median(v), 1) for k, v in res.items() if v},
        "all": {k: [round(x, 1) for x in v] for k, v in res.items()},
        "targets_ms": TARGETS_MS, "load_avg": os.getloadavg()}
    out["met"] = {k: out["median"].get(k, float("inf")) <= t for k, t in TARGETS_MS.items()}
    out["met"]["first_payload"] = max(res["first_payload"] or [float("inf")]) < \
        TARGET_PAYLOAD_BYTES
    out["target_payload_bytes"] = TARGET_PAYLOAD_BYTES
    (OUT / "results.json").write_text(json.dumps(out, indent=2))
    # the record `make bench` reports beside its own (issue 18, target 5)
    (HERE / "results-views.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    print(json.dumps(run(a.frames, a.repeats), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
