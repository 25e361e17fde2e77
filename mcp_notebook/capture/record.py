"""``mcp-notebook record`` from its arguments to a running server, before the relays load.

The order is the start-up budget (MCP clients time out slow servers): read the options
(:func:`parse`, no argparse for the plain form), open the record file, start the server
(:mod:`~mcp_notebook.capture.spawn`), and only then import the relays
(:mod:`~mcp_notebook.capture.tap`: threading, signal) and json, for the first record.
Everything before the server's ``exec`` is ``os``, ``sys``, ``time`` and ctypes' prctl.
"""

from __future__ import annotations

import os
import sys
import time

from .jsonl import DEFAULT_MAX_FRAME, TapWriter
from .spawn import Server

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

__all__ = ["parse", "run", "start", "default_session", "add_arguments", "main"]

#: the options of ``record`` (as ``tap.add_arguments`` declares them): flag -> (field, type)
OPTIONS: dict[str, tuple[str, Any]] = {
    "--out": ("out", str), "-o": ("out", str),
    "--session": ("session", str), "-s": ("session", str),
    "--grace": ("grace", float),
    "--max-frame": ("max_frame", int),
    "--stall": ("stall", float),
}


class Args:
    """The parsed options, with the attributes (and ``vars``) of argparse's namespace."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def parse(argv: Sequence[str]) -> Args | None:
    """The plain form ``[--out FILE] [--session NAME] [--grace S] [--max-frame N] [--stall S]
    -- CMD...``
    as argparse parses it, or None for anything else: help, an unknown or abbreviated
    option, a value that is missing, starts with ``-`` or is not a number, no ``--`` or
    nothing after it. None sends the arguments to argparse, so that every message and
    every unusual form stay argparse's own."""
    values: dict[str, Any] = {"out": None, "session": None, "grace": 10.0,
                              "max_frame": DEFAULT_MAX_FRAME, "stall": None}
    argv = list(argv)
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest = argv[i + 1:]
            if not rest or rest[0].startswith("-"):
                return None
            return Args(**values, server_command=argv[i:])
        name, eq, value = arg.partition("=")
        if name not in OPTIONS or (eq and not name.startswith("--")):
            return None
        if not eq:
            if i + 1 == len(argv):
                return None
            i += 1
            value = argv[i]
        if value.startswith("-"):
            return None
        field, kind = OPTIONS[name]
        try:
            values[field] = kind(value)
        except ValueError:
            return None
        i += 1
    return None


def default_session(command: Sequence[str]) -> str:
    """``SERVERNAME-YYYYmmddTHHMMSS-PID`` for a command line."""
    stem = os.path.basename(command[0]) or "server"
    return f"{stem}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"


def _ignore_sigxfsz() -> None:
    """A file-size limit fails the record's write (EFBIG) instead of killing the tap (the
    server has the default: :mod:`~mcp_notebook.capture.spawn` gives it back)."""
    import signal

    if hasattr(signal, "SIGXFSZ"):
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread: leave it
            pass


def start(command: Sequence[str], writer: TapWriter, stderr_fd: int = 2) -> Server | None:
    """Start the server; if it cannot start, record why, say so on ``stderr_fd``, None."""
    try:
        server = Server.start(command)
    except OSError as exc:
        _ignore_sigxfsz()
        writer.meta("spawn-error", f"could not start the server: {exc}")
        os.write(stderr_fd, f"mcp-notebook record: cannot start {command[0]!r}: "
                            f"{exc}\n".encode())
        return None
    _ignore_sigxfsz()
    return server


def run(args: Any) -> int:
    """Run ``record`` from parsed arguments (:func:`parse`'s or argparse's); return the
    exit status."""
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
        server = start(command, writer)
        if server is None:
            return 127
        from .tap import Tap  # the relays, once the server runs

        stall = {} if args.stall is None else {"stall": args.stall}  # None: the tap's STALL
        return Tap(command, writer, grace=args.grace, max_frame=args.max_frame,
                   **stall).run(server)
    finally:
        writer.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``record`` options to ``parser`` (:func:`~mcp_notebook.capture.record.parse`
    reads the plain uses of the same options without argparse)."""
    import argparse

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
    parser.add_argument("--stall", type=float, default=None, metavar="SECONDS",
                        help="once the server has exited, give up relaying a stream that "
                             "moves no byte for this long (a grandchild holding the "
                             "server's output open; default 5)")
    parser.add_argument("server_command", nargs=argparse.REMAINDER,
                        metavar="-- SERVER_CMD [ARGS...]", help="the server command line, after --")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mcp_notebook.capture.record [--out FILE] [--session NAME] -- CMD ARGS...``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="mcp-notebook record",
        description="Run an MCP stdio server behind a recording tap (byte-exact relay).")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    os._exit(status)  # daemon relays may still block in read(); do not wait for them
