"""What the table makes of the records a HAR's order depends on: the kind, id key and
progress token of each of their frames, exactly as the table's classification gives them.

``_har_order`` places the untimed events of a GET stream from the kinds, id keys and
progress tokens of the records (an answer right after the request it answers, a progress
notification after the request that gave its token). The table classifies the
records again when it makes its rows, so this is a second reading of the same records,
made cheap:

- the records the C scanner takes (one usual message each) are read by its
  ``frame_spans``: the scanner's own reading of the message (``csrc/envelope.h``,
  ``message``), giving the kind, the id key (the id's text) and the progress token (its
  ``ref``) scan() would give, without
  making the row (no id object, method code, sparse columns, call or list column, text);
  the keys stay places in the buffer, numbered by their texts (``span_codes``: each
  distinct text made into a str once), so that ``_har_order`` matches them as integers;
- those it does not take (a batch, a line the scanner leaves to the Python path: an id
  of another shape, escapes, a line that is not JSON...) and every record where the
  extension is not built are read by :func:`meaning_part`, the table's own part of those
  records (as all of them were before), counted in :data:`COUNTS`;
- :class:`Early` reads the records in a thread while the reader makes the rest of the
  columns (``frame_spans`` runs without the GIL), so the second core does it.

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

__all__ = ["COUNTS", "Early", "Joined", "meaning", "meaning_part"]

#: the records :func:`meaning` read: by ``frame_kinds`` (``"c"``), by the table's part
#: (``"part"``: not taken by the scanner, or no extension), and the readings of
#: :class:`Early` not used (``"early unused"``: asked for other records)
COUNTS: Counter[str] = Counter()

_PROGRESS = "notifications/progress"
_REQUEST, _NOTIFICATION = KINDS.index("request"), KINDS.index("notification")

#: each frame's kind code and id key, its progress token's key (a notifications/progress
#: token or a request's _meta.progressToken; None for any other), where each record's
#: frames start (one more: the end), and, with the extension, the keys as codes: an (2,
#: frames) int64 array (the id keys', the tokens'; -1 none; equal keys, equal codes) and
#: the key of each code (``span_codes``'s texts, then those of the records the table's
#: part read); :func:`meaning` always gives them, :func:`meaning_part` None. The keys are
#: None where :func:`meaning` was asked for the codes alone.
Kinds = tuple[np.ndarray, list[str | None] | None, list[str | None] | None, np.ndarray,
              tuple[np.ndarray, list[str]] | None]


#: a reading's answer: the kinds (int8), the pieces for ``span_codes`` (texts, places),
#: and where each record asked is among the pieces' records (None: in order)
Read = tuple[np.ndarray, list[tuple[Any, Any]], "np.ndarray | None"]

#: the pieces :class:`Early` reads the records in (the caller, once it needs them,
#: reads the pieces not begun yet from the end while the thread reads on)
PIECES = 16


class Early:
    """``frame_spans`` of the usual records ``which`` of ``buf`` (``starts``, ``ends``),
    read in a thread from now on, a piece at a time from the first; :meth:`result`
    reads the pieces left from the last (the two meet), then waits for the thread's
    piece. Only made when the extension (with ``frame_spans``) is built."""

    def __init__(self, buf: Any, starts: np.ndarray, ends: np.ndarray,
                 which: np.ndarray) -> None:
        fn = _native_fn("frame_spans")
        assert fn is not None
        self.fn, self.buf, self.which = fn, buf, which
        self.starts = np.ascontiguousarray(starts[which], dtype=np.int64)
        self.ends = np.ascontiguousarray(ends[which], dtype=np.int64)
        cuts = np.linspace(0, len(which), min(PIECES, max(len(which), 1)) + 1)
        self.cuts = cuts.astype(np.int64).tolist()
        n = len(self.cuts) - 1
        self._got: list[tuple[bytearray, bytes, bytearray] | None] = [None] * n
        self._front, self._back = 0, n - 1  # the next piece of the thread, of the caller
        self._lock = threading.Lock()
        self._exc: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="har-kinds", daemon=True)
        self._thread.start()

    def _piece(self, k: int) -> None:
        a, b = self.cuts[k], self.cuts[k + 1]
        self._got[k] = self.fn(self.buf, self.starts[a:b], self.ends[a:b])

    def cancel(self) -> None:
        """No piece begun from now on (the reading is not wanted: a document handed
        over); the thread ends after the piece it reads."""
        with self._lock:
            self._front = self._back + 1

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

    def result(self) -> Read:
        """The kinds of the records (int8) and the pieces of the reading, for
        ``span_codes`` (each piece's texts and places, its records in order); no order
        (None): the records are ``which``'s, in order."""
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
        kinds = np.concatenate([np.frombuffer(g[0], dtype=np.int8)  # type: ignore[index]
                                for g in got]) if got else np.zeros(0, dtype=np.int8)
        return kinds, [(g[2], g[1]) for g in got], None  # type: ignore[index]


class Joined:
    """The ``frame_spans`` of the records ``which`` read by several :class:`Early` begun
    at different times (a HAR's POST bodies as soon as their texts are known, its GET
    streams' events once they are found): record ``j`` of ``which`` is record
    ``order[j]`` of the parts' records end to end. :meth:`result` as :class:`Early`'s."""

    def __init__(self, parts: list[Early], which: np.ndarray, order: np.ndarray) -> None:
        self.parts, self.which, self.order = parts, which, order

    def result(self) -> Read:
        """:meth:`Early.result` of the records ``which``: the kinds in their order, the
        pieces of every reading end to end and ``order`` (the records' places among
        them)."""
        kinds, pieces = [], []
        for part in self.parts:
            k, p, _ = part.result()
            kinds.append(k)
            pieces += p
        return np.concatenate(kinds)[self.order], pieces, self.order

    def cancel(self) -> None:
        for part in self.parts:
            part.cancel()


def meaning(cols: Columns, which: np.ndarray, name: str,
            early: Early | Joined | None = None, lists: bool = True) -> Kinds:
    """The kind (a code of ``KINDS``, int64), id key and progress token of every frame
    of the usual records ``which``, as the table classifies them, where each record's
    frames start (one more: the end), and the keys as codes (:data:`Kinds`; without the
    extension, numbered here from the table's part's keys). ``early``: the ``frame_spans`` of these records begun before (used
    when it read the same records). ``lists`` False: no lists of keys where the codes
    are given (the keys None)."""
    fn, number = _native_fn("frame_spans"), _native_fn("span_codes")
    k = len(which)
    if fn is None or number is None:
        COUNTS["part"] += k
        kind, keys, refs, first, _ = meaning_part(cols, which, name)
        assert keys is not None and refs is not None  # (the part gives lists)
        texts: list[Any] = []
        return kind, keys, refs, first, (_coded(texts, keys, refs), texts)
    order: np.ndarray | None
    if early is not None and np.array_equal(early.which, which):
        got, pieces, order = early.result()
    else:
        if early is not None:
            COUNTS["early unused"] += 1
        got, spans, key_texts = fn(
            cols.buf, np.ascontiguousarray(cols.starts[which], dtype=np.int64),
            np.ascontiguousarray(cols.ends[which], dtype=np.int64))
        pieces, order = [(key_texts, spans)], None
    kind = np.frombuffer(got, dtype=np.int8).astype(np.int64)
    left = np.flatnonzero(kind < 0)
    COUNTS["c"] += k - len(left)
    COUNTS["part"] += len(left)
    raw, texts = number(pieces)  # each distinct key's text made once
    codes = np.frombuffer(raw, dtype=np.int64).reshape(2, k)
    if order is not None:  # the readings' records end to end: in ``which``'s order
        codes = codes[:, order]
    first = np.arange(k + 1, dtype=np.int64)
    if len(left):  # the records it did not take, by the table's part, in their places
        l_kind, l_key, l_ref, l_first, _ = meaning_part(cols, which[left], name)
        assert l_key is not None and l_ref is not None  # (the part gives lists)
        texts = list(texts)
        l_codes = _coded(texts, l_key, l_ref)
        kind, first, (ids, tokens) = _merged(kind, left, l_kind, l_first,
                                             [codes[0], codes[1]], [l_codes[0], l_codes[1]])
        codes = np.stack((ids, tokens))
    keys = refs = None
    if lists:
        named = np.empty(len(texts) + 1, dtype=object)  # the last: code -1, None
        named[:len(texts)] = texts
        keys, refs = named[codes[0]].tolist(), named[codes[1]].tolist()
    return kind, keys, refs, first, (codes, texts)


def _coded(texts: list[Any], *keys_of: list[Any]) -> np.ndarray:
    """Codes for the keys of the records ``frame_spans`` did not take (a few, as a rule),
    in the numbering of ``texts`` (the code of each text; a key no text is, added to
    ``texts`` with a new code; -1 for None): one row per list of ``keys_of``."""
    theirs = {k for keys in keys_of for k in keys if k is not None}
    code: dict[Any, int] = {}
    if len(theirs) <= 64:  # (the usual: a few) each looked for in the texts, in C
        for k in theirs:
            try:
                code[k] = texts.index(k)
            except ValueError:
                pass
    else:
        code = {t: c for c, t in enumerate(texts) if t in theirs}

    def one(key: Any) -> int:
        if key is None:
            return -1
        c = code.get(key)
        if c is None:
            c = code[key] = len(texts)
            texts.append(key)
        return c

    return np.stack([np.fromiter(map(one, keys), dtype=np.int64, count=len(keys))
                     for keys in keys_of])


def _merged(kind: np.ndarray, left: np.ndarray, l_kind: np.ndarray, l_first: np.ndarray,
            mine: list[np.ndarray], theirs: list[np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The frames of records read by ``frame_spans`` (one each: ``kind``, and a value of
    each of ``mine``) and of the records ``left`` it did not take (their frames' kinds
    ``l_kind``, where each starts, ``l_first``, and their values of each of ``theirs``),
    in record order: the kinds, where each record's frames start, the values."""
    count = np.ones(len(kind), dtype=np.int64)
    count[left] = np.diff(l_first)
    if bool((count[left] == 1).all()):  # one frame each (the usual): in their places
        out_kind = kind.copy()
        out_kind[left] = l_kind
        out = [m.copy() for m in mine]
        for o, t in zip(out, theirs, strict=True):
            o[left] = t
        return out_kind, np.arange(len(kind) + 1, dtype=np.int64), out
    first = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(count)))
    n = int(first[-1])
    taken = np.flatnonzero(kind >= 0)
    # the frames of the records left: each at its record's first plus its place in it
    at = np.repeat(first[left] - l_first[:-1], count[left]) + np.arange(int(l_first[-1]))

    def placed(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        out = np.empty(n, dtype=mine.dtype)
        out[first[taken]] = mine[taken]
        out[at] = theirs
        return out

    return placed(kind, l_kind), first, [placed(m, t) for m, t in zip(mine, theirs,
                                                                       strict=True)]


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
    return kinds, list(part.id_key), refs, np.append(first, part.n), None
