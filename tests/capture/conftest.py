"""Helpers for the capture tests: run the tap around small real processes."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def tap_cmd(out: Path, server: list[str], *extra: str) -> list[str]:
    """The command line of the tap (as a module) around ``server``."""
    return [PY, "-m", "mcp_notebook.capture.record", "--out", str(out), "--session", "t",
            *extra, "--", *server]


def py_server(code: str) -> list[str]:
    """A server command: ``python -c CODE`` (unbuffered)."""
    return [PY, "-u", "-c", code]


def read_records(path: Path) -> list[dict]:
    """Every record of a tap JSONL file."""
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]


def frames(records: list[dict], direction: str) -> list[dict]:
    return [r for r in records if r["dir"] == direction]


def wire_bytes(records: list[dict], direction: str) -> bytes:
    """The bytes a direction carried, rebuilt from its records (exact for complete frames)."""
    import base64

    out = bytearray()
    for r in frames(records, direction):
        data = (base64.b64decode(r["raw_b64"]) if "raw_b64" in r
                else r["raw"].encode("utf-8"))
        out += data
        if not r.get("partial"):
            out += b"\n"
    return bytes(out)


@pytest.fixture
def run_tap(tmp_path: Path):
    """Run the tap around a server with some client input; return (completed, records)."""

    def run(server: list[str], stdin: bytes = b"", *extra: str, timeout: float = 60
            ) -> tuple[subprocess.CompletedProcess[bytes], list[dict]]:
        out = tmp_path / "tap.jsonl"
        if out.exists():
            out.unlink()
        proc = subprocess.run(tap_cmd(out, server, *extra), input=stdin, capture_output=True,
                              timeout=timeout, cwd=ROOT)
        return proc, read_records(out)

    return run


LIMIT = 64 * 1024


@pytest.fixture(params=["rlimit-fsize", "tmpfs-full"])
def small_disk(request, tmp_path: Path):
    """``(folder, preexec_fn)``: writes past 64 KiB fail, by a file-size limit (EFBIG,
    always) or on a 64 KiB tmpfs (ENOSPC, where mounting is permitted)."""
    if request.param == "rlimit-fsize":
        def limit() -> None:  # the tap must ignore SIGXFSZ itself: the test does not
            resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))
        yield tmp_path, limit
        return
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={LIMIT}", "tmpfs", str(mnt)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt, None
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
