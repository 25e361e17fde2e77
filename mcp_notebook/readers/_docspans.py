"""Records of a JSON document format as spans of one buffer of message texts.

A document reader (HAR, the Inspector's export, a cassette) decides each record's context
from its entry (time, direction, session, label, HTTP facts) and has the message text as
bytes (a HAR body encoded once, an export's message as its compacted raw value). A
:class:`Doc` collects them in file order, record by record: a usual record (a message
text, no forced kind) as a place in one buffer with its context in lists, any other as
its :class:`~.base.Record`. A reader that can make the usual records a column at a time
gives :class:`Columns` instead. Their ``blocks`` give the records in the order the
reader keeps (``order``): runs of usual records as :class:`~._spans.Spans`, which the
table classifies in place with the C scanner (no string, no ``Record``, no encoding per
message), the others as they are. :class:`DocRecords` iterates them as the records the
reader's record by record code makes (what every consumer but the table reads).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._spans import RunExtras, Spans
from .base import Record

__all__ = ["Doc", "Columns", "DocLabels", "DocRecords", "time_order", "stamp_order"]

_DIR = {"c2s": 0, "s2c": 1, None: -1}
#: the longest run of usual records given as one :class:`Spans`
RUN = 1 << 16


class DocLabels:
    """The labels of a document's records, made when asked: record ``k``'s is ``prefix``
    and ``entry[k]``, then ``/response`` where ``response[k]``, or ``/event<q>`` where
    ``event[k]`` is ``q >= 0`` (``<file>#entry<i>``, ``<file>#interaction<i>/response``,
    ``<file>#entry<i>/event<q>``; ``event`` None: no event). Indexed like the list of
    them (a record's label, or the labels of a slice or of an index array, as labels
    again); the table keeps them as they are
    (:class:`~mcp_notebook.textsources.DocLabelSource`), not as a million strings."""

    __slots__ = ("prefix", "entry", "response", "event")

    def __init__(self, prefix: str, entry: np.ndarray, response: np.ndarray,
                 event: np.ndarray | None = None) -> None:
        self.prefix, self.entry, self.response, self.event = prefix, entry, response, event

    @classmethod
    def of_pairs(cls, prefix: str, answered: np.ndarray) -> DocLabels:
        """Entry ``i``'s record, then its response's where ``answered[i]``, in that order."""
        reps = 1 + answered.astype(np.int64)
        entry = np.repeat(np.arange(len(answered), dtype=np.int64), reps)
        response = np.zeros(len(entry), dtype=bool)
        response[np.cumsum(reps)[answered] - 1] = True
        return cls(prefix, entry, response)

    def __len__(self) -> int:
        return len(self.entry)

    def __getitem__(self, k: Any) -> Any:
        ev = self.event
        if isinstance(k, (slice, np.ndarray)):
            return DocLabels(self.prefix, self.entry[k], self.response[k],
                             None if ev is None else ev[k])
        if ev is not None and ev[k] >= 0:
            return f"{self.prefix}{int(self.entry[k])}/event{int(ev[k])}"
        return f"{self.prefix}{int(self.entry[k])}" + ("/response" if self.response[k] else "")

    def tolist(self) -> list[str]:
        p = self.prefix
        if self.event is None or not (self.event >= 0).any():
            return [f"{p}{e}/response" if r else f"{p}{e}"
                    for e, r in zip(self.entry.tolist(), self.response.tolist(), strict=True)]
        return [f"{p}{e}/event{q}" if q >= 0 else f"{p}{e}/response" if r else f"{p}{e}"
                for e, r, q in zip(self.entry.tolist(), self.response.tolist(),
                                   self.event.tolist(), strict=True)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        """The same labels (as a list of them, or labels made another way)."""
        if isinstance(other, DocLabels):
            other = other.tolist()
        return isinstance(other, list) and self.tolist() == other

    __hash__ = None  # type: ignore[assignment]


class Doc:
    """The records of one document, in file order (see the module's text): the texts of
    the usual ones written into one buffer as they come, their context in lists."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.buf = bytearray()
        self.ends: list[int] = []  # where each slot's text ends in ``buf``
        self.ts: list[float | None] = []
        self.direction: list[int] = []
        self.session: list[int] = []
        self.stream: list[int] = []
        self.labels: list[str] = []
        self.extras: dict[int, dict[str, Any]] = {}
        self.others: dict[int, Record] = {}  # the slots of records kept whole
        self._sessions: dict[str, int] = {}
        self._streams: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ends)

    def text(self, data: Any, ts: float | None, direction: str | None, session: str,
             stream: str, label: str, extra: dict[str, Any]) -> None:
        """A usual record whose text is ``data`` (UTF-8 bytes or a view of them, not
        empty)."""
        k = len(self.ends)
        buf = self.buf
        buf += data
        self.ends.append(len(buf))
        self.ts.append(ts)
        self.direction.append(_DIR[direction])
        code = self._sessions.get(session)
        if code is None:
            code = self._sessions[session] = len(self._sessions)
        self.session.append(code)
        code = self._streams.get(stream)
        if code is None:
            code = self._streams[stream] = len(self._streams)
        self.stream.append(code)
        self.labels.append(label)
        if extra:
            self.extras[k] = extra

    def record(self, rec: Record) -> None:
        """Any other record, kept whole."""
        self.others[len(self.ends)] = rec
        self.ends.append(len(self.buf))
        self.ts.append(rec.ts)
        self.direction.append(-1)
        self.session.append(0)
        self.stream.append(0)
        self.labels.append("")

    def times(self) -> np.ndarray:
        """The time of every slot (NaN: none)."""
        return np.array(self.ts, dtype=np.float64) if self.ts else np.zeros(0)

    def blocks(self, order: np.ndarray | None = None) -> Iterator[Record | Spans]:
        """The records in ``order`` (slot numbers; None: file order): runs of usual ones as
        :class:`Spans` of the one buffer, the others as records."""
        n = len(self.ends)
        ends = np.array(self.ends, dtype=np.int64)
        starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1])) if n else ends
        at = np.arange(n, dtype=np.int64)
        if self.others:
            at[list(self.others)] = -1
        cols = Columns(self.buf, starts, ends, self.times(),  # type: ignore[arg-type]
                       np.array(self.direction, dtype=np.int8),
                       np.array(self.session, dtype=np.int64), tuple(self._sessions),
                       np.array(self.stream, dtype=np.int64), tuple(self._streams),
                       self.labels, self.extras)
        self.ends, self.ts, self.direction, self.session, self.stream = [], [], [], [], []
        return cols.blocks(self.name, at, self.others, order)


