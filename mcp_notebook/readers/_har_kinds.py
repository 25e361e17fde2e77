"""What the table makes of the records a HAR's order depends on: the kind, id key and
progress token of each of their frames, exactly as the table's classification gives them.

``_har_order`` places the untimed events of a GET stream from the kinds, id keys and
progress tokens of the records (an answer right after the request it answers, a progress
notification after the request that gave its token). The table classifies the
records again when it makes its rows, so this is a second reading of the same records,
made cheap:

- the records the C scanner takes (one usual message each) are read by its
  ``frame_kinds``: the scanner's own reading of the message (``csrc/envelope.h``,
  ``message``), giving the kind, the id key (the id's text) and the progress token (its
  ``ref``) scan() would give, without
  making the row (no id object, method code, sparse columns, call or list column, text);
- those it does not take (a batch, a line the scanner leaves to the Python path: an id
  of another shape, escapes, a line that is not JSON...) and every record where the
  extension is not built are read by :func:`meaning_part`, the table's own part of those
  records (as all of them were before), counted in :data:`COUNTS`;
- :class:`Early` reads the records in a thread while the reader makes the rest of the
  columns (``frame_kinds`` runs without the GIL), so the second core does it.

``tests/readers/test_har_kinds.py`` holds :func:`meaning` equal to :func:`meaning_part`.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import numpy as np

from ..protocol.vocab import KINDS
from ._docspans import Columns
from ._har_texts import _HandOver, _native_fn
from ._spans import Spans

__all__ = ["COUNTS", "Early", "meaning", "meaning_part"]

#: the records :func:`meaning` read: by ``frame_kinds`` (``"c"``), by the table's part
#: (``"part"``: not taken by the scanner, or no extension), and the readings of
#: :class:`Early` not used (``"early unused"``: asked for other records)
COUNTS: Counter[str] = Counter()

_PROGRESS = "notifications/progress"
_REQUEST, _NOTIFICATION = KINDS.index("request"), KINDS.index("notification")

#: each frame's kind code and id key, its progress token's key (a notifications/progress
#: token or a request's _meta.progressToken; None for any other), and where each
#: record's frames start (one more: the end)
Kinds = tuple[np.ndarray, list[str | None], list[str | None], np.ndarray]


#: the pieces :class:`Early` reads the records in (the caller, once it needs them,
#: reads the pieces not begun yet from the end while the thread reads on)
PIECES = 16


class Early:
    """``frame_kinds`` of the usual records ``which`` of ``buf`` (``starts``, ``ends``),
    read in a thread from now on, a piece at a time from the first; :meth:`result`
    reads the pieces left from the last (the two meet), then waits for the thread's
    piece. Only made when the extension (with ``frame_kinds``) is built."""

    def __init__(self, buf: Any, starts: np.ndarray, ends: np.ndarray,
                 which: np.ndarray) -> None:
        fn = _native_fn("frame_kinds")
        assert fn is not None
        self.fn, self.buf, self.which = fn, buf, which
        self.starts = np.ascontiguousarray(starts[which], dtype=np.int64)
        self.ends = np.ascontiguousarray(ends[which], dtype=np.int64)
        cuts = np.linspace(0, len(which), min(PIECES, max(len(which), 1)) + 1)
        self.cuts = cuts.astype(np.int64).tolist()
        n = len(self.cuts) - 1
        self._got: list[tuple[bytearray, list[str | None], list[str | None]] | None] = \
            [None] * n
        self._front, self._back = 0, n - 1  # the next piece of the thread, of the caller
        self._lock = threading.Lock()
        self._exc: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="har-kinds", daemon=True)
        self._thread.start()

    def _piece(self, k: int) -> None:
        a, b = self.cuts[k], self.cuts[k + 1]
        self._got[k] = self.fn(self.buf, self.starts[a:b], self.ends[a:b])

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._front > self._back:
                        return
                    k = self._front
                    self._front += 1
                self._piece(k)
        except BaseException as exc:  # noqa: BLE001 - raised again by result()
            self._exc = exc

    def result(self) -> tuple[bytearray, list[str | None], list[str | None]]:
        while True:
            with self._lock:
                if self._front > self._back:
                    break
                k = self._back
                self._back -= 1
            self._piece(k)
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        got = self._got
        assert all(g is not None for g in got)
        if len(got) == 1:
            return got[0]  # type: ignore[return-value]
        kinds = bytearray().join(g[0] for g in got)  # type: ignore[index]
        keys: list[str | None] = []
        refs: list[str | None] = []
        for g in got:
            keys += g[1]  # type: ignore[index]
            refs += g[2]  # type: ignore[index]
        return kinds, keys, refs


def meaning(cols: Columns, which: np.ndarray, name: str, early: Early | None = None
            ) -> Kinds:
    """The kind (a code of ``KINDS``, int64), id key and progress token of every frame
    of the usual records ``which``, as the table classifies them, and where each
    record's frames start (one more: the end). ``early``: the ``frame_kinds`` of these records begun
    before (used when it read the same records)."""
    fn = _native_fn("frame_kinds")
    k = len(which)
    if fn is None:
        COUNTS["part"] += k
        return meaning_part(cols, which, name)
    if early is not None and np.array_equal(early.which, which):
        got, keys, refs = early.result()
    else:
        if early is not None:
            COUNTS["early unused"] += 1
        got, keys, refs = fn(
            cols.buf, np.ascontiguousarray(cols.starts[which], dtype=np.int64),
            np.ascontiguousarray(cols.ends[which], dtype=np.int64))
    kind = np.frombuffer(got, dtype=np.int8).astype(np.int64)
    left = np.flatnonzero(kind < 0)
    COUNTS["c"] += k - len(left)
    COUNTS["part"] += len(left)
    if not len(left):
        return kind, keys, refs, np.arange(k + 1, dtype=np.int64)
    return _merged(kind, keys, refs, left, meaning_part(cols, which[left], name))


def _merged(kind: np.ndarray, keys: list[str | None], refs: list[str | None],
            left: np.ndarray, part: Kinds) -> Kinds:
    """The frames of records read by ``frame_kinds`` (one each: ``kind``, ``keys``,
    ``refs``) and of the records ``left`` it did not take (``part``: theirs, as
    :func:`meaning_part` gives them), in record order."""
    l_kind, l_key, l_ref, l_first = part
    count = np.ones(len(kind), dtype=np.int64)
    count[left] = np.diff(l_first)
    if bool((count[left] == 1).all()):  # one frame each (the usual): in their places
        out_kind = kind.copy()
        out_kind[left] = l_kind
        out_key, out_ref = list(keys), list(refs)
        for j, key, ref in zip(left.tolist(), l_key, l_ref, strict=True):
            out_key[j], out_ref[j] = key, ref
        return out_kind, out_key, out_ref, np.arange(len(kind) + 1, dtype=np.int64)
    first = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(count)))
    n = int(first[-1])
    taken = np.flatnonzero(kind >= 0)
    out_kind = np.empty(n, dtype=np.int64)
    out_kind[first[taken]] = kind[taken]
    # the frames of the records left: each at its record's first plus its place in it
    at = np.repeat(first[left] - l_first[:-1], count[left]) + np.arange(int(l_first[-1]))
    out_kind[at] = l_kind
    def placed(mine: list[str | None], theirs: list[str | None]) -> list[str | None]:
        out = np.empty(n, dtype=object)
        out[first[taken]] = np.fromiter(mine, dtype=object, count=len(mine))[taken]
        out[at] = np.fromiter(theirs, dtype=object, count=len(theirs))
        return out.tolist()  # type: ignore[no-any-return]

    return out_kind, placed(keys, l_key), placed(refs, l_ref), first


def meaning_part(cols: Columns, which: np.ndarray, name: str) -> Kinds:
    """:func:`meaning` of the records ``which`` by the table's own part of them (every
    record, whatever its shape: a batch, a line the C scanner leaves to Python)."""
    from ..fast.records import part_of

    k = len(which)
    sp = Spans(cols.buf, cols.starts[which], cols.ends[which], np.zeros(k, dtype=np.int64),
               np.full(k, np.nan), cols.direction[which], "", name, False, None, None,
               labels=[""] * k)  # labelled as a document's: its texts are not decoded
    part = part_of([sp])  # type: ignore[list-item]
    batch = np.full(part.n, -1, dtype=np.int64)  # a frame's place in its batch
    inside = part.sparse.get("batch") or {}
    if inside:
        batch[np.fromiter(inside, dtype=np.int64, count=len(inside))] = list(inside.values())
    first = np.flatnonzero(batch <= 0)
    if len(first) != k:
        raise _HandOver  # a record of no frame, or of several without a batch
    kinds = np.asarray(part.kind, dtype=np.int64)
    # the progress tokens: the refs of progress notifications and of requests (a
    # cancel's ref is the request it cancels)
    refs: list[str | None] = [None] * part.n
    codes, cats = part.method
    progress = cats.index(_PROGRESS) if _PROGRESS in cats else -2
    for r, v in zip(part.ref.rows.tolist(), part.ref.values.tolist(), strict=True):
        if kinds[r] == _REQUEST or (kinds[r] == _NOTIFICATION and codes[r] == progress):
            refs[r] = v
    return kinds, list(part.id_key), refs, np.append(first, part.n)
