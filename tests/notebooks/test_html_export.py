"""The executed notebooks export to HTML that renders offline, widgets included.

nbconvert's HTMLExporter points at local copies of require.js, the ipywidgets html-manager
(``embed-amd.js``) and anywidget's AMD module, fetched once by
``scripts/fetch_widget_js.py`` into a git-ignored cache. What the page needs offline is
checked here on its text, for every notebook: no remote script or style, the local
loaders, each saved widget view with its model's state (and every model that state names)
embedded in the page. ``make handouts`` writes the same export with only its links turned
to the pages (checked here too), so the handout pages' browser test
(``test_handouts.py``: every saved view drawn, each helper's views by their classes, the
timeline's canvas, no request leaving the machine, screenshots) is this export's rendering
in headless Chromium, one page load per notebook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import script_module

from .conftest import REPO, notebook_paths, without_solutions
from .test_handouts import DRAWN, expected_views

NAMES = [p.stem for p in notebook_paths()]
STATE = re.compile(r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)</script>',
                   re.S)
VIEW = re.compile(r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>',
                  re.S)
RENDERER = re.compile(r"widgetRendererSrc = '([^']*)'")
MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def _export(nb) -> str:
    return script_module(REPO / "scripts" / "make_handouts.py").page_html(nb)


def offline_defects(body: str, views: int) -> list[str]:
    """What keeps the page ``body`` from drawing its ``views`` saved widget views offline."""
    defects = [f"a remote script or style: {u}"
               for u in re.findall(r"""(?:src|href)=["'](https?://[^"']*)""", body)]
    if not re.search(r"""<script[^>]*src=["']require\.js["']""", body):
        defects.append("no local require.js")
    # nbconvert's template adds the widget manager's script from JavaScript, once the page
    # is parsed: each source it may pick must be the local copy
    renderers = set(RENDERER.findall(body))
    if views and renderers != {"embed-amd.js"}:
        defects.append(f"the widget manager comes from {sorted(renderers)}, not embed-amd.js")
    shown = [json.loads(v)["model_id"] for v in VIEW.findall(body)]
    if len(shown) != views:
        defects.append(f"{len(shown)} widget views in the page, the notebook saved {views}")
    states = STATE.findall(body)
    if views and len(states) != 1:
        defects.append(f"{len(states)} widget states in the page")
    models = json.loads(states[0])["state"] if states else {}
    wanted, seen = list(shown), set()
    while wanted:  # each view's model and every model its state refers to
        model = wanted.pop()
        if model in seen:
            continue
        seen.add(model)
        if model not in models:
            defects.append(f"model {model} has no state in the page")
            continue
        wanted += MODEL_REF.findall(json.dumps(models[model]["state"]))
    return defects


@pytest.mark.parametrize("name", NAMES)
def test_exported_notebook_has_all_it_needs_offline(executed, exported, name):
    nb = without_solutions(executed(name)[0])
    views, _ = expected_views(nb)
    body = exported(name)
    assert offline_defects(body, views) == []
    title = nb.cells[0].source.splitlines()[0][2:]
    assert re.search(r"<h1[^>]*>" + re.escape(title), body)


def test_offline_defects_are_found(executed, exported):
    """The check above fails on the defects it is for: a view without state, a remote
    script, the widget state not saved at all."""
    nb = without_solutions(executed("00-start")[0])
    views, _ = expected_views(nb)
    assert views, "00-start saves its explorer"
    body = exported("00-start")
    model = json.loads(VIEW.findall(body)[0])["model_id"]
    assert offline_defects(body.replace(f'"{model}": {{', '"gone": {', 1), views)
    assert offline_defects(body.replace('src="require.js"', 'src="https://cdn.x/r.js"'), views)
    from nbconvert import HTMLExporter

    cdn, _ = HTMLExporter(require_js_url="require.js", mathjax_url="").from_notebook_node(nb)
    assert any("widget manager comes from" in d for d in offline_defects(cdn, views))
    nb.metadata.pop("widgets", None)
    assert any("no state" in d or "widget states" in d for d in offline_defects(_export(nb), views))


@pytest.mark.parametrize("name", DRAWN)
def test_the_handout_is_this_export_with_its_links_turned(exported, tmp_path: Path, name):
    """So the handout pages' browser test renders this export: the page ``make handouts``
    writes is this export but for the targets of its links, which point at pages that
    exist. On the pages that test draws (``DRAWN``), the ones this equality is for; every
    page's text is checked in both modules. (The script's whole run, executing and
    exporting a notebook itself, is ``test_handouts.py``'s first test.)"""
    mh = script_module(REPO / "scripts" / "make_handouts.py")
    body = exported(name)
    handout = mh.write_page(body, name, tmp_path).read_text(encoding="utf-8")

    def unlinked(text: str) -> str:
        return re.sub(r'href="[^"]*"', 'href=""', text)

    assert unlinked(handout) == unlinked(body)
    pages = {f"{n}.html" for n in NAMES} | {"index.html"}
    links = set(re.findall(r'href="([^"#:]+\.(?:html|ipynb|md))"', handout))
    assert links and links <= pages, links - pages
