"""Each widget's static picture in a live JupyterLab and Notebook 7: the live views draw
and their pictures hide, so nothing shows twice (the exported pages are in
``test_static_pictures.py``). Screenshots go to ``tests/artifacts/static/``."""

from __future__ import annotations

import pytest
from labhelpers import run_cells
from pictures import cells, live_views_hide_their_pictures

pytestmark = pytest.mark.browser


@pytest.fixture
def shots(artifacts):
    out = artifacts / "static"
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_live_lab_shows_the_widgets_not_the_pictures(lab_page, shots):
    run_cells(lab_page, cells())  # in the module's Lab page and kernel
    live_views_hide_their_pictures(lab_page, shots, "lab")


def test_live_notebook7_shows_the_widgets_not_the_pictures(notebook7_page, shots):
    run_cells(notebook7_page, cells())  # in the worker's Notebook 7 page and kernel
    live_views_hide_their_pictures(notebook7_page, shots, "notebook7")
