"""Regression tests for what the fuzzing found in the core, one case per find."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import readers

from .corpus import ROOT

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _tap(raw: str) -> bytes:
    return json.dumps({"ts": 1.7e9, "dir": "c2s", "raw": raw}, ensure_ascii=False).encode()


@pytest.mark.parametrize("first_line", [
    _tap('{"jsonrpc":"2.0","id":1,"method":"a\u2028b\x85c"}'),  # the tap leaves them unescaped
    _tap(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"s": "y" * 100_000}})),
    b"\xef\xbb\xbf" + _tap(PING),  # a byte order mark from an editor
])
def test_tap_captures_are_sniffed_as_tap(first_line: bytes, tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(first_line + b"\n" + _tap(PING) + b"\n")
    assert readers.sniff(path) == "tap"
    assert mn.load(path).frames["kind"].tolist() == ["request", "request"]


def test_bom_is_not_part_of_the_first_frame(tmp_path: Path) -> None:
    path = tmp_path / "c.ndjson"
    path.write_bytes(b"\xef\xbb\xbf" + PING.encode() + b"\r\n")
    f = mn.load(path).frames
    assert f["raw"].tolist() == [PING] and f["kind"].tolist() == ["request"]


@pytest.mark.parametrize("ts", ["1e20", "-1e300", '"9999-12-31T23:59:59Z"',
                                '"0001-01-01T00:00:00+14:00"'])
def test_times_outside_datetime64_are_unknown(ts: str, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(f'{{"ts":{ts},"dir":"c2s","raw":{json.dumps(PING)}}}\n')
    f = mn.load(path).frames
    assert f["kind"].tolist() == ["request"] and f["ts"].isna().all()


def test_undecodable_bytes_in_a_session_name(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    log.write_bytes(b"2025-02-22T04:14:49.196Z [fs\x80] [info] Message from client: "
                    + PING.encode() + b"\n")
    t = mn.load(log)
    assert t.frames["session"].astype(str).str.contains(r"\\x80").all()
    assert len(t.pairs) == 1


def test_nesting_bomb_on_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "bomb.ndjson"
    path.write_bytes(b"[" * 200_000 + b"\n" + PING.encode() + b"\n")
    with pytest.raises(mn.CaptureError, match="not a capture format"):
        mn.load(path)  # auto: plain text of no known format (was a RecursionError)
    f = mn.load(path, format="ndjson").frames
    assert f["kind"].tolist() == ["invalid", "request"]
    assert "nested too deeply" in f["reason"][0]


def test_corrupt_gzip_is_unreadable_input(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\x00" * 40)
    with pytest.raises(mn.CaptureError, match="cannot be read"):
        mn.load(path)


def test_batch_members_share_their_line_direction(tmp_path: Path) -> None:
    path = tmp_path / "c.ndjson"
    batch = [json.loads(PING), {"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": 1, "progress": 1}}]
    path.write_text(json.dumps(batch) + "\n")
    f = mn.load(path).frames
    assert f["direction"].nunique() == 1


def test_piped_into_head_exits_quietly(tmp_path: Path) -> None:
    path = tmp_path / "noise.ndjson"
    path.write_text("not json\n" * 5000)  # 5,000 findings: more than a pipe holds
    proc = subprocess.Popen([sys.executable, "-m", "mcp_notebook.cli", "check", "--all",
                             "--format", "ndjson", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read()
    proc.wait(120)
    # quiet, and still honest: the 5,000 invalid lines are errors, so check exits 1
    assert proc.returncode == 1 and err == b""
