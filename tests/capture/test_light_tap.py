"""``mcp-notebook record`` is light: only the standard library and the tap modules.

MCP clients time out servers that start slowly, and the tap lives as long as the server
it wraps. Two independent witnesses, neither a hook in the tap: Python's own import log
(``-X importtime``) of the console entry point over the whole run, and the server itself,
which reads its parent's memory map (``/proc/PPID/maps``) when it starts and reports
any compiled module of the heavy packages loaded into the tap.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PY, ROOT, read_records

HEAVY = ("pandas", "numpy", "msgspec", "ipywidgets", "pyarrow", "traitlets", "IPython")

# the server: what heavy shared objects does the tap (its parent) have mapped right now?
WITNESS = ("import os, sys\n"
           "maps = open(f'/proc/{os.getppid()}/maps').read()\n"
           f"heavy = sorted({{n for n in {HEAVY!r} if '/' + n + '/' in maps}})\n"
           "sys.stdout.write('{\"jsonrpc\":\"2.0\",\"method\":\"heavy\",\"params\":%r}\\n'"
           " % (heavy,))\n")

# the console script's own code (``mcp-notebook = "mcp_notebook.cli:entry"``)
CONSOLE = "from mcp_notebook.cli import entry; entry()"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_record_imports_nothing_heavy(tmp_path: Path):
    out = tmp_path / "tap.jsonl"
    done = subprocess.run([PY, "-X", "importtime", "-c", CONSOLE, "record", "--out", str(out),
                           "--", PY, "-c", WITNESS], input=b"", capture_output=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == b'{"jsonrpc":"2.0","method":"heavy","params":[]}\n'
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in done.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "mcp_notebook" in imported and "threading" in imported  # the log is real
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    # the plain form is parsed without argparse, the server started without subprocess
    assert not imported & {"argparse", "subprocess", "traceback"}, imported
    recs = read_records(out)
    assert [r["dir"] for r in recs].count("s2c") == 1 and recs[-1]["event"] == "exit"


def test_the_witness_sees_a_heavy_parent(tmp_path: Path):
    """The server-side witness is not blind: a parent that imported numpy is seen."""
    pytest.importorskip("numpy")
    code = ("import numpy, subprocess, sys\n"
            f"sys.exit(subprocess.run([sys.executable, '-c', {WITNESS!r}]).returncode)\n")
    done = subprocess.run([PY, "-c", code], capture_output=True, timeout=60, cwd=ROOT)
    assert b'"params":[\'numpy\']' in done.stdout, done.stdout


#: what the tap must not have loaded when it starts its server (each costs start-up time:
#: argparse and json pull in re and enum, subprocess threading, signal and selectors)
NOT_BEFORE_THE_SERVER = ("argparse", "subprocess", "json", "re", "enum", "traceback",
                         "threading", "signal", "typing", "collections", "functools",
                         "pathlib", "shutil", "locale", "gettext", "base64", "zlib",
                         "warnings", "importlib", "selectors", "contextlib", "ctypes", *HEAVY)


def _modules_at_spawn(tmp_path: Path, argv: list[str]) -> tuple[set[str], set[str]]:
    """(modules loaded when the console entry point first starts a process, modules of a
    bare interpreter), both under ``python -S`` (no site: nothing loaded but by the code
    run) with the package from this checkout. The snapshot is taken by an audit hook of
    the launcher (``os.fork``, ``os.posix_spawn`` or ``subprocess.Popen``): not a hook in
    the tap, and blind to how the tap starts its server."""
    snap = tmp_path / "modules.txt"
    hook = ("import sys\n"
            "def hook(event, args, done=[]):\n"
            "    if event in ('os.fork', 'os.posix_spawn', 'subprocess.Popen') and not done:\n"
            "        done.append(1)\n"
            f"        with open({str(snap)!r}, 'w') as f: f.write('\\n'.join(sys.modules))\n"
            "sys.addaudithook(hook)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([PY, "-S", "-c", hook + CONSOLE, *argv], input=b"",
                          capture_output=True, timeout=60, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    bare = subprocess.run([PY, "-S", "-c", "import sys; print('\\n'.join(sys.modules))"],
                          capture_output=True, text=True, timeout=60, env=env, check=True)
    return set(snap.read_text().split("\n")), set(bare.stdout.split())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX")
def test_nothing_but_the_start_is_loaded_before_the_server_starts(tmp_path: Path):
    loaded, bare = _modules_at_spawn(tmp_path, ["record", "--out", "tap.jsonl", "--session",
                                                "s", "--", PY, "-c", "pass"])
    assert "mcp_notebook.capture.cli" in loaded  # the snapshot is real
    early = {m for m in loaded - bare if m.split(".")[0] in NOT_BEFORE_THE_SERVER}
    assert not early, sorted(early)
    recs = read_records(tmp_path / "tap.jsonl")
    assert recs[0]["event"] == "start" and "exit" in [r.get("event") for r in recs]


def test_the_snapshot_sees_an_early_import(tmp_path: Path):
    """The same witness on the argparse path (``--help`` is not the plain form): argparse
    is seen, so the test above is not blind."""
    loaded, bare = _modules_at_spawn(tmp_path, ["record", "--grace", "1e0", "--ses", "s",
                                                "--out", "tap.jsonl", "--", PY, "-c", "pass"])
    assert "argparse" in loaded - bare
