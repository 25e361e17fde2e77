"""Shared by the notebook tests: where the notebooks are, running them once, a browser.

``executed(name)`` runs a notebook with nbclient (kernel ``python3``, a timeout per cell)
once per test session, with its solution appended and checked (see ``SOLUTION_CHECKS``);
the HTML test drops those extra cells again before exporting.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NB_DIR = REPO / "notebooks"
CELL_TIMEOUT = 60  # seconds per cell; every cell here takes well under one
SOLUTION_TAG = "test-solution"
SOLUTIONS = NB_DIR / "instructor" / "solutions"  # outside the learners' notebooks
#: how nbclient ends a kernel once every cell has run and its outputs are in: at once (the
#: default, "graceful", asks the kernel to shut down and waits for it, 1.3 to 1.8 s a
#: notebook here, which checks nothing of the notebook)
KERNEL_SHUTDOWN = "immediate"
EXERCISE_CALL = re.compile(r"mn\.teach\.(?:exercise|classify|respond)\(")

#: What must hold after a notebook's solution has run (default: every exercise graded right).
DEFAULT_CHECK = """
assert ANSWERS, "the solution answers no exercise"
for exercise_, answer_ in ANSWERS:
    feedback = exercise_.check(answer_)
    assert feedback.correct, f"{exercise_.name}: {feedback}"
    print(feedback)
"""
SOLUTION_CHECKS = {
    "07-write-your-own-rule": """
rows = {k: test(v, check_progress_after_cancel)
        for k, v in {"reference": pc, "demo": demo, "replayed": moved}.items()}
assert all(r["ok"] for r in rows.values()), rows
assert rows["reference"]["found"] and rows["replayed"]["found"], rows
""",
}


def notebook_paths() -> list[Path]:
    return sorted(NB_DIR.glob("*.ipynb"))


def has_exercises(nb: nbformat.NotebookNode) -> bool:
    return any(c.cell_type == "code" and EXERCISE_CALL.search(c.source) for c in nb.cells)


def solution_file(name: str) -> Path:
    """The instructor's solution of a notebook (kept outside the learners' notebooks)."""
    return SOLUTIONS / f"{name}.py"


def with_solutions(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(nb)
    path = solution_file(name)
    if path.exists():
        for source in (f"%run -i {path.relative_to(NB_DIR).as_posix()}",
                       SOLUTION_CHECKS.get(name, DEFAULT_CHECK)):
            cell = nbformat.v4.new_code_cell(source.strip())
            cell.metadata["tags"] = [SOLUTION_TAG]
            nb.cells.append(cell)
    return nb


def without_solutions(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(nb)
    nb.cells = [c for c in nb.cells if SOLUTION_TAG not in c.metadata.get("tags", [])]
    return nb


def copy_tutorial(dest: Path) -> Path:
    """The tutorial as a learner gets it (``mcp-notebook notebooks DEST``: the package's
    copy), with the instructor's solutions beside it, as ``with_solutions`` runs them."""
    from mcp_notebook.bundled import copy_notebooks

    copy_notebooks(dest)
    shutil.copytree(SOLUTIONS, dest / "instructor" / "solutions")
    return dest


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``get(name) -> (executed notebook, seconds)``, each notebook run once per session
    (under pytest-xdist, once across the workers: the others read the first one's).

    The notebook runs from a copy of the tutorial outside the checkout (as a learner runs
    it, ``copy_tutorial``), so a notebook that reads a file of the checkout fails here: the
    installed wheel's run of the tutorial (tests/package/test_installed.py) then needs to
    repeat only what differs there, the package's files and its dependencies."""
    from nbclient import NotebookClient

    from helpers import once_per_session

    cache: dict[str, tuple[nbformat.NotebookNode, float]] = {}
    tutorial: list[Path] = []

    def run(name: str) -> tuple[nbformat.NotebookNode, float]:
        if not tutorial:
            tutorial.append(copy_tutorial(tmp_path_factory.mktemp("tutorial") / "tutorial"))
        here = tutorial[0]
        nb = with_solutions(nbformat.read(here / f"{name}.ipynb", as_version=4), name)
        start = time.perf_counter()
        NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, startup_timeout=120,
                       shutdown_kernel=KERNEL_SHUTDOWN,
                       resources={"metadata": {"path": str(here)}}).execute()
        return nb, time.perf_counter() - start

    def dump(value: tuple[nbformat.NotebookNode, float]) -> str:
        return json.dumps({"notebook": value[0], "seconds": value[1]})

    def load(text: str) -> tuple[nbformat.NotebookNode, float]:
        got = json.loads(text)
        return nbformat.from_dict(got["notebook"]), got["seconds"]

    def get(name: str) -> tuple[nbformat.NotebookNode, float]:
        if name not in cache:
            cache[name] = once_per_session(tmp_path_factory, f"notebook-{name}",
                                           lambda: run(name), dump, load)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def exported(tmp_path_factory, executed):
    """``get(name) -> str``: the page ``make handouts`` makes of each executed notebook
    (``scripts/make_handouts.py``'s ``page_html``, solutions taken out), before its links are
    turned; made once per session, across the workers, as ``executed`` is."""
    from helpers import once_per_session, script_module

    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            mh = script_module(REPO / "scripts" / "make_handouts.py")
            cache[name] = once_per_session(
                tmp_path_factory, f"html-{name}",
                lambda: mh.page_html(without_solutions(executed(name)[0])), str, str)
        return cache[name]

    return get


# -- a headless browser that may only load local files (for the HTML export test) ------------

LOCAL = ("file://", "data:", "blob:", "about:")




@pytest.fixture
def page(browser):
    """A page that aborts and records every request that is not a local file."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.outside, pg.failed, pg.errors = [], [], []

    def guard(route):
        url = route.request.url
        if url.startswith(LOCAL):
            route.continue_()
        else:
            pg.outside.append(url)
            route.abort()

    pg.route("**/*", guard)
    pg.on("requestfailed", lambda r: pg.failed.append(r.url))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    ctx.close()
