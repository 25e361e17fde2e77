"""The stdio tap under faults: slow peers, a failing disk, floods without newlines, signals.

Every test runs the real tap (``python -m mcp_notebook.capture.tap``) between this test
(the client) and a small real server process. Slowness is made on purpose: the client
reads its pipe in small sips with pauses, and the record file is a named pipe that the
test drains at its own pace, so the results do not depend on the machine's load.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

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
    relays what came, waits for a stall of 5 s without a byte, then ends with the exit code."""
    out = tmp_path / "tap.jsonl"
    code = ("import subprocess, sys\n"
            "sys.stdout.write('{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\\n'); sys.stdout.flush()\n"
            "subprocess.Popen(['sleep', '30'])\n"
            "sys.exit(3)\n")
    t0 = time.monotonic()
    done = subprocess.run(tap_cmd(out, py_server(code)), input=b"", capture_output=True,
                          timeout=BOUND, cwd=ROOT)
    took = time.monotonic() - t0
    assert done.returncode == 3 and done.stdout == b'{"jsonrpc":"2.0","method":"bye"}\n'
    assert 4.5 < took < 20
    events = [r["event"] for r in frames(read_records(out), "meta")]
    assert "drain-stalled" in events and events[-1] == "exit"


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
