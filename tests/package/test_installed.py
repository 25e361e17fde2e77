"""A user's first session with the installed wheel, nothing of the checkout on the path:
the bundled traces, the README example, the tutorial copied out and run, ``open``.

Slow (a fresh environment, then notebooks run by real kernels): ``-m "not slow"`` skips it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from notebooks.conftest import SOLUTIONS, solution_file, with_solutions

from .conftest import REPO

pytestmark = pytest.mark.slow

#: run inside the fresh environment: execute notebooks, print one JSON line per notebook
RUN_NOTEBOOKS = r'''
import json, sys, time
from pathlib import Path
import nbformat
from nbclient import NotebookClient

PREFIX = sys.argv[1]
GUARD = ("import sys, mcp_notebook\n"
         f"assert sys.prefix == {PREFIX!r}, sys.prefix\n"
         f"assert mcp_notebook.__file__.startswith({PREFIX!r}), mcp_notebook.__file__")
for name in sys.argv[2:]:
    path = Path(name)
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(GUARD))  # this kernel runs the wheel's copy
    start = time.perf_counter()
    error = None
    try:
        NotebookClient(nb, kernel_name="python3", timeout=120, startup_timeout=120,
                       shutdown_kernel="immediate",  # as tests/notebooks: KERNEL_SHUTDOWN
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[-3000:]
    ran = sum(1 for c in nb.cells if c.cell_type == "code" and c.get("execution_count"))
    code = sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip())
    print(json.dumps({"name": path.name, "error": error, "ran": ran, "code": code,
                      "seconds": round(time.perf_counter() - start, 1)}), flush=True)
'''


def _execute(installed, *notebooks: Path) -> list[dict]:
    script = installed.home / "run_notebooks.py"
    script.write_text(RUN_NOTEBOOKS, encoding="utf-8")
    done = installed.run("python", script, installed.prefix, *notebooks, timeout=1200)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_wheel_carries_traces_and_notebooks_but_no_c_sources(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = sorted(Path(n).name for n in names if n.startswith("mcp_notebook/data/"))
    assert data == sorted(p.name for p in (REPO / "data").iterdir()
                          if p.is_file() and not p.name.startswith("."))
    nbs = sorted(Path(n).name for n in names if re.match(r"mcp_notebook/notebooks/[^/]+$", n))
    assert nbs == sorted(p.name for p in (REPO / "notebooks").glob("*")
                         if p.suffix in (".ipynb", ".md"))
    # the answer keys stay with the instructor (notebooks/instructor/), out of the wheel
    assert not [n for n in names if "/solutions/" in n or "/instructor/" in n]
    assert not [n for n in names if n.endswith((".c", ".h"))]
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert "Model Context Protocol" in zipfile.ZipFile(wheel).read(licence).decode()


def test_bundled_traces_from_the_installed_package(installed):
    out = installed.python(
        "import mcp_notebook as mn, pathlib\n"
        "p = mn.sample_path('demo-stdio')\n"
        "print(p)\n"
        "d = mn.datasets()\n"
        "print(len(d), sorted(d['name']) == sorted(q.stem for q in p.parent.iterdir() "
        "if q.suffix in ('.jsonl', '.har', '.gz')), (d['about'] != '').all())\n"
        "print(mn.load(p).summary()['pairs'])\n"
        "ex = mn.teach.exercise('answered-twice', seed=0)\n"
        "print(ex.trace.paths[0])\n").stdout.splitlines()
    assert Path(out[0]).is_relative_to(installed.prefix) and Path(out[0]).name == \
        "demo-stdio.jsonl"
    traces = [p for p in (REPO / "data").iterdir() if p.suffix in (".jsonl", ".har", ".gz")]
    assert out[1] == f"{len(traces)} True True"
    assert int(out[2]) > 0
    assert out[3].endswith(".jsonl")


def test_check_install_passes_in_the_installed_package(installed):
    out = installed.python("import mcp_notebook as mn\n"
                           "r = mn.teach.check_install()\n"
                           "print(r.to_json(orient='records'))").stdout
    rows = json.loads(out)
    failed = [r for r in rows if not r["ok"] and r["check"] != "jupyter widgets"]
    assert failed == [], failed  # the widget front end comes with JupyterLab, not the wheel


def test_readme_example_runs_on_the_bundled_trace(installed):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    code = ("import doctest, sys\n"
            f"t = doctest.DocTestParser().get_doctest({block!r}, {{}}, 'README', 'README', 0)\n"
            "r = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)\n"
            "r.run(t)\n"
            "print('examples', len(t.examples), 'failures', r.failures)\n")
    out = installed.python(code).stdout
    assert re.search(r"examples \d+ failures 0$", out.strip()), out


def test_open_writes_a_notebook_that_validates_and_runs(installed):
    done = installed.run("mcp-notebook", "open", "broken-duplicate-response", "--no-lab",
                         "-o", "broken.ipynb")
    assert "wrote broken.ipynb" in done.stdout
    path = installed.home / "broken.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert "mn.sample_path('broken-duplicate-response')" in nb.cells[1].source
    (result,) = _execute(installed, path)
    assert result["error"] is None, result["error"]
    assert result["ran"] == result["code"]


def test_wheel_carries_every_file_of_the_package(wheel):
    """The package in the wheel is the checkout's, file for file and byte for byte (C
    sources aside): what the notebooks run against in tests/notebooks is what a user installs."""
    from helpers import project_files

    ours = {f: (REPO / f).read_bytes() for f in project_files(REPO)
            if f.startswith("mcp_notebook/") and not f.endswith((".c", ".h"))}
    with zipfile.ZipFile(wheel) as z:
        theirs = {n: z.read(n) for n in z.namelist() if n.startswith("mcp_notebook/")
                  and not n.startswith(("mcp_notebook/data/", "mcp_notebook/notebooks/"))
                  and not n.endswith((".so", ".pyd"))}
    assert sorted(theirs) == sorted(ours)
    assert [n for n in ours if ours[n] != theirs[n]] == []


#: what the installed tutorial run always executes: the notebook that checks the install
SAMPLE_NOTEBOOKS = ("00-start.ipynb",)


def _versions(python_code_runner) -> dict[str, str]:
    code = ("import json, importlib.metadata as m\n"
            "print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): d.version "
            "for d in m.distributions()}))")
    return json.loads(python_code_runner(code))


def test_copied_tutorial_runs_in_the_installed_package(installed):
    """Every notebook of the tutorial copied by ``mcp-notebook notebooks`` runs in the fresh
    environment, solved and graded by the instructor's solutions.

    tests/notebooks runs each notebook once per session, the same way (a copy outside the
    checkout, the same solutions), against the checkout's package. That run stands for
    this one when nothing else differs: the package's files are the wheel's
    (``test_wheel_carries_every_file_of_the_package``) and every distribution in the fresh
    environment is here at the same version (checked now). Then only ``SAMPLE_NOTEBOOKS``
    run again here (the kernel of the fresh environment runs a notebook at all); if any
    version differs, every notebook does."""
    dest = installed.home / "tutorial"
    done = installed.run("mcp-notebook", "notebooks", dest)
    assert f"jupyter lab {dest}" in done.stdout
    notebooks = sorted(dest.glob("*.ipynb"))
    assert [p.name for p in notebooks] == sorted(p.name for p in (REPO / "notebooks").glob(
        "*.ipynb"))
    assert not (dest / "solutions").exists() and not (dest / "instructor").exists()
    assert all(p.read_bytes() == (REPO / "notebooks" / p.name).read_bytes() for p in notebooks)
    fresh = _versions(lambda code: installed.python(code).stdout)
    here = _versions(lambda code: subprocess.run([sys.executable, "-c", code], check=True,
                                                 capture_output=True, text=True).stdout)
    fresh.pop("mcp-notebook")
    differ = {k: (v, here.get(k)) for k, v in fresh.items() if here.get(k) != v}
    chosen = [p for p in notebooks if differ or p.name in SAMPLE_NOTEBOOKS]
    assert chosen and {p.name for p in chosen} >= set(SAMPLE_NOTEBOOKS)
    (dest / "instructor").mkdir()  # the instructor's solutions, beside the learner's copy
    shutil.copytree(SOLUTIONS, dest / "instructor" / "solutions")
    for path in chosen:  # each exercise solved by the instructor's solution and graded
        nb = nbformat.read(path, as_version=4)
        if solution_file(path.stem).exists():
            nbformat.write(with_solutions(nb, path.stem), path)
    results = _execute(installed, *chosen)
    assert [r["name"] for r in results] == [p.name for p in chosen]
    failed = {r["name"]: r["error"] for r in results if r["error"]}
    assert failed == {}
    assert all(r["ran"] == r["code"] for r in results), results
    print("versions that differ:", differ, {r["name"]: r["seconds"] for r in results})


def test_a_plain_install_has_no_pyarrow_and_says_how_to_get_parquet(installed):
    """What ``pip install mcp_notebook`` (no extra) installs, as pip itself resolves it for
    this wheel (a dry run: the session's venv has the parquet extra for the other tests),
    holds no pyarrow; with pyarrow absent, ``convert --to parquet`` says what to install and
    the other formats work."""
    report = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(installed.bin / "python"), "install",
         "--dry-run", "--ignore-installed", "--quiet", "--disable-pip-version-check",
         "--report", "-", str(installed.wheel)], capture_output=True, text=True, timeout=600,
        check=True, env=installed.env()).stdout
    names = {r["metadata"]["name"].lower().replace("_", "-")
             for r in json.loads(report)["install"]}
    assert {"mcp-notebook", "numpy", "pandas"} <= names and "pyarrow" not in names, names
    no_pyarrow = "import sys\nsys.modules['pyarrow'] = None  # as if not installed\n"
    out = installed.python(
        no_pyarrow + "import mcp_notebook as mn\n"
        "t = mn.load(mn.sample_path('everything-stdio-basics'))  # not ASCII: UTF-8 checked\n"
        "print(len(t), t.frames['raw'].str.contains('[^\\x00-\\x7f]').any())\n").stdout.split()
    assert out == ["34", "True"]
    src = installed.python("import mcp_notebook as mn; print(mn.sample_path('demo-stdio'))"
                           ).stdout.strip()
    cli = no_pyarrow + "from mcp_notebook.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    done = installed.python(cli, "convert", src, "--to", "parquet", "-o", "x.parquet",
                            check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "pip install 'mcp_notebook[parquet]'" in done.stderr
    assert not (installed.home / "x.parquet").exists()
    csv = installed.python(cli, "convert", src, "--to", "csv", "--table", "pairs",
                           "-o", "pairs.csv")
    assert "wrote 24 pairs to pairs.csv" in csv.stdout
