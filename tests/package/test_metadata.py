"""What the package declares matches what it does: dependencies are what the library
imports, pyarrow only where parquet needs it, the sdist builds a whole wheel."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tarfile
import zipfile
from functools import cache

import pytest

from .conftest import REPO

tomllib = pytest.importorskip("tomllib")

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
#: distribution name -> the module it is imported as, where the two differ
IMPORT_NAME = {"ipywidgets": "ipywidgets", "ipython": "IPython"}
#: modules only an extra brings, and where the library may import them (inside functions)
OPTIONAL = {"pyarrow": "parquet", "aiohttp": "capture", "detect_secrets": "redact",
            "dask": "dask"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("-", "_")


@cache  # the package's files do not change during a run: parsed once, not five times
def _imports() -> dict[str, set[tuple[str, bool]]]:
    """Third-party top-level module -> {(file, imported at module level)}."""
    found: dict[str, set[tuple[str, bool]]] = {}
    for path in sorted((REPO / "mcp_notebook").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                if root in sys.stdlib_module_names or root in ("mcp_notebook", "__future__"):
                    continue
                found.setdefault(root, set()).add(
                    (str(path.relative_to(REPO)), id(node) in top))
    return found


def test_runtime_dependencies_are_what_the_library_imports():
    declared = {IMPORT_NAME.get(_name(r), _name(r)) for r in PYPROJECT["project"]["dependencies"]}
    imported = _imports()
    assert declared == set(imported) - set(OPTIONAL), (declared, sorted(imported))


def test_optional_modules_come_with_their_extra_and_load_lazily():
    extras = PYPROJECT["project"]["optional-dependencies"]
    for module, extra in OPTIONAL.items():
        assert module in {_name(r) for r in extras[extra]}
        where = _imports().get(module, set())
        assert where and not [f for f, top in where if top], f"{module} imported eagerly"


def test_extras_for_each_job():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"capture", "parquet", "lab", "bench", "dev"} <= set(extras)
    assert {_name(r) for r in extras["bench"]} >= {"polars", "duckdb"}
    dev = next(r for r in extras["dev"] if r.startswith("mcp_notebook["))
    assert set(dev[dev.index("[") + 1:dev.index("]")].split(",")) == set(extras) - {"dev"}


def test_build_floor_allows_a_licence_expression():
    assert PYPROJECT["project"]["license"] == "MIT"
    (setuptools,) = PYPROJECT["build-system"]["requires"]
    assert re.fullmatch(r"setuptools>=(\d+)", setuptools) and int(setuptools[12:]) >= 77


def test_licence_carries_the_schemas_notice_in_full():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.count("Permission is hereby granted, free of charge") == 2
    assert "Copyright (c) 2024-2025 Model Context Protocol a Series of LF Projects, LLC." in text
    assert text.count('THE SOFTWARE IS PROVIDED "AS IS"') == 2


@pytest.mark.slow
def test_sdist_is_whole_and_builds_a_whole_wheel(tmp_path):
    code = ("import sys; from setuptools import build_meta as b; "
            "print(b.build_sdist(sys.argv[1]))")
    name = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.split()[-1]
    sdist = tmp_path / name
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    for want in ("LICENSE", "README.md", "setup.py", "pyproject.toml", "data/README.md",
                 "data/demo-stdio.jsonl", "notebooks/00-start.ipynb",
                 "mcp_notebook/engine/csrc/module.c", "mcp_notebook/protocol/methods-by-version.json"):
        assert want in members, want
    assert not [m for m in members if m.startswith(("tests/", "benchmarks/", "scripts/",
                                                    "build/", "notebooks/source/",
                                                    "notebooks/instructor/"))]
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(sdist)], check=True, capture_output=True)
    (wheel,) = out.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "mcp_notebook/data/demo-stdio.jsonl" in names
    assert not [n for n in names if "/solutions/" in n]  # answer keys stay with instructors
    assert not [n for n in names if n.endswith((".c", ".h"))]
