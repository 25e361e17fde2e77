"""``mcp-notebook record``: a stdio tap that sits between an MCP client and its server.

A client launches the tap in place of the server, for example in a Claude Desktop config::

    {"command": "mcp-notebook",
     "args": ["record", "--out", "/path/server.jsonl", "--", "npx", "my-server"]}

The tap starts the server, relays stdin and stdout byte for byte, records every
newline-delimited frame (and every stderr line) as tap JSONL (see
:mod:`mcp_notebook.capture.jsonl`), and writes nothing of its own to stdout.

How it behaves at the edges:

- **ordering**: a frame is recorded *before* the bytes that complete it are passed on,
  so a reply can never be recorded ahead of the request that caused it;
- **back-pressure**: one blocking thread per stream and no queues: when a peer stops
  reading, the tap stops reading from the other side; memory stays bounded by one frame
  (at most ``--max-frame`` bytes) per stream;
- **ends**: the client closing stdin closes the server's stdin; if the server has not
  exited ``--grace`` seconds later it gets SIGTERM, then SIGKILL. A client that stops
  reading and closes the tap's stdout is treated the same way. The server exiting
  ends the tap, with the server's exit code (128 + N for a signal N), once everything
  the server wrote has been relayed and recorded, however slow the client or the disk;
  only a stream that moves no byte for 5 s is given up (a grandchild holding it open);
- **signals**: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the tap are
  forwarded to the server's process group (the server runs in its own group, so a signal
  to the client's whole group reaches it exactly once). A server that ignores SIGTERM is
  left running, but a second SIGTERM to the tap sends it SIGKILL. On Linux the server
  also gets SIGKILL if the tap itself is killed;
- **memory**: each of the three streams holds at most one frame's first ``--max-frame``
  bytes plus about 1 MiB (a frame over 1 MiB is recorded piece by piece, not copied), so
  the tap needs about 3 x ``--max-frame`` at worst, whatever the peers send;
- **a failing disk** (full, I/O error, file-size limit) stops the record, never the relay:
  one line on stderr says why, and the record file keeps whole lines only.

Run it standalone with ``python -m mcp_notebook.capture.tap --out FILE -- CMD ARGS...``.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

from .jsonl import DEFAULT_MAX_FRAME, FrameSplitter, TapWriter

__all__ = ["main", "add_arguments", "run", "Tap"]

CHUNK = 256 * 1024
PIECE = 64 * 1024  # the most bytes handed to one write(), so that progress stays visible
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
KILL_AFTER = 3.0  # seconds between SIGTERM and SIGKILL when the tap stops the server
STALL = 5.0  # once the server has exited: seconds a relay may make no progress at all


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # resolved here, so the child between fork and exec only calls it
#: Popen sets the new process group itself where it can (Python 3.11+), else the child does
_GROUP: dict[str, int] = {"process_group": 0} if sys.version_info >= (3, 11) else {}


def _child_setup() -> None:  # pragma: no cover - runs in the child before exec
    """New process group (before 3.11); SIGKILL when the tap dies (``PR_SET_PDEATHSIG``)."""
    if not _GROUP:
        os.setpgid(0, 0)
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


def _write_all(fd: int, data: bytes, progress: Callable[[], None]) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:PIECE])
        view = view[n:]
        progress()


class Tap:
    """One tapped server process and its three relay threads.

    Parameters
    ----------
    command
        The server command and its arguments.
    writer
        Where records go.
    grace
        Seconds the server may take to exit after its input ends before it is stopped.
    max_frame
        The most bytes of one frame kept for its record.
    stdin_fd, stdout_fd, stderr_fd
        The client-facing descriptors (the tap's own by default).
    """

    def __init__(self, command: Sequence[str], writer: TapWriter, *, grace: float = 10.0,
                 max_frame: int = DEFAULT_MAX_FRAME, stdin_fd: int = 0, stdout_fd: int = 1,
                 stderr_fd: int = 2) -> None:
        self.command = list(command)
        self.writer = writer
        self.grace = grace
        self.max_frame = max_frame
        self.fds = (stdin_fd, stdout_fd, stderr_fd)
        self.proc: subprocess.Popen[bytes] | None = None
        self._input_closed_at: float | None = None
        self._lock = threading.Lock()
        self._stop_sent = False
        self._terms = 0  # SIGTERMs the tap received
        self._escalated = False
        #: direction -> monotonic time the relay last moved a byte (read, relayed or recorded)
        self._moved: dict[str, float] = {}

    # -- relays --------------------------------------------------------------------------
    def _pump(self, src: int, dst: int | None, direction: str,
              on_dst_closed: Callable[[], None], on_eof: Callable[[], None] | None) -> None:
        """Copy ``src`` to ``dst`` chunk by chunk, recording each frame before passing it on.

        When ``dst`` fails (its reader went away) the pump keeps reading and recording
        ``src``, so the writer on the other end is never blocked by a reader that is gone.
        """
        splitter = FrameSplitter(self.max_frame)
        moved = self._moved

        def progress() -> None:
            moved[direction] = time.monotonic()

        progress()
        while True:
            try:
                chunk = os.read(src, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            progress()
            for data, total in splitter.feed(chunk):
                self.writer.frame(direction, data, total)
            if dst is not None:
                try:
                    _write_all(dst, chunk, progress)
                except OSError:
                    dst = None
                    on_dst_closed()
        rest = splitter.flush()
        if rest is not None:
            self.writer.frame(direction, rest[0], rest[1], partial=True)
        if on_eof is not None:
            on_eof()

    def _client_input_ended(self) -> None:
        self.writer.meta("stdin-eof", "client closed stdin; closing the server's stdin")
        self._client_gone()

    def _server_input_closed(self) -> None:
        self.writer.meta("server-stdin-closed", "the server no longer reads its stdin")

    def _client_output_closed(self) -> None:
        self.writer.meta("stdout-closed", "client no longer reads stdout; closing the server's stdin")
        self._client_gone()

    def _stderr_closed(self) -> None:
        self.writer.meta("stderr-closed", "client no longer reads stderr; still recording it")

    def _client_gone(self) -> None:
        with self._lock:
            if self._input_closed_at is None:
                self._input_closed_at = time.monotonic()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    # -- signals -------------------------------------------------------------------------
    def _forward(self, signum: int, frame: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signum)
            except OSError:
                try:
                    self.proc.send_signal(signum)
                except OSError:
                    pass

    def _on_signal(self, signum: int, frame: object) -> None:
        """Forward a signal; a second SIGTERM to the tap kills the server (SIGKILL).

        Runs in the main thread between bytecodes: it only signals and counts (the record
        of an escalation is written by :meth:`run`, never here, where the writer's lock
        may be held by the very code this interrupted)."""
        if signum == signal.SIGTERM:
            self._terms += 1
            if self._terms >= 2:
                self._escalated = True
                self._forward(signal.SIGKILL, frame)
                return
        self._forward(signum, frame)

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for name in FORWARDED:
            sig = getattr(signal, name, None)
            if sig is not None:
                signal.signal(sig, self._on_signal)

    def _stop_server(self, now: float) -> None:
        """After the client went away and ``grace`` passed: SIGTERM, then SIGKILL."""
        assert self.proc is not None
        closed = self._input_closed_at
        if closed is None or self.grace <= 0 or now - closed < self.grace:
            return
        if not self._stop_sent:
            self._stop_sent = True
            self.writer.meta("terminate", f"server still running {self.grace:g}s after its input "
                             "ended; sending SIGTERM")
            self._forward(signal.SIGTERM, None)
        elif now - closed >= self.grace + KILL_AFTER:
            self.writer.meta("kill", "server ignored SIGTERM; sending SIGKILL")
            self._forward(signal.SIGKILL, None)
            self._input_closed_at = now  # do not repeat every tick

    def _drain(self, threads: Sequence[threading.Thread]) -> None:
        """The server is gone: relay its output to EOF however long that takes, giving up
        only on a stream that moves no byte for ``STALL`` seconds (a grandchild holding
        the pipe open, or a client that stopped reading)."""
        for t in threads:
            direction = t.name.removeprefix("tap-")
            while t.is_alive():
                t.join(0.05)
                last = max(self._moved.get(direction, 0.0), self.writer.moved)
                if t.is_alive() and time.monotonic() - last > STALL:
                    self.writer.meta("drain-stalled", f"{direction}: no byte moved for "
                                     f"{STALL:g}s after the server exited; not waiting for "
                                     "its end")
                    break

    # -- run -----------------------------------------------------------------------------
    def run(self) -> int:
        """Start the server, relay until it exits, return its exit status (128+N for signal N)."""
        stdin_fd, stdout_fd, stderr_fd = self.fds
        if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
            # a file-size limit fails the record's write (EFBIG) instead of killing the tap;
            # the server gets the default back (Popen's restore_signals)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0, preexec_fn=_child_setup,
                **_GROUP)  # type: ignore[call-overload]
        except OSError as exc:
            self.writer.meta("spawn-error", f"could not start the server: {exc}")
            os.write(stderr_fd, f"mcp-notebook record: cannot start {self.command[0]!r}: "
                                f"{exc}\n".encode())
            return 127
        proc = self.proc
        assert proc.stdin and proc.stdout and proc.stderr
        cmd_shown = [os.path.basename(self.command[0]), *self.command[1:]]
        self.writer.meta("start", f"started {' '.join(cmd_shown)}", pid=proc.pid, cmd=cmd_shown)
        self._install_signals()
        threads = [
            threading.Thread(target=self._pump, name="tap-c2s", daemon=True, args=(
                stdin_fd, proc.stdin.fileno(), "c2s", self._server_input_closed,
                self._client_input_ended)),
            threading.Thread(target=self._pump, name="tap-s2c", daemon=True, args=(
                proc.stdout.fileno(), stdout_fd, "s2c", self._client_output_closed, None)),
            threading.Thread(target=self._pump, name="tap-stderr", daemon=True, args=(
                proc.stderr.fileno(), stderr_fd, "stderr", self._stderr_closed, None)),
        ]
        for t in threads:
            t.start()
        while True:
            try:
                code = proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                self._stop_server(time.monotonic())
        if self._escalated:
            self.writer.meta("kill", "second SIGTERM to the tap; sent SIGKILL to the server")
        self._drain(threads[1:])
        status = code if code >= 0 else 128 - code
        if code < 0:
            name = signal.Signals(-code).name
            self.writer.meta("exit", f"server killed by {name}", code=None, signal=name,
                             status=status)
        else:
            self.writer.meta("exit", f"server exited with code {code}", code=code, status=status)
        return status


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``record`` options to ``parser``."""
    parser.add_argument("--out", "-o", metavar="FILE",
                        help="tap JSONL file to append to (default: mcp-SESSION.jsonl in the "
                             "folder named by $MCP_NOTEBOOK_DIR, else the current folder)")
    parser.add_argument("--session", "-s", metavar="NAME",
                        help="session name written on every record (default: "
                             "SERVERNAME-YYYYmmddTHHMMSS-PID)")
    parser.add_argument("--grace", type=float, default=10.0, metavar="SECONDS",
                        help="after the client closes stdin, stop the server if it is still "
                             "running this long after (SIGTERM, then SIGKILL; 0: never; "
                             "default 10)")
    parser.add_argument("--max-frame", type=int, default=DEFAULT_MAX_FRAME, metavar="BYTES",
                        help="keep at most this many bytes of one frame in its record "
                             "(default 256 MiB). A longer frame is still relayed whole and "
                             "byte-exact; its record holds its first BYTES bytes and its "
                             "full length (\"truncated\"). This bounds the tap's memory: "
                             "about BYTES + 1 MiB per stream (3 streams), however long a "
                             "line the server writes")
    parser.add_argument("server_command", nargs=argparse.REMAINDER,
                        metavar="-- SERVER_CMD [ARGS...]", help="the server command line, after --")


def default_session(command: Sequence[str]) -> str:
    """``SERVERNAME-YYYYmmddTHHMMSS-PID`` for a command line."""
    stem = os.path.basename(command[0]) or "server"
    return f"{stem}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"


def run(args: argparse.Namespace) -> int:
    """Run ``record`` from parsed arguments; return the exit status."""
    command = list(args.server_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        sys.stderr.write("mcp-notebook record: no server command; usage: "
                         "mcp-notebook record [--out FILE] -- SERVER_CMD [ARGS...]\n")
        return 2
    session = args.session or default_session(command)
    out = args.out or os.path.join(os.environ.get("MCP_NOTEBOOK_DIR", "."), f"mcp-{session}.jsonl")
    def stopped(reason: str) -> None:
        try:
            os.write(2, f"mcp-notebook record: recording stopped: {reason}; the session is "
                        "still relayed, unrecorded from here on\n".encode())
        except OSError:
            pass

    try:
        writer = TapWriter(out, session, on_stop=stopped)
    except OSError as exc:
        sys.stderr.write(f"mcp-notebook record: cannot open {out!r} for writing: {exc}\n")
        return 2
    try:
        return Tap(command, writer, grace=args.grace, max_frame=args.max_frame).run()
    finally:
        writer.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mcp_notebook.capture.tap [--out FILE] [--session NAME] -- CMD ARGS...``."""
    parser = argparse.ArgumentParser(
        prog="mcp-notebook record",
        description="Run an MCP stdio server behind a recording tap (byte-exact relay).")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    os._exit(status)  # daemon relays may still block in read(); do not wait for them
