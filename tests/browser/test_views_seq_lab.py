"""The sequence diagram and the many-session timeline in real JupyterLab and Notebook 7, light
and dark (the static pictures of an nbconvert export opened offline, once in this module,
are in ``test_static_pictures.py``, on the same sample with the inspector too).

Screenshots go to ``tests/artifacts/views-seq/``.
"""

from __future__ import annotations

import json
import re

import pytest
from labhelpers import (
    kernel_exec,
    run_cells,
    set_theme,
    wait_kernel_output,
)

import mcp_notebook as mn

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # the tests skip without Chromium; collection must not fail
    PlaywrightTimeout = TimeoutError

pytestmark = pytest.mark.browser

# WCAG 2.x contrast of the computed colours of two selectors (alpha composed over the
# background's own background, up the tree until an opaque one)
CONTRAST = """([fgSel, bgSel, prop]) => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return m.length > 3 ? m : [...m, 1]; };
  const solid = (el) => { let cs = []; for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor); cs.push(c); if (c[3] >= 1) break; }
    let out = [255, 255, 255];
    for (const c of cs.reverse()) out = out.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return out; };
  const lum = (rgb) => { const [r, g, b] = rgb.map((v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const fe = document.querySelector(fgSel), be = document.querySelector(bgSel);
  const bg = prop === "fill" ? parse(getComputedStyle(be).fill).slice(0, 3) : solid(be);
  const f = parse(getComputedStyle(fe)[prop || "color"]);
  const fg = bg.map((v, i) => v * (1 - f[3]) + f[i] * f[3]);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05); }"""

SEQ = """import mcp_notebook as mn
t = mn.load({path!r})
d = mn.sequence(t)
d"""


def many_sessions(path, n: int = 12) -> None:
    """A tap capture of ``n`` sessions, each: initialize, a log notification, a ping."""
    lines, t = [], 1_750_000_000.0
    for k in range(n):
        t0 = t + k * 0.3
        msgs = [(0.0, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
                (0.01, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"}}}),
                (0.05, "s2c", {"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": "hi"}}),
                (0.1, "c2s", {"jsonrpc": "2.0", "id": 2, "method": "ping"}),
                (0.2 + 0.1 * k, "s2c", {"jsonrpc": "2.0", "id": 2, "result": {}})]
        for dt, d, m in msgs:
            lines.append(json.dumps({"ts": t0 + dt, "dir": d, "raw": json.dumps(m),
                                     "session": f"session-{k:02d}"}))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def shots(artifacts):
    out = artifacts / "views-seq"
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_sequence_click_selects_and_links_the_pair(lab_page, shots):
    page = lab_page  # the module's Lab page and kernel; the diagram is this test's own
    path = mn.sample_path("everything-stdio-progress-cancel")
    run_cells(page, [SEQ.format(path=str(path))])
    page.locator(".mns svg .mns-msg").first.wait_for(state="visible", timeout=60_000)
    n_arrows = page.locator(".mns svg .mns-msg line").count()
    want = kernel_exec(page, "print(sum(m.direction is not None for m in d.rows))").strip()
    assert str(n_arrows) == want
    req = page.locator('.mns svg .mns-request[data-pair]').nth(2)
    seq, pair = req.get_attribute("data-seq"), req.get_attribute("data-pair")
    req.locator("line").click(force=True)
    assert wait_kernel_output(page, "print(d.selected_seq)", seq) == seq
    page.locator(f'.mns svg .mns-msg.mns-pair[data-seq="{pair}"]').wait_for(timeout=10_000)
    assert f"pair #{pair}" in page.locator(".mns-status").inner_text()
    # the cancel arrow names its request; its native tooltip says which
    cancel = page.locator(".mns svg .mns-cancel")
    assert cancel.count() == 1 and cancel.get_attribute("data-target")
    page.screenshot(path=str(shots / "sequence-lab.png"), full_page=True)
    assert page.external_requests == [] and page.console_errors == []


def test_timeline_of_many_sessions(lab_page, lab_server, shots):
    page = lab_page  # the module's Lab page and kernel; the views are this test's own
    many_sessions(lab_server["root"] / "many.tap.jsonl")
    cells = ["import mcp_notebook as mn\nt = mn.load('many.tap.jsonl')\ntl = mn.timeline(t)\ntl",
             "mn.sequence(t, max_messages=12)",
             "print('\\n'.join(f'line {i}' for i in range(150)))"]
    run_cells(page, cells)
    canvas = page.locator(".mnt-canvas")
    canvas.wait_for(state="visible", timeout=60_000)
    page.wait_for_function("() => (document.querySelector('.mnt-canvas').mntBoxes || []).length > 0",
                           timeout=30_000)
    assert kernel_exec(page, "print(len(tl.view['lanes']), len(tl.collapsed))").split() == ["12", "12"]
    assert "sessions: 12 of 12" in page.locator(".mnt-picker summary").inner_text()
    page.screenshot(path=str(shots / "timeline-collapsed-lab.png"))

    # the plain wheel scrolls the notebook and leaves the window alone (from the top, with
    # room below: where Lab left the scroll after the run depends on the page's history)
    scroller = ".jp-WindowedPanel-outer"
    page.evaluate(f"document.querySelector('{scroller}').scrollTop = 0")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    before_win = kernel_exec(page, "print(tl.window)").strip()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 60)
    top0 = page.evaluate(f"document.querySelector('{scroller}').scrollTop")
    page.mouse.wheel(0, 400)
    try:
        page.wait_for_function(f"(y) => document.querySelector('{scroller}').scrollTop > y",
                               arg=top0, timeout=5_000)
    except PlaywrightTimeout:
        pass  # the assertion below says the page did not scroll
    page.wait_for_timeout(150)  # longer than the timeline's 60 ms push of its window
    top1 = page.evaluate(f"document.querySelector('{scroller}').scrollTop")
    assert top1 > top0
    assert kernel_exec(page, "print(tl.window)").strip() == before_win
    page.evaluate(f"document.querySelector('{scroller}').scrollTop = {top0}")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")

    # Ctrl+wheel zooms; the tooltip shown before is gone after
    box = canvas.bounding_box()
    hit = page.evaluate("""() => { const c = document.querySelector('.mnt-canvas'),
        r = c.getBoundingClientRect(), b = c.mntBoxes.find(b => b[0] === 'tick');
        return [r.left + b[2] + b[4] / 2, r.top + b[3] + b[5] / 2]; }""")
    page.mouse.move(hit[0], hit[1])
    page.locator(".mnt-tip").wait_for(state="visible", timeout=5_000)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -500)
    page.keyboard.up("Control")
    page.locator(".mnt-tip").wait_for(state="hidden", timeout=5_000)
    for _ in range(50):
        if kernel_exec(page, "print(tl.window)").strip() != before_win:
            break
        page.wait_for_timeout(100)
    lo, hi = json.loads(kernel_exec(page, "print(tl.window)"))
    lo0, hi0 = json.loads(before_win)
    assert hi - lo < (hi0 - lo0) * 0.8

    # a click on a session's label expands it; the picker hides one
    page.mouse.click(box["x"] + 40, box["y"] + 24 + 15)
    assert wait_kernel_output(page, "print(0 in tl.collapsed)", "False") == "False"
    page.locator(".mnt-picker summary").click()
    page.locator(".mnt-pick input").nth(3).uncheck()
    assert wait_kernel_output(page, "print(tl.hidden)", "[3]") == "[3]"
    assert "sessions: 11 of 12" in page.locator(".mnt-picker summary").inner_text()
    page.screenshot(path=str(shots / "timeline-picker-lab.png"))
    page.locator(".mnt-picker summary").click()

    # dark theme: the canvas takes JupyterLab's theme colours
    set_theme(page, "JupyterLab Dark")  # waits for the theme's stylesheet to be applied
    kernel_exec(page, "tl.collapsed = list(range(12))")
    page.wait_for_timeout(800)
    bg = page.evaluate("getComputedStyle(document.querySelector('.mnt')).backgroundColor")
    r, g, b = (int(v) for v in re.findall(r"\d+", bg)[:3])
    assert r + g + b < 200, bg  # a dark background, not a white box
    ratios = {what: page.evaluate(CONTRAST, sel) for what, sel in {
        "timeline text": [".mnt-title", ".mnt"],
        "selected lane mode": [".mnt-btn.mnt-on", ".mnt-btn.mnt-on"],
        "note": [".mnt-note", ".mnt"],
        "hint": [".mnt-hint", ".mnt"],
        "sequence labels": [".mns svg .mns-msg .mns-t", ".mns svg .mns-bg", "fill"],
        "sequence times": [".mns svg .mns-dim", ".mns svg .mns-bg", "fill"],
    }.items()}
    (shots / "contrast-dark.json").write_text(json.dumps(ratios, indent=1))
    low = {k: round(v, 2) for k, v in ratios.items() if v < 4.5}
    assert not low, f"below WCAG AA (4.5:1) in the dark theme: {low}"
    page.screenshot(path=str(shots / "timeline-dark-lab.png"))
    assert page.external_requests == [] and page.console_errors == []


