"""The members of a HAR's entries the column path (``_har_columns``) reads, as columns,
from either of two readings of the document: the C extension's one pass (``har_scan``:
the members and the bodies' texts unescaped into one buffer as they are passed) or
msgspec's typed decoding into ``_har_structs`` (the bodies then unescaped by
``_har_texts._texts``). Both give the same :class:`Parts` (``tests/readers/
test_har_scan.py``); a document the C pass does not take (see ``csrc/harscan.h``) is
read by msgspec, and counted in :data:`COUNTS`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from . import _har_texts
from ._har_structs import _EMPTY, _NO_TIMINGS, _NULL, _Entry
from ._har_texts import _HandOver, _texts
from ._time import read_times

__all__ = ["COUNTS", "Parts", "of_scan", "of_structs"]

_Span = tuple[np.ndarray, np.ndarray]
#: documents read by the C pass (``"c"``) and handed by it to msgspec (``"handed over"``)
COUNTS: Counter[str] = Counter()


class Parts:
    """Each entry's members: ``methods``, ``urls``, ``started`` (startedDateTime; the C
    pass's: None where it read the stamp itself, :meth:`start_times`),
    ``status`` (int or None), ``mimes`` (the content's mimeType: "" for no content),
    ``hkeys`` (the bytes of its two header lists), ``nums`` (time and the six timings,
    an (n, 7) float array, NaN for none), ``incomplete``; and as bool arrays: no
    postData (``post_none``), stamped SSE events (``stamped``), a reply text (not null:
    ``has_reply``) and an empty one (``empty``). :meth:`texts` gives the bodies'
    texts."""

    methods: list[str]
    urls: list[str]
    started: list[str]
    status: list[int | None]
    mimes: list[Any]
    hkeys: list[tuple[bytes, bytes]]
    nums: np.ndarray
    incomplete: list[bool]
    post_none: np.ndarray
    stamped: np.ndarray
    has_reply: np.ndarray
    empty: np.ndarray

    def start_times(self) -> tuple[np.ndarray, dict[int, str]]:
        """Each entry's startedDateTime as Unix seconds (NaN: none) and the problems by
        position, as :func:`~._time.read_times` reads them."""
        return read_times(self.started, numbers=False)  # type: ignore[arg-type]

    def texts(self, post_at: np.ndarray, plain_at: np.ndarray, sse_at: np.ndarray
              ) -> tuple[bytearray, _Span, _Span, _Span]:
        """One buffer holding the texts of the POST bodies of the entries ``post_at``,
        then of the replies of ``plain_at``, then of ``sse_at`` (nothing else), and where
        each is in it, as (starts, ends) of the three; :class:`_HandOver` for a body
        that is not a string of Unicode text."""
        raise NotImplementedError


class _Structs(Parts):
    def __init__(self, entries: list[_Entry]) -> None:
        n = len(entries)
        reqs = [e.request for e in entries]
        resps = [e.response for e in entries]
        self.started = [e.startedDateTime for e in entries]
        self.nums = np.array([(e.time, *((t := e.timings or _NO_TIMINGS).blocked, t.dns,
                                         t.connect, t.send, t.wait, t.receive))
                              for e in entries], dtype=np.float64).reshape(n, 7)
        self.incomplete = [bool(e.incomplete) for e in entries]
        self.status = [r.status for r in resps]
        self.urls = [r.url for r in reqs]
        self.methods = [r.method for r in reqs]
        self.posts = [r.postData for r in reqs]
        self.post_none = np.fromiter((p is None for p in self.posts), dtype=bool, count=n)
        contents = [r.content for r in resps]
        self.stamped = np.fromiter((c is not None and c.sse_events != _NULL for c in contents),
                                   dtype=bool, count=n)
        self.hkeys = [(bytes(q.headers), bytes(r.headers)) for q, r in zip(reqs, resps,
                                                                            strict=True)]
        self.replies = [_NULL if c is None else c.text for c in contents]
        self.mimes = ["" if c is None else c.mimeType for c in contents]
        self.has_reply = np.fromiter((r != _NULL for r in self.replies), dtype=bool, count=n)
        self.empty = np.fromiter((r == _EMPTY for r in self.replies), dtype=bool, count=n)

    def texts(self, post_at: np.ndarray, plain_at: np.ndarray, sse_at: np.ndarray
              ) -> tuple[bytearray, _Span, _Span, _Span]:
        buf = bytearray()
        out: list[_Span] = []
        lists = ([self.posts[k].text for k in post_at.tolist()],  # type: ignore[union-attr]
                 [self.replies[k] for k in plain_at.tolist()],
                 [self.replies[k] for k in sse_at.tolist()])
        del self.posts, self.replies
        for raws in lists:
            base = len(buf)
            ends = _texts(raws, buf)
            out.append((np.concatenate(([base], ends[:-1])).astype(np.int64)[:len(ends)],
                        ends))
        return buf, out[0], out[1], out[2]


class _Scan(Parts):
    def __init__(self, got: tuple[Any, ...]) -> None:
        (self.buf, at, nums, flags, self.methods, self.urls, self.started, self.status,
         self.mimes, self.hkeys, stamps, self.gap) = got
        n = len(self.methods)
        self.at = np.frombuffer(at, dtype=np.int64).reshape(n, 4)
        self.nums = np.frombuffer(nums, dtype=np.float64).reshape(n, 7)
        fl = np.frombuffer(flags, dtype=np.uint8).reshape(n, 2)
        self.incomplete = fl[:, 0].astype(bool).tolist()
        self.stamped = fl[:, 1].astype(bool)
        self.post_none = self.at[:, 0] == -2
        self.has_reply = self.at[:, 2] >= 0
        self.empty = self.has_reply & (self.at[:, 3] == self.at[:, 2])
        self.stamps = np.frombuffer(stamps, dtype=np.float64)

    def start_times(self) -> tuple[np.ndarray, dict[int, str]]:
        # the usual stamps were read by the C pass (to the same doubles); the rest here
        out = self.stamps.copy()
        rest = np.flatnonzero(np.isnan(out))
        if not len(rest):
            return out, {}
        got, problems = read_times([self.started[k] for k in rest.tolist()], numbers=False)
        out[rest] = got
        return out, {int(rest[k]): p for k, p in problems.items()}

    def texts(self, post_at: np.ndarray, plain_at: np.ndarray, sse_at: np.ndarray
              ) -> tuple[bytearray, _Span, _Span, _Span]:
        at = self.at
        spans = [(at[post_at, 0], at[post_at, 1]), (at[plain_at, 2], at[plain_at, 3]),
                 (at[sse_at, 2], at[sse_at, 3])]
        if (spans[0][0] < 0).any():
            raise _HandOver  # a POST body null: not a string (as ``_texts`` finds)
        buf: bytearray = self.buf
        del self.buf
        if sum(int((e - s).sum()) for s, e in spans) != len(buf) - self.gap:
            # texts of entries read one by one too: the buffer of only the records' texts
            # (its size decides whether the table keeps them as a lazy column); the gap
            # between the two halves' texts of a large document is no text (never
            # written: no memory), and stays
            pieces = [memoryview(buf)[a:b] for s, e in spans
                      for a, b in zip(s.tolist(), e.tolist(), strict=True)]
            ends = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64,
                                         count=len(pieces)))
            buf = bytearray(b"".join(pieces))
            del pieces
            starts = np.concatenate(([0], ends[:-1])).astype(np.int64)[:len(ends)]
            cuts = np.cumsum([0, *(len(s) for s, _ in spans)])
            spans = [(starts[cuts[k]:cuts[k + 1]], ends[cuts[k]:cuts[k + 1]])
                     for k in range(3)]
        return buf, spans[0], spans[1], spans[2]


def of_structs(entries: list[_Entry]) -> Parts:
    """The :class:`Parts` of msgspec's typed decoding."""
    return _Structs(entries)


def of_scan(data: Any, two: bool | None = None) -> Parts | None:
    """The :class:`Parts` of the C pass over the document's bytes; None where the
    extension is not built, or the pass does not take the document (counted). ``two``:
    whether the pass may run on two threads (None: when the document is large and a
    second core is free, :func:`~..fast.cores.min_second_thread`); the answer is the
    same."""
    fn = _har_texts._native_fn("har_scan")
    if fn is None:
        return None
    if two is None:
        from ..fast.cores import min_second_thread

        least = min_second_thread()
        two = 0 <= least <= len(data)
    got = fn(data, two)
    if isinstance(got, int):
        COUNTS["handed over"] += 1
        return None
    COUNTS["c"] += 1
    return _Scan(got)
