"""Claude Desktop's MCP logs: ``mcp-server-<name>.log`` and ``mcp.log``, every era.

One entry starts with ``<ISO-8601 ms Z> [<server>] [<level>] <message>`` (per-server
files) or ``<ts> [<level>] [<server>] <message>`` (``mcp.log``); the 2024 ``mcp.log``
has ``<ts> [<level>] <message>`` with the server named in the text. Messages are
``Message from client: <json>`` (host to server, ``c2s``) and ``Message from server:
<json>`` (``s2c``); 2026 builds write no payload (``method="tools/list" id=1 params``),
and those lines get an envelope read from that form. Everything else Claude writes is
a ``log`` row.

Lines that do not start an entry are either the continuation of the entry before (a
Node ``util.inspect`` block opened by a trailing ``{``, a stack under an ``[error]``
line, a message the poster re-wrapped after ``Message from server:``) or the server's
own stderr, which per-server files interleave with no prefix: kept as ``stderr`` rows
in file order (an indented line continues the stderr row above it).

Order: file order, which is time order: the log is written as things happen (the
server's stderr lines have no time of their own and keep their place among the
entries). Several files loaded together keep each file's order (see :func:`dedupe`).

Sessions are the server name plus a connection number (see :mod:`._claude_conn`). The
connection of an entry depends on what its message means (an ``initialize``, a request
id in flight): the reader does not decide that meaning; each record's ``settle`` step
(run by the table once it has classified the frame, in file order) asks the tracker.
Loading ``mcp.log`` together with the per-server files of the same run does not double
the messages: see :func:`dedupe`.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from ..protocol.envelope import Envelope
from ._claude_conn import Tracker
from ._claude_dedupe import dedupe
from ._claude_lines import (
    _ENTRY_TS,
    _PER_SERVER_FIRST,
    _SERVER_LEVEL,
    _match,
)
from ._claude_redacted import parse_redacted
from ._claude_usual import _FAST, usual_block
from ._logtext import TRUNCATED_RE, iso_z
from ._spans import Blocks, LineReader, Spans
from .base import BLANK, Record

__all__ = ["name", "description", "sniff", "read", "dedupe", "parse_redacted"]

name = "claude-desktop"
description = "Claude Desktop mcp.log / mcp-server-<name>.log (every era, incl. 2026 redacted)"

# era A (2024) mcp.log names the server inside the text
_ERA_A = re.compile(r"(?:Attempting to connect to MCP server (?P<open>.+?)\.\.\.$"
                    r"|Connected to MCP server (?P<ok>.+?)!"
                    r"|MCP server (?P<close>.+?) disconnected\b"
                    r"|Error in MCP connection to server (?P<err>.+?): )")
# Claude's own [error] line when the server's stdout held a line that is not JSON
_NOT_JSON = re.compile(r"is not valid JSON|in JSON at position \d+|Unexpected end of JSON input"
                       r"|^Unexpected token ")
_CUT_STAMP = re.compile(r"\d{4}-\d\d-\d\d(?:T[\d:.]*Z?)?$")
_STACK = re.compile(r"\s+at ")
_METADATA = " { metadata: "
_CLOSE_LINES = ("Client transport closed", "Server transport closed unexpectedly",
                "Server disconnected", "Shutting down server")
_STDERR_CAP = 500  # lines joined into one stderr row at most
_BLOCK_CAP = 2000  # lines of one util.inspect block at most (a block that never closes)


class _Entry:
    """One entry being read: its lines so far and what its first line said."""

    __slots__ = ("first", "last", "lines", "claude", "ts_text", "server", "level", "msg",
                 "block", "rewrap", "extra")

    def __init__(self, first: int, lines: list[str], claude: bool, ts_text: str | None = None,
                 server: str | None = None, level: str | None = None, msg: str = "") -> None:
        self.first = self.last = first
        self.lines = lines
        self.claude = claude  # a Claude entry (else raw stderr)
        self.ts_text = ts_text
        self.server = server
        self.level = level
        self.msg = msg
        self.block = False  # inside a util.inspect block opened by a trailing "{"
        self.rewrap = False  # "Message from ...:" with the payload on the lines below
        self.extra: dict[str, Any] = {}


def sniff(head: str, filename: str) -> int:
    hits = strong = lines = 0
    for line in head.splitlines()[:400]:
        if not line.strip():
            continue
        lines += 1
        m = _match(line)
        if m is None:
            continue
        hits += 1
        msg = m.group("msg") or ""
        if m.groupdict().get("server") or msg.startswith("Message from ") or _ERA_A.match(msg):
            strong += 1
    named = filename == "mcp.log" or (filename.startswith("mcp-server-")
                                      and filename.endswith(".log"))
    if strong and hits * 4 >= lines:
        return 95 if named else 90
    if strong:
        return 70
    return 40 if named else 0


def _strip_metadata(payload: str) -> str:
    """Drop a trailing `` { metadata: ... }`` (util.inspect, not part of the message)."""
    if payload.endswith(" { metadata: undefined }"):
        return payload[:-24]
    cut = payload.rfind(_METADATA)
    if cut > 0 and payload.endswith("}") and payload[:cut].rstrip()[-1:] in ("}", "]"):
        return payload[:cut]
    return payload


class _Reader(LineReader):
    def __init__(self, path: Path, session: str | None) -> None:
        self.path = path
        self.name = path.name
        self.default = session or _server_from_filename(path.name) or path.name
        self.tracker = Tracker()
        self.server: str | None = None  # the last server named (for stderr rows)
        self.order = _ENTRY_TS
        self.pending: _Entry | None = None

    def source(self, e: _Entry) -> str:
        if e.last > e.first:
            return f"{self.name}:{e.first}-{e.last}"
        return f"{self.name}:{e.first}"

    def block(self, block: bytes, n: int, offset: int | None
              ) -> Generator[Record | Spans, None, int]:
        """The records of one block of whole lines (``n`` lines before it), its usual
        message lines as spans; returns how many lines the block has."""
        return (yield from usual_block(self, block, n, offset))

    def step(self, n: int, line: str) -> list[Record]:
        """The records line ``n`` completes (an entry ends where one that is not its
        continuation starts)."""
        m = _FAST.match(line)
        out: list[Record] = []
        pending = self.pending
        if m is not None:  # the usual one-line message entry (as the lines below read it)
            ts_text, server, who, payload = m.groups()
            ts = iso_z(ts_text)
            if ts is not None and "chars truncated]" not in payload:
                if pending is not None:
                    out.extend(self.flush(pending))
                    self.pending = None
                self.order = _PER_SERVER_FIRST
                self.server = server
                rec = Record(payload, ts, "c2s" if who == "client" else "s2c", server,
                             "stdio", f"{self.name}:{n}", extra={})
                rec.settle = self._settle_message
                out.append(rec)
                return out
        if pending is not None and pending.block:
            if _match(line, self.order) is None:  # inspect blocks end with "}" at column 0
                pending.lines.append(line)
                pending.last = n
                if line.startswith("}") or len(pending.lines) >= _BLOCK_CAP:
                    pending.block = False
                return out
        if not line:
            if pending is not None:
                out.extend(self.flush(pending))
                self.pending = None
            out.append(BLANK)
            return out
        m = _match(line, self.order)
        if m is not None:
            if m.re is _SERVER_LEVEL:
                self.order = _PER_SERVER_FIRST
            if pending is not None:
                out.extend(self.flush(pending))
            self.pending = self.start(n, line, m)
        elif pending is not None and self.continues(pending, line):
            pending.lines.append(line)
            pending.last = n
        else:
            if pending is not None:
                out.extend(self.flush(pending))
            self.pending = _Entry(n, [line], claude=False)
        return out

    def finish(self) -> list[Record]:
        """The records of the entry still open, if any."""
        if self.pending is None:
            return []
        pending, self.pending = self.pending, None
        return list(self.flush(pending))

    def start(self, n: int, line: str, m: re.Match[str]) -> _Entry:
        gd = m.groupdict()
        msg = gd["msg"] or ""
        e = _Entry(n, [line], True, gd["ts"] if "ts" in gd else None, gd.get("server"),
                   gd.get("level"), msg)
        if msg.endswith("{") or msg.endswith("{ "):
            e.block = True
        elif msg.endswith(":") and msg.rstrip() in ("Message from client:", "Message from server:"):
            e.rewrap = True
        return e

    @staticmethod
    def continues(e: _Entry, line: str) -> bool:
        if e.claude:
            if e.rewrap:
                return len(e.lines) < _STDERR_CAP
            return e.level == "error" and _STACK.match(line) is not None
        return line[:1] in (" ", "\t", "}", "]", ")") and len(e.lines) < _STDERR_CAP

    # -- turning an entry into records ---------------------------------------------------

    def flush(self, e: _Entry) -> Iterator[Record]:
        if not e.claude:
            yield self.stderr(e)
            return
        ts = iso_z(e.ts_text) if e.ts_text else None
        if e.ts_text and ts is None:
            if e.ts_text[4:5] == "-":  # a full stamp naming no real time (month 13, ...)
                e.extra["ts_error"] = f"not a time: {e.ts_text!r}"
            else:
                e.extra["clock"] = e.ts_text  # a time of day with no date (poster-edited)
        if e.level and e.level != "info":
            e.extra["level"] = e.level
        msg = e.msg
        for who, c2s in (("Message from client:", True), ("Message from server:", False)):
            if msg.startswith(who):
                yield self.message(e, ts, msg[len(who):].lstrip(" "), c2s)
                return
        yield self.log(e, ts)

    def stderr(self, e: _Entry) -> Record:
        raw = "\n".join(e.lines)
        server = self.server or self.default
        if len(e.lines) == 1 and _CUT_STAMP.match(raw):
            rec = Record(raw=raw, session=server, stream="log", source=self.source(e),
                         kind="invalid", reason="a log line cut off after its timestamp "
                         "(the file ends, or was pasted, mid-entry)")
        else:
            rec = Record(raw=raw, session=server, stream="stderr", source=self.source(e),
                         kind="stderr")
        rec.settle = self._settle_stderr
        return rec

    def _settle_stderr(self, rec: Record) -> None:
        assert rec.session is not None
        conn = self.tracker.last.get(rec.session)
        if conn is not None:
            rec.session = conn.session

    def log(self, e: _Entry, ts: float | None) -> Record:
        msg = e.msg
        server = e.server
        era_a = None if server else _ERA_A.match(msg)
        if era_a:
            server = next(g for g in era_a.groups() if g)
        server = server or self.server or self.default
        self.server = server
        if e.level == "error" and _NOT_JSON.search(msg):
            e.extra["rule"] = "stdout-noise"
            e.extra["detail"] = f"Claude Desktop could not parse the server's stdout: {msg[:120]}"
        rec = Record(raw="\n".join(e.lines), ts=ts, session=server, stream="log",
                     source=self.source(e), kind="log", extra=e.extra or {})
        rec.settle = lambda rec: self._settle_log(rec, msg, era_a)
        return rec

    def _settle_log(self, rec: Record, msg: str, era_a: re.Match[str] | None) -> None:
        server, ts, t = rec.session, rec.ts, self.tracker
        assert server is not None
        if msg.startswith("Initializing server") or (era_a and era_a.group("open")):
            conn = t.open(server, ts)
        elif msg == "Server transport closed" or msg.startswith(("Server transport closed (",
                                                                  "Server transport closed {")):
            conn = t.close(server, ts)
        elif (era_a and era_a.group("close")) or (msg.startswith("Shutting down server")
                                                  and server not in t.closing):
            conn = t.close(server, ts)
        else:
            step = f"era-a {era_a.lastgroup}" if era_a else msg
            conn = t.for_log(server, step, ts, msg.startswith(_CLOSE_LINES))
        rec.session = conn.session

    def message(self, e: _Entry, ts: float | None, payload: str, c2s: bool) -> Record:
        server = e.server or self.server or self.default
        self.server = server
        direction = "c2s" if c2s else "s2c"
        if len(e.lines) > 1:
            if payload.endswith(" {") and e.lines[1].startswith("  metadata:"):
                payload = payload[:-2]  # a multi-line ``{ metadata: ... }`` suffix
            else:  # the payload itself runs on (re-wrapped or pretty-printed by a poster)
                payload = "\n".join([payload] + e.lines[1:]).strip("\n")
        payload = _strip_metadata(payload.rstrip())
        envelope: Envelope | None = None
        kind: str | None = None
        reason: str | None = None
        cut = TRUNCATED_RE.search(payload) if "chars truncated]" in payload else None
        if cut:
            kind = "invalid"
            reason = (f"Claude Desktop's logger cut this message ({cut.group(0)}); the "
                      "peer sent it whole, so this is not a protocol violation")
            e.extra["truncated_chars"] = int(cut.group(1))
        elif payload[:1] in ("{", "["):
            pass  # JSON: its meaning is the table's to decide (then ``_settle_message``)
        elif payload:
            envelope = parse_redacted(payload)
            if envelope is None:
                kind = "invalid"
                reason = "a message line with neither JSON nor the redacted method/id form"
            else:
                e.extra["redacted"] = True
        else:
            kind, reason = "invalid", "a message line with no payload"
        rec = Record(raw=payload, ts=ts, direction=direction, session=server,
                     stream="stdio", source=self.source(e), kind=kind, reason=reason,
                     envelope=envelope, extra=e.extra or {})
        rec.settle = self._settle_message
        return rec

    def _settle_message(self, rec: Record) -> None:
        """The connection of a message, from what the table found it to be."""
        server, ts, frames = rec.session, rec.ts, rec.frames
        assert server is not None
        env = frames[0] if frames is not None and len(frames) == 1 else None
        if env is not None and env.kind != "invalid":
            conn, why = self.tracker.for_message(server, ts, rec.direction == "c2s",
                                                 env.kind, env.id_key, env.method)
            if why:
                rec.extra["ambiguous"] = why
        else:  # nothing to route by: the connection the last entry went to
            conn = self.tracker.current(server, ts)
        rec.session = conn.session


def _server_from_filename(filename: str) -> str | None:
    if filename.startswith("mcp-server-") and filename.endswith(".log"):
        return filename[len("mcp-server-"):-4] or None
    return None


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield every record of a Claude Desktop log, in file order."""
    return Blocks(_Reader(path, session))
