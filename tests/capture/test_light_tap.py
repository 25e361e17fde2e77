"""``mcp-notebook record`` is light: only the standard library and the tap modules.

MCP clients time out servers that start slowly, and the tap lives as long as the server
it wraps. Two independent witnesses, neither a hook in the tap: Python's own import log
(``-X importtime``) of the console entry point over the whole run, and the server itself,
which reads its parent's memory map (``/proc/PPID/maps``) when it starts and reports
any compiled module of the heavy packages loaded into the tap.
"""

from __future__ import annotations

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

# the console script's own code (``mcp-notebook = "mcp_notebook.cli:main"``)
CONSOLE = "import sys; from mcp_notebook.cli import main; sys.exit(main())"


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
    assert "mcp_notebook" in imported and "argparse" in imported  # the log is real
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    recs = read_records(out)
    assert [r["dir"] for r in recs].count("s2c") == 1 and recs[-1]["event"] == "exit"


def test_the_witness_sees_a_heavy_parent(tmp_path: Path):
    """The server-side witness is not blind: a parent that imported numpy is seen."""
    pytest.importorskip("numpy")
    code = ("import numpy, subprocess, sys\n"
            f"sys.exit(subprocess.run([sys.executable, '-c', {WITNESS!r}]).returncode)\n")
    done = subprocess.run([PY, "-c", code], capture_output=True, timeout=60, cwd=ROOT)
    assert b'"params":[\'numpy\']' in done.stdout, done.stdout
