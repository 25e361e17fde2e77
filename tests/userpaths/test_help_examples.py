"""Every ``mcp-notebook ...`` line in an ``examples:`` epilogue of any ``--help`` runs, from
a folder holding a copy of the bundled ``data/`` (the examples name ``data/...``), and
gives the exit code its ``# exit N`` comment says (else 0); a ``# writes FILE`` comment is
checked too. A new example is tested by being written."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from mcp_notebook.cli import build_parser, main

from .conftest import ROOT, assert_clean

_LINE = re.compile(r"^\s+mcp-notebook (?P<args>.+?)(?:\s+#\s*(?P<note>.*))?$")
IN_PROCESS = {"summary", "check", "convert", "rules", "formats", "redact"}


def examples() -> list[tuple[str, str, str]]:
    """``(where, command line, note)`` of every example in every help text."""
    parser, _ = build_parser()
    helps = {"mcp-notebook": parser.epilog or ""}
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps.update({f"mcp-notebook {name}": p.epilog or "" for name, p in sub.choices.items()})
    found = []
    for where, text in helps.items():
        for line in text.splitlines():
            m = _LINE.match(line)
            if m:
                found.append((where, m["args"], m["note"] or ""))
    return found


EXAMPLES = examples()


def test_the_commands_of_this_module_have_examples():
    where = {w for w, _, _ in EXAMPLES}
    for name in ("", " summary", " check", " convert", " rules", " formats"):
        assert f"mcp-notebook{name}" in where, f"mcp-notebook{name} --help has no examples"


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("where, line, note", EXAMPLES,
                         ids=[f"{w}: {a}" for w, a, _ in EXAMPLES])
def test_help_example_runs(where, line, note, data_copy, capsys):
    argv = shlex.split(line)
    m = re.match(r"exit (\d)", note)
    want = int(m[1]) if m else 0
    if "--help" in argv or "--version" in argv:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        rc, (out, err) = stop.value.code, capsys.readouterr()
    elif argv[0] in IN_PROCESS:
        rc = main(argv)
        out, err = capsys.readouterr()
    else:  # a capture tool: its own process, never waiting on this one's stdin
        done = subprocess.run([sys.executable, "-m", "mcp_notebook.cli", *argv], timeout=120,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        rc, out, err = done.returncode, done.stdout, done.stderr
    assert_clean(rc, out, err)
    assert rc == want, f"{where}: `mcp-notebook {line}` exited {rc}, not {want}\n{out}{err}"
    written = re.match(r"writes (\S+)", note)
    if written:
        assert (data_copy / written[1]).is_file(), f"{written[1]} was not written"
