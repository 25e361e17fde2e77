"""The view of a collection in a real JupyterLab: the sessions of ``data/``, a click on a
heading sorts them, a click on a row opens that session in the explorer below."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from labhelpers import kernel_exec, run_cells, wait_kernel_output

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SETUP = """import mcp_notebook as mn
c = mn.load_many("data")
v = c.view()
v"""
PICK = "everything-stdio-progress-cancel.jsonl"


def test_click_a_session_opens_it_in_the_explorer(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel
    page.set_viewport_size({"width": 1400, "height": 2200})
    shutil.copytree(REPO / "data", lab_server["root"] / "data", dirs_exist_ok=True)
    run_cells(page, [SETUP])
    fleet = page.locator(".mn-fleet")
    rows = fleet.locator(".mnfl-table tbody tr")
    rows.first.wait_for(state="visible", timeout=60_000)
    n = int(kernel_exec(page, "print(len(c.sessions))"))
    assert rows.count() == n > 1
    assert fleet.locator("svg.mnfl-hist").count() == int(
        kernel_exec(page, "print(len(c.latency_histograms()))"))

    # a click on a heading sorts, in Python, and the browser shows the new order
    fleet.locator(".mnfl-table th", has_text="frames").click()
    assert wait_kernel_output(page, "print(v.sort_by, v.ascending)", "frames True") == \
        "frames True"
    want = json.loads(kernel_exec(
        page, "import json; print(json.dumps(c.sessions.sort_values('frames', kind='stable')"
              "['capture'].tolist()))"))
    page.wait_for_function(
        """(first) => document.querySelector('.mnfl-table tbody tr td').textContent === first""",
        arg=want[0], timeout=10_000)
    assert [t.strip() for t in fleet.locator(".mnfl-table tbody tr td:first-child")
            .all_inner_texts()] == want

    # a click on a row opens that session in the explorer
    fleet.locator(".mnfl-table tbody tr", has_text=PICK).click()
    fleet.locator(".mn-explorer .mnt-canvas").wait_for(state="visible", timeout=60_000)
    page.wait_for_function(
        "() => (document.querySelector('.mn-fleet .mnt-canvas').mntBoxes || []).length > 0",
        timeout=30_000)
    fleet.locator(".mnfl-table tbody tr.mnfl-sel", has_text=PICK).wait_for(timeout=10_000)
    got = json.loads(kernel_exec(
        page, "import json, pathlib\n"
              "ex = v.explorer\n"
              "s = c.sessions.iloc[v.selected]\n"
              "f = ex.inspector.filtered\n"
              "print(json.dumps([s['capture'], pathlib.Path(ex.trace.paths[0]).name,\n"
              "    sorted(map(str, set(f['session'].astype(object)))), str(s['session']),\n"
              "    len(f), int(s['frames'])]))"))
    capture, opened, sessions, session, shown, frames = got
    assert capture == opened == PICK
    assert sessions == [session] and shown == frames > 0
    # the explorer's table in the page lists that session's frames
    fleet.locator(".mn-explorer .mnf-note", has_text=f"{frames:,} rows").wait_for(
        timeout=10_000)
    rows = fleet.locator(".mn-explorer .mnf-tr[data-seq]").count()
    assert 0 < rows <= min(frames, 30)  # the virtual table holds only the rows on screen

    page.mouse.move(5, 5)  # and the table back to its first column (the click scrolled it)
    page.evaluate("() => { document.querySelector('.mnfl-wrap').scrollLeft = 0; }")
    fleet.screenshot(path=str(artifacts / "fleet-view.png"))
    assert page.external_requests == []
    assert not [e for e in page.console_errors if "mnfl" in e or "anywidget" in e.lower()]
