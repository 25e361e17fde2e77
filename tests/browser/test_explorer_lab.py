"""The explorer in a real JupyterLab: click a span, see it in Python and in the inspector;
a hostile capture renders as text and runs nothing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from labhelpers import (
    kernel_exec,
    run_cells,
    wait_kernel_output,
)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "widgets"
SETUP = """import mcp_notebook as mn
from mcp_notebook.widgets import explore
t = mn.load({name!r})
ex = explore(t)
ex"""


def real_trace() -> Path:
    """A capture the project recorded itself (``data/``), else the small tap fixture."""
    import mcp_notebook as mn

    preferred = [REPO / "data" / n for n in ("everything-stdio-progress-cancel.jsonl",
                                              "everything-stdio-basics.jsonl")]
    for path in [p for p in preferred if p.exists()] + sorted((REPO / "data").glob("*.jsonl")):
        try:
            t = mn.load(path)
        except Exception:  # noqa: BLE001 - not every file in data/ is a capture
            continue
        if 0 < len(t.frames) <= 5000 and t.pairs["response_seq"].notna().any():
            return path
    return FIXTURES / "sample.tap.jsonl"


def explorer_in_lab(page, lab, trace: Path):
    """The explorer of ``trace`` in the module's Lab notebook, drawn."""
    shutil.copyfile(trace, lab["root"] / trace.name)  # byte-exact copy
    run_cells(page, [SETUP.format(name=trace.name)])
    page.locator(".mn-explorer .mnt-canvas").wait_for(state="visible", timeout=60_000)
    page.wait_for_function(
        "() => (document.querySelector('.mnt-canvas').mntBoxes || []).length > 0",
        timeout=30_000)


def boxes(page) -> list:
    return page.evaluate("""() => {
      const c = document.querySelector('.mnt-canvas'), r = c.getBoundingClientRect();
      return c.mntBoxes.map(([kind, seq, x, y, w, h]) =>
        [kind, seq, r.left + x + w / 2, r.top + y + h / 2, w]); }""")


def click_widest_span(page) -> int:
    spans = [b for b in boxes(page) if b[0] == "span"]
    assert spans, "no request span drawn"
    _, seq, x, y, _w = max(spans, key=lambda b: b[4])
    page.mouse.click(x, y)
    return seq


