"""Records of a JSON document format as spans of one buffer of message texts.

A document reader (HAR, the Inspector's export, a cassette) decides each record's context
from its entry (time, direction, session, label, HTTP facts) and has the message text as
bytes (a HAR body encoded once, an export's message compacted by msgspec). A
:class:`Doc` collects them in file order: a usual record (a message text, no forced
kind) as a place in one buffer with its context in arrays, any other as its
:class:`~.base.Record`. :meth:`Doc.blocks` gives them in the order the reader keeps
(``order``): runs of usual records as :class:`~._spans.Spans`, which the table
classifies in place with the C scanner (no string, no ``Record``, no encoding per
message), the others as they are. :meth:`Doc.records` gives the same records as the
reader's record by record code made them (what every consumer but the table reads).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._spans import Spans
from .base import Record

__all__ = ["Doc", "Columns", "DocRecords", "time_order", "stamp_order"]

_DIR = {"c2s": 0, "s2c": 1, None: -1}
#: the longest run of usual records given as one :class:`Spans`
RUN = 1 << 16


class Doc:
    """The records of one document, in file order (see the module's text)."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: each slot's text (bytes or a memoryview of them; None: a record kept whole)
        self.texts: list[Any] = []
        #: each slot's ``(ts, direction, session, stream, label, extra)`` (None: kept whole)
        self.meta: list[tuple[float | None, str | None, str, str, str, dict[str, Any]]
                        | None] = []
        self.others: dict[int, Record] = {}

    def __len__(self) -> int:
        return len(self.texts)

    def text(self, data: Any, ts: float | None, direction: str | None, session: str,
             stream: str, label: str, extra: dict[str, Any]) -> None:
        """A usual record whose text is ``data`` (UTF-8 bytes or a view of them, not
        empty)."""
        self.texts.append(data)
        self.meta.append((ts, direction, session, stream, label, extra))

    def record(self, rec: Record) -> None:
        """Any other record, kept whole."""
        self.others[len(self.texts)] = rec
        self.texts.append(None)
        self.meta.append(None)

    def times(self) -> np.ndarray:
        """The time of every slot (NaN: none)."""
        others = self.others
        ts = [m[0] if m is not None else others[k].ts for k, m in enumerate(self.meta)] \
            if others else [m[0] for m in self.meta]  # type: ignore[index]
        return np.array(ts, dtype=np.float64) if ts else np.zeros(0)

    def blocks(self, order: np.ndarray | None = None) -> Iterator[Record | Spans]:
        """The records in ``order`` (slot numbers; None: file order): runs of usual ones as
        :class:`Spans` of one buffer, the others as records. The buffer is made here,
        once; the texts are let go."""
        texts, meta, others = self.texts, self.meta, self.others
        n = len(texts)
        if others:
            for k in others:
                texts[k] = b""
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
        buf = b"".join(texts)
        self.texts = texts = []
        ends = np.cumsum(lengths)
        if others:
            slots = [k for k, m in enumerate(meta) if m is not None]
            got = [meta[k] for k in slots]
        else:
            slots, got = None, meta
        self.meta = []
        cols = list(zip(*got, strict=True)) if got else [(), (), (), (), (), ()]
        ts_u, dir_u, sess_u, stream_u, labels_u, extras_u = cols
        del cols, got
        m = len(ts_u)
        at = np.full(n, -1, dtype=np.int64)  # slot -> its place among the usual ones
        at[slice(None) if slots is None else slots] = np.arange(m)
        sessions: dict[str, int] = {}
        streams: dict[str, int] = {}
        cols_u = Columns(
            buf, (ends - lengths)[at >= 0], ends[at >= 0],
            np.array(ts_u, dtype=np.float64) if m else np.zeros(0),
            np.fromiter((_DIR[d] for d in dir_u), dtype=np.int8, count=m),
            np.fromiter((sessions.setdefault(s, len(sessions)) for s in sess_u),
                        dtype=np.int64, count=m), (),
            np.fromiter((streams.setdefault(s, len(streams)) for s in stream_u),
                        dtype=np.int64, count=m), (),
            list(labels_u), {j: e for j, e in enumerate(extras_u) if e})
        cols_u.sessions, cols_u.streams = tuple(sessions), tuple(streams)
        return cols_u.blocks(self.name, at, others, order)


class Columns:
    """The usual records of a document as columns: record ``j``'s text is
    ``buf[starts[j]:ends[j]]``, its session ``sessions[session_of[j]]``, its stream
    ``streams[stream_of[j]]``, its direction a code (0 c2s, 1 s2c, -1 none), its time NaN
    where it has none, ``extras`` the ``extra`` of those that have one."""

    def __init__(self, buf: bytes, starts: np.ndarray, ends: np.ndarray, ts: np.ndarray,
                 direction: np.ndarray, session_of: np.ndarray, sessions: tuple[str, ...],
                 stream_of: np.ndarray, streams: tuple[str, ...], labels: list[str],
                 extras: dict[int, dict[str, Any]]) -> None:
        self.buf, self.starts, self.ends, self.ts = buf, starts, ends, ts
        self.direction, self.session_of, self.sessions = direction, session_of, sessions
        self.stream_of, self.streams, self.labels, self.extras = stream_of, streams, labels, \
            extras

    def blocks(self, name: str, at: np.ndarray | None = None,
               others: dict[int, Record] | None = None,
               order: np.ndarray | None = None) -> Iterator[Record | Spans]:
        """The records of the slots in ``order`` (None: all, in order): slot ``k`` is usual
        record ``at[k]``, or, where that is -1, ``others[k]`` (``at`` None: every slot is
        the usual record of its number). Runs of usual records are :class:`Spans`."""
        n = len(self.starts) if at is None else len(at)
        if order is None:
            order = np.arange(n, dtype=np.int64)
        u_all = order if at is None else at[order]
        use = u_all >= 0
        edges = np.flatnonzero(np.diff(np.concatenate(([False], use, [False])).astype(
            np.int8)))
        extras, labels, names = self.extras, self.labels, self.sessions
        done = 0
        for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
            for k in range(done, a):
                yield others[int(order[k])]  # type: ignore[index]
            for c in range(a, b, RUN):
                d = min(b, c + RUN)
                u = u_all[c:d]
                ul = u.tolist()
                ex = {i: e for i, j in enumerate(ul) if (e := extras.get(j))} if extras \
                    else None
                yield Spans(self.buf, self.starts[u], self.ends[u],
                            np.zeros(d - c, dtype=np.int64), self.ts[u], self.direction[u],
                            names[0] if names else "", name, False, None, None,
                            streams=self.streams or ("http",), stream=self.stream_of[u],
                            extras=ex or None, sessions=names, session_of=self.session_of[u],
                            labels=[labels[j] for j in ul])
            done = b
        for k in range(done, n):
            yield others[int(order[k])]  # type: ignore[index]


class DocRecords:
    """A document reader's records: iterating gives :class:`~.base.Record` s, as ever;
    :meth:`blocks` gives the table the same with runs of usual records as spans."""

    def __init__(self, blocks: Iterator[Record | Spans]) -> None:
        self._blocks: Iterator[Record | Spans] | None = blocks
        self._it: Iterator[Record] | None = None

    def _records(self) -> Iterator[Record]:
        assert self._blocks is not None
        for item in self._blocks:
            if type(item) is Spans:
                yield from item.records()
            else:
                yield item  # type: ignore[misc]

    def __iter__(self) -> Iterator[Record]:
        return self

    def __next__(self) -> Record:
        if self._it is None:
            self._it = self._records()
        return next(self._it)

    def blocks(self) -> Iterator[Record | Spans]:
        if self._it is not None:  # already read in part: the rest, as records
            return self._it
        self._it = iter(())
        assert self._blocks is not None
        return self._blocks


def time_order(ts: np.ndarray) -> np.ndarray:
    """:func:`~.base.in_time_order` of slots with times ``ts`` (NaN: none): sorted by time,
    stably; a slot with no time keeps its place after the one before it."""
    n = len(ts)
    timed = ~np.isnan(ts)
    last = np.maximum.accumulate(np.where(timed, np.arange(n), -1)) if n else \
        np.zeros(0, np.int64)
    keys = np.where(last >= 0, ts[np.maximum(last, 0)], -np.inf)
    return np.argsort(keys, kind="stable")


def stamp_order(ts: np.ndarray) -> np.ndarray:
    """Slots sorted by time, stably, those with no time (NaN) last."""
    return np.argsort(np.where(np.isnan(ts), np.inf, ts), kind="stable")