def test_views_in_notebook7(notebook7_page, shots):
    page = notebook7_page  # the worker's Notebook 7 page and kernel; the cells are this test's
    path = mn.sample_path("broken-duplicate-response")
    run_cells(page, [SEQ.format(path=str(path)), "tl = mn.timeline(t)\ntl"])
    page.locator(".mns svg .mns-viol").first.wait_for(state="visible", timeout=60_000)
    page.locator(".mnt-canvas").wait_for(state="visible", timeout=60_000)
    marks = page.locator(".mns svg .mns-viol").count()
    assert str(marks) == kernel_exec(page, "print(t.violations['seq'].nunique())").strip()
    # hovering a violation marker on the timeline names its rule (it wins over the tick)
    page.locator(".mnt-canvas").scroll_into_view_if_needed()
    page.wait_for_function("() => (document.querySelector('.mnt-canvas').mntBoxes || [])"
                           ".some(b => b[0] === 'viol')", timeout=20_000)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tip = page.locator(".mnt-tip")
    for attempt in range(4):  # a late layout change of the notebook can move the canvas
        seq, x, y = page.evaluate("""() => { const c = document.querySelector('.mnt-canvas'),
            r = c.getBoundingClientRect(), b = c.mntBoxes.find(b => b[0] === 'viol');
            return [b[1], r.left + b[2] + b[4] / 2, r.top + b[3] + 2]; }""")
        page.mouse.move(x, y + 40)  # off the marker, then onto it
        page.mouse.move(x, y)
        try:
            tip.wait_for(state="visible", timeout=5_000)
            break
        except PlaywrightTimeout:
            if attempt == 3:
                raise
    rules = kernel_exec(page, f"print(*t.violations.query('seq == {seq}')['rule'])").split()
    assert rules and any(r in tip.inner_text() for r in rules), tip.inner_text()
    page.locator(".mnt").screenshot(path=str(shots / "timeline-marker-tooltip-nb7.png"))
    page.screenshot(path=str(shots / "notebook7.png"), full_page=True)
    # Notebook 7 logs two errors of its own on start ("reading 'schema'", a plugin
    # "already registered"); none may come from these views
    assert page.external_requests == []
    assert not [e for e in page.console_errors if re.search(r"mns|mnt|anywidget|sequence", e)]
