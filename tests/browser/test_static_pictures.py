"""Each widget's static picture in real Chromium, in exported pages: offline it shows,
online it gives way.

A notebook with the four views (explorer, timeline, sequence diagram, inspector) is run
once, as ``jupyter nbconvert --execute`` runs it, exported by the plain ``jupyter
nbconvert --to html`` (widget state saved, the widget manager asked from a CDN) and
opened with the network off: every picture is on screen. Saved without widget state (as
Lab saves by default) and exported, every picture is on screen too, at its size.
Exported the ``make handouts`` way (the widget manager beside the page) it is opened
again: the live widgets draw and the pictures hide, so nothing shows twice. The same
views live in JupyterLab and Notebook 7: ``test_static_pictures_live.py``.

Screenshots go to ``tests/artifacts/static/``."""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat
import pytest
from conftest import REPO
from pictures import PICTURES, VIEWS, VISIBLE, cells, picture_blocks

from helpers import script_module

pytestmark = pytest.mark.browser


@pytest.fixture
def shots(artifacts):
    out = artifacts / "static"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# four views, static and live")]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells()]
    path = tmp_path / "views.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The four views' notebook run once for the module's exports, as ``jupyter nbconvert
    --execute`` runs it (its ExecutePreprocessor is an nbclient ``NotebookClient``, which
    saves the widget state into the notebook)."""
    from nbclient import NotebookClient

    where = tmp_path_factory.mktemp("views")
    path = _notebook(where)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(where)}}).execute()
    nbformat.write(nb, path)
    return path


def test_plain_export_opened_offline_shows_every_picture(page, tmp_path, shots, executed):
    path = tmp_path / executed.name
    shutil.copyfile(executed, path)
    run = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
                          str(path)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    html = path.with_suffix(".html")
    assert "application/vnd.jupyter.widget-state+json" in html.read_text(encoding="utf-8")
    page.context.set_offline(True)
    page.goto(html.as_uri())
    page.locator(".mn-static").first.wait_for(state="visible", timeout=20_000)
    page.wait_for_timeout(1_000)  # the CDN loader fails in this time
    pictures = picture_blocks(page)
    page.screenshot(path=str(shots / "plain-export-offline.png"), full_page=True)
    assert [p["svgs"] for p in pictures] == PICTURES
    assert all(p["shown"] and p["height"] > 100 for p in pictures), pictures
    # the page asked the CDN for require.js and the widget manager, and nothing else broke
    assert page.external_requests and all("unpkg.com" in u or "cdnjs" in u
                                          for u in page.external_requests)
    assert all("Failed to load resource" in e or "require" in e
               for e in page.console_errors), page.console_errors
    assert page.locator("text=Error displaying widget").count() == 0
    assert page.locator(".widget-subarea").count() == 0  # no live widget offline


def _handouts():
    return script_module(REPO / "scripts" / "make_handouts.py")


def test_bundled_export_draws_the_widgets_and_hides_the_pictures(page, tmp_path, shots,
                                                                 executed):
    mh = _handouts()
    fetch = mh._fetcher()
    if not fetch.complete(fetch.DEFAULT) and mh.shutil.which("npm") is None:
        pytest.skip("npm is needed once to fetch the widget JavaScript")
    out = tmp_path / "out"
    mh.write_assets(out)
    nb = nbformat.read(executed, as_version=4)
    target = mh.export(nb, "views", out)
    page.context.set_offline(True)
    page.goto(target.as_uri())
    page.wait_for_function(
        "n => Array.from(document.querySelectorAll('.widget-subarea'))"
        ".filter(e => e.children.length > 0).length >= n", arg=len(VIEWS), timeout=60_000)
    page.locator(".mn-explorer").first.wait_for(state="visible", timeout=30_000)
    page.locator(".widget-subarea svg.mn-sequence").wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(shots / "bundled-export-online.png"), full_page=True)
    pictures = picture_blocks(page)
    assert [p["svgs"] for p in pictures] == PICTURES  # in the page, each once
    assert not any(p["shown"] for p in pictures), pictures  # and hidden by the live views
    shown_seq = page.evaluate(f"Array.from(document.querySelectorAll('svg.mn-sequence'))"
                              f".filter({VISIBLE}).length")
    assert shown_seq == 1  # the live diagram, not its picture too
    assert page.external_requests == [] and page.console_errors == []


def test_export_without_widget_state_shows_every_picture(page, tmp_path, shots, executed):
    """nbconvert HTML of the notebook saved without widget state, opened with every
    outside request blocked: each widget's output is its SVG picture, at its size."""
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    nb.metadata.pop("widgets", None)
    body, _ = HTMLExporter(mathjax_url="").from_notebook_node(nb)
    out = tmp_path / "static.html"
    out.write_text(body, encoding="utf-8")
    page.goto(out.as_uri())
    # each widget's picture is inline SVG in its own output (see widgets/snapshot.py)
    page.locator(".mn-static").nth(len(VIEWS) - 1).wait_for(state="visible", timeout=20_000)
    pictures = picture_blocks(page)
    assert [p["svgs"] for p in pictures] == PICTURES
    assert all(p["shown"] for p in pictures), pictures
    box = page.locator(".mn-static svg.mn-sequence").bounding_box()  # the sequence diagram
    assert box["width"] > 600 and box["height"] > 300
    for cls in ("mn-timeline-snapshot", "mn-snapshot-table"):
        page.locator(f"svg.{cls}").first.wait_for(state="visible", timeout=20_000)
    page.screenshot(path=str(shots / "static-export.png"), full_page=True)
    # the default template still asks a CDN for require.js (blocked here): the pictures
    # need nothing from outside
    assert all("require" in u for u in page.external_requests), page.external_requests
    assert all("Failed to load resource" in e for e in page.console_errors)
