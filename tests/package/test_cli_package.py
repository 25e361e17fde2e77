"""The shape of :mod:`mcp_notebook.cli`: light at import, one module per command, and the
three ways to start it (the console script's function, ``python -m mcp_notebook`` and
``python -m mcp_notebook.cli``) giving the same answers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook import cli

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "mcp_notebook" / "cli"
LIGHT = {"os", "sys", "__future__"}


def top_level_imports(path: Path) -> set[str]:
    """What a module imports when it is imported: the standard library modules by name,
    the package's own as ``.name`` (``..`` for the parent); not those under
    ``if TYPE_CHECKING:`` nor inside functions."""
    out: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or "") if node.level
                    else (node.module or "").split(".")[0])
    return out


def foreign(imported: set[str]) -> set[str]:
    """What of ``imported`` the rule forbids: all but os, sys, the package's own modules
    and the package above (``from .. import __version__``: the package's names load
    lazily); nothing of the layers below, which load pandas."""
    return {m for m in imported if m not in LIGHT and not (
        m == ".." or (m.startswith(".") and not m.startswith("..")))}


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_every_cli_module_imports_only_os_and_sys_at_the_top(path: Path):
    """The console script imports the package for ``record`` too: anything it loads at
    import delays the server the tap starts (argparse, json, re, pandas load where used)."""
    bad = foreign(top_level_imports(path))
    assert not bad, f"{path.name} imports {sorted(bad)} at the top"


def test_the_import_rule_can_fail(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport json\nfrom .options import load\n"
                   "from ..readers import formats\n"
                   "if TYPE_CHECKING:\n    import argparse\n"
                   "def f():\n    import re\n", encoding="utf-8")
    assert top_level_imports(bad) == {"os", "json", ".options", "..readers"}
    assert foreign(top_level_imports(bad)) == {"json", "..readers"}


def test_each_command_has_its_module():
    parser, handlers = cli.build_parser()
    for command, module in cli.COMMANDS.items():
        mod = __import__(f"mcp_notebook.cli.{module}", fromlist=["_"])
        assert handlers[command] is getattr(mod, f"cmd_{command}")
        assert callable(getattr(mod, f"add_{command}"))
    with pytest.raises(AttributeError):
        cli.cmd_nothing  # noqa: B018


@pytest.mark.parametrize("argv, code", [(["--version"], 0), (["rules"], 0),
                                        (["check", "data/broken-duplicate-response.jsonl"], 1),
                                        (["check", "no-such-file.jsonl"], 2)])
def test_python_dash_m_runs_the_same_command(argv: list[str], code: int):
    runs = [subprocess.run([sys.executable, "-m", module, *argv], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
            for module in ("mcp_notebook", "mcp_notebook.cli")]
    assert [r.returncode for r in runs] == [code, code], [r.stderr[-500:] for r in runs]
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr
    assert runs[0].stdout or runs[0].stderr
