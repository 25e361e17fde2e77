"""Records of a line format as spans of the file's bytes, a block of lines at a time.

A text log of a million messages read line by line in Python costs a decoded string, a
regular expression, a time stamp and a :class:`~.base.Record` per line. Most lines of a
log are of one usual shape (a VS Code ``<stamp> [debug] [editor -> server] <json>``);
those are found for a whole block at once with numpy on the block's bytes (the shape's
fixed bytes compared, the stamp's digits read as numbers), and given to the table as one
:class:`Spans`: where each message's text is in the block, its time and direction. The
table classifies the spans in place (the C scanner reads the block's bytes, no string is
made) and keeps the text on disk, read by offset when asked, as the NDJSON path does. Any
other line goes through the reader's own code, unchanged.

:meth:`Spans.records` gives the same block as the reader's records (the ones its line
by line code makes for these lines): what every consumer but the table reads, and what
the tests compare the spans with.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ._logtext import _day_epoch
from .base import (
    BLANK,
    UTF8_BOM,
    Record,
    iter_log_lines,
    line_blocks_at,
    log_pieces,
    open_bytes,
    wrapping,
)

__all__ = ["Spans", "RunExtras", "LineReader", "lines_of", "stamps", "matches"]

_DIRECTIONS = ("c2s", "s2c", None)  # by code: 0, 1, -1


class RunExtras(Mapping):  # type: ignore[type-arg]
    """The ``extra`` of the records of a run that have one, as a read-only mapping of
    record number to dict, held as the numbers (``at``, int64, ascending) and the dicts
    (``values``) side by side: the table puts them on their rows without a dict of the
    run made and read again (a document of a million records has a million extras)."""

    __slots__ = ("at", "vals", "_by")

    def __init__(self, at: np.ndarray, vals: list[dict[str, Any]]) -> None:
        self.at, self.vals = at, vals
        self._by: dict[int, dict[str, Any]] | None = None

    def _index(self) -> dict[int, dict[str, Any]]:
        if self._by is None:
            self._by = dict(zip(self.at.tolist(), self.vals, strict=True))
        return self._by

    def get(self, k: int, default: Any = None) -> Any:
        return self._index().get(k, default)

    def __getitem__(self, k: int) -> dict[str, Any]:
        return self._index()[k]

    def __contains__(self, k: object) -> bool:
        return k in self._index()

    def __iter__(self) -> Iterator[int]:
        return iter(self.at.tolist())

    def __len__(self) -> int:
        return len(self.vals)

    def keys(self) -> list[int]:  # type: ignore[override]
        return self.at.tolist()  # type: ignore[no-any-return]

    def values(self) -> list[dict[str, Any]]:  # type: ignore[override]
        return self.vals

    def items(self) -> Iterator[tuple[int, dict[str, Any]]]:  # type: ignore[override]
        return zip(self.at.tolist(), self.vals, strict=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._index() == dict(other.items())

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True, eq=False)
class Spans:
    """Message records of one block of a line format, by their place in ``buf``.

    Every record is one message of the stdio stream, with a time and a direction, in
    ``session``, labelled ``<name>:<line>``, its text ``buf[starts[k]:ends[k]]`` (never
    empty). A document format (HAR, the Inspector's export, a cassette) gives each
    record its own label (``labels``) and session (``session_of``), a direction that may
    be none (-1), and no time (NaN) where it has none. ``offset`` is where ``buf`` starts in the file, or None when the file's bytes
    are not the text (a gzip file): then the text is kept in memory."""

    buf: bytes
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    lines: np.ndarray  # int64: the line of each record in the file (from 1)
    ts: np.ndarray  # float64
    direction: np.ndarray  # int8: 0 c2s, 1 s2c
    session: str
    name: str
    local_time: bool
    path: str | None
    offset: int | None
    #: a reader's step that needs each record's meaning (Claude Desktop's connection):
    #: ``settle(k, kind, id_key, method)`` (the one frame of record ``k``; all None when
    #: its text is not one frame) gives the record's session and its ``extra`` (or None);
    #: run by the table in record order once it has classified the spans
    settle: Callable[[int, str | None, str | None, str | None],
                     tuple[str, dict[str, Any] | None]] | None = None
    #: ``settle`` for the whole run at once, where every record is one frame:
    #: ``settle_block(kinds, id_keys, methods)`` gives the sessions and the ``extra`` of
    #: the records that have one (by record), or None (then ``settle``, record by record)
    settle_block: Callable[[list[str], list[str | None], list[str | None]],
                           tuple[list[str], dict[int, dict[str, Any]]] | None] | None = None
    #: the same step as the records carry it (:attr:`~.base.Record.settle`)
    record_settle: Callable[[Record], None] | None = None
    #: the stream of each record: ``streams[stream[k]]`` (None: ``streams[0]`` for all)
    streams: tuple[str, ...] = ("stdio",)
    stream: np.ndarray | None = None
    #: the ``extra`` of the records that have one, by record (the table keeps a record's
    #: dict as its row's, read only; a record of several rows: a copy each)
    extras: dict[int, dict[str, Any]] | RunExtras | None = None
    #: blank lines among the spans' lines (counted, no record)
    blank: int = 0
    #: the session of each record: ``sessions[session_of[k]]`` (None: ``session`` for all)
    sessions: tuple[str, ...] = ()
    session_of: np.ndarray | None = None
    #: the source label of each record, for a document format (None: ``<name>:<line>``)
    labels: list[str] | Any | None = None  # or a document's DocLabels

    def __len__(self) -> int:
        return len(self.starts)

    def text(self, k: int) -> str:
        return self.buf[int(self.starts[k]):int(self.ends[k])].decode("utf-8",
                                                                       "surrogateescape")

    def texts(self) -> list[str]:
        buf = self.buf
        return [buf[a:b].decode("utf-8", "surrogateescape")
                for a, b in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]

    def record(self, k: int) -> Record:
        """Record ``k`` as the reader's line by line code makes it."""
        ts = float(self.ts[k])
        stream = self.streams[0 if self.stream is None else int(self.stream[k])]
        extra = self.extras.get(k) if self.extras is not None else None
        session = self.session if self.session_of is None else \
            self.sessions[int(self.session_of[k])]
        source = f"{self.name}:{int(self.lines[k])}" if self.labels is None else \
            self.labels[k]
        rec = Record(raw=self.text(k), ts=None if ts != ts else ts,
                     direction=_DIRECTIONS[int(self.direction[k])], session=session,
                     stream=stream, source=source,
                     local_time=self.local_time, extra=dict(extra) if extra else {})
        rec.settle = self.record_settle
        return rec

    def records(self) -> Iterator[Record]:
        for _ in range(self.blank):
            yield BLANK
        for k in range(len(self)):
            yield self.record(k)


def lines_of(block: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bytes of ``block`` (uint8) and the start and end of each of its lines (split at
    ``\\n`` as ``str.split`` does: a block of ``k`` newlines has ``k + 1`` lines)."""
    a = np.frombuffer(block, dtype=np.uint8)
    nl = np.flatnonzero(a == 10)
    starts = np.concatenate((np.zeros(1, dtype=np.int64), nl + 1))
    ends = np.concatenate((nl, np.array([len(a)], dtype=np.int64)))
    return a, starts, ends


def matches(heads: np.ndarray, template: bytes, digits: tuple[int, ...]) -> np.ndarray:
    """Which rows of ``heads`` (an ``(n, len(template))`` uint8 array) are ``template``
    with an ASCII digit at each position of ``digits`` (whatever ``template`` has there)."""
    want = np.frombuffer(template, dtype=np.uint8)
    fixed = np.ones(len(template), dtype=bool)
    fixed[list(digits)] = False
    ok = (heads[:, fixed] == want[fixed]).all(axis=1)
    d = heads[:, list(digits)]
    ok &= ((d >= 48) & (d <= 57)).all(axis=1)
    return ok


def _num(heads: np.ndarray, cols: range) -> np.ndarray:
    out = np.zeros(len(heads), dtype=np.int64)
    for c in cols:
        out = out * 10 + (heads[:, c].astype(np.int64) - 48)
    return out


def stamps(heads: np.ndarray, date_at: int, clock_at: int) -> tuple[np.ndarray, np.ndarray]:
    """Unix seconds of ``YYYY-MM-DD`` at column ``date_at`` and ``HH:MM:SS.mmm`` at
    ``clock_at`` of each row (digits already checked), as :func:`._logtext.local_stamp`
    gives them (read as UTC), and which rows name a real day and time of day (the others:
    the reader's own code says why not)."""
    n = len(heads)
    ok = np.ones(n, dtype=bool)
    if not n:
        return np.zeros(0), ok
    dates = np.ascontiguousarray(heads[:, date_at:date_at + 10]).view("S10").ravel()
    uniq, inv = np.unique(dates, return_inverse=True)
    day = np.zeros(len(uniq), dtype=np.int64)
    good = np.ones(len(uniq), dtype=bool)
    for k, d in enumerate(uniq.tolist()):
        try:
            day[k] = _day_epoch(d.decode("ascii"))
        except ValueError:
            good[k] = False
    ok &= good[inv]
    c = clock_at
    hours, minutes = _num(heads, range(c, c + 2)), _num(heads, range(c + 3, c + 5))
    seconds, millis = _num(heads, range(c + 6, c + 8)), _num(heads, range(c + 9, c + 12))
    ok &= (hours <= 23) & (minutes <= 59) & (seconds <= 60)
    ms = (day[inv] + hours * 3600 + minutes * 60 + seconds) * 1000 + millis
    # the double nearest to the stamp's decimal value: what round(x, 6) gives local_stamp
    return ms / 1000.0, ok


def gather(a: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The first ``width`` bytes of each line starting at ``starts`` (lines that long)."""
    return a[starts[:, None] + np.arange(width, dtype=np.int64)]



class LineReader:
    """What the line formats' readers share: a file read a block of whole lines at a time,
    each block's usual lines as :class:`Spans` (``block``, the reader's own), every other
    line through the reader's line-by-line ``step``, then its ``finish``. A block holding
    a carriage return, an escape sequence or a byte-order mark, and a file that must be
    read line by line (``by_lines``: a wrapped-up log, for one), go through ``step``
    alone."""

    path: Any

    def step(self, n: int, line: str) -> Iterable[Record]:
        raise NotImplementedError

    def finish(self) -> Iterable[Record]:
        raise NotImplementedError

    def block(self, block: bytes, n: int, offset: int | None) -> Iterator[Record | Spans]:
        """The records of a block of lines (``n`` lines before it). A generator may return
        the number of the block's lines, where it counted them (else the caller does)."""
        raise NotImplementedError

    def by_lines(self) -> bool:
        return bool(wrapping(self.path))

    def run(self) -> Iterator[Record]:
        """Every record, line by line (:meth:`blocks`' spans as records)."""
        for item in self.blocks():
            if type(item) is Spans:
                yield from item.records()
            else:
                yield item  # type: ignore[misc]

    def blocks(self) -> Iterator[Record | Spans]:
        """The records, with the usual lines of each block as :class:`Spans`."""
        if self.by_lines():
            for n, line in iter_log_lines(self.path):
                yield from self.step(n, line)
            yield from self.finish()
            return
        with open_bytes(self.path) as f:
            in_file = not isinstance(f, gzip.GzipFile)
        n = 0
        for offset, block in line_blocks_at(self.path):
            if b"\r" in block or b"\x1b" in block or (b"\xef" in block and UTF8_BOM in block):
                lines = block.decode("utf-8", "surrogateescape").split("\n")
                for k, line in enumerate(lines, n + 1):
                    for piece in log_pieces(k, line.removesuffix("\r")):
                        yield from self.step(*piece)
                n += len(lines)
                continue
            count = yield from cast("Generator[Record | Spans, None, int | None]",
                                    self.block(block, n, offset if in_file else None))
            n += block.count(b"\n") + 1 if count is None else count
        yield from self.finish()


class Blocks:
    """A reader's records (iterating gives :class:`~.base.Record` s, as ever), with
    :meth:`blocks` for the table: the same, with runs of usual lines as :class:`Spans`."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self._it: Iterator[Record] | None = None

    def __iter__(self) -> Iterator[Record]:
        return self

    def __next__(self) -> Record:
        if self._it is None:
            self._it = self.reader.run()
        return next(self._it)

    def blocks(self) -> Iterator[Record | Spans]:
        if self._it is not None:  # already read in part: the rest, as records
            return self._it
        self._it = iter(())
        return self.reader.blocks()
