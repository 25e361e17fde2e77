"""Static fallback: each widget's bundle has a text summary and an SVG picture, and nbconvert
HTML of a notebook saved without widget state shows those pictures."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import mcp_notebook as mn
from mcp_notebook.widgets.snapshot import StaticFallback, table_svg

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def bundle_of(w):
    b = w._repr_mimebundle_()
    return b[0] if isinstance(b, tuple) else b


@pytest.fixture(scope="module")
def trace():
    return mn.load(mn.sample_path("broken-duplicate-response"))


@pytest.mark.parametrize("make, svgs", [
    (lambda t: mn.timeline(t), 1),
    (lambda t: mn.sequence(t), 1),
    (lambda t: mn.inspect(t), 1),       # the frame table
    (lambda t: mn.explore(t), 2),       # the timeline and the frame table (and the summary)
])
def test_every_widget_has_text_and_a_picture(trace, make, svgs):
    w = make(trace)
    assert isinstance(w, StaticFallback)
    b = bundle_of(w)
    assert WIDGET_VIEW in b
    assert f"{len(trace.frames):,} frames" in b["text/plain"] or "arrows" in b["text/plain"]
    html = b.get("text/html") or b["image/svg+xml"]
    assert ("text/html" in b) != ("image/svg+xml" in b)  # each picture is sent once
    found = re.findall(r"<svg .*?</svg>", html, flags=re.S)
    assert len(found) == svgs
    for svg in found:
        ET.fromstring(svg)  # each picture is well-formed SVG


def test_a_failing_picture_does_not_stop_the_widget(trace):
    tl = mn.timeline(trace)

    def boom():
        raise RuntimeError("no picture today")

    tl._static_svg = boom
    b = bundle_of(tl)
    assert WIDGET_VIEW in b and "no static picture: RuntimeError" in b["text/plain"]


def test_table_svg_escapes_and_cuts():
    svg = table_svg(["a", "<b>"], [["<script>", "x" * 300]] * 40, max_rows=5)
    root = ET.fromstring(svg)
    assert "&lt;script&gt;" in svg and "<script" not in svg
    assert "35 more rows" in svg
    assert len([t for t in root.iter("{http://www.w3.org/2000/svg}text")]) == 2 + 5 * 2 + 1


def _executed(tmp_path):
    """A notebook with the four widgets, run in a real kernel, widget state saved."""
    import nbformat
    from nbclient import NotebookClient

    path = mn.sample_path("broken-duplicate-response")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import mcp_notebook as mn\nt = mn.load({str(path)!r})"),
                nbformat.v4.new_code_cell("mn.timeline(t)"),
                nbformat.v4.new_code_cell("mn.sequence(t)"),
                nbformat.v4.new_code_cell("mn.inspect(t)"),
                nbformat.v4.new_code_cell("mn.explore(t)")]
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


PICTURES = [["mn-timeline-snapshot"], ["mn-sequence"], ["mn-snapshot-table"],
            ["mn-timeline-snapshot", "mn-snapshot-table"]]


def _pictures(html):
    return re.findall(r'<svg [^>]*class="([^"]+)"', html)


def test_a_widget_cell_saves_its_picture_then_its_view(tmp_path):
    """What GitHub and nbviewer read: per widget cell, a text/html picture output, then
    the view (with a text summary) and no second copy of the picture."""
    nb = _executed(tmp_path)
    for cell, want in zip(nb.cells[1:], PICTURES, strict=True):
        picture, view = cell.outputs
        assert set(picture.data) == {"text/html", "text/plain"}
        assert _pictures(picture.data["text/html"]) == want
        assert 'class="mn-static"' in picture.data["text/html"]
        assert set(view.data) == {WIDGET_VIEW, "text/plain"}
        assert view.data[WIDGET_VIEW]["model_id"] in (
            nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"])


def test_nbconvert_with_widget_state_shows_each_picture(tmp_path):
    """The plain export of an executed notebook (widget state kept) holds every picture,
    each just before its widget's view tag, which the widget manager draws online."""
    from nbconvert import HTMLExporter

    nb = _executed(tmp_path)
    body, _ = HTMLExporter().from_notebook_node(nb)
    statics = body.split('<div class="mn-static">')[1:]
    assert [_pictures(s.split("</div><style>")[0]) for s in statics] == PICTURES
    for s in statics:  # each picture is followed by its own view, before the next picture
        assert s.count(f'<script type="{WIDGET_VIEW}">') == 1
    assert body.count(".jp-OutputArea-child:has(+ .jp-OutputArea-child .widget-subarea") == 4


def test_nbconvert_without_widget_state_shows_the_pictures(tmp_path):
    """Saved without widget state and exported: each widget's output is its static
    picture, once, and no empty widget placeholder."""
    from nbconvert import HTMLExporter

    nb = _executed(tmp_path)
    nb.metadata.pop("widgets", None)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert _pictures(body) == [c for p in PICTURES for c in p]
    assert f'<script type="{WIDGET_VIEW}">' not in body  # no empty placeholder
    (tmp_path / "static.html").write_text(body, encoding="utf-8")
