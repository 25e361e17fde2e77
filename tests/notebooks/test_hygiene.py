"""The notebooks in git are clean, well formed, in sync with their sources, and teach the
checker's own rules with the catalogue's own words."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from mcp_notebook.protocol.rules import RULES
from mcp_notebook.teach import FAULTS

from .conftest import NB_DIR, REPO, SOLUTIONS, has_exercises, notebook_paths

PATHS = notebook_paths()
IDS = [p.stem for p in PATHS]
CODES = {r.code for r in RULES}
NAME = re.compile(r"^\d\d-[a-z]+(-[a-z]+)*\.ipynb$")  # NN-verb-noun; 00-start


def _read(path):
    return nbformat.read(path, as_version=4)


def test_notebooks_exist():
    assert PATHS, "no notebook found in notebooks/"
    assert [p.name[:2] for p in PATHS] == [f"{i:02d}" for i in range(len(PATHS))]


def problems(path: Path) -> list[str]:
    """What is wrong with one notebook file: its name, title, outputs, solution files."""
    found = []
    if not NAME.match(path.name):
        found.append(f"name {path.name!r} is not NN-verb-noun.ipynb")
    nb = _read(path)
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown" or not first.source.startswith("# "):
        found.append("the first cell is not an H1 title")
    elif "You will learn" not in first.source:
        found.append("no 'You will learn' in the first cell")
    if sum(c.source.startswith("# ") for c in nb.cells if c.cell_type == "markdown") > 1:
        found.append("more than one H1")
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            found.append(f"outputs committed: {cell.source[:40]!r}")
    if "widgets" in nb.metadata:
        found.append("widget state committed")
    if nb.metadata.get("kernelspec", {}).get("name") != "python3":
        found.append("kernelspec is not python3")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if has_exercises(nb) and not (path.parent / "instructor" / "solutions" /
                                  f"{path.stem}.py").is_file():
        found.append("an exercise notebook has no instructor solution")
    for leak in ("%load", "solutions/", "._key", ".solution()", "_planted"):
        if leak in code:
            found.append(f"an answer key reaches the learner: {leak!r}")
    return found


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_is_clean(path):
    assert problems(path) == []


def test_the_hygiene_check_catches_what_it_should(tmp_path):
    """Each kind of mistake is reported, on notebooks written for the purpose."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    def write(name, cells):
        nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                                "display_name": "Python 3"}})
        nbformat.write(nb, tmp_path / name)
        return tmp_path / name

    good_head = new_markdown_cell("# Title\n\n**You will learn**")
    no_title = write("01-read-frames.ipynb", [new_markdown_cell("Some text")])
    ran = new_code_cell("1 + 1", execution_count=1,
                        outputs=[new_output("execute_result", {"text/plain": "2"},
                                            execution_count=1)])
    with_output = write("02-run-cells.ipynb", [good_head, ran])
    ask = new_code_cell('ex = mn.teach.exercise("answered-twice", learner=LEARNER)')
    unsolved = write("03-find-twice.ipynb", [good_head, ask])
    leaky = write("04-leak-keys.ipynb", [good_head, new_code_cell("# %load solutions/04.py"),
                                         new_code_cell("ex.solution()")])
    assert "the first cell is not an H1 title" in problems(no_title)
    assert any(p.startswith("outputs committed") for p in problems(with_output))
    assert problems(unsolved) == ["an exercise notebook has no instructor solution"]
    assert problems(leaky) == ["an answer key reaches the learner: '%load'",
                               "an answer key reaches the learner: 'solutions/'",
                               "an answer key reaches the learner: '.solution()'"]
    (tmp_path / "instructor" / "solutions").mkdir(parents=True)
    (tmp_path / "instructor" / "solutions" / "03-find-twice.py").write_text("pass\n")
    assert problems(unsolved) == []
    assert problems(write("Bad Name.ipynb", [good_head])) == [
        "name 'Bad Name.ipynb' is not NN-verb-noun.ipynb"]


def test_no_orphan_solution_files():
    present = {p.stem for p in SOLUTIONS.glob("*.py")}
    assert present == {p.stem for p in PATHS if has_exercises(_read(p))} | {
        "07-write-your-own-rule"}
    assert not (NB_DIR / "solutions").exists(), "solutions belong to the instructor guide"


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


def copied_specs(markdown: str) -> list[str]:
    """Rules whose spec text (any run of 8 words, or all of a shorter one) is in ``markdown``."""
    prose = " ".join(_words(markdown))
    out = []
    for r in RULES:
        words = _words(r.spec)
        n = min(8, len(words))
        if any(" ".join(words[i:i + n]) in prose for i in range(len(words) - n + 1)):
            out.append(r.code)
    return out


def test_markdown_quotes_no_spec_sentence_by_hand():
    """Spec sentences reach the notebooks through the catalogue (``cite``), never as copies."""
    markdown = "\n".join(c.source for p in PATHS for c in _read(p).cells
                         if c.cell_type == "markdown")
    assert copied_specs(markdown) == []


def test_the_copy_check_catches_a_quote():
    quote = "> Notifications **MUST NOT** include an ID. (MCP, basic/index.mdx)"
    assert copied_specs(quote) == ["notification-with-id"]
    part = "as the spec puts it, the error member **MUST** be included, but both members..."
    assert set(copied_specs(part)) >= {"result-and-error", "response-neither"}
    assert copied_specs("A notification has no id, and nobody answers it.") == []


# -- navigation and the plan ---------------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_navigation_links_previous_contents_next(path):
    nb = _read(path)
    nav = nb.cells[1].source
    assert nb.cells[-1].source == nav and "[Contents](README.md)" in nav
    i = IDS.index(path.stem)
    links = re.findall(r"\]\(([^)]+\.ipynb)\)", nav)
    expected = ([f"{IDS[i - 1]}.ipynb"] if i else []) + (
        [f"{IDS[i + 1]}.ipynb"] if i + 1 < len(IDS) else [])
    assert links == expected
    assert all((NB_DIR / link).exists() for link in links)


def _plan() -> list[tuple[str, int, str]]:
    rows = []
    for line in (NB_DIR / "README.md").read_text().split("## The workshop plan", 1)[1].split(
            "\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) == 5 and re.fullmatch(r"\d+ min", cells[3]):
            name = re.search(r"`(\d\d-[a-z-]+)\.ipynb`", cells[0])
            rows.append((name.group(1) if name else cells[0], int(cells[3].split()[0]),
                         cells[4]))
    return rows


def test_core_path_fits_in_90_minutes_with_a_break_and_each_notebook_says_its_time():
    plan = _plan()
    core = [(n, m) for n, m, path in plan if path == "core"]
    assert sum(m for _, m in core) <= 90 and any("break" in n for n, _ in core)
    assert {n for n, _, _ in plan if not n.startswith("*")} == set(IDS)
    for name, minutes, path in plan:
        if name.startswith("*"):
            continue
        head = _read(NB_DIR / f"{name}.ipynb").cells[0].source
        stated = re.search(r"\*About (\d+) minutes \(([^)]*)\)", head)
        assert stated and int(stated.group(1)) == minutes, name
        assert (path == "core") == stated.group(2).startswith("core"), name


def test_instructor_answers_are_current():
    spec = importlib.util.spec_from_file_location("answers", NB_DIR / "instructor" / "answers.py")
    answers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(answers)
    assert (NB_DIR / "instructor" / "answers.md").read_text() == answers.document(), (
        "run python notebooks/instructor/answers.py --write")
