"""The notebooks in git are clean, well formed, in sync with their sources, and teach the
checker's own rules with the catalogue's own words."""

from __future__ import annotations

import importlib.util
import re

import nbformat
import pytest

from mcp_notebook.core.rules import RULES
from mcp_notebook.teach import FAULTS

from .conftest import NB_DIR, REPO, notebook_paths, solution_files

PATHS = notebook_paths()
IDS = [p.stem for p in PATHS]
CODES = {r.code for r in RULES}
NAME = re.compile(r"^\d\d-[a-z]+(-[a-z]+)*\.ipynb$")  # NN-verb-noun; 00-start


def _read(path):
    return nbformat.read(path, as_version=4)


def test_notebooks_exist():
    assert PATHS, "no notebook found in notebooks/"
    assert [p.name[:2] for p in PATHS] == [f"{i:02d}" for i in range(len(PATHS))]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_name_title_and_what_you_will_learn(path):
    assert NAME.match(path.name), path.name
    nb = _read(path)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith("# "), "the first cell starts with an H1 title"
    assert "You will learn" in first.source
    assert sum(c.source.startswith("# ") for c in nb.cells if c.cell_type == "markdown") == 1


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_no_outputs_committed(path):
    nb = _read(path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert "widgets" not in nb.metadata
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_solution_files_exist(path):
    nb = _read(path)
    loads = solution_files(nb)
    if path.stem[:2] != "00":
        assert loads, "an exercise notebook loads its solution"
    for rel in loads:
        assert (NB_DIR / rel).is_file(), f"{path.name} loads {rel}, which is missing"


def test_no_orphan_solution_files():
    used = {rel for p in PATHS for rel in solution_files(_read(p))}
    present = {f"solutions/{p.name}" for p in (NB_DIR / "solutions").iterdir() if p.is_file()}
    assert present == used


def test_notebooks_match_their_sources():
    spec = importlib.util.spec_from_file_location("build_notebooks",
                                                  REPO / "scripts" / "build_notebooks.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    sources = sorted((NB_DIR / "source").glob("[0-9][0-9]-*.py"))
    assert [s.stem for s in sources] == IDS
    for src in sources:
        assert build.render(build.build(src)) == (NB_DIR / f"{src.stem}.ipynb").read_text(), (
            f"{src.stem}.ipynb is stale: run python scripts/build_notebooks.py")


def test_index_lists_every_notebook_with_its_time():
    index = (NB_DIR / "README.md").read_text()
    for stem in IDS:
        row = next((line for line in index.splitlines()
                    if line.startswith("|") and f"{stem}.ipynb" in line), None)
        assert row is not None, f"notebooks/README.md does not list {stem}"
        assert re.search(r"\b\d+ min\b", row), f"no timing for {stem} in the index"


# -- the rules taught are the checker's rules, quoted from the catalogue --------------------

_CITED = re.compile(r"(?:cite|rule)\(([^()]*)\)")
_QUOTED = re.compile(r"[\"']([a-z0-9]+(?:-[a-z0-9]+)+)[\"']")
_RULE_QUERY = re.compile(r"rule == [\"']([a-z0-9-]+)[\"']")
_EXERCISE = re.compile(r"exercise\([\"']([a-z0-9-]+)[\"']")


def _code(path):
    return "\n".join(c.source for c in _read(path).cells if c.cell_type == "code")


def _rule_codes(code: str) -> set[str]:
    named = {q for args in _CITED.findall(code) for q in _QUOTED.findall(args)}
    return named | set(_RULE_QUERY.findall(code))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_code_names_only_rules_and_exercises_that_exist(path):
    code = _code(path)
    assert _rule_codes(code) <= CODES, _rule_codes(code) - CODES
    assert set(_EXERCISE.findall(code)) <= set(FAULTS)


@pytest.mark.parametrize("stem", ["02-result-or-error", "03-pairing-by-id", "04-notifications",
                                  "05-cancellation-and-progress"])
def test_teaching_notebooks_cite_the_catalogue(stem):
    code = _code(NB_DIR / f"{stem}.ipynb")
    cited = {q for args in re.findall(r"cite\(([^()]*)\)", code) for q in _QUOTED.findall(args)}
    assert len(cited) >= 3
    exercises = _EXERCISE.findall(code)
    assert exercises and {FAULTS[e].rule for e in exercises} <= cited | {"unanswered-request"}


def _words(text: str) -> list[str]:
    text = re.sub(r"[*_`>“”\"]", " ", text.lower())
    return re.findall(r"[a-z0-9.#§/+-]+", text)


def test_markdown_quotes_no_spec_sentence_by_hand():
    """Spec sentences reach the notebooks through the catalogue (``cite``), never as copies."""
    prose = " ".join(" ".join(_words(c.source)) for p in PATHS for c in _read(p).cells
                     if c.cell_type == "markdown")
    for r in RULES:
        words = _words(r.spec)
        n = min(8, len(words))
        for i in range(len(words) - n + 1):
            window = " ".join(words[i:i + n])
            assert window not in prose, f"the markdown copies the spec of {r.code}: {window!r}"
