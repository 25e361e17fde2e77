"""The user paths against the built wheel, installed in a fresh virtual environment.

Not the editable checkout: the wheel is built from a copy of the project's files (tracked
and new, not ignored: what a clean clone holds), installed with its dependencies from the
package index into a new venv, and run from a folder outside the checkout without
PYTHONPATH -- so a module, table or static file missing from the package fails here.
Data files are passed by absolute path from the checkout (the wheel holds no ``data/``
yet); where the installed package does bundle traces, ``sample_path`` must find them.

The session's one wheel and fresh venv (tests/conftest.py, shared with tests/package)
are built and installed once (about a minute; pip's cache makes repeats faster); one driver process runs the in-process matrix inside the venv, and a few cases
go through the installed console script. Marked ``slow``: ``make test`` runs it,
``make test-fast`` leaves it out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import WHEEL_ENV_DROP, project_files, run_or_fail

from .conftest import (
    DATA,
    ROOT,
    SEVERITIES,
    assert_clean,
    expected,
    run_parallel,
    sha256,
    strict_json,
)
from .test_help_examples import EXAMPLES

pytestmark = pytest.mark.slow


def _project_files() -> list[str]:
    return project_files(ROOT)


@pytest.fixture(scope="session")
def wheel_env(built_wheel, fresh_venv, tmp_path_factory) -> SimpleNamespace:
    """The session's one wheel and fresh venv (tests/conftest.py: with the parquet extra, as
    a user who converts to parquet installs it; a plain install saying how to get parquet is
    tested in tests/package/test_installed.py), run from a folder outside the checkout."""
    venv = fresh_venv
    outside = tmp_path_factory.mktemp("elsewhere")  # the examples of --help name data/...
    shutil.copytree(ROOT / "data", outside / "data")
    env = {k: v for k, v in os.environ.items() if k not in WHEEL_ENV_DROP}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PYTHONNOUSERSITE="1")
    return SimpleNamespace(python=venv / "bin" / "python", script=venv / "bin" / "mcp-notebook",
                           wheel=built_wheel, venv=venv, cwd=outside, env=env)


def test_the_wheel_holds_every_package_file(wheel_env):
    """Every file of the package in the project (modules, method tables, widget scripts and
    styles, py.typed; the C sources stay in the sdist: the wheel has the scanner built)."""
    names = set(zipfile.ZipFile(wheel_env.wheel).namelist())
    package = [f for f in _project_files() if f.startswith("mcp_notebook/")
               and not f.startswith("mcp_notebook/engine/csrc/")]
    assert package and not [f for f in package if f not in names]
    assert any(n.startswith("mcp_notebook/engine/_native") for n in names), "no C scanner"


_DRIVER = r'''
import contextlib, io, json, os, sys
from pathlib import Path
import mcp_notebook as mn
from mcp_notebook.cli import main
from mcp_notebook.engine import native

cases, scratch = json.loads(sys.argv[1]), Path(sys.argv[2])
report = {"file": mn.__file__, "native": native.native is not None, "cases": {}}
for name, argv in cases.items():
    out, err = io.StringIO(), io.StringIO()
    argv = [a.replace("{tmp}", str(scratch)) for a in argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as stop:
            rc = stop.code
    report["cases"][name] = {"rc": rc, "out": out.getvalue(), "err": err.getvalue()}
try:
    report["sample"] = str(mn.sample_path())
except FileNotFoundError as exc:
    report["sample"] = None
    report["sample_error"] = str(exc)
from mcp_notebook.teach import check_install
report["install"] = check_install().to_dict("records")
print(json.dumps(report))
'''


def _matrix() -> dict[str, list[str]]:
    cases: dict[str, list[str]] = {}
    for rel in DATA:
        path = str(ROOT / rel)
        cases[f"summary --json {rel}"] = ["summary", path, "--json"]
        cases[f"check --json --fail-on info {rel}"] = ["check", path, "--json", "--fail-on",
                                                       "info"]
        cases[f"check {rel}"] = ["check", path]
        cases[f"convert --to parquet {rel}"] = ["convert", path, "--to", "parquet", "--out",
                                                 "{tmp}/" + Path(rel).stem + ".parquet"]
        cases[f"redact {rel}"] = ["redact", path, "--salt", "s", "--out",
                                  "{tmp}/" + Path(rel).stem + ".redacted"]
    cases.update({"rules --json": ["rules", "--json"], "formats": ["formats"],
                  "missing file": ["summary", "{tmp}/missing.jsonl"]})
    for where, line, _ in EXAMPLES:
        cases[f"example {where}: {line}"] = shlex.split(line)
    return cases


MATRIX = _matrix()


@pytest.fixture(scope="session")
def installed(wheel_env, tmp_path_factory) -> dict:
    scratch = tmp_path_factory.mktemp("installed-out")
    before = {rel: sha256(ROOT / rel) for rel in DATA}
    done = run_or_fail([str(wheel_env.python), "-c", _DRIVER, json.dumps(MATRIX), str(scratch)],
                       "the driver in the installed venv", cwd=wheel_env.cwd, env=wheel_env.env)
    report = json.loads(done.stdout.splitlines()[-1])
    report["changed"] = [rel for rel in DATA if sha256(ROOT / rel) != before[rel]]
    report["scratch"] = scratch
    return report


def test_the_installed_package_is_not_the_checkout(wheel_env, installed):
    assert Path(installed["file"]).is_relative_to(wheel_env.venv), installed["file"]
    # the suite on the Python path (MCP_NOTEBOOK_NO_NATIVE=1) switches the wheel's off too
    off = os.environ.get("MCP_NOTEBOOK_NO_NATIVE", "").strip() not in ("", "0")
    assert installed["native"] or off, "the C scanner of the wheel does not import"
    assert installed["changed"] == []


@pytest.mark.parametrize("name", sorted(n for n in MATRIX if not n.startswith("example ")))
def test_installed_cli_agrees_with_the_checkout(installed, name):
    """Each command in the installed package gives what the checkout's library says."""
    got = installed["cases"][name]
    rc, out, err = got["rc"], got["out"], got["err"]
    assert_clean(rc, out, err)
    argv = MATRIX[name]
    rel = next((r for r in DATA if str(ROOT / r) in argv), None)
    want = expected(rel) if rel else None
    if name == "missing file":
        assert rc == 2 and "no such file" in err
    elif argv[0] == "summary":
        s = strict_json(out)
        assert rc == 0 and (s["frames"], s["pairs"]) == (want.frames, want.pairs)
    elif argv[0] == "check":
        fail_on = "info" if "info" in argv else "error"
        assert rc == want.check_status(fail_on)
        if "--json" in argv:
            found = [v["severity"] for v in strict_json(out)["violations"]]
            assert {s: found.count(s) for s in SEVERITIES if s in found} == \
                {k: v for k, v in want.severities.items() if v}
    elif argv[0] == "convert":
        import pandas as pd

        out_file = Path(argv[-1].replace("{tmp}", str(installed["scratch"])))
        assert rc == 0 and len(pd.read_parquet(out_file)) == want.frames
    elif argv[0] == "redact":
        import mcp_notebook as mn

        out_file = Path(argv[-1].replace("{tmp}", str(installed["scratch"])))
        assert rc == 0 and mn.load(out_file).summary()["pairs"] == want.pairs
    elif argv == ["rules", "--json"]:
        from mcp_notebook.protocol.rules import RULES

        assert rc == 0 and [r["code"] for r in strict_json(out)] == [r.code for r in RULES]
    elif argv == ["formats"]:
        import mcp_notebook as mn

        assert rc == 0 and [ln.split()[0] for ln in out.splitlines()] == list(mn.formats())
    else:
        raise AssertionError(f"case {name} has no check")


