"""Every teaching notebook runs top to bottom on the bundled traces, solutions included.

Each notebook is executed by nbclient with the ``python3`` kernel and a timeout per cell;
its solution file is run after it and must grade every exercise as correct. A cell error
fails the test with the cell's traceback.
"""

from __future__ import annotations

import pytest

from .conftest import NB_DIR, SOLUTION_TAG, notebook_paths

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NAMES = [p.stem for p in notebook_paths()]


def _outputs(nb):
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            yield cell, out


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(executed, name):
    nb, seconds = executed(name)
    errors = [out for _, out in _outputs(nb) if out.get("output_type") == "error"]
    assert errors == []
    ran = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.get("execution_count") for c in ran), "a code cell did not run"
    print(f"{name}: {seconds:.1f} s")


@pytest.mark.parametrize("name", NAMES)
def test_widgets_are_views_with_saved_state(executed, name):
    """A cell that shows a widget leaves a view, and its model state is saved with the notebook."""
    nb, _ = executed(name)
    calls = [c for c in nb.cells if c.cell_type == "code"
             and any(f"mn.{w}(" in c.source for w in ("explore", "timeline", "inspect", "sequence"))]
    views = [out for _, out in _outputs(nb) if WIDGET_VIEW in out.get("data", {})]
    assert len(views) == len(calls)
    if views:
        state = nb.metadata["widgets"][WIDGET_STATE]["state"]
        assert all(v["data"][WIDGET_VIEW]["model_id"] in state for v in views)


def test_start_notebook_checks_the_install(executed):
    nb, _ = executed("00-start")
    check = next(c for c in nb.cells if "check_install()" in c.source)
    text = check.outputs[0]["data"]["text/plain"]
    assert "False" not in text and text.count("True") >= 7


@pytest.mark.parametrize("name", [n for n in NAMES if n[:2] in ("01", "02", "03", "04", "05",
                                                                "06")])
def test_solutions_grade_right(executed, name):
    """The solution cells ran (they are appended by the fixture) and passed their checks."""
    nb, _ = executed(name)
    appended = [c for c in nb.cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    assert len(appended) >= 2
    texts = "".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
                    for c in appended for out in c.get("outputs", []))
    assert "Correct!" in texts and "Not yet" not in texts


def test_every_notebook_is_found():
    assert (NB_DIR / "00-start.ipynb").exists()
    assert len(NAMES) >= 8
