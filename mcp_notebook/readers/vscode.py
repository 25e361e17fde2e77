"""VS Code's MCP output channel (``MCP: <server>`` in the Output panel, copied or saved).

Each entry is ``YYYY-MM-DD HH:MM:SS.mmm [level] <message>`` in **local time with no
zone**: times are read as UTC and the records say so (``local_time=True``), unless the
caller names the zone (``tz="Europe/Paris"``).

Messages appear only when the channel's log level is Debug or Trace:
``[editor -> server] <json>`` / ``[server -> editor] <json>`` (2025-04 on) and the early
Insiders ``[Client Says] <json>`` / ``[Server Says] <json>``. ``Failed to parse message:
"<escaped line>"`` is a line the server wrote to stdout that is not JSON-RPC: it is kept
as an ``invalid`` server-to-client row with the line decoded. ``[server stderr] ...`` is
the server's stderr. The server's ``notifications/message`` are rendered by VS Code as a
bare ``{"data": ..., ...}`` object that is *not* the JSON-RPC message: a ``log`` row.
Everything else is a ``log`` row; a line without the time prefix continues the entry
above it.

Order: file order, which is time order: the channel is written as things happen.
Records are not sorted by their times, which come from a local clock that can step
back (a daylight-saving change, a clock correction) while the file's order cannot.

The channel is one server's: the session is its name from ``Starting server <name>``
(a restart opens ``<name>#2``...), else the ``session`` argument or the file name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ._logtext import local_stamp
from ._spans import Blocks, LineReader, Spans, gather, lines_of, stamps
from .base import BLANK, Record

__all__ = ["name", "description", "sniff", "read"]

name = "vscode"
description = "VS Code MCP output channel ([editor -> server] / [Client Says] lines)"

_LINE = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) "
                   r"\[(trace|debug|info|warning|error)\] ?(.*)$")
_MARKERS = ("[editor -> server]", "[server -> editor]", "[Client Says]", "[Server Says]",
            "Starting server ", "Connection state: ", "Failed to parse message: ",
            "Discovered ", "Stopping server ", "[server stderr]")
_DIRECTIONS = (("[editor -> server] ", "c2s"), ("[server -> editor] ", "s2c"),
               ("[Client Says] ", "c2s"), ("[Server Says] ", "s2c"))
_STARTING = re.compile(r"Starting server (?!from )(.+?)\s*$")
_STOPPING = re.compile(r"Stopping server (.+?)\s*$")
_FAILED = "Failed to parse message: "

#: the usual message line's head: ``<stamp> [debug] [editor -> server] `` (its digits
#: any), and the direction code of each
_USUAL = tuple((f"0000-00-00 00:00:00.000 [{level}] {marker}".encode(), code)
               for level in ("debug", "trace") for marker, code in
               (("[editor -> server] ", 0), ("[server -> editor] ", 1)))
_HEAD = len(_USUAL[0][0])
_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22)
#: the other columns of the head, and each template's bytes there
_FIXED = [k for k in range(_HEAD) if k not in _DIGITS]
_WANT = tuple((np.frombuffer(t, dtype=np.uint8)[_FIXED], code) for t, code in _USUAL)


def _usual(block: bytes, a: np.ndarray, st: np.ndarray,
           en: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which lines of a block are usual message lines whose entry is that line alone
    (the next line is blank or starts an entry; a block's last line never is: the next
    block may continue it), with each one's direction code and time."""
    n = len(st)
    cand = np.flatnonzero(en - st > _HEAD)
    heads = gather(a, st[cand], _HEAD)
    which = np.full(len(cand), -1, dtype=np.int8)
    d = heads[:, _DIGITS]  # as _spans.matches for each template, the digits checked once
    digits = ((d >= 48) & (d <= 57)).all(axis=1)
    fixed = heads[:, _FIXED]
    for want, code in _WANT:
        which[digits & (fixed == want).all(axis=1)] = code
    sel = np.flatnonzero(which >= 0)
    ts_sel, ok = stamps(heads[sel], 0, 11)
    fast = np.zeros(n, dtype=bool)
    fast[cand[sel[ok]]] = True
    direction = np.full(n, -1, dtype=np.int8)
    direction[cand] = which
    ts = np.full(n, np.nan)
    ts[cand[sel]] = ts_sel
    opens = np.zeros(n, dtype=bool)  # the line is blank or starts an entry
    opens[cand[sel]] = True
    opens[st == en] = True
    for k in np.flatnonzero(fast[:-1] & ~opens[1:]).tolist():
        opens[k + 1] = _LINE.match(block[st[k + 1]:en[k + 1]].decode(
            "utf-8", "surrogateescape")) is not None
    fast[:-1] &= opens[1:]
    fast[-1] = False
    return fast, direction, ts


