"""``make handouts`` writes HTML that opens offline in Chromium, widgets and pictures drawn.

``scripts/make_handouts.py`` runs as ``make handouts`` does, on one notebook, in a
subprocess; every notebook (executed once per session by the shared fixture) goes through
the same export, the HTML export of ``test_html_export.py`` with its links turned to the
pages. Headless Chromium opens each page once, with every non-local request blocked, and
checks all of its rendering in that one load: the saved widget views drawn (each helper's
by its classes, the timeline's canvas), the SVG sequence diagrams, the title, and the
links between pages, which must point at pages that exist. Screenshots go to
``tests/artifacts/notebooks/``."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from helpers import script_module

from .conftest import REPO, notebook_paths, without_solutions

pytestmark = pytest.mark.browser

NAMES = [p.stem for p in notebook_paths()]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ARTIFACTS = REPO / "tests" / "artifacts" / "notebooks"
# what each helper draws, by the class names of its views
VIEWS = {"mn.explore(": [".mn-explorer", ".mnt", ".mnf"], "mn.timeline(": [".mnt"],
         "mn.inspect(": [".mn-inspector", ".mnf"], "mn.sequence(": [".mns"]}


def offline_defects(body: str, views: int) -> list[str]:
    from .test_html_export import offline_defects as defects

    return defects(body, views)


VIEW_SCRIPT = re.compile(r'<script type="application/vnd\.jupyter\.widget-view\+json">')


def _module():
    return script_module(REPO / "scripts" / "make_handouts.py")


@pytest.fixture(scope="session")
def handouts(tmp_path_factory, executed, exported):
    """Every notebook's page written by the script's own functions (its export is shared
    with ``test_html_export.py``, made once), with the assets and index."""
    mh = _module()
    fetch = mh._fetcher()
    if not fetch.complete(fetch.DEFAULT) and mh.shutil.which("npm") is None:
        pytest.skip("npm is needed once to fetch the widget JavaScript")
    out = tmp_path_factory.mktemp("handouts")
    mh.write_assets(out)
    # last notebook first: where test_html_export.py (first to last, on another worker)
    # is still executing them, each executes half and reads the other half
    for name in reversed(NAMES):
        mh.write_page(exported(name), name, out)
    mh.write_index(out, NAMES)
    return out


SEQUENCE_SVG = re.compile(r"""<svg[^>]*class=["']mn-sequence["']""")


def _drawn() -> tuple[list[str], str]:
    """The notebooks whose handouts are drawn in Chromium, from their sources: each that
    calls a helper with a widget view, and of the others the one whose code draws the most
    sequence pictures (``mn.teach.sequence``); and that one."""
    import nbformat

    views, pictures = [], {}
    for path in notebook_paths():
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                         if c.cell_type == "code")
        if any(call in code for call in VIEWS):
            views.append(path.stem)
        else:
            pictures[path.stem] = code.count("mn.teach.sequence(")
    most = max(sorted(pictures), key=lambda n: pictures[n])
    return sorted([*views, most]), most


DRAWN, PICTURES_ONLY = _drawn()


