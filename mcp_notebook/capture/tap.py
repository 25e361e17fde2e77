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
  only a stream that moves no byte for ``--stall`` seconds (default 5) is given up (a
  grandchild holding it open);
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

Run it standalone with ``python -m mcp_notebook.capture.record --out FILE -- CMD ARGS...``.
Only the standard library is used.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from .jsonl import DEFAULT_MAX_FRAME, FrameSplitter, TapWriter
from .spawn import FORWARDED, Server

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Tap"]

CHUNK = 256 * 1024
PIECE = 64 * 1024  # the most bytes handed to one write(), so that progress stays visible
KILL_AFTER = 3.0  # seconds between SIGTERM and SIGKILL when the tap stops the server
STALL = 5.0  # once the server has exited: seconds a relay may make no progress at all


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
    stall
        Once the server has exited: seconds a relay may move no byte before it is given
        up (``STALL`` by default).
    stdin_fd, stdout_fd, stderr_fd
        The client-facing descriptors (the tap's own by default).
    """

    def __init__(self, command: Sequence[str], writer: TapWriter, *, grace: float = 10.0,
                 max_frame: int = DEFAULT_MAX_FRAME, stall: float = STALL, stdin_fd: int = 0,
                 stdout_fd: int = 1, stderr_fd: int = 2) -> None:
        self.command = list(command)
        self.writer = writer
        self.grace = grace
        self.max_frame = max_frame
        self.stall = stall
        self.fds = (stdin_fd, stdout_fd, stderr_fd)
        self.server: Server | None = None
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
        assert self.server is not None
        try:
            self.server.close_stdin()
        except OSError:
            pass

    # -- signals -------------------------------------------------------------------------
    def _forward(self, signum: int, frame: object) -> None:
        if self.server is not None:
            self.server.signal_group(signum)

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
        for sig in FORWARDED:
            signal.signal(sig, self._on_signal)

    def _stop_server(self, now: float) -> None:
        """After the client went away and ``grace`` passed: SIGTERM, then SIGKILL."""
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
        only on a stream that moves no byte for ``stall`` seconds (a grandchild holding
        the pipe open, or a client that stopped reading)."""
        for t in threads:
            direction = t.name.removeprefix("tap-")
            while t.is_alive():
                t.join(0.05)
                last = max(self._moved.get(direction, 0.0), self.writer.moved)
                if t.is_alive() and time.monotonic() - last > self.stall:
                    self.writer.meta("drain-stalled", f"{direction}: no byte moved for "
                                     f"{self.stall:g}s after the server exited; not waiting for "
                                     "its end")
                    break

    # -- run -----------------------------------------------------------------------------
    def run(self, server: Server) -> int:
        """Relay until the server exits, return its exit status (128+N for signal N).

        ``server`` is the one :func:`~mcp_notebook.capture.record.start` started for this
        tap's command (the record module starts it before the relays load)."""
        stdin_fd, stdout_fd, stderr_fd = self.fds
        self.server = server
        cmd_shown = [os.path.basename(self.command[0]), *self.command[1:]]
        self.writer.meta("start", f"started {' '.join(cmd_shown)}", ts=server.started,
                         pid=server.pid, cmd=cmd_shown)
        self._install_signals()
        server.release_signals()  # signals that came while the tap was loading: now
        threads = [
            threading.Thread(target=self._pump, name="tap-c2s", daemon=True, args=(
                stdin_fd, server.stdin, "c2s", self._server_input_closed,
                self._client_input_ended)),
            threading.Thread(target=self._pump, name="tap-s2c", daemon=True, args=(
                server.stdout, stdout_fd, "s2c", self._client_output_closed, None)),
            threading.Thread(target=self._pump, name="tap-stderr", daemon=True, args=(
                server.stderr, stderr_fd, "stderr", self._stderr_closed, None)),
        ]
        for t in threads:
            t.start()
        while True:
            code = server.wait(0.1)
            if code is not None:
                break
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
