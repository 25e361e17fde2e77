"""The executed notebooks export to HTML that renders offline, widgets included.

nbconvert's HTMLExporter points at local copies of require.js, the ipywidgets html-manager
(``embed-amd.js``) and anywidget's AMD module, fetched once by
``scripts/fetch_widget_js.py`` into a git-ignored cache. Headless Chromium then opens each
page with every non-local request blocked, and the saved widget views must render:
the explorer, the timeline (an anywidget) and the inspector, with no request leaving the
machine. Screenshots go to ``tests/artifacts/notebooks/``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

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


def _fetcher():
    return script_module(REPO / "scripts" / "fetch_widget_js.py")


@pytest.fixture(scope="session")
def html_dir(tmp_path_factory):
    """A folder for the exported pages, with the widget JavaScript beside them."""
    fetch = _fetcher()
    if not fetch.complete(fetch.DEFAULT) and shutil.which("npm") is None:
        pytest.skip("npm is needed once to fetch the widget JavaScript")
    js = fetch.fetch()
    out = tmp_path_factory.mktemp("html")
    for name in ("require.js", "embed-amd.js", "anywidget.js"):
        shutil.copyfile(js / name, out / name)
    # embed-amd.js asks for its icon fonts relative to the page, under two module paths
    for sub in ("@jupyter-widgets", "@jupyter-widgets/html-manager/dist"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for font in js.iterdir():
            if font.suffix in (".woff", ".woff2", ".ttf", ".eot", ".svg"):
                shutil.copyfile(font, out / sub / font.name)
    return out


def _export(nb, path: Path) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(require_js_url="require.js", widget_renderer_url="embed-amd.js",
                            mathjax_url="")
    body, _ = exporter.from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")
    return body


def _expected(nb) -> tuple[int, set[str]]:
    views, classes = 0, set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        views += sum(WIDGET_VIEW in out.get("data", {}) for out in cell.get("outputs", []))
        for call, selectors in VIEWS.items():
            if call in cell.source:
                classes.update(selectors)
    return views, classes


@pytest.mark.parametrize("name", NAMES)
def test_exported_notebook_renders_offline(executed, html_dir, page, name):
    nb = without_solutions(executed(name)[0])
    path = html_dir / f"{name}.html"
    body = _export(nb, path)
    assert not re.findall(r"""(?:src|href)=["']https?://""", body), "a remote script or style"
    views, classes = _expected(nb)

    page.goto(path.as_uri())
    page.locator("h1").first.wait_for(timeout=30_000)
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
    page.wait_for_timeout(300)  # let late requests (fonts) show up before counting
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    rendered = page.evaluate("Array.from(document.querySelectorAll('.widget-subarea'))"
                             ".filter(e => e.children.length > 0).length")
    assert rendered == views
    assert page.outside == []
    assert page.failed == []
    assert page.errors == []
    assert page.locator("h1").first.inner_text().strip() == nb.cells[0].source.splitlines()[0][2:]
