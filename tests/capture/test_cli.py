"""The ``record`` and ``proxy`` sub-commands of the ``mcp-notebook`` console script."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT, py_server, read_records, wire_bytes

CLI = [sys.executable, "-m", "mcp_notebook.cli"]


def test_record_through_the_cli_is_byte_exact(tmp_path):
    out = tmp_path / "cli.jsonl"
    sent = b'{"jsonrpc":"2.0","id":"a","method":"ping"}\n'
    echo = "import sys\nfor l in sys.stdin.buffer: sys.stdout.buffer.write(l); sys.stdout.flush()"
    proc = subprocess.run([*CLI, "record", "--out", str(out), "--session", "cli", "--",
                           *py_server(echo)], input=sent, capture_output=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout == sent
    recs = read_records(out)
    assert wire_bytes(recs, "s2c") == sent and {r["session"] for r in recs} == {"cli"}


@pytest.mark.parametrize("argv, message", [
    (["record"], b"no server command"),
    (["proxy", "--target", "ftp://example.org", "--listen", "127.0.0.1:0"], b"http(s) URL"),
])
def test_usage_errors_exit_2(tmp_path, argv, message):
    proc = subprocess.run([*CLI, *argv], capture_output=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr


def test_record_default_file_and_session(tmp_path):
    import os

    env = {**os.environ, "MCP_NOTEBOOK_DIR": str(tmp_path)}
    proc = subprocess.run([*CLI, "record", "--", *py_server("pass")], input=b"",
                          capture_output=True, timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 0
    (out,) = tmp_path.glob("mcp-*.jsonl")
    session = read_records(out)[0]["session"]
    assert out.name == f"mcp-{session}.jsonl" and session.startswith("python")