_NEED_DATA = {"bundled traces", "loader and checker", "views", "exercises"}


@pytest.mark.parametrize("check", ["python", "packages", "jupyter widgets", *sorted(_NEED_DATA)])
def test_check_install_in_the_installed_package(installed, check):
    rows = {r["check"]: r for r in installed["install"]}
    assert check in rows, sorted(rows)
    if check in _NEED_DATA and installed["sample"] is None:
        assert not rows[check]["ok"]  # says so, in its row, rather than crashing
        pytest.xfail(f"the wheel bundles no traces yet: {installed['sample_error']}")
    assert rows[check]["ok"], rows[check]["detail"]


def test_sample_path_points_into_the_installed_package(wheel_env, installed):
    if installed["sample"] is None:
        pytest.xfail(f"the wheel bundles no traces yet: {installed['sample_error']}")
    assert Path(installed["sample"]).is_relative_to(wheel_env.venv)
    assert Path(installed["sample"]).is_file()


#: through the installed console script itself: (name, argv, exit code)
SCRIPT_CASES = [
    ("--help", ["--help"], 0),
    ("--version", ["--version"], 0),
    ("summary", ["summary", str(ROOT / "data" / "demo-stdio.jsonl")], 0),
    ("check --json (the README's broken trace)",
     ["check", str(ROOT / "data" / "broken-duplicate-response.jsonl"), "--json"], 1),
    ("convert jsonl", ["convert", str(ROOT / "data" / "demo-http.har"), "--to", "jsonl",
                       "--out", "copy.jsonl"], 0),
    ("record", ["record", "--out", "rec.jsonl", "--", "python", "-c", "pass"], 0),
    ("no such file", ["check", "nowhere.jsonl"], 2),
]


@pytest.fixture(scope="session")
def script_runs(wheel_env) -> dict:
    jobs = {name: ([str(wheel_env.script), *argv],
                   {"cwd": wheel_env.cwd, "env": wheel_env.env, "stdin": subprocess.DEVNULL})
            for name, argv, _ in SCRIPT_CASES}
    return run_parallel(jobs)


@pytest.mark.parametrize("name, argv, code", SCRIPT_CASES, ids=[c[0] for c in SCRIPT_CASES])
def test_installed_console_script(wheel_env, script_runs, name, argv, code):
    proc = script_runs[name]
    assert_clean(proc.returncode, proc.stdout, proc.stderr)
    assert proc.returncode == code, proc.stderr
    if name == "--help":
        assert "exit codes:" in proc.stdout and "redact" in proc.stdout
    elif name == "--version":
        import mcp_notebook as mn

        assert proc.stdout == f"mcp-notebook {mn.__version__}\n"
    elif name.startswith("check"):
        assert strict_json(proc.stdout)["failing"] == expected(
            "data/broken-duplicate-response.jsonl").failing("error")
    elif name == "convert jsonl":
        assert (wheel_env.cwd / "copy.jsonl").stat().st_size > 0
    elif name == "record":
        assert (wheel_env.cwd / "rec.jsonl").exists()


@pytest.mark.parametrize("where, line, note", EXAMPLES,
                         ids=[f"{w}: {a}" for w, a, _ in EXAMPLES])
def test_help_examples_in_the_installed_package(installed, where, line, note):
    """Every ``--help`` example, run by the installed CLI beside a copy of data/."""
    got = installed["cases"][f"example {where}: {line}"]
    assert_clean(got["rc"], got["out"], got["err"])
    m = re.match(r"exit (\d)", note)
    assert got["rc"] == (int(m[1]) if m else 0), got["err"]
