"""The four views of one sample and their static pictures, for the picture tests in an
exported page (``test_static_pictures.py``) and in live Lab and Notebook 7
(``test_static_pictures_live.py``)."""

from __future__ import annotations

import mcp_notebook as mn

VIEWS = ["mn.explore(t)", "mn.timeline(t)", "mn.sequence(t)", "mn.inspect(t)"]
# what each view's picture holds, in cell order
PICTURES = [["mn-timeline-snapshot", "mn-snapshot-table"], ["mn-timeline-snapshot"],
            ["mn-sequence"], ["mn-snapshot-table"]]
SAMPLE = "broken-duplicate-response"
VISIBLE = "e => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)"


def cells() -> list[str]:
    return [f"import mcp_notebook as mn\nt = mn.load({str(mn.sample_path(SAMPLE))!r})", *VIEWS]


def picture_blocks(page) -> list[dict]:
    """Each ``.mn-static`` block: is it on screen, and the classes of its SVGs."""
    return page.evaluate(f"""() => Array.from(document.querySelectorAll('.mn-static'))
        .filter(e => !e.parentElement.closest('.mn-static')).map(e => ({{
          shown: ({VISIBLE})(e), height: e.getBoundingClientRect().height,
          svgs: Array.from(e.querySelectorAll('svg')).filter(s => !s.parentElement
            .closest('svg')).map(s => s.getAttribute('class'))}}))""")


def live_views_hide_their_pictures(page, shots, app: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.locator(".mn-explorer").first.wait_for(state="visible", timeout=60_000)
    page.locator(".jp-OutputArea-output:not(.jp-RenderedHTMLCommon) svg.mn-sequence").wait_for(
        state="visible", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.mn-static').length >= 4",
                           timeout=60_000)
    try:  # the live views hide their pictures as they draw: wait for that, then check it
        page.wait_for_function(f"""() => !Array.from(document.querySelectorAll('.mn-static'))
            .some({VISIBLE})""", timeout=10_000)
    except PlaywrightTimeout:
        pass  # the assertion below says which picture stayed on screen
    page.screenshot(path=str(shots / f"{app}-live.png"), full_page=True)
    pictures = picture_blocks(page)
    assert len(pictures) == len(VIEWS), (app, pictures)
    assert not any(p["shown"] for p in pictures), (app, pictures)
    assert page.external_requests == [], app
