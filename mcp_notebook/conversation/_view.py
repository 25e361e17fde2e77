"""What the conversation rules read: the frames of the methods they need, decoded once.

A :class:`View` wraps the checker's column input (``engine.checks.VecInput``): it
selects rows by method code first (a numpy mask, no text read), decodes only the frames a
rule asks for (cached per frame), and knows each session's negotiated version, the
``initialize`` exchange and the pairs. Nothing here opens a file.

Its parts: one frame's readers (``_frames``), the decoding of the call and list columns
(``_columns``) and the reference checker's input (``_listinput``); their names are
importable from here as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..protocol import versions as V
from ._columns import Call, Columns, Params
from ._frames import _DUPLICATE, ERROR, NOTIFICATION, REQUEST, RESULT
from ._listinput import ListInput as ListInput

__all__ = ["Hit", "View", "Params", "Call", "pointer_text", "view_of", "unique_inverse"]


class Hit(NamedTuple):
    """One finding: the frame, a related frame, what is wrong, and the JSON pointer of the
    failing member when there is one (for the inspector's highlight)."""

    seq: int
    related: int | None
    detail: str
    pointer: str | None = None


def unique_inverse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of integer keys (the inverse flat), by a
    table over the keys' range where it is small beside their number (no sort)."""
    key = np.asarray(key)
    if not len(key):
        return key.copy(), np.empty(0, dtype=np.int64)
    lo, hi = int(key.min()), int(key.max())
    size = hi - lo + 1
    if size > 8 * len(key) + 4096:
        uniq, inverse = np.unique(key, return_inverse=True)
        return uniq, inverse.ravel()
    k = key.astype(np.int64) - lo
    seen = np.zeros(size, dtype=bool)
    seen[k] = True
    uniq = np.flatnonzero(seen)
    index = np.empty(size, dtype=np.int64)
    index[uniq] = np.arange(len(uniq), dtype=np.int64)
    return (uniq + lo).astype(key.dtype, copy=False), index[k]


def pointer_text(path: Iterable[Any]) -> str:
    """An RFC 6901 JSON pointer from path parts."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "".join("/" + p for p in parts)


class View(Columns):
    def __init__(self, vi: Any) -> None:
        super().__init__(vi)
        self._memo: dict[str, Any] = {}
        #: set by the caller: leave out what needs many frames decoded (a large capture)
        self.light = False
        #: set by the caller: tool-arguments-schema judges only arguments that are no
        #: object (the schema validation of the rest deferred: conversation.DEEP)
        self.shallow_arguments = False

    def memo(self, key: str, fn: Any) -> Any:
        """``fn(self)`` computed once per view (rules that build on another's result)."""
        if key not in self._memo:
            self._memo[key] = fn(self)
        return self._memo[key]

    # -- rows ------------------------------------------------------------------------------
    def method_codes(self, names: Iterable[str]) -> np.ndarray:
        want = set(names)
        return np.asarray([i for i, m in enumerate(self.vi.method_cats) if m in want],
                          dtype=np.int32)

    def _method_table(self, names: Iterable[str]) -> np.ndarray:
        """A lookup table over method codes (code -1, no method, in the last slot: False):
        ``table[vi.method]`` is ``np.isin(vi.method, method_codes(names))``, without a sort."""
        table = np.zeros(len(self.vi.method_cats) + 1, dtype=bool)
        table[self.method_codes(names)] = True
        return table

    def rows(self, names: Iterable[str] | None = None,
             kinds: Sequence[int] = (REQUEST, NOTIFICATION)) -> list[int]:
        """Rows of these kinds whose method is one of ``names`` (None: any method)."""
        return self.row_array(names, kinds).tolist()  # type: ignore[no-any-return]

    def row_array(self, names: Iterable[str] | None = None,
                  kinds: Sequence[int] = (REQUEST, NOTIFICATION)) -> np.ndarray:
        """:meth:`rows` as an int64 array (no list of a large capture's rows)."""
        vi = self.vi
        kind_table = np.zeros(256, dtype=bool)  # kinds are small codes (vocab.KINDS)
        kind_table[np.asarray(kinds, dtype=np.int64)] = True
        if names is not None and self._by_method is not None:
            order, bounds = self._by_method  # the rows of each method: no pass over all
            codes = self.method_codes(names).tolist()
            count = sum(bounds[c + 2] - bounds[c + 1] for c in codes)
            if len(codes) == 1 or count * 8 < len(vi.method):  # few rows: no sort of many
                parts = [order[bounds[c + 1]:bounds[c + 2]] for c in codes]
                rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
                if len(parts) > 1:
                    rows.sort()
                return rows[kind_table[vi.kind[rows]]]
        mask = kind_table[vi.kind]
        if names is not None:
            mask &= self._method_table(names)[vi.method]
        else:
            mask &= vi.method >= 0
        return np.flatnonzero(mask).astype(np.int64, copy=False)

    def methods_present(self, names: Iterable[str]) -> np.ndarray:
        """The codes of ``names`` that some frame (any kind) has as its method."""
        codes = self.method_codes(names)
        if self._by_method is not None:
            bounds = np.asarray(self._by_method[1], dtype=np.int64)
            return codes[bounds[codes + 2] > bounds[codes + 1]]
        method = np.asarray(self.vi.method)
        seen = np.bincount(method[method >= 0], minlength=len(self.vi.method_cats)) > 0
        return codes[seen[codes]]

    @cached_property
    def _by_method(self) -> tuple[np.ndarray, list[int]] | None:
        """The rows in method order (each method's in frame order) and where each method's
        begin (code -1 first): one sort of the 16-bit codes (a radix sort), then every
        :meth:`row_array` reads only its methods' rows. None with too many methods."""
        vi = self.vi
        n = len(vi.method_cats)
        if n >= (1 << 15) - 1:
            return None
        codes = np.asarray(vi.method).astype(np.int16)
        order = np.argsort(codes, kind="stable").astype(np.int64)
        counts = np.bincount(codes.astype(np.int64) + 1, minlength=n + 1)
        return order, [0, *np.cumsum(counts).tolist()]

    def sessions_of(self, version: str) -> list[int]:
        """The session codes checked against ``version``."""
        vi = self.vi
        return [c for c in range(-1, len(vi.session_cats))
                if V.normalise(vi.version_of(c)) == version]

    def groups(self, rows: np.ndarray, *columns: np.ndarray, want: Any = None
               ) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """``rows`` grouped by the values of ``columns`` at them (small ints, e.g. codes):
        ``[(values, rows of the group)]``. ``want(values)``, when given, picks the groups
        to make (decided once per distinct values, before any sort of the rows)."""
        if not len(rows):
            return []
        key = np.zeros(len(rows), dtype=np.int64)
        cols = [c[rows].astype(np.int64) for c in columns]
        spans = []
        for c in cols:
            lo = int(c.min())
            spans.append((lo, int(c.max()) - lo + 1))
            key = key * spans[-1][1] + (c - lo)
        if want is not None:
            size = 1
            for _, n in spans:
                size *= n
            if size <= 1 << 22:  # a table of seen keys: no sort
                seen = np.zeros(size, dtype=bool)
                seen[key] = True
                distinct = np.flatnonzero(seen)
            else:
                distinct = np.unique(key)
            values = []
            rest = distinct.copy()
            for lo, n in reversed(spans):
                values.append(rest % n + lo)
                rest //= n
            heads0 = [v.tolist() for v in reversed(values)]
            picked = [k for g, k in enumerate(distinct.tolist())
                      if want(tuple(h[g] for h in heads0))]
            if len(picked) < len(distinct):
                if size <= 1 << 22:  # the same table: no sort
                    seen[:] = False
                    seen[np.asarray(picked, dtype=np.int64)] = True
                    sel = seen[key]
                else:
                    sel = np.isin(key, np.asarray(picked, dtype=np.int64))
                rows, key, cols = rows[sel], key[sel], [c[sel] for c in cols]
                if not len(rows):
                    return []
        # one stable sort: groups in key order, each group's rows in their own order
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts = np.flatnonzero(np.concatenate(([True], sk[1:] != sk[:-1])))
        bounds = np.append(starts, len(sk)).tolist()
        firsts = order[starts]
        heads = [c[firsts].tolist() for c in cols]
        return [(tuple(h[g] for h in heads), rows[order[bounds[g]:bounds[g + 1]]])
                for g in range(len(starts))]

    def message_rows(self) -> list[int]:
        return self.rows(None)

    @cached_property
    def _pair_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.vi.pairs
        ok = (p.request_seq >= 0) & (p.response_seq >= 0) & (p.outcome != _DUPLICATE)
        return p.request_seq[ok], p.response_seq[ok], p.method[ok]

    def answered(self, names: Iterable[str] | None = None,
                 kind: str | None = None) -> list[tuple[int, int]]:
        """``(request seq, first response seq)`` of answered requests of these methods."""
        req, resp = self.answered_arrays(names, kind)
        return list(zip(req.tolist(), resp.tolist(), strict=True))

    def answered_arrays(self, names: Iterable[str] | None = None, kind: str | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`answered` as two int64 arrays (request seqs, response seqs)."""
        req, resp, method = self._pair_arrays
        mask = self._method_table(names)[method] if names is not None else \
            np.ones(len(req), dtype=bool)
        if kind is not None:
            mask &= self.vi.kind[resp] == (RESULT if kind == "result" else ERROR)
        return req[mask], resp[mask]

    @cached_property
    def response_of(self) -> _ResponseOf:
        req, resp, _ = self._pair_arrays
        return _ResponseOf(req, resp)

    # -- sessions ------------------------------------------------------------------------------
    def scopes(self, seqs: Sequence[int]) -> list[int]:
        """The contract scope of each frame: its session, or -2 for every 2026-07-28 frame
        (no sessions there: the capture is the scope)."""
        table: dict[int, int] = self.__dict__.setdefault("_scopes", {})
        out = []
        for code in np.asarray(self.vi.session)[np.asarray(seqs, dtype=np.int64)].tolist() \
                if len(seqs) else []:
            got = table.get(code)
            if got is None:
                got = table[code] = -2 if V.normalise(self.vi.version_of(code)) == V.LATEST \
                    else code
            out.append(got)
        return out

    def scope_array(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`scopes` as an int64 array (a table over session codes, no loop per row)."""
        table = self.__dict__.get("_scope_table")
        if table is None:
            vi = self.vi
            codes = [*range(len(vi.session_cats)), -1]  # code -1 in the last slot
            table = self.__dict__["_scope_table"] = np.asarray(
                [-2 if V.normalise(vi.version_of(c)) == V.LATEST else c for c in codes],
                dtype=np.int64)
        return table[np.asarray(self.vi.session)[np.asarray(rows, dtype=np.int64)]]  # type: ignore[no-any-return]

    @cached_property
    def initialize(self) -> dict[int, tuple[dict[str, Any], dict[str, Any] | None, int, int | None]]:
        """session code -> (initialize params, its result or None, request seq, result seq):
        the first initialize request of each session."""
        out: dict[int, tuple[dict[str, Any], dict[str, Any] | None, int, int | None]] = {}
        rows = self.row_array(["initialize"], (REQUEST,))
        if not len(rows):
            return out
        # the first request of each session, in frame order (a capture of thousands of
        # sessions: their texts and their answers' texts read in one pass, not one by one)
        _, first = np.unique(np.asarray(self.vi.session)[rows], return_index=True)
        firsts = rows[np.sort(first)].tolist()
        resps = [self.response_of.get(seq) for seq in firsts]
        self.prefetch([*firsts, *(r for r in resps if r is not None)])
        for seq, resp in zip(firsts, resps, strict=True):
            result = self.result(resp) if resp is not None else None
            out[self.session(seq)] = (self.params(seq), result, seq,
                                      resp if result is not None else None)
        return out


class _ResponseOf:
    """request seq -> its first response's seq, as a read-only mapping over the pair
    arrays (a binary search per look-up; no dict of every pair of a large capture)."""

    def __init__(self, req: np.ndarray, resp: np.ndarray) -> None:
        order = np.argsort(req, kind="stable")
        self._req, self._resp = req[order], resp[order]

    def _find(self, seq: Any) -> int:
        try:
            key = int(seq)
        except (TypeError, ValueError):
            return -1
        # the last of equal keys, as the dict of every pair (later ones won) answered
        i = int(np.searchsorted(self._req, key, side="right")) - 1
        return i if i >= 0 and int(self._req[i]) == key else -1

    def get(self, seq: Any, default: Any = None) -> Any:
        i = self._find(seq)
        return int(self._resp[i]) if i >= 0 else default

    def __getitem__(self, seq: Any) -> int:
        i = self._find(seq)
        if i < 0:
            raise KeyError(seq)
        return int(self._resp[i])

    def __contains__(self, seq: Any) -> bool:
        return self._find(seq) >= 0

    def __len__(self) -> int:
        return len(self._req)


def view_of(vi: Any) -> View:
    """The view of a check input, made once per input (every conversation rule shares it)."""
    got = vi.__dict__.get("_conversation_view")
    if got is None:
        got = View(vi)
        vi.__dict__["_conversation_view"] = got
    return got
