"""Pasted curl transcripts of MCP over HTTP (a README, an issue, a terminal copy).

What is read:

- a ``curl ...`` command (continued over lines ending in ``\\``; shell quoting as in
  a POSIX shell): its ``-d`` / ``--data`` / ``--data-raw`` / ``--data-binary`` /
  ``--json`` body is a client-to-server frame; ``-H 'mcp-session-id: ...'`` names its
  session;
- SSE lines (``event:`` / ``id:`` / ``data:`` / ``retry:``, a blank line ending each
  event) and bare JSON lines that carry ``"jsonrpc"`` after a command are the reply:
  server-to-client frames, one per event with data;
- response headers (``HTTP/1.1 200 OK``, ``Mcp-Session-Id: ...``, ``Date: ...``, with or
  without curl ``-v``'s ``< `` prefix) name the session of that exchange and its time
  (``Date``, whole seconds, given to the exchange's frames); an authorization challenge
  (401, or 403 with ``WWW-Authenticate``) makes the command's body a ``log`` row: the
  server did not read it;
- ``: ping`` SSE comments make no row; every other line (prose, code fences, curl ``*``
  notes) is a ``log`` row.

An exchange runs from one ``curl`` to the next; its frames get the session named
anywhere in it, else the ``session`` argument or the file name.

Order: the paste's order (its only times are whole-second ``Date`` headers).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Generator, Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import numpy as np

from ._spans import Blocks, LineReader, Spans, gather, lines_of
from ._sse import parse_sse_lines
from .base import BLANK, Record, refused

__all__ = ["name", "description", "sniff", "read"]

name = "curl"
description = "pasted curl transcripts (curl commands, SSE/JSON replies, response headers)"

_CURL = re.compile(r"(?:[$%>#]\s*)?curl\s")  # with or without a shell prompt
_CURL_FIRST = "c$%>#"  # what a line _CURL matches can open with
_SSE_FIELDS = ("event:", "data:", "id:", "retry:")  # an SSE line
_HEADER = re.compile(r"(?:< )?([A-Za-z][A-Za-z0-9-]*): (.*)$")
_STATUS = re.compile(r"(?:< )?HTTP/\d(?:\.\d)? (\d{3})\b")
_EVENT = b"event: message"
_DATA = b"data: "
_DATA_OPTS = ("-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--json")


def sniff(head: str, filename: str) -> int:
    # [^\S\n]*: blank but not a newline (\s* from every line start of a head of blank lines
    # went over all the rest of them: quadratic, seconds on a 64 KiB head of CRLF lines)
    if re.search(r"^[^\S\n]*(?:[$%>#]\s*)?curl\s", head, re.M) and '"jsonrpc"' in head and (
            re.search(r"--data|--json|\s-d\s", head)):
        return 60
    return 0


#: shlex costs ~25 µs a character; a longer command (a pasted multi-MB body) is split by
#: a tokenizer of its quoting that runs in C, at the cost of shlex's rarer escapes
_SHLEX_LIMIT = 8192
_TOKEN = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)""")
#: shlex's POSIX words (``shlex.split``), by a regular expression: a word is unquoted text,
#: '...' (taken as is), "..." (where a backslash escapes only " and itself) and \x (x)
_PIECE = r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\."""
_WORD = re.compile(f"(?:{_PIECE})+", re.S)
_SPACE = re.compile("[ \t\r\n]*")
_PIECES = re.compile(_PIECE, re.S)
_DQ_ESCAPE = re.compile(r'\\(["\\])')


def _unquote(piece: str) -> str:
    c = piece[0]
    if c == "'":
        return piece[1:-1]
    if c == '"':
        inner = piece[1:-1]
        return _DQ_ESCAPE.sub(r"\1", inner) if "\\" in inner else inner
    if c == "\\":
        return piece[1]
    return piece


def _shell_words(text: str) -> list[str] | None:
    """``shlex.split(text)`` (POSIX mode), or None where shlex would fail (an unclosed
    quote, a trailing backslash); the same words, without shlex's character-by-character
    loop."""
    words = _single_quoted_words(text)
    if words is not _GENERAL:
        return words  # type: ignore[return-value]
    out: list[str] = []
    pos, n = 0, len(text)
    while True:
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            return out
        m = _WORD.match(text, pos)
        if m is None:
            return None
        pos = m.end()
        if pos < n and text[pos] not in " \t\r\n":
            return None  # an unclosed quote, a trailing backslash
        w = m.group()
        out.append(w if "'" not in w and '"' not in w and "\\" not in w
                   else "".join(_unquote(p) for p in _PIECES.findall(w)))


_BLANKS = str.maketrans("\t\r\n", "   ")


_GENERAL = object()  # said by the split at quotes: the text needs the general path


def _single_quoted_words(text: str) -> list[str] | None | object:
    """:func:`_shell_words` of a text with no double quote and no backslash outside single
    quotes (the usual command: its body in single quotes), by splitting at the quotes and
    the blanks; :data:`_GENERAL` for any other text."""
    parts = text.split("'")
    if not len(parts) & 1:
        return _GENERAL if "\\" in text or '"' in text else None  # an unclosed quote
    out: list[str] = []
    cur: str | None = None  # the word being made, if any ('' is a word)
    for k, p in enumerate(parts):
        if k & 1:  # inside quotes: taken as is
            cur = p if cur is None else cur + p
            continue
        if not p:
            continue
        if '"' in p or "\\" in p:
            return _GENERAL
        toks = (p.translate(_BLANKS) if "\t" in p or "\r" in p or "\n" in p else p).split(" ")
        head = toks[0]
        if head:
            cur = head if cur is None else cur + head
        if len(toks) == 1:
            continue
        if cur is not None:
            out.append(cur)
        out.extend(t for t in toks[1:-1] if t)
        cur = toks[-1] or None
    if cur is not None:
        out.append(cur)
    return out


def _split(text: str) -> list[str]:
    if len(text) <= _SHLEX_LIMIT:
        words = _shell_words(text)
        if words is not None:
            return words
        try:
            return shlex.split(text)
        except ValueError:  # an unclosed quote: the paste was cut
            return text.split()
    return [m.group(1) if m.group(1) is not None else
            m.group(2) if m.group(2) is not None else m.group(3)
            for m in _TOKEN.finditer(text)]


def _command(text: str) -> tuple[str | None, str | None, str | None]:
    """``(body, session header, url)`` of a curl command line."""
    argv = _split(text)
    body = session = url = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else None
        if arg in _DATA_OPTS:
            body = value
            i += 2
            continue
        if arg in ("-H", "--header") and value is not None:
            key, _, v = value.partition(":")
            if key.strip().lower() == "mcp-session-id":
                session = v.strip()
            i += 2
            continue
        if arg.startswith("http") and url is None:
            url = arg
        i += 1
    return body, session, url


def _exchange_runs(is_cmd: np.ndarray, triple: np.ndarray) -> list[tuple[int, int]]:
    """The runs of usual exchanges of a block, (first line, end line): an exchange from a
    usual command (``is_cmd``) to the next one is usual when the lines between are whole
    ``event`` / ``data`` / blank triples (``triple``: one starts at that line); runs of
    consecutive usual exchanges are merged.

    Triples never overlap (a triple's second and third lines, ``data:`` and blank, cannot
    start one), so the lines between two commands, ``3m`` of them, are ``m`` triples
    exactly when ``m`` triples start among the first ``3m - 2``: one count by a cumulative
    sum for every exchange at once."""
    cmds = np.flatnonzero(is_cmd)
    if len(cmds) < 2:
        return []
    c0, c1 = cmds[:-1], cmds[1:]
    gap = c1 - c0 - 1
    starts = np.concatenate(([0], np.cumsum(triple, dtype=np.int64)))
    found = starts[np.maximum(c1 - 2, c0 + 1)] - starts[c0 + 1]
    ok = np.concatenate(([False], (gap % 3 == 0) & (found == gap // 3), [False]))
    first = np.flatnonzero(ok[1:-1] & ~ok[:-2])  # the first exchange of each run
    last = np.flatnonzero(ok[1:-1] & ~ok[2:])  # its last
    return list(zip(c0[first].tolist(), c1[last].tolist(), strict=True))


class _Exchange:
    def __init__(self) -> None:
        self.records: list[Record] = []
        self.session: str | None = None
        self.ts: float | None = None
        self.status: int | None = None
        self.challenge = False  # a WWW-Authenticate header: an authorization challenge
        self.sse: list[tuple[int, str]] = []  # (line number, text) of the SSE block


class _Reader(LineReader):
    def __init__(self, path: Path, session: str | None) -> None:
        self.name = path.name
        self.path = path
        self.default = session or path.name
        self.ex = _Exchange()
        self.cmd: list[tuple[int, str]] = []  # a command continued with backslashes

    def block(self, block: bytes, n: int, offset: int | None
              ) -> Generator[Record | Spans, None, int]:
        """The records of one block of whole lines (``n`` lines before it), its runs of
        usual exchanges (a one-line ``curl ... -d '<json>'`` and its ``event: message`` /
        ``data: <json>`` events) as :class:`Spans`; returns how many lines the block has."""
        a, st, en = lines_of(block)
        sl, el = st.tolist(), en.tolist()
        runs = self._usual_runs(block, a, st, en)
        at = 0
        for lo, hi, spans in runs:
            for k in range(at, lo):
                yield from self.step(n + 1 + k, block[sl[k]:el[k]].decode(
                    "utf-8", "surrogateescape"))
            at = lo
            if self.cmd:  # inside a command continued with backslashes: line by line
                continue
            yield from self.close(self.ex)
            self.ex = _Exchange()
            yield spans(n, offset)
            at = hi
        for k in range(at, len(sl)):
            yield from self.step(n + 1 + k, block[sl[k]:el[k]].decode("utf-8",
                                                                       "surrogateescape"))
        return len(sl)  # the block's lines, counted once

    def _usual_runs(self, block: bytes, a: np.ndarray, st: np.ndarray, en: np.ndarray
                    ) -> list[tuple[int, int, Any]]:
        """The runs of usual exchanges of a block: (first line, end line, a function of
        the lines before the block and the block's offset giving the run's spans). An
        exchange is usual when its command is one line that opens with the block's usual
        command head (its words up to ``-d '``, the same session and URL) and holds the
        body alone in the quotes after it, each reply line is an ``event: message`` /
        ``data: <json>`` / blank triple, and the next line is such a command."""
        got = self._usual_head(block, st, en)
        if got is None:
            return []
        head, _quotes, session, url = got
        h = len(head)
        n = len(st)
        length = en - st
        cand = np.flatnonzero(length > h + 1)
        cand = cand[a[en[cand] - 1] == 0x27]  # ends with a quote
        # opens with the head (its `quotes` quotes) and holds no quote between the head
        # and the last byte: the line's quotes are the head's and that last one
        starts, ends = st[cand].tolist(), en[cand].tolist()
        is_cmd = np.zeros(n, dtype=bool)
        is_cmd[cand[[block.startswith(head, s) and block.find(b"'", s + h, e - 1) < 0
                     for s, e in zip(starts, ends, strict=True)]]] = True
        ev = np.zeros(n, dtype=bool)
        c = np.flatnonzero(length == len(_EVENT))
        ev[c[(gather(a, st[c], len(_EVENT)) == np.frombuffer(_EVENT, np.uint8)).all(axis=1)]] \
            = True
        data = np.zeros(n, dtype=bool)
        c = np.flatnonzero(length > len(_DATA))
        good = (gather(a, st[c], len(_DATA)) == np.frombuffer(_DATA, np.uint8)).all(axis=1)
        last = a[en[c] - 1]
        data[c[good & ((last == 0x7D) | (last == 0x5D))]] = True
        blank = length == 0
        triple = np.zeros(n, dtype=bool)
        if n >= 3:
            triple[:-2] = ev[:-2] & data[1:-1] & blank[2:]
        runs = [(lo, hi, None) for lo, hi in _exchange_runs(is_cmd, triple)]
        sess = session or self.default
        extra = {"url": url} if url else None

        def spans(lo: int, hi: int) -> Any:
            def make(before: int, offset: int | None) -> Spans:
                lines = np.arange(lo, hi)
                rec = lines[is_cmd[lo:hi] | ev[lo:hi]]
                cmd = is_cmd[rec]
                starts = np.where(cmd, st[rec] + h, st[np.minimum(rec + 1, n - 1)] + len(_DATA))
                ends = np.where(cmd, en[rec] - 1, en[np.minimum(rec + 1, n - 1)])
                k = len(rec)
                return Spans(block, starts, ends, rec + before + 1, np.full(k, np.nan),
                             np.where(cmd, 0, 1).astype(np.int8), sess, self.name, False,
                             str(self.path) if offset is not None else None, offset,
                             streams=("http", "sse"), stream=(~cmd).astype(np.int8),
                             extras=dict.fromkeys(np.flatnonzero(cmd).tolist(), extra)
                             if extra else None, blank=int(np.count_nonzero(~cmd)))
            return make

        return [(lo, hi, spans(lo, hi)) for lo, hi, _ in runs]

    def _usual_head(self, block: bytes, st: np.ndarray, en: np.ndarray
                    ) -> tuple[bytes, int, str | None, str | None] | None:
        """The head of the block's first one-line command with a ``-d '`` body (what it
        says of every command that opens with it), or None."""
        at = block.find(b"curl ")
        while at >= 0 and at < len(block):
            k = int(np.searchsorted(st, at, side="right")) - 1
            if st[k] == at:
                line = block[st[k]:en[k]]
                cut = line.find(b" -d '")
                if cut > 0:
                    head = line[:cut + 5]
                    text = head.decode("utf-8", "surrogateescape")
                    if '"' in text or "\\" in text or not text.count("'") & 1:
                        return None
                    short, long = text + "x'", text + "x" * (_SHLEX_LIMIT + 1) + "'"
                    said = _command(short)
                    if said[0] != "x" or _command(long) != ("x" * (_SHLEX_LIMIT + 1),
                                                             *said[1:]):
                        return None
                    return head, text.count("'"), said[1], said[2]
            at = block.find(b"\ncurl ", at)
            at = at + 1 if at >= 0 else -1
        return None

    def step(self, n: int, line: str) -> list[Record]:
        """The records line ``n`` completes (an exchange ends where the next command
        starts)."""
        out: list[Record] = []
        if self.cmd:  # inside a command continued with backslashes
            self.cmd.append((n, line))
            if not line.rstrip().endswith("\\"):
                out.extend(self.close(self.ex))
                self.ex = self.command(self.cmd)
                self.cmd = []
            return out
        ex = self.ex
        stripped = line.strip()
        first = stripped[:1]
        if first and first in _CURL_FIRST and _CURL.match(stripped):
            self.cmd = [(n, line)]
            if not stripped.endswith("\\"):
                out.extend(self.close(ex))
                self.ex = self.command(self.cmd)
                self.cmd = []
            return out
        if stripped.startswith(_SSE_FIELDS) or (first == ":" and ex.sse):
            ex.sse.append((n, stripped))
            return out
        if not stripped and ex.sse and not ex.sse[-1][1] == "":
            ex.sse.append((n, ""))
            out.append(BLANK)
            return out
        self.end_sse(ex)
        if not stripped:
            out.append(BLANK)
            return out
        self.other(ex, n, line, stripped)
        return out

    def finish(self) -> list[Record]:
        """The records of the last exchange."""
        out: list[Record] = []
        if self.cmd:
            ex2 = self.command(self.cmd)
            out.extend(self.close(self.ex))
            self.ex = ex2
            self.cmd = []
        out.extend(self.close(self.ex))
        self.ex = _Exchange()
        return out

    def command(self, lines: list[tuple[int, str]]) -> _Exchange:
        text = " ".join(t.rstrip().rstrip("\\") for _, t in lines)
        body, session, url = _command(_CURL.sub("curl ", text.strip(), count=1))
        first, last = lines[0][0], lines[-1][0]
        src = f"{self.name}:{first}" if first == last else f"{self.name}:{first}-{last}"
        ex = _Exchange()
        ex.session = session
        if body is None:
            ex.records.append(Record(raw="\n".join(t for _, t in lines), stream="log",
                                     source=src, kind="log"))
        else:
            ex.records.append(Record(raw=body, direction="c2s", stream="http", source=src,
                                     extra={"url": url} if url else {}))
        return ex

    def end_sse(self, ex: _Exchange) -> None:
        if not ex.sse:
            return
        lines = [n for n, _ in ex.sse]
        starts = [lines[0]] + [lines[i + 1] for i, (_, t) in enumerate(ex.sse[:-1]) if t == ""]
        for ev in parse_sse_lines([t for _, t in ex.sse]):
            if ev.empty or ev.event == "endpoint":
                if ev.event == "endpoint":
                    ex.records.append(Record(raw=ev.data or "", stream="sse", kind="log",
                                             source=f"{self.name}:{starts[ev.index]}",
                                             extra={"sse_event": "endpoint"}))
                continue
            extra: dict[str, Any] = {}
            if ev.id is not None:
                extra["event_id"] = ev.id
            if ev.event not in (None, "message"):
                extra["sse_event"] = ev.event
            where = starts[ev.index] if ev.index < len(starts) else lines[0]
            ex.records.append(Record(raw=ev.data or "", direction="s2c", stream="sse",
                                     source=f"{self.name}:{where}", extra=extra))
        ex.sse = []

    def other(self, ex: _Exchange, n: int, line: str, stripped: str) -> None:
        src = f"{self.name}:{n}"
        status = _STATUS.match(stripped)
        header = _HEADER.match(stripped)
        if status:
            ex.status = int(status.group(1))
        elif header and header.group(1).lower() == "mcp-session-id":
            ex.session = ex.session or header.group(2).strip()
        elif header and header.group(1).lower() == "www-authenticate":
            ex.challenge = True
        elif header and header.group(1).lower() == "date":
            try:
                ex.ts = parsedate_to_datetime(header.group(2).strip()).timestamp()
            except (TypeError, ValueError):
                pass
        elif stripped.startswith("{") and '"jsonrpc"' in stripped:
            ex.records.append(Record(raw=stripped, direction="s2c", stream="http", source=src))
            return
        ex.records.append(Record(raw=line, stream="log", source=src, kind="log"))

    def close(self, ex: _Exchange) -> Iterator[Record]:
        self.end_sse(ex)
        session = ex.session or self.default
        said = refused(ex.status, ex.challenge)
        if said:  # an authorization challenge: the server did not read the message
            for rec in ex.records:
                if rec.kind is None and rec.direction == "c2s":
                    rec.kind = "log"
                    rec.reason = f"refused by the server ({said})"
        for rec in ex.records:
            rec.session = session
            if ex.ts is not None:
                rec.ts = ex.ts
                if rec.kind is None:
                    rec.extra["ts_from"] = "Date header"
            if ex.status is not None and rec.kind is None:
                rec.extra["status"] = ex.status
        yield from ex.records


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the records of a curl transcript, an exchange at a time."""
    return Blocks(_Reader(path, session))