def test_click_span_selects_frame_everywhere(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel; the explorer is this test's own
    page.set_viewport_size({"width": 1280, "height": 1500})
    explorer_in_lab(page, lab_server, real_trace())
    inspector = page.locator(".mn-explorer .mn-inspector")

    seq = click_widest_span(page)
    # the detail pane changes only after Python handled the click: wait for it, then ask
    inspector.get_by_text(f"request #{seq}", exact=False).first.wait_for(timeout=20_000)
    assert kernel_exec(page, "print(ex.selected_seq, ex.inspector.selected_seq)").split() == \
        [str(seq), str(seq)]
    pair, n_progress = kernel_exec(
        page, "r = ex.inspector._related; print(r.get('pair'), len(r.get('progress')))").split()
    if pair != "None":
        inspector.get_by_text(f"its response #{pair}", exact=False).first.wait_for(
            timeout=20_000)
    inspector.get_by_role("button", name=f"show progress ({n_progress})").wait_for(
        timeout=10_000)
    page.locator(".mnt-sel", has_text=f"selected frame #{seq}").wait_for(timeout=10_000)
    page.locator(f".mnf-tr.mnf-sel[data-seq='{seq}']").first.wait_for(timeout=10_000)

    # a row of the table selects the frame in Python and on the timeline
    row = page.locator(".mnf-tr[data-seq]").nth(1)
    row_seq = int(row.get_attribute("data-seq"))
    row.click()
    page.locator(".mnt-sel", has_text=f"selected frame #{row_seq}").wait_for(timeout=10_000)
    assert wait_kernel_output(page, "print(ex.selected_seq, ex.timeline.selected_seq)",
                              f"{row_seq} {row_seq}") == f"{row_seq} {row_seq}"

    # shift+drag brushes a range, which filters the table
    c = page.locator(".mnt-canvas").bounding_box()
    page.keyboard.down("Shift")
    page.mouse.move(c["x"] + 200, c["y"] + 40)
    page.mouse.down()
    page.mouse.move(c["x"] + 450, c["y"] + 40, steps=5)
    page.mouse.up()
    page.keyboard.up("Shift")
    brushed = re.compile(r"range [+−][0-9.]+ s … \+")
    page.locator(".mn-inspector", has_text=brushed).first.wait_for(timeout=10_000)
    assert wait_kernel_output(page, "print(type(ex.selected_range).__name__)", "tuple") == \
        "tuple"
    assert "Timestamp" in kernel_exec(page, "print(repr(ex.selected_range))")

    page.mouse.move(5, 5)  # no tooltip in the picture
    page.locator(".mn-explorer").screenshot(path=str(artifacts / "explorer.png"))
    assert page.external_requests == []
    assert not [e for e in page.console_errors if "mnt" in e or "anywidget" in e.lower()]


def test_hostile_capture_renders_as_text(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel; the explorer is this test's own
    page.set_viewport_size({"width": 1280, "height": 1500})
    explorer_in_lab(page, lab_server, FIXTURES / "hostile.tap.jsonl")
    out = kernel_exec(page, "import time\n"
                            "for s in t.frames['seq']:\n"
                            "    ex.selected_seq = int(s)\n"
                            "ex.selected_seq = 3\nprint(ex.selected_seq)")
    assert out.strip() == "3"
    inspector = page.locator(".mn-explorer .mn-inspector")
    inspector.get_by_text('"<script>window.__pwned=1</script>"').first.wait_for(timeout=20_000)
    # the error response beside it, with an <img onerror> inside its message, as text
    inspector.get_by_text("its response #4", exact=False).first.wait_for(timeout=10_000)
    assert '<img src=x onerror=\\"window.__pwned=2\\">' in inspector.inner_text() or \
        '<img src=x onerror="window.__pwned=2">' in inspector.inner_text()
    # the table shows the hostile method name as text
    page.locator(".mnf-td", has_text="<script>window.__pwned=4</script>").first.wait_for(
        timeout=10_000)
    for kind in ("span", "tick"):
        for k, _seq, x, y, _w in boxes(page):
            if k == kind:
                page.mouse.click(x, y)
    page.wait_for_timeout(500)  # let any injected handler fire (none should exist)
    assert page.evaluate("() => window.__pwned") is None
    assert page.dialogs == []
    live = page.evaluate("""() => {
      const outs = [...document.querySelectorAll('.jp-OutputArea-output')];
      let n = 0;
      for (const o of outs) {
        n += o.querySelectorAll('img, iframe, svg[onload]').length;
        for (const s of o.querySelectorAll('script')) if (s.textContent.includes('pwned')) n++;
        for (const a of o.querySelectorAll('a[href]'))
          if (a.getAttribute('href').toLowerCase().startsWith('javascript')) n++;
      }
      return n; }""")
    assert live == 0
    page.mouse.move(5, 5)
    page.locator(".mn-explorer").screenshot(path=str(artifacts / "explorer-hostile.png"))
    assert page.external_requests == []


def test_notebook7_renders_and_clicks(notebook7_page, lab_server, artifacts):
    page = notebook7_page  # the worker's Notebook 7 page and kernel; the cells are this test's
    trace = real_trace()
    shutil.copyfile(trace, lab_server["root"] / trace.name)
    run_cells(page, [SETUP.format(name=trace.name)])
    page.locator(".mn-explorer .mnt-canvas").wait_for(state="visible", timeout=60_000)
    page.wait_for_function(
        "() => (document.querySelector('.mnt-canvas').mntBoxes || []).length > 0",
        timeout=30_000)
    seq = click_widest_span(page)
    page.locator(".mn-inspector").get_by_text(f"request #{seq}", exact=False).first.wait_for(
        timeout=20_000)
    assert wait_kernel_output(page, "print(ex.selected_seq)", str(seq)) == str(seq)
    page.mouse.move(5, 5)
    page.locator(".mn-explorer .mnt").screenshot(path=str(artifacts / "timeline-nb7.png"))

    page.get_by_role("button", name="lanes: method").click()
    assert wait_kernel_output(page, "print(ex.timeline.lane_by)", "method") == "method"
    page.locator(".mnt-btn.mnt-on", has_text="lanes: method").wait_for(timeout=10_000)
    page.mouse.move(5, 5)
    page.locator(".mn-explorer .mnt").screenshot(path=str(artifacts / "timeline-methods.png"))

    kernel_exec(page, "ex.timeline.max_items = 5")  # force the binned view on a small trace
    page.locator(".mnt-note.mnt-binned", has_text="bins per lane").wait_for(timeout=10_000)
    page.locator(".mn-explorer .mnt").screenshot(path=str(artifacts / "timeline-bins.png"))
    assert page.external_requests == []


def test_labels_of_300000_characters_do_not_freeze_the_page(lab_page, lab_server, artifacts):
    """Lane labels were trimmed two characters per measureText call: a 300,000-character
    session name froze the tab. The first paint is measured and kept as an artifact."""
    import json
    import sys

    sys.path.insert(0, str(REPO / "tests" / "widgets"))
    from test_long_labels import long_label_capture

    page = lab_page  # the module's Lab page and kernel; the explorer is this test's own
    page.set_viewport_size({"width": 1280, "height": 1200})
    capture = long_label_capture(lab_server["root"] / "long-labels.jsonl")
    page.evaluate("window.__t0 = performance.now()")
    run_cells(page, [
        f"import time, mcp_notebook as mn\nfrom mcp_notebook.widgets import explore\n"
        f"t = mn.load({capture.name!r}, format='tap')\nex = explore(t)\nex"])
    page.wait_for_function(
        "() => (document.querySelector('.mnt-canvas') || {}).mntBoxes?.length > 0",
        timeout=60_000)
    first_paint_ms = page.evaluate("performance.now() - window.__t0")
    (artifacts / "long-labels-first-paint.json").write_text(
        json.dumps({"first_paint_ms_after_run_all": round(first_paint_ms)}), "utf-8")
    page.mouse.move(5, 5)
    page.locator(".mn-explorer .mnt").screenshot(path=str(artifacts / "timeline-long-labels.png"))
    # a frozen tab does not answer at all; a generous bound tells a freeze from a slow box
    assert first_paint_ms < 30_000
    assert page.evaluate("1 + 1") == 2
