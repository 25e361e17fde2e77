"""The stdio tap around small real processes: byte-exact relay, records, edge cases.

Every subprocess wait has a timeout; no assertion is about elapsed time.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers import until_stable
from mcp_notebook.capture.jsonl import FrameSplitter, frame_fields

from .conftest import ROOT, frames, py_server, read_records, tap_cmd, wire_bytes

ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


# -- units -----------------------------------------------------------------------------

@pytest.mark.parametrize("chunks, cap, expected, rest", [
    ([b"a\nb\n"], 100, [(b"a", 1), (b"b", 1)], None),
    ([b"a", b"b", b"\nc"], 100, [(b"ab", 2)], (b"c", 1)),
    ([b"\n\n"], 100, [(b"", 0), (b"", 0)], None),
    ([b"abcdef", b"gh\n"], 3, [(b"abc", 8)], None),
    ([b"x\r\n"], 100, [(b"x\r", 2)], None),
    ([], 100, [], None),
])
def test_frame_splitter(chunks, cap, expected, rest):
    s = FrameSplitter(cap)
    got = [f for c in chunks for f in s.feed(c)]
    assert got == expected
    assert s.flush() == rest


@pytest.mark.parametrize("data, fields", [
    (b'{"a":1}', {"raw": '{"a":1}'}),
    ("é".encode(), {"raw": "é"}),
    (b"ab\xff", {"raw": "ab\ufffd", "raw_b64": "YWL/"}),
])
def test_frame_fields(data, fields):
    assert frame_fields(data) == fields


# -- relay -----------------------------------------------------------------------------

def test_byte_exact_both_ways_and_nothing_of_its_own(run_tap):
    sent = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"b":"\xc3\xa9"}\r\nnot json \xff\n\n'
    proc, recs = run_tap(py_server(ECHO), sent)
    assert proc.returncode == 0
    assert proc.stdout == sent  # the tap adds nothing to stdout
    assert wire_bytes(recs, "c2s") == sent
    assert wire_bytes(recs, "s2c") == sent
    assert [r["raw"] for r in frames(recs, "c2s")][1] == '{"b":"é"}\r'
    assert all(r["session"] == "t" and isinstance(r["ts"], float) for r in recs)
    events = [r["event"] for r in frames(recs, "meta")]
    assert events[0] == "start" and events[-1] == "exit"
    assert frames(recs, "meta")[-1]["code"] == 0


def test_request_recorded_before_its_reply(run_tap):
    lines = b"".join(b'{"id":%d}\n' % i for i in range(200))
    proc, recs = run_tap(py_server(ECHO), lines)
    seen: set[str] = set()
    for r in recs:
        if r["dir"] == "c2s":
            seen.add(r["raw"])
        elif r["dir"] == "s2c":
            assert r["raw"] in seen, "a reply was recorded before the frame that caused it"


def test_stderr_lines_recorded_and_forwarded(run_tap):
    code = "import sys; sys.stderr.write('warming up\\nready\\n'); sys.stderr.flush()"
    proc, recs = run_tap(py_server(code))
    assert proc.stderr == b"warming up\nready\n"
    assert [r["raw"] for r in frames(recs, "stderr")] == ["warming up", "ready"]


def test_server_exits_mid_frame(run_tap):
    code = ("import sys, os; sys.stdout.buffer.write(b'{\"id\":1,\"result\":{}}\\n{\"id\":2,\"res');"
            "sys.stdout.flush(); os._exit(3)")
    proc, recs = run_tap(py_server(code), b'{"id":1,"method":"ping"}\n')
    assert proc.returncode == 3
    s2c = frames(recs, "s2c")
    assert s2c[0]["raw"] == '{"id":1,"result":{}}' and "partial" not in s2c[0]
    assert s2c[1] == {**s2c[1], "raw": '{"id":2,"res', "partial": True}
    exit_rec = frames(recs, "meta")[-1]
    assert exit_rec["event"] == "exit" and exit_rec["code"] == 3


def test_frame_of_20_mb(run_tap):
    payload = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * (20 * 1024 * 1024) + b'"}}'
    proc, recs = run_tap(py_server(ECHO), payload + b"\n")
    assert proc.returncode == 0
    assert hashlib.sha256(proc.stdout).digest() == hashlib.sha256(payload + b"\n").digest()
    for direction in ("c2s", "s2c"):
        (rec,) = frames(recs, direction)
        assert rec["raw"].encode() == payload


def test_frame_over_the_cap_is_relayed_whole_and_recorded_truncated(run_tap):
    payload = b"y" * 5000
    proc, recs = run_tap(py_server(ECHO), payload + b"\n", "--max-frame", "1000")
    assert proc.stdout == payload + b"\n"
    (rec,) = frames(recs, "s2c")
    assert rec["raw"] == "y" * 1000 and rec["truncated"] == 5000


def test_client_closes_stdin_server_answers_then_exits(run_tap):
    code = ("import sys\ndata = sys.stdin.buffer.read()\n"
            "sys.stdout.write('{\"bye\":%d}\\n' % len(data))")
    proc, recs = run_tap(py_server(code), b'{"a":1}\n')
    assert proc.returncode == 0 and proc.stdout == b'{"bye":8}\n'
    events = [r["event"] for r in frames(recs, "meta")]
    assert events == ["start", "stdin-eof", "exit"]


def test_client_closes_stdin_server_ignores_it(run_tap):
    code = "import time\nwhile True: time.sleep(0.05)"
    proc, recs = run_tap(py_server(code), b"", "--grace", "0.3", timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    events = [r["event"] for r in frames(recs, "meta")]
    assert events == ["start", "stdin-eof", "terminate", "exit"]
    assert frames(recs, "meta")[-1]["signal"] == "SIGTERM"


def test_unknown_command_fails_cleanly(run_tap):
    proc, recs = run_tap(["/nonexistent/mcp-server"])
    assert proc.returncode == 127 and proc.stdout == b""
    assert b"cannot start" in proc.stderr
    assert frames(recs, "meta")[0]["event"] == "spawn-error"


# -- signals, back-pressure ------------------------------------------------------------

def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _baseline_rss(path: Path, pid: int, limit: float = 20.0) -> int:
    """The tap's RSS once it has started the server (its imports done), in KiB."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if path.exists() and path.stat().st_size > 0:
            return _rss_kib(pid)
        time.sleep(0.01)
    raise AssertionError("the tap did not start")


