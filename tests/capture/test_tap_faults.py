"""The stdio tap under faults: slow peers, a failing disk, floods without newlines, signals.

Every test runs the real tap (``python -m mcp_notebook.capture.record``) between this test
(the client) and a small real server process. Slowness is made on purpose: the client
reads its pipe in small sips with pauses, and the record file is a named pipe that the
test drains at its own pace, so the results do not depend on the machine's load.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from .conftest import LIMIT, ROOT, frames, py_server, read_records, tap_cmd, wire_bytes

BOUND = 60  # seconds any one run may take before the test fails


def _sip(fd: int, into: bytearray, size: int, pause: float) -> None:
    """Read ``fd`` to EOF, at most ``size`` bytes at a time, sleeping ``pause`` after each."""
    while True:
        data = os.read(fd, size)
        if not data:
            return
        into += data
        time.sleep(pause)


# -- 13.3: the relay runs to EOF after the server exits ------------------------------------

def test_slow_client_and_slow_recorder_get_every_byte_after_the_server_exits(tmp_path: Path):
    """The server writes a frame of 8 MB, then 1 MB of small frames into a 1 MiB pipe, and
    exits. The record goes to a named pipe drained at 64 KiB per 25 ms, so recording the
    big frame takes over 3 s, and the client reads in 64 KiB sips: most of the relaying
    happens after the server is gone. The tap used to give the relays 2 s in all once the
    server had exited, then cut them off mid-copy."""
    small = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":%d}}'
    big = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"b" * 8_000_000 + b'"}}'
    sent = big + b"\n" + b"".join(small % i + b"\n" for i in range(12_000))
    code = ("import fcntl, sys\n"
            "fcntl.fcntl(1, fcntl.F_SETPIPE_SZ, 1 << 20)\n"
            f"small = {small!r}\n"
            "sys.stdout.buffer.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"'"
            " + b'b' * 8_000_000 + b'\"}}\\n')\n"
            "sys.stdout.buffer.write(b''.join(small % i + b'\\n' for i in range(12_000)))\n")
    fifo = tmp_path / "record.fifo"
    os.mkfifo(fifo)
    recorded = bytearray()

    def drain_record() -> None:
        fd = os.open(fifo, os.O_RDONLY)
        try:
            _sip(fd, recorded, 64 * 1024, 0.025)
        finally:
            os.close(fd)

    recorder = threading.Thread(target=drain_record, daemon=True)
    recorder.start()
    proc = subprocess.Popen(tap_cmd(fifo, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    got = bytearray()
    try:
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.close()
        t0 = time.monotonic()
        _sip(proc.stdout.fileno(), got, 64 * 1024, 0.02)
        proc.wait(BOUND)
        recorder.join(BOUND)
        took = time.monotonic() - t0
    finally:
        proc.kill()
        assert took > 3  # recording was slower than the old 2 s limit
    assert bytes(got) == sent and proc.returncode == 0
    path = tmp_path / "record.jsonl"
    path.write_bytes(bytes(recorded))
    recs = read_records(path)
    assert wire_bytes(recs, "s2c") == sent
    assert frames(recs, "meta")[-1]["event"] == "exit" and frames(recs, "meta")[-1]["code"] == 0


def test_grandchild_holding_the_output_open_ends_after_a_stall(tmp_path: Path):
    """The server leaves a grandchild that keeps its stdout open and says nothing: the tap
    relays what came, waits for a stall of ``--stall`` seconds without a byte (1 s here; the
    tap's default of 5 s is the same code: ``test_the_stall_defaults_to_five_seconds``),
    then ends with the exit code."""
    out = tmp_path / "tap.jsonl"
    code = ("import subprocess, sys\n"
            "sys.stdout.write('{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\\n'); sys.stdout.flush()\n"
            "subprocess.Popen(['sleep', '30'])\n"
            "sys.exit(3)\n")
    t0 = time.monotonic()
    done = subprocess.run(tap_cmd(out, py_server(code), "--stall", "1"), input=b"",
                          capture_output=True, timeout=BOUND, cwd=ROOT)
    took = time.monotonic() - t0
    assert done.returncode == 3 and done.stdout == b'{"jsonrpc":"2.0","method":"bye"}\n'
    assert 0.9 < took < 20
    metas = frames(read_records(out), "meta")
    events = [r["event"] for r in metas]
    assert "drain-stalled" in events and events[-1] == "exit"
    stalled = next(r for r in metas if r["event"] == "drain-stalled")
    assert "no byte moved for 1s after the server exited" in stalled["raw"]


def test_the_stall_defaults_to_five_seconds():
    """Without ``--stall`` the tap waits ``tap.STALL`` (5 s, as the module's docs say)."""
    from mcp_notebook.capture import record, tap

    assert tap.STALL == 5.0 and record.parse(["--", "srv"]).stall is None
    assert tap.Tap(["srv"], None).stall == tap.STALL  # type: ignore[arg-type]


# -- 14.1: a failing disk stops the record, never the relay ---------------------------------

def test_full_disk_keeps_relaying_byte_exact_and_leaves_valid_lines(small_disk):
    """3,010 lines of up to 3 KB each way through ``cat`` (the client gets back exactly
    what it sent: both directions byte-exact) while the record file stops at 64 KiB."""
    folder, preexec = small_disk
    out = folder / "tap.jsonl"
    sent = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}\n'
                    % (i, b"p" * (i % 3000)) for i in range(3010))
    proc = subprocess.Popen(tap_cmd(out, ["cat"]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            preexec_fn=preexec)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    got, err = bytearray(), bytearray()
    threads = [threading.Thread(target=lambda: (proc.stdin.write(sent), proc.stdin.close()),
                                daemon=True),
               threading.Thread(target=_sip, args=(proc.stdout.fileno(), got, 1 << 20, 0),
                                daemon=True),
               threading.Thread(target=_sip, args=(proc.stderr.fileno(), err, 1 << 20, 0),
                                daemon=True)]
    try:
        for t in threads:
            t.start()
        end = time.monotonic() + BOUND
        for t in threads:
            t.join(max(0.0, end - time.monotonic()))
        proc.wait(max(1.0, end - time.monotonic()))
    finally:
        proc.kill()
    assert len(got) == len(sent) and got == sent and proc.returncode == 0
    assert err.count(b"recording stopped") == 1, err
    assert b"Traceback" not in err and (b"File too large" in err or b"No space" in err)
    data = out.read_bytes()
    assert 0 < len(data) <= LIMIT and data.endswith(b"\n")
    recs = [json.loads(x) for x in data.split(b"\n")[:-1]]  # every line is a whole record
    c2s = [r["raw"].encode() + b"\n" for r in recs if r["dir"] == "c2s"]
    assert c2s and sent.startswith(b"".join(c2s))  # what was recorded is the start, in order


# -- 14.3: memory bounded by --max-frame; a second SIGTERM escalates ----------------------

def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


MIB = 1024 * 1024


@pytest.mark.parametrize("frame_mb, max_frame, bound", [
    (100, 16 * MIB, 2 * 16 * MIB),  # kept truncated: the tap holds 16 MiB, not 100 MB
    (100, None, 1.5 * 100_000_000),  # kept whole: about the frame once, not 16 times
])
def test_memory_is_bounded_by_the_frame_cap(tmp_path: Path, frame_mb, max_frame, bound):
    """The server writes one line of FRAME_MB megabytes in 1 MB writes, then a small frame,
    then waits: by the time the client sees the small frame, the big one is recorded (a
    frame is recorded before the bytes that complete it are relayed). The tap's peak RSS
    (VmHWM) above its size at start must stay under BOUND; the client gets every byte."""
    out = tmp_path / "tap.jsonl"
    code = ("import sys\n"
            "w = sys.stdout.buffer.write\n"
            "w(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"')\n"
            f"for _ in range({frame_mb}): w(b'z' * 1_000_000)\n"
            "w(b'\"}}\\n{\"done\":1}\\n'); sys.stdout.flush()\n"
            "sys.stdin.read()\n")
    extra = ("--max-frame", str(max_frame)) if max_frame else ()
    proc = subprocess.Popen(tap_cmd(out, py_server(code), *extra), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        end = time.monotonic() + BOUND
        while not (out.exists() and out.stat().st_size) and time.monotonic() < end:
            time.sleep(0.01)
        base = _hwm_kib(proc.pid) * 1024
        size, tail = 0, b""
        while not tail.endswith(b'"}}\n{"done":1}\n'):
            data = os.read(proc.stdout.fileno(), 1 << 20)
            assert data, "the tap ended early"
            size += len(data)
            tail = (tail + data)[-64:]
        grown = _hwm_kib(proc.pid) * 1024 - base
        proc.stdin.close()
        proc.wait(BOUND)
    finally:
        proc.kill()
    frame_len = len(b'{"jsonrpc":"2.0","id":1,"result":{"text":""}}') + frame_mb * 1_000_000
    assert size == frame_len + 1 + len(b'{"done":1}\n') and proc.returncode == 0
    print(f"tap grew by {grown / MIB:.1f} MiB for a {frame_mb} MB frame (cap {max_frame})")
    assert grown < bound
    with open(out, "rb") as f:
        big = next(json.loads(line) for line in f if b'"dir":"s2c"' in line)
    if max_frame:
        assert big["truncated"] == frame_len and len(big["raw"]) == max_frame
    else:
        assert "truncated" not in big and len(big["raw"]) == frame_len


@pytest.mark.parametrize("data", [
    "é\"\\\n\t\x01😀 ".encode() * 300_000,  # escapes and multi-byte characters over pieces
    b"\xff\xfe" + b"x\x80y" * 700_000,  # not UTF-8: raw with U+FFFD and raw_b64
])
def test_a_large_frame_written_in_pieces_is_the_record_of_one_dumps(tmp_path: Path, data):
    from mcp_notebook.capture.jsonl import TapWriter, frame_fields

    path = tmp_path / "x.jsonl"
    w = TapWriter(path, "s")
    w.frame("s2c", bytearray(data), len(data) + 5, partial=True)
    w.close()
    line = path.read_bytes()
    rec = json.loads(line)
    whole = {"ts": rec["ts"], "dir": "s2c", "session": "s", **frame_fields(data),
             "truncated": len(data) + 5, "partial": True}
    assert line == (json.dumps(whole, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def test_second_sigterm_to_the_tap_kills_a_server_that_ignores_it(tmp_path: Path):
    out = tmp_path / "tap.jsonl"
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "sys.stdout.write('{\"ready\":true}\\n'); sys.stdout.flush()\n"
            "while True: time.sleep(0.05)\n")
    proc = subprocess.Popen(tap_cmd(out, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b'{"ready":true}\n'
        proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        assert proc.poll() is None  # the client is still there: the server is left alone
        proc.send_signal(signal.SIGTERM)
        proc.wait(BOUND)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGKILL
    events = [r["event"] for r in frames(read_records(out), "meta")]
    assert events[-2:] == ["kill", "exit"]


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self"), reason="Linux only (PR_SET_PDEATHSIG)")
def test_server_dies_with_a_killed_tap(tmp_path: Path):
    """SIGKILL to the tap (no handler can run) still ends a server that ignores its stdin."""
    out = tmp_path / "tap.jsonl"
    code = ("import os, sys, time\n"
            "sys.stdout.write('{\"pid\":%d}\\n' % os.getpid()); sys.stdout.flush()\n"
            "while True: time.sleep(0.05)\n")
    proc = subprocess.Popen(tap_cmd(out, py_server(code)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        pid = json.loads(proc.stdout.readline())["pid"]
        proc.kill()
        proc.wait(BOUND)
        end = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < end:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        proc.kill()
