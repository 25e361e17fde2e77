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

__all__ = ["Doc", "DocRecords", "time_order", "stamp_order"]

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
        ends_f = np.cumsum(lengths)
        starts_f = ends_f - lengths
        if others:
            slots = [k for k, m in enumerate(meta) if m is not None]
            got = [meta[k] for k in slots]
        else:
            slots, got = None, meta
        cols = list(zip(*got, strict=True)) if got else [(), (), (), (), (), ()]
        ts_u, dir_u, sess_u, stream_u, labels_u, extras_u = cols
        del cols, got
        sessions: dict[str, int] = {}
        streams: dict[str, int] = {}
        m = len(ts_u)
        usual = np.zeros(n, dtype=bool)
        at = np.full(n, -1, dtype=np.int64)  # slot -> its place among the usual ones
        if slots is None:
            usual[:] = True
            at[:] = np.arange(n)
        else:
            usual[slots] = True
            at[slots] = np.arange(m)
        ts = np.array(ts_u, dtype=np.float64) if m else np.zeros(0)
        direction = np.fromiter((_DIR[d] for d in dir_u), dtype=np.int8, count=m)
        session = np.fromiter((sessions.setdefault(s, len(sessions)) for s in sess_u),
                              dtype=np.int64, count=m)
        stream = np.fromiter((streams.setdefault(s, len(streams)) for s in stream_u),
                             dtype=np.int64, count=m)
        names, labels = tuple(sessions), list(labels_u)
        if order is None:
            order = np.arange(n, dtype=np.int64)
        use = usual[order]
        edges = np.flatnonzero(np.diff(np.concatenate(([False], use, [False])).astype(
            np.int8)))
        done = 0
        for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
            for k in range(done, a):
                yield others[int(order[k])]
            for c in range(a, b, RUN):
                d = min(b, c + RUN)
                slot = order[c:d]
                u = at[slot]
                ul = u.tolist()
                ex = {i: e for i, j in enumerate(ul) if (e := extras_u[j])}
                yield Spans(buf, starts_f[slot], ends_f[slot], np.zeros(d - c, dtype=np.int64),
                            ts[u], direction[u], names[0] if names else "", self.name,
                            False, None, None, streams=tuple(streams), stream=stream[u],
                            extras=ex or None, sessions=names, session_of=session[u],
                            labels=[labels[j] for j in ul])
            done = b
        for k in range(done, n):
            yield others[int(order[k])]


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