GROWTH_KIB = 16 * 1024  # far less than the 40 MB the other side tries to push through


def test_signal_is_forwarded_to_the_server(tmp_path):
    out = tmp_path / "tap.jsonl"
    code = ("import signal, sys, time\n"
            "def bye(*a):\n"
            "    sys.stdout.write('{\"got\":\"TERM\"}\\n'); sys.stdout.flush(); sys.exit(0)\n"
            "signal.signal(signal.SIGTERM, bye)\n"
            "sys.stdout.write('{\"ready\":true}\\n'); sys.stdout.flush()\n"
            "while True: time.sleep(0.05)\n")
    proc = subprocess.Popen(tap_cmd(out, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b'{"ready":true}\n'
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert rest == b'{"got":"TERM"}\n' and proc.returncode == 0
    assert frames(read_records(out), "meta")[-1]["code"] == 0


def test_client_stops_reading_memory_stays_bounded(tmp_path):
    out = tmp_path / "tap.jsonl"
    n, size = 10_000, 4096  # 40 MB the client does not read at first
    code = (f"import sys\nline = b'[' + b'7' * {size - 3} + b']\\n'\n"
            f"for _ in range({n}): sys.stdout.buffer.write(line)\n")
    proc = subprocess.Popen(tap_cmd(out, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    try:
        base = _baseline_rss(out, proc.pid)
        until_stable(out, 20.0, 0.4)
        recorded = len(frames(read_records(out), "s2c"))
        assert recorded < n // 10, "the tap kept reading although nobody read its output"
        assert _rss_kib(proc.pid) - base < GROWTH_KIB
        data, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert len(data) == n * size and proc.returncode == 0
    assert len(frames(read_records(out), "s2c")) == n


def test_server_stops_reading_memory_stays_bounded(tmp_path):
    out = tmp_path / "tap.jsonl"
    code = ("import signal, sys, time, hashlib\n"
            "go = []\n"
            "signal.signal(signal.SIGUSR1, lambda *a: go.append(1))\n"
            "while not go: time.sleep(0.05)\n"
            "data = sys.stdin.buffer.read()\n"
            "sys.stdout.write('{\"n\":%d,\"sha\":\"%s\"}\\n' % "
            "(len(data), hashlib.sha256(data).hexdigest()))\n")
    sent = b"".join(b'{"i":%d,"pad":"%s"}\n' % (i, b"p" * 4000) for i in range(10_000))
    proc = subprocess.Popen(tap_cmd(out, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    writer = threading.Thread(target=lambda: (proc.stdin.write(sent), proc.stdin.close()),
                              daemon=True)
    try:
        base = _baseline_rss(out, proc.pid)
        writer.start()
        until_stable(out, 20.0, 0.4)
        assert len(frames(read_records(out), "c2s")) < 1000
        assert _rss_kib(proc.pid) - base < GROWTH_KIB
        os.kill(proc.pid, signal.SIGUSR1)  # forwarded: the server starts reading
        writer.join(60)
        data = proc.stdout.read()
        proc.wait(30)
    finally:
        proc.kill()
    reply = json.loads(data)
    assert reply == {"n": len(sent), "sha": hashlib.sha256(sent).hexdigest()}
    assert wire_bytes(read_records(out), "c2s") == sent


def test_client_closes_stdout_tap_ends(tmp_path):
    out = tmp_path / "tap.jsonl"
    code = ("import sys, time\n"
            "for i in range(10**6):\n"
            "    sys.stdout.write('{\"tick\":%d}\\n' % i); sys.stdout.flush()\n"
            "    if i > 50: time.sleep(0.01)\n")
    proc = subprocess.Popen(tap_cmd(out, py_server(code), "--grace", "0.5"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.close()  # the client goes away without closing stdin
        proc.wait(30)
    finally:
        proc.kill()
    events = [r["event"] for r in frames(read_records(out), "meta")]
    assert "stdout-closed" in events and events[-1] == "exit"