def expected_views(nb) -> tuple[int, set[str]]:
    """The widget views a notebook saved, and the classes its helpers' views draw."""
    views, classes = 0, set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        views += sum(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", []))
        for call, selectors in VIEWS.items():
            if call in cell.source:
                classes.update(selectors)
    return views, classes


def _open(page, path):
    page.goto(path.as_uri())
    page.locator("h1").first.wait_for(timeout=30_000)




def _counts(nb) -> tuple[int, int]:
    views = svgs = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            views += WIDGET_VIEW in data
            # the sequence pictures on screen: a live sequence widget draws the same SVG as
            # its static picture (the output before its view), which then hides
            svgs += max(len(SEQUENCE_SVG.findall(str(data.get(kind, ""))))
                        for kind in ("text/html", "image/svg+xml"))
    return views, svgs


def test_the_script_writes_pages_that_open_offline(tmp_path, page):
    """``make handouts`` end to end on one notebook (it executes what it exports: that is
    this test's time): the page and the index are written, the page holds all it needs
    offline (checked on its text, as in ``test_html_export.py``), and in Chromium the
    index's link opens it with its widgets drawn from the state the script saved."""
    out = tmp_path / "handouts"
    run = subprocess.run([sys.executable, "scripts/make_handouts.py", "--out", str(out),
                          "00-start"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in out.glob("*.html")) == ["00-start.html", "index.html"]
    body = (out / "00-start.html").read_text(encoding="utf-8")
    views = len(VIEW_SCRIPT.findall(body))  # 00-start shows the explorer
    assert views and offline_defects(body, views) == []
    _open(page, out / "index.html")
    assert page.locator("li a").count() == 1
    page.locator("li a").first.click()
    page.wait_for_function("() => document.querySelectorAll('.widget-subarea > *').length > 0",
                           timeout=30_000)
    page.locator(".mn-explorer").first.wait_for(state="visible", timeout=30_000)
    assert page.url.endswith("/00-start.html")
    assert page.outside == [] and page.failed == [] and page.errors == []


def test_the_script_takes_the_notebooks_named_on_its_command_line():
    """The selection ``make_handouts.py NOTEBOOK ...`` exports (by stem or file name, in
    the order given), every notebook without one, and a clear error for an unknown one."""
    mh = _module()
    assert mh.notebooks(["11-send-big-ids.ipynb", "00-start"]) == ["11-send-big-ids",
                                                                   "00-start"]
    assert mh.notebooks([]) == NAMES
    with pytest.raises(SystemExit, match="no notebook 'nope'"):
        mh.notebooks(["nope"])


@pytest.mark.parametrize("name", NAMES)
def test_every_handout_holds_what_it_shows_offline(executed, handouts, name):
    """On the text of every page: nothing remote, the local loaders, each saved widget
    view with its models' state (``offline_defects``), the title, each sequence picture
    of the notebook's outputs, links that point at pages that exist and none at a
    notebook. What only a browser shows is checked on the pages of ``DRAWN``."""
    nb = without_solutions(executed(name)[0])
    views, svgs = _counts(nb)
    body = (handouts / f"{name}.html").read_text(encoding="utf-8")
    assert offline_defects(body, views) == []
    title = nb.cells[0].source.splitlines()[0][2:]
    assert re.search(r"<h1[^>]*>" + re.escape(title), body)
    assert len(SEQUENCE_SVG.findall(body)) >= svgs
    links = re.findall(r'href="([^"#:]+\.html)"', body)
    assert links and all((handouts / link).exists() for link in links)
    assert ".ipynb\"" not in body.split("<body", 1)[1]


def test_every_page_with_a_widget_is_drawn_in_chromium(executed):
    """``DRAWN`` (chosen from the notebooks' sources, before they run) holds every notebook
    that saved a widget view, and a page of pictures only: so a notebook that comes to show
    a widget some other way fails here until it is drawn too."""
    saved = {n for n in NAMES if _counts(without_solutions(executed(n)[0]))[0]}
    assert saved <= set(DRAWN), sorted(saved - set(DRAWN))
    assert [n for n in DRAWN if n not in saved] == [PICTURES_ONLY]
    assert _counts(without_solutions(executed(PICTURES_ONLY)[0]))[1] > 0


@pytest.mark.parametrize("name", DRAWN)
def test_handout_draws_its_widgets_and_pictures_in_chromium(executed, handouts, page, name):
    """One page load serves every check of a page's rendering: the saved widget views
    drawn (each helper's views by their classes, the timeline's canvas and note), the SVG
    sequence pictures on screen with a size, the title, no request leaving the machine, no
    failed request or console error. The page is the HTML export of ``test_html_export``
    with only its links changed (checked there on the text), so this load is also that
    export's rendering. The pages drawn are every one with a saved widget view (its state
    is the notebook's own) and the page with the most pictures of those without one: the
    others share its code path (the same template, loaders and picture markup, no widget
    state), and what they hold is checked on their text above."""
    nb = without_solutions(executed(name)[0])
    views, svgs = _counts(nb)
    _, classes = expected_views(nb)
    path = handouts / f"{name}.html"
    _open(page, path)
    if views:
        page.wait_for_function(
            "n => Array.from(document.querySelectorAll('.widget-subarea'))"
            ".filter(e => e.children.length > 0).length >= n", arg=views, timeout=30_000)
        for selector in sorted(classes):
            page.locator(selector).first.wait_for(state="visible", timeout=30_000)
        if ".mnt" in classes:  # the timeline drew its canvas and counted what it shows
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.mnt')).every(e =>"
                " e.querySelector('canvas') && /showing .* requests/.test("
                "e.querySelector('.mnt-note').textContent))", timeout=30_000)
    page.wait_for_timeout(300)  # late requests (fonts) show up before counting
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    drawn = page.evaluate("Array.from(document.querySelectorAll('.widget-subarea'))"
                          ".filter(e => e.children.length > 0).length")
    assert drawn == views
    assert page.locator("svg.mn-sequence:visible").count() == svgs
    if svgs:  # a picture is drawn: its arrows have a size on the page
        boxes = [page.locator("svg.mn-sequence:visible").nth(i).bounding_box()
                 for i in range(svgs)]
        assert all(b and b["width"] > 100 and b["height"] > 50 for b in boxes), boxes
    assert page.outside == [] and page.failed == [] and page.errors == []
    assert page.locator("h1").first.inner_text().strip() == nb.cells[0].source.splitlines()[0][2:]


def test_pictures_and_widgets_are_in_the_handouts_at_all(executed):
    """The workshop shows pictures: most notebooks draw a sequence diagram or a widget."""
    drawn = [n for n in NAMES if any(_counts(without_solutions(executed(n)[0])))]
    assert len(drawn) >= len(NAMES) - 2