class Columns:
    """The usual records of a document as columns: record ``j``'s text is
    ``buf[starts[j]:ends[j]]``, its session ``sessions[session_of[j]]``, its stream
    ``streams[stream_of[j]]``, its direction a code (0 c2s, 1 s2c, -1 none), its time NaN
    where it has none, ``extras`` the ``extra`` of those that have one (by record, or,
    where every record has one, a list of them)."""

    def __init__(self, buf: bytes, starts: np.ndarray, ends: np.ndarray, ts: np.ndarray,
                 direction: np.ndarray, session_of: np.ndarray, sessions: tuple[str, ...],
                 stream_of: np.ndarray, streams: tuple[str, ...],
                 labels: list[str] | DocLabels,
                 extras: dict[int, dict[str, Any]] | list[dict[str, Any]]) -> None:
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
        plain = order is None and at is None  # record k is slot k: runs are slices
        if order is None:
            order = np.arange(n, dtype=np.int64)
        u_all = order if at is None else at[order]
        use = u_all >= 0
        edges = np.flatnonzero(np.diff(np.concatenate(([False], use, [False])).astype(
            np.int8)))
        extras, labels, names = self.extras, self.labels, self.sessions
        if isinstance(extras, list):  # every record's: those not empty have one
            has = np.fromiter(map(bool, extras), dtype=bool, count=len(extras))
        elif extras:  # which usual records have an extra (one look-up per run, not per record)
            has = np.zeros(len(self.starts), dtype=bool)
            full = all(extras.values())  # the usual: no empty extra (no test per key)
            has[np.fromiter(extras if full else (j for j, e in extras.items() if e),
                            dtype=np.int64)] = True
        done = 0
        for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
            for k in range(done, a):
                yield others[int(order[k])]  # type: ignore[index]
            for c in range(a, b, RUN):
                d = min(b, c + RUN)
                u = u_all[c:d]
                if extras:
                    at_ex = np.flatnonzero(has[u])
                    ex = RunExtras(at_ex, list(map(extras.__getitem__, u[at_ex].tolist()))) \
                        if len(at_ex) else None
                else:
                    ex = None
                yield Spans(self.buf, self.starts[u], self.ends[u],
                            np.zeros(d - c, dtype=np.int64), self.ts[u], self.direction[u],
                            names[0] if names else "", name, False, None, None,
                            streams=self.streams or ("http",), stream=self.stream_of[u],
                            extras=ex or None, sessions=names, session_of=self.session_of[u],
                            labels=labels[c:d] if plain else labels[u]
                            if type(labels) is DocLabels
                            else list(map(labels.__getitem__, u.tolist())))
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
