"""The server the tap starts (:mod:`mcp_notebook.capture.spawn`) gets what ``Popen`` gave it.

The tap used ``subprocess.Popen(restore_signals=True, process_group=0, close_fds=True)``
with ``PR_SET_PDEATHSIG``; ``spawn`` does the same with ``os.fork``/``os.execv`` (subprocess
costs ~10 ms of start-up). Each case runs the real tap and reads the server's own
``/proc`` entries, or compares the error with the one ``Popen`` raises.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook.capture.spawn import Server

from .conftest import PY, ROOT, read_records, tap_cmd, wire_bytes

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _tap_from(launcher: str, out: Path, server: list[str], tmp_path: Path) -> bytes:
    """Run the tap (as a module) from a Python launcher that first runs ``launcher``."""
    code = f"import os, signal, sys\n{launcher}\nos.execv(sys.executable, sys.argv[1:])\n"
    done = subprocess.run([PY, "-c", code, *tap_cmd(out, server)], input=b"",
                          capture_output=True, timeout=60, cwd=ROOT, close_fds=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return wire_bytes(read_records(out), "s2c")


def _mask(status: str, field: str) -> set[int]:
    bits = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith(field)), 16)
    return {n for n in range(1, 65) if bits >> (n - 1) & 1}


@linux
def test_signals_process_group_and_parent(tmp_path: Path):
    """SIGPIPE and SIGXFSZ at their defaults (the tap ignores both), an ignored SIGHUP
    still ignored (as exec keeps it), nothing blocked, a process group of its own, the tap
    as its parent."""
    out = tmp_path / "tap.jsonl"
    seen = _tap_from("signal.signal(signal.SIGHUP, signal.SIG_IGN)", out,
                     ["cat", "/proc/self/status", "/proc/self/stat"], tmp_path).decode()
    status, stat = seen.strip().rsplit("\n", 1)
    ignored = _mask(status, "SigIgn:")
    assert signal.SIGHUP in ignored
    assert not ignored & {signal.SIGPIPE, signal.SIGXFSZ}, ignored
    assert _mask(status, "SigBlk:") == set()
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp
    pid, ppid, pgrp = int(stat.split()[0]), int(fields[1]), int(fields[2])
    start = read_records(out)[0]
    assert start["event"] == "start" and start["pid"] == pid == pgrp and ppid != pid


@linux
def test_no_descriptor_of_the_tap_but_the_three_pipes(tmp_path: Path):
    """A descriptor the tap inherited (here: 7, inheritable) is not passed to the server."""
    out = tmp_path / "tap.jsonl"
    seen = _tap_from("fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, 7)", out,
                     [PY, "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"],
                     tmp_path)
    assert seen == b"['0', '1', '2', '3']\n"  # 3: the folder listdir reads


def _popen_error(argv: list[str]) -> str:
    try:
        subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE).wait()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError(f"{argv} started")


@pytest.mark.parametrize("name", ["no-such-server-xyz", "./no-such-server", "/etc",
                                  "/etc/hostname", ""])
def test_a_server_that_cannot_start_fails_as_popen_did(name):
    with pytest.raises(OSError) as err:
        Server.start([name, "arg"])
    assert f"{type(err.value).__name__}: {err.value}" == _popen_error([name, "arg"])


def test_signals_sent_while_the_tap_loads_wait_for_its_handlers():
    """From the fork until ``release_signals`` a forwarded signal is held, not the tap's
    end; then it reaches the handler the tap installed meanwhile."""
    got: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
    server = Server.start(["sleep", "30"])
    try:
        signal.raise_signal(signal.SIGUSR1)
        assert got == []
        server.release_signals()
        assert got == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, old)
        server.signal_group(signal.SIGKILL)
        assert server.wait(10) == -signal.SIGKILL
        for fd in (server.stdout, server.stderr):
            os.close(fd)
        server.close_stdin()
    assert server.returncode == -signal.SIGKILL and server.poll() == -signal.SIGKILL


@linux
def test_the_death_signal_is_set_without_importing_ctypes():
    """The child's ``prctl`` comes from ``_ctypes`` (``import ctypes`` costs ~1.5 ms of the
    start) and works: the server reads SIGKILL as its parent-death signal."""
    server = ("import ctypes; v = ctypes.c_int(); "
              "ctypes.CDLL(None).prctl(2, ctypes.byref(v)); print(v.value)")  # PR_GET_PDEATHSIG
    code = ("import os, sys\n"
            "from mcp_notebook.capture.spawn import Server, _libc_prctl\n"
            "fn = _libc_prctl()\n"
            "assert 'ctypes' not in sys.modules, sorted(sys.modules)\n"
            "assert type(fn).__module__ == 'mcp_notebook.capture.spawn', type(fn)\n"
            f"s = Server.start([sys.executable, '-c', {server!r}])\n"
            "s.close_stdin()\n"
            "data = b''.join(iter(lambda: os.read(s.stdout, 65536), b''))\n"
            "print(s.wait(30), data.decode().strip())\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([PY, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", str(int(signal.SIGKILL))]
