"""In a real browser, HTML made from a hostile capture runs none of it.

Every payload in the capture sets ``window.__pwned`` if it runs; the pages are the
static HTML of ``Trace._repr_html_`` and the widgets' pure renderers, and a notebook
that shows the trace, executed and exported to HTML with nbconvert (what people share).
Headless Debian Chromium through Playwright; requests that are not local are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.widgets import render

from .escaping import ENTITIES, SCRIPT, hostile_capture

pytestmark = pytest.mark.browser

LOCAL = ("file://", "data:", "about:", "blob:")


@pytest.fixture(scope="module")
def page(browser):
    """A page of the session's shared Chromium that refuses every request not local."""
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.route("**/*", lambda r: r.continue_() if r.request.url.startswith(LOCAL)
             else r.abort())
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    ctx.close()


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> mn.Trace:
    return mn.load(hostile_capture(tmp_path_factory.mktemp("hostile")))


def _assert_nothing_ran(page, shows: list[str]) -> None:
    page.wait_for_timeout(300)  # let any onerror / onload handler fire, were there one
    assert page.evaluate("window.__pwned") is None
    live = page.evaluate("Array.from(document.querySelectorAll('script, img, svg, iframe, a'))"
                         ".filter(e => e.outerHTML.includes('__pwned')).length")
    assert live == 0
    assert page.dialogs == []
    text = page.evaluate("document.body.innerText")
    for s in shows:
        assert s in text


def test_the_canary_catches_markup_that_is_not_escaped(page, tmp_path: Path) -> None:
    doc = tmp_path / "raw.html"
    doc.write_text('<body><img src=x onerror="window.__pwned=2"></body>', "utf-8")
    page.goto(doc.as_uri())
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") == 2


def test_static_html_of_every_renderer(page, trace: mn.Trace, tmp_path: Path) -> None:
    f = trace.frames
    parts = [trace._repr_html_(), render.STYLE,
             render.summary_html(trace.summary(), trace.latency_by_method()),
             render.violations_html(trace.violations.to_dict("records"))]
    for seq in range(len(f)):
        row = f.iloc[seq].to_dict()
        parts.append(render.frame_html(row, trace.message(seq), row["raw"], f"#{seq}"))
    doc = tmp_path / "hostile.html"
    doc.write_text("<!doctype html><meta charset=utf-8><body>" + "\n".join(parts) + "</body>",
                   "utf-8")
    page.goto(doc.as_uri())
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    _assert_nothing_ran(page, [SCRIPT, ENTITIES])


@pytest.mark.slow
def test_exported_notebook_html(page, trace: mn.Trace, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    path = trace.paths[0]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (
        f"import mcp_notebook as mn\nt = mn.load({path!r})\nt",
        "t.frames[['kind', 'method', 'raw']]",
        "t.violations[['rule', 'message']]",
        "from IPython.display import HTML\nfrom mcp_notebook.widgets import render\n"
        "HTML(render.frame_html(t.frames.iloc[3].to_dict(), t.message(3), t.frames.raw[3], 'x'))",
    )])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    html, _ = HTMLExporter().from_notebook_node(nb)
    doc = tmp_path / "exported.html"
    doc.write_text(html, "utf-8")
    page.goto(doc.as_uri())
    _assert_nothing_ran(page, [SCRIPT, ENTITIES])