def sniff(head: str, filename: str) -> int:
    lines = [ln for ln in head.splitlines()[:200] if ln.strip()]
    if not lines:
        return 0
    matched = [m.group(4) for m in map(_LINE.match, lines) if m]
    if not matched or len(matched) * 3 < len(lines):
        return 0
    if any(msg.startswith(_MARKERS) for msg in matched):
        return 90
    return 30  # a VS Code log channel, but nothing MCP in the head


class _Reader(LineReader):
    def __init__(self, path: Path, session: str | None, tz: str | None) -> None:
        self.name = path.name
        self.path = path
        self.session = session or path.name
        self.count: dict[str, int] = {}
        self.started = False
        self.pending: list[Any] | None = None  # [first, last, lines, match]
        self.zone = None
        if tz:
            from zoneinfo import ZoneInfo

            self.zone = ZoneInfo(tz)

    def ts(self, date: str, clock: str) -> float:
        """Unix seconds of an entry's stamp; ValueError for one naming no real time."""
        if self.zone is None:
            return local_stamp(date, clock)
        from datetime import datetime

        seconds = float(clock[6:])
        dt = datetime(int(date[:4]), int(date[5:7]), int(date[8:10]), int(clock[:2]),
                      int(clock[3:5]), int(seconds), round(seconds % 1 * 1e6) % 1000000,
                      tzinfo=self.zone)
        return dt.timestamp()

    def open_session(self, server: str) -> None:
        n = self.count.get(server, 0) + 1
        self.count[server] = n
        self.session = server if n == 1 else f"{server}#{n}"

    def by_lines(self) -> bool:
        """A log whose stamps need a time zone is read line by line."""
        return self.zone is not None or super().by_lines()

    def block(self, block: bytes, n: int, offset: int | None
              ) -> Generator[Record | Spans, None, int]:
        """The records of one block of whole lines (``n`` lines before it); returns how
        many lines the block has."""
        a, st, en = lines_of(block)
        fast, direction, ts = _usual(block, a, st, en)
        idx = np.flatnonzero(fast)
        if not len(idx):
            for k, (s, e) in enumerate(zip(st.tolist(), en.tolist(), strict=True)):
                yield from self.step(n + 1 + k, block[s:e].decode("utf-8", "surrogateescape"))
            return len(st)  # the block's lines, counted once
        cut = np.flatnonzero(np.diff(idx) > 1) + 1
        runs = zip(np.concatenate(([0], cut)).tolist(),
                   np.concatenate((cut, [len(idx)])).tolist(), strict=True)
        at = 0  # the next line to read
        sl, el = st.tolist(), en.tolist()
        for lo, hi in runs:
            first, last = int(idx[lo]), int(idx[hi - 1]) + 1
            for k in range(at, first):
                yield from self.step(n + 1 + k, block[sl[k]:el[k]].decode(
                    "utf-8", "surrogateescape"))
            yield from self.finish()
            yield Spans(block, st[first:last] + _HEAD, en[first:last],
                        np.arange(n + 1 + first, n + 1 + last, dtype=np.int64),
                        ts[first:last], direction[first:last], self.session, self.name,
                        True, str(self.path) if offset is not None else None, offset)
            at = last
        for k in range(at, len(sl)):
            yield from self.step(n + 1 + k, block[sl[k]:el[k]].decode("utf-8",
                                                                       "surrogateescape"))
        return len(sl)

    def step(self, n: int, line: str) -> list[Record]:
        """The records line ``n`` completes (an entry ends where the next one starts)."""
        m = _LINE.match(line)
        pending = self.pending
        if m is None and pending is not None and line:
            pending[1] = n
            pending[2].append(line)
            return []
        out = []
        if pending is not None:
            out.append(self.entry(*pending))
            self.pending = None
        if not line:
            out.append(BLANK)
        elif m is None:  # text before the first entry: the channel was cut
            out.append(Record(raw=line, session=self.session, stream="log",
                              source=f"{self.name}:{n}", kind="log", local_time=True))
        else:
            self.pending = [n, n, [line], m]
        return out

    def finish(self) -> list[Record]:
        """The entry still open, if any."""
        if self.pending is None:
            return []
        pending, self.pending = self.pending, None
        return [self.entry(*pending)]

    def entry(self, first: int, last: int, lines: list[str], m: re.Match[str]) -> Record:
        date, clock, level, msg = m.groups()
        if len(lines) > 1:
            msg = "\n".join([msg] + lines[1:])
        source = f"{self.name}:{first}" if last == first else f"{self.name}:{first}-{last}"
        extra: dict[str, Any] = {} if level == "info" else {"level": level}
        try:
            ts: float | None = self.ts(date, clock)
        except ValueError as exc:
            ts, extra["ts_error"] = None, f"not a time: {date} {clock} ({exc})"
        local = self.zone is None and ts is not None
        for prefix, direction in _DIRECTIONS:
            if msg.startswith(prefix):
                return Record(raw=msg[len(prefix):], ts=ts, direction=direction,
                              session=self.session, source=source, local_time=local,
                              extra=extra if "ts_error" in extra else {})
        if msg.startswith(_FAILED):
            return self.failed(msg[len(_FAILED):], ts, source, local, extra)
        if msg.startswith("[server stderr]"):
            return Record(raw=msg[len("[server stderr]"):].lstrip(" "), ts=ts,
                          session=self.session, stream="stderr", source=source,
                          kind="stderr", local_time=local, extra=extra)
        started = _STARTING.match(msg)
        if started:
            self.started = True
            self.open_session(started.group(1))
        elif not self.started:
            stopping = _STOPPING.match(msg)
            if stopping and stopping.group(1) not in self.count:
                self.open_session(stopping.group(1))
        if msg.startswith("{"):
            extra["server_log"] = True  # a notifications/message as VS Code renders it
        return Record(raw="\n".join(lines), ts=ts, session=self.session, stream="log",
                      source=source, kind="log", local_time=local, extra=extra)

    def failed(self, quoted: str, ts: float | None, source: str, local: bool,
               extra: dict[str, Any]) -> Record:
        try:
            text = json.loads(quoted)
        except ValueError:
            text = quoted
        if not isinstance(text, str):
            text = quoted
        if text.endswith("\n"):
            text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
        extra["rule"] = "stdout-noise"
        extra["detail"] = f"the server wrote {text[:80]!r} to stdout"
        return Record(raw=text, ts=ts, direction="s2c", session=self.session, source=source,
                      kind="invalid", local_time=local, extra=extra,
                      reason="the server wrote a line to stdout that is not a JSON-RPC "
                      "message (VS Code: 'Failed to parse message'); stdout must carry "
                      "only MCP messages, logs go to stderr")


def read(path: Path, session: str | None = None, tz: str | None = None,
         **options: Any) -> Iterator[Record]:
    """Yield every record of a VS Code MCP output channel, in file (= time) order.

    ``tz`` names the zone of the channel's clock (an IANA name); without it the times
    are taken as UTC and flagged ``local_time``.
    """
    return Blocks(_Reader(path, session, tz))
