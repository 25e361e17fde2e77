"""The frame table in a real JupyterLab: virtual scroll, sort, keys, copy, detail beside the
table, search with highlighting, and WCAG AA contrast of selected rows and kind colours in the
light and dark themes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from labhelpers import kernel_exec, run_cells, set_theme, wait_kernel_output

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo-stdio.jsonl"
SETUP = """import mcp_notebook as mn
from mcp_notebook.widgets import inspect
t = mn.load({name!r})
ins = inspect(t)
ins"""
BIG = """import sys; sys.path.insert(0, {kit!r})
from tracekit import big_trace
from mcp_notebook.widgets import inspect
t = big_trace(20000)
ins = inspect(t)
ins"""

# WCAG 2.x relative luminance and contrast ratio, on computed colours in the page
CONTRAST = """(sel) => {
  // computed colours come as rgb()/rgba() or, from color-mix(), as color(srgb r g b / a)
  const parse = (c) => { const v = (c.match(/[0-9.]+/g) || []).slice(0, 4).map(Number);
    return c.startsWith("color(") ? v.map((x, i) => i < 3 ? x * 255 : x) : v; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bgOf = (el) => { for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c; }
    return [255, 255, 255]; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  return [...document.querySelectorAll(sel)].map((el) => ({
    cls: el.className, text: el.textContent.slice(0, 20),
    ratio: ratio(parse(getComputedStyle(el).color), bgOf(el)) })); }"""

# the first row's seq in each drawn frame (animation frame) once the note holds ``text``
DRAWN_FIRST = """(text) => { window.mnFirsts = [];
  const tick = () => {
    const note = document.querySelector('.mn-inspector .mnf-note');
    if (note && note.textContent.includes(text)) {
      const row = document.querySelector('.mn-inspector .mnf-tr[data-seq]');
      window.mnFirsts.push(row ? row.dataset.seq : null); }
    if (window.mnFirsts.length < 10) requestAnimationFrame(tick); };
  requestAnimationFrame(tick); }"""


def table_in_lab(page, cells):
    """Run ``cells`` in the module's notebook and wait for the inspector's first rows."""
    run_cells(page, cells)
    page.locator(".mn-inspector .mnf-tr[data-seq]").first.wait_for(timeout=60_000)


def test_table_sort_keys_copy_and_detail_beside(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=lab_server["base"])
    shutil.copyfile(DEMO, lab_server["root"] / DEMO.name)
    table_in_lab(page, [SETUP.format(name=DEMO.name)])
    ins = page.locator(".mn-inspector")
    # the info column names each call's tool
    ins.locator(".mnf-td", has_text="tools/call divide(a=1, b=0)").first.wait_for(timeout=10_000)

    # a row click: the detail shows it beside the table, both on screen together
    row = ins.locator(".mnf-tr[data-seq='6']")
    row.click()
    ins.get_by_text("request #6", exact=False).first.wait_for(timeout=20_000)
    t_box = ins.locator(".mnf").bounding_box()
    d_box = ins.locator(".mn-detail").bounding_box()
    vh = page.viewport_size["height"]
    assert d_box["x"] >= t_box["x"] + t_box["width"] - 2, (t_box, d_box)
    assert d_box["y"] < vh and t_box["y"] < vh
    assert wait_kernel_output(page, "print(ins.selected_seq)", "6") == "6"

    # keys: ↓ moves, p goes to the pair, c copies the frame as JSON
    page.keyboard.press("ArrowDown")
    assert wait_kernel_output(page, "print(ins.selected_seq)", "7") == "7"
    page.keyboard.press("p")
    assert wait_kernel_output(page, "print(ins.selected_seq)", "6") == "6"
    ins.locator(".mnf-tr.mnf-sel[data-seq='6']").wait_for(timeout=10_000)
    page.wait_for_function("() => document.querySelector('.mn-inspector .mnf-copy') !== null")
    kernel_exec(page, "import time; time.sleep(0.3)")
    page.keyboard.press("c")
    ins.locator(".mnf-copied", has_text="copied JSON").wait_for(timeout=10_000)
    copied = page.evaluate("navigator.clipboard.readText()")
    want = json.loads(kernel_exec(page, "print(t.frames['raw'].iat[6])"))
    assert json.loads(copied) == want
    ins.locator(".mnf-copy", has_text="copy JSON-RPC line").click()
    line = page.evaluate("navigator.clipboard.readText()")
    assert "\n" not in line and json.loads(line) == want

    # sort by latency, descending: two clicks on the heading. The selected frame stays
    # selected, but the view goes to the first row: every frame the page draws once the note
    # says so shows the slowest call first, never the selection's place (a race, once)
    head = ins.locator(".mnf-th[data-key='latency']")
    head.click()
    page.evaluate(DRAWN_FIRST, "sorted by latency ↓")
    head.click()
    ins.locator(".mnf-note", has_text="sorted by latency ↓").wait_for(timeout=10_000)
    page.wait_for_function("() => window.mnFirsts.length >= 10")
    firsts = page.evaluate("() => window.mnFirsts")
    top = kernel_exec(page, "f = ins.table; print(int(f.loc[f['latency'].idxmax(), 'seq']))")
    assert set(firsts) == {top.strip()}, firsts
    assert page.evaluate("() => document.querySelector('.mn-inspector .mnf-scroll').scrollTop") == 0
    page.mouse.move(5, 5)
    ins.screenshot(path=str(artifacts / "table-sorted.png"))

    # search: the count is said, the match is marked in the detail
    box = ins.locator("input[type='text']").first
    box.fill("division")
    box.press("Enter")
    ins.locator(".mnw", has_text="of 60 frames").first.wait_for(timeout=20_000)
    n = kernel_exec(page, "print(int(t.frames['raw'].str.contains('division', case=False).sum()))")
    ins.locator(".mnw b", has_text=n.strip()).first.wait_for(timeout=10_000)
    ins.locator(".mnf-tr[data-seq]").first.click()
    ins.locator("mark.mnw-hit").first.wait_for(timeout=10_000)
    page.mouse.move(5, 5)
    ins.screenshot(path=str(artifacts / "table-search.png"))
    assert page.external_requests == []
    assert not [e for e in page.console_errors if "mnf" in e or "anywidget" in e.lower()]


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_contrast_of_selected_rows_and_kind_colours(lab_page, lab_server, artifacts, theme):
    page = lab_page  # the module's Lab page and kernel
    shutil.copyfile(DEMO, lab_server["root"] / DEMO.name)
    slug = theme.split()[-1].lower()
    table_in_lab(page, [SETUP.format(name=DEMO.name)])
    set_theme(page, theme)  # waits for the theme's stylesheet to be applied
    ins = page.locator(".mn-inspector")
    ins.locator(".mnf-tr[data-seq='9']").click()  # a tool-error result
    ins.locator(".mnf-tr.mnf-sel").wait_for(timeout=10_000)
    # the click may scroll the table (to bring the row into view): back to its top left, so
    # that the rows of every kind (the log lines are the first and the last) are drawn
    page.evaluate("() => { const s = document.querySelector('.mn-inspector .mnf-scroll'); "
                  "s.scrollTo(0, 0); s.dispatchEvent(new Event('scroll')); }")
    ins.locator(".mnf-tr[data-seq='0']").wait_for(timeout=10_000)
    ins.locator(".mnf-tr.mnf-sel[data-seq='9']").wait_for(timeout=10_000)
    page.mouse.move(5, 5)
    ins.screenshot(path=str(artifacts / f"table-{slug}.png"))
    cells = page.evaluate(CONTRAST, ".mn-inspector .mnf-tr .mnf-td")
    kinds = {c["cls"].split("mnf-k-")[-1] for c in cells if "mnf-k-" in c["cls"]}
    assert {"request", "result", "notification", "log"} <= kinds, (theme, kinds)
    low = [c for c in cells if c["ratio"] < 4.5]
    assert low == [], (theme, low)  # WCAG AA for normal text
    sel = page.evaluate(CONTRAST, ".mn-inspector .mnf-tr.mnf-sel .mnf-td")
    assert sel and min(c["ratio"] for c in sel) >= 4.5, (theme, sel)
    (artifacts / f"table-contrast-{slug}.json").write_text(json.dumps(
        {"min_ratio": round(min(c["ratio"] for c in cells), 2),
         "selected_min": round(min(c["ratio"] for c in sel), 2), "cells": len(cells)}))


def test_virtual_scroll_over_many_rows(lab_page, artifacts):
    page = lab_page  # the module's Lab page and kernel
    kit = str(REPO / "tests" / "widgets")
    table_in_lab(page, [BIG.format(kit=kit)])
    ins = page.locator(".mn-inspector")
    n = int(kernel_exec(page, "print(len(t.frames))"))
    shown = ins.locator(".mnf-tr").count()
    assert shown < 60  # only what fits on screen is in the DOM
    # scroll to the middle: the rows there arrive from Python
    page.evaluate("(y) => { const s = document.querySelector('.mnf-scroll'); s.scrollTop = y; "
                  "s.dispatchEvent(new Event('scroll')); }", (n // 2) * 22)
    mid = n // 2
    ins.locator(f".mnf-tr[data-seq='{mid}']").wait_for(timeout=20_000)
    start = int(kernel_exec(page, "print(ins._grid.start)"))
    assert start <= mid < start + 160
    ins.locator(f".mnf-tr[data-seq='{mid}']").click()
    assert wait_kernel_output(page, "print(ins.selected_seq)", str(mid)) == str(mid)
    page.keyboard.press("End")
    assert wait_kernel_output(page, "print(ins.selected_seq)", str(n - 1)) == str(n - 1)
    ins.locator(f".mnf-tr.mnf-sel[data-seq='{n - 1}']").wait_for(timeout=20_000)
    page.mouse.move(5, 5)
    ins.screenshot(path=str(artifacts / "table-scrolled-end.png"))


def test_violations_list_links_to_the_frames(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel
    broken = REPO / "data" / "broken-duplicate-response.jsonl"
    shutil.copyfile(broken, lab_server["root"] / broken.name)
    page.set_viewport_size({"width": 1280, "height": 1600})
    table_in_lab(page, [
        "import mcp_notebook as mn\nfrom mcp_notebook.widgets import explore\n"
        f"t = mn.load({broken.name!r})\nex = explore(t)\nex"])
    lists = page.locator(".mn-explorer .mn-lists")
    rows = lists.locator(".mnv-row")
    rows.first.wait_for(timeout=20_000)
    n = int(kernel_exec(page, "print(len(t.violations))"))
    assert rows.count() == n
    k = int(kernel_exec(page, "print(next(i for i, it in enumerate(ex.violations.items) "
                              "if it['related'] is not None))"))
    seq, rel, rule = kernel_exec(page, f"it = ex.violations.items[{k}]; "
                                       "print(it['seq'], it['related'], it['rule'])").split()
    row = rows.nth(k)
    assert rule in row.get_attribute("title")  # hover names the rule and its spec sentence
    row.click()
    assert wait_kernel_output(page, "print(ex.selected_seq)", seq) == seq
    ins = page.locator(".mn-explorer .mn-inspector")
    ins.get_by_text(f"related frame #{rel}", exact=False).first.wait_for(timeout=20_000)
    flag = ins.locator(f".mnf-tr[data-seq='{seq}'] .mnf-flag")
    flag.wait_for(timeout=10_000)
    assert rule in flag.get_attribute("title")  # the table's marker names the rule too
    page.mouse.move(5, 5)
    page.locator(".mn-explorer").screenshot(path=str(artifacts / "violations-list.png"))


def test_histogram_bar_filters_the_table(lab_page, lab_server, artifacts):
    page = lab_page  # the module's Lab page and kernel
    shutil.copyfile(DEMO, lab_server["root"] / DEMO.name)
    page.set_viewport_size({"width": 1280, "height": 1600})
    table_in_lab(page, [
        "import mcp_notebook as mn\nfrom mcp_notebook.widgets import explore\n"
        f"t = mn.load({DEMO.name!r})\nex = explore(t)\nex"])
    one = page.locator(".mn-lists .mnh-one[data-method='tools/call']")
    one.wait_for(timeout=20_000)
    bar = one.locator("rect[data-count]:not([data-count='0'])").first
    count = int(bar.get_attribute("data-count"))
    bar.click()
    q = wait_kernel_output(page, "print(ex.inspector.query.startswith('method:tools/call'))",
                           "True")
    assert q == "True"
    answered = kernel_exec(page, "f = ex.inspector.filtered; print(int((f['kind'] == 'request')"
                                 ".sum()))").strip()
    assert int(answered) == count  # the bar's requests, now the table's requests
    page.locator(".mn-inspector .mnf-note", has_text="rows").wait_for(timeout=10_000)
    page.mouse.move(5, 5)
    page.locator(".mn-explorer .mn-lists").screenshot(path=str(artifacts / "histograms.png"))
