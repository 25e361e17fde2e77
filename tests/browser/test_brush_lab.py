"""A range brushed on the explorer's timeline in a real JupyterLab: the table's count line
says how many frames lie in the drawn range, the same number Python counts from the frames'
own times (issue 20: "a brushed range says '0 of 60 frames'")."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from labhelpers import kernel_exec, run_cells

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo-stdio.jsonl"
SETUP = """import mcp_notebook as mn
from mcp_notebook.widgets import explore
t = mn.load({name!r})
ex = explore(t)
ex"""
#: what the range shows, counted from ``t.frames`` and ``t.pairs`` alone: the frames whose
#: time is in it, and both frames of every request drawn across it (to its response, its
#: cancel, or, unanswered, to its session's last frame)
COUNT = """import pandas as pd
a, b = sorted(ex.timeline.brush)
f, p = t.frames, t.pairs
origin = f['ts'].min()
x = (f['ts'] - origin).dt.total_seconds()
keep = set(f.loc[(x >= a) & (x <= b), 'seq'])
end = x.groupby(f['session'].astype(object), dropna=False).max()
xs = dict(zip(f['seq'], x))
for r in p.itertuples():
    if pd.isna(r.request_seq) or r.outcome in ('orphan', 'duplicate'):
        continue
    t0 = xs[int(r.request_seq)]
    if pd.notna(r.response_seq):
        t1 = xs[int(r.response_seq)]
    elif pd.notna(r.cancel_seq):
        t1 = xs[int(r.cancel_seq)]
    else:
        t1 = end[f['session'].astype(object).iat[int(r.request_seq)]]
    if t0 <= b and max(t1, t0) >= a:
        keep |= {int(r.request_seq)} | ({int(r.response_seq)} if pd.notna(r.response_seq) else set())
print(len(keep), len(f))"""


def brush(page, x0: float, x1: float) -> None:
    """Shift+drag on the timeline's plot from ``x0`` to ``x1`` (fractions of its width)."""
    c = page.locator(".mn-explorer .mnt-canvas").bounding_box()
    left = c["x"] + 190  # the lane labels' column (LABEL_W in timeline.js)
    width = c["width"] - 190 - 12
    y = c["y"] + 40
    page.keyboard.down("Shift")
    page.mouse.move(left + x0 * width, y)
    page.mouse.down()
    page.mouse.move(left + x1 * width, y, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")


def shown_count(page) -> tuple[int, int]:
    status = page.locator(".mn-explorer .mn-inspector .mnw", has_text=" frames").first
    text = status.inner_text()
    m = re.search(r"([\d,]+) of ([\d,]+) frames", text)
    assert m, text
    return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))


@pytest.mark.parametrize("x0, x1", [(0.05, 0.3), (0.55, 0.8), (0.9, 0.55)])
def test_brushed_range_counts_the_frames_drawn_in_it(lab_page, lab_server, artifacts, x0, x1):
    page = lab_page  # the module's Lab page and kernel; the explorer is this test's own
    page.set_viewport_size({"width": 1280, "height": 1400})
    shutil.copyfile(DEMO, lab_server["root"] / DEMO.name)
    run_cells(page, [SETUP.format(name=DEMO.name)])
    page.locator(".mn-explorer .mn-inspector .mnf-tr[data-seq]").first.wait_for(timeout=60_000)
    page.wait_for_function(
        "() => (document.querySelector('.mn-explorer .mnt')?.dataset.views || 0) > 0",
        timeout=30_000)
    brush(page, x0, x1)
    page.locator(".mn-explorer .mn-inspector", has_text=re.compile(r"range [+−]")).first \
        .wait_for(timeout=20_000)
    # the page's brush is Python's brush, and the count line counts what lies inside it
    want, total = (int(v) for v in kernel_exec(page, COUNT).split())
    got, of = shown_count(page)
    rows = page.locator(".mn-explorer .mn-inspector .mnf-tr[data-seq]").count()
    page.mouse.move(5, 5)
    page.locator(".mn-explorer").screenshot(
        path=str(artifacts / f"brush-{int(x0 * 100)}-{int(x1 * 100)}.png"))
    assert of == total == 60
    assert got == want, (x0, x1, got, want)
    assert rows == min(got, rows) and (got == 0) == (rows == 0)
    # every range here shows a request in flight (the demo's initialize runs 0.65 s, its
    # slow tools/call 0.3 s): none is empty
    assert got > 0, (x0, x1)
