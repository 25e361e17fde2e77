"""The columnar store behind a Trace: numpy columns, sparse extras (:mod:`.columns`), lazy or
in-memory text.

Both loaders end here: the reference path (reader records classified one by one into a
:class:`~mcp_notebook.table.Columns`) through :meth:`Store.from_columns`, the fast path
(:mod:`mcp_notebook.fast`) through :meth:`Store.from_parts`. Pairing, checks and the
three DataFrames read the store, so whichever loader ran, the same code answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..lazytext import LazyTextArray, ListSource, MultiSource, TextSource
from ..protocol.vocab import DIRECTIONS
from ..table import Columns, int64_or_na
from .columns import ArgTexts, Call, CallColumn, Sparse, call_column, list_column
from .rows import DIR_CODE, KIND_CODE, KINDS, Codes

__all__ = ["Store", "Part", "Sparse", "CallColumn", "ArgTexts", "Call", "factorize", "KINDS", "call_column",
           "list_column"]

DIRS = DIRECTIONS
_INT64 = 1 << 63


def factorize(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes (int32, -1 for None/NaN) and the distinct values in order of first appearance."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return codes.astype(np.int32, copy=False), list(uniques)


@dataclass
class Part:
    """One loaded piece (a file or a byte range of one), already in numpy columns."""

    n: int
    kind: np.ndarray  # int8
    id: np.ndarray  # object
    id_key: np.ndarray  # object
    id_code: tuple[np.ndarray, list[Any]]  # int32 codes of id_key (-1: none), distinct keys
    method: tuple[np.ndarray, list[Any]]  # codes, categories
    size: np.ndarray  # int64
    ts: np.ndarray  # float64
    session: tuple[np.ndarray, list[Any]]
    stream: tuple[np.ndarray, list[Any]]
    direction: np.ndarray  # int8
    sparse: dict[str, dict[int, Any]]
    flags: dict[int, tuple[str, ...]]
    extra: dict[int, dict[str, Any]]
    raw: TextSource
    source: TextSource
    blank: int = 0
    lines: int = 0
    ref: Sparse = field(default_factory=Sparse)
    progress: Sparse = field(default_factory=lambda: Sparse(dtype=np.float64))
    version: Sparse = field(default_factory=Sparse)
    empty_result: Sparse = field(default_factory=lambda: Sparse(dtype=bool))
    call: CallColumn = field(default_factory=CallColumn)
    listed: Sparse = field(default_factory=Sparse)
    #: id key -> code of ``id_code``'s keys, when the reader still holds that dict (a merge
    #: of parts starts from it instead of numbering the first part's keys again)
    id_index: dict[Any, int] | None = None
    #: rows whose id key is longer than ``rows.LONG_KEY`` (None: not noted)
    long_keys: np.ndarray | None = None


@dataclass
class Store:
    """Every frame column, plus what the checks need and the frames do not show."""

    n: int
    ts: np.ndarray  # float64 unix seconds, NaN unknown
    session: tuple[np.ndarray, list[Any]]  # int32 codes (-1: None), categories
    stream: tuple[np.ndarray, list[Any]]
    direction: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    kind: np.ndarray  # int8: index into KINDS
    id: np.ndarray  # object
    id_key: np.ndarray  # object
    id_code: tuple[np.ndarray, list[Any]]  # int32 codes of id_key (-1: none), distinct keys
    method: tuple[np.ndarray, list[Any]]
    error_code: Any  # pandas Int64 array
    error_message: np.ndarray  # object
    is_tool_error: np.ndarray  # bool
    size: np.ndarray  # int64
    raw: Any  # object array or LazyTextArray
    source: Any  # object array or LazyTextArray
    batch: np.ndarray  # int32, -1: none
    reason: np.ndarray  # object
    local_time: np.ndarray  # bool
    flags: dict[int, tuple[str, ...]] = field(default_factory=dict)
    ref: Sparse = field(default_factory=Sparse)  # cancelled request / progress token keys
    progress: Sparse = field(default_factory=lambda: Sparse(dtype=np.float64))
    version: Sparse = field(default_factory=Sparse)
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    blank_lines: int = 0
    #: results known to hold no member but ``_meta`` (the C scanner says so for the lines it
    #: reads; for other rows nothing is known: the checks read their text)
    empty_result: Sparse = field(default_factory=lambda: Sparse(dtype=bool))
    #: what the conversation rules read of requests of ``rows.CALL_METHODS`` (tools/call,
    #: prompts/get, resources/read and the list requests): ``(name, uri, arguments JSON
    #: text or b"", task given, cursor given)`` (:class:`CallColumn`), kept by the fast
    #: loader's scan (C or Python) for the rows it reads; a row not here (the reference
    #: path's, a name that is no string, ...) has its text read
    call: CallColumn = field(default_factory=CallColumn)
    #: the same for results with a member of ``rows.LISTED`` (tools, prompts, resources,
    #: resourceTemplates): ``{member: its JSON text}``, one bytes object per distinct text
    listed: Sparse = field(default_factory=Sparse)
    #: id key -> its code, when a merge of parts made that dict anyway: the pairing looks
    #: up the few keys it needs there (cancelled ids, id-type twins), then lets it go
    id_index: dict[Any, int] | None = None
    #: rows whose id key is longer than ``rows.LONG_KEY``, when the reader noted them (None:
    #: the check of big ids reads every request's key)
    long_keys: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.call.raw = self.raw  # the texts it reads again from the frames (tap records)

    def __len__(self) -> int:
        return self.n

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_columns(cls, c: Columns) -> Store:
        """The store of rows the reference path built."""
        n = len(c)

        def sparse(values: Sequence[Any], dtype: Any = object) -> Sparse:
            rows = [i for i, v in enumerate(values) if v is not None]
            return Sparse(rows, [values[i] for i in rows], dtype)

        return cls(
            n=n,
            ts=np.array([np.nan if v is None else v for v in c.ts], dtype=np.float64),
            session=factorize(c.session), stream=factorize(c.stream),
            direction=np.array([DIR_CODE.get(d, -1) for d in c.direction], dtype=np.int8),
            kind=np.array([KIND_CODE[k] for k in c.kind], dtype=np.int8),
            id=_objects(c.id), id_key=_objects(c.id_key), id_code=factorize(c.id_key),
            method=factorize(c.method),
            error_code=int64_or_na(c.error_code),
            error_message=_objects(c.error_message),
            is_tool_error=np.array(c.is_tool_error, dtype=bool),
            size=np.array(c.size, dtype=np.int64), raw=_objects(c.raw), source=_objects(c.source),
            batch=np.array([-1 if b is None else b for b in c.batch], dtype=np.int32),
            reason=_objects(c.reason), local_time=np.array(c.local_time, dtype=bool),
            flags={i: f for i, f in enumerate(c.flags) if f}, ref=sparse(c.ref),
            progress=sparse(c.progress, np.float64), version=sparse(c.version),
            extra=dict(c.extra),
            blank_lines=c.blank_lines)

    @classmethod
    def from_parts(cls, parts: Sequence[Part]) -> Store:
        """One store from consecutive parts (their row numbers follow on)."""
        n = sum(p.n for p in parts)
        bases = np.cumsum([0] + [p.n for p in parts])[:-1].tolist()

        def cat(name: str) -> tuple[np.ndarray, list[Any]]:
            return _small(_concat_codes([_take(p, name) for p in parts]))

        def arrays(name: str, dtype: Any) -> np.ndarray:
            return _cat_arrays([_take(p, name) for p in parts], dtype)

        def shifted(name: str) -> dict[int, Any]:
            out: dict[int, Any] = {}
            for p, b in zip(parts, bases, strict=True):
                d = p.sparse[name] if name in p.sparse else getattr(p, name)
                out.update(d if b == 0 else {r + b: v for r, v in d.items()})
            return out

        sp = {name: shifted(name) for name in ("error_code", "error_message", "is_tool_error",
                                                "batch", "reason", "local_time")}

        def sparse(name: str) -> Sparse:
            return Sparse.concat([(getattr(p, name), b) for p, b in zip(parts, bases,
                                                                         strict=True)])

        id_space = Codes()
        if parts[0].id_index is not None and len(parts[0].id_index) == len(parts[0].id_code[1]):
            id_space.index = parts[0].id_index
            id_space.values = list(parts[0].id_code[1])
        code_vals = np.zeros(n, dtype=np.int64)
        code_mask = np.ones(n, dtype=bool)
        fits = {r: v for r, v in sp["error_code"].items() if -_INT64 <= v < _INT64}
        if fits:
            rows = np.fromiter(fits, dtype=np.int64, count=len(fits))
            code_vals[rows] = np.fromiter(fits.values(), dtype=np.int64, count=len(rows))
            code_mask[rows] = False
        # each part's column is let go once copied: one column at a time is held twice
        return cls(
            n=n,
            ts=_unknown_ts(n) if all(_no_ts(p.ts) for p in parts)
            else arrays("ts", np.float64),
            session=cat("session"), stream=cat("stream"),
            direction=arrays("direction", np.int8), kind=arrays("kind", np.int8),
            id=arrays("id", object), id_key=arrays("id_key", object),
            id_code=_concat_codes([_take(p, "id_code") for p in parts], id_space),
            method=cat("method"),
            error_code=pd.arrays.IntegerArray(code_vals, code_mask),
            error_message=_fill(n, sp["error_message"], object, None),
            is_tool_error=_fill(n, sp["is_tool_error"], bool, False),
            size=arrays("size", np.int64),
            raw=_text([p.raw for p in parts]), source=_text([p.source for p in parts]),
            batch=_fill(n, sp["batch"], np.int32, -1),
            reason=_fill(n, sp["reason"], object, None),
            local_time=_fill(n, sp["local_time"], bool, False),
            flags=shifted("flags"), ref=sparse("ref"), progress=sparse("progress"),
            version=sparse("version"), extra=shifted("extra"),
            empty_result=sparse("empty_result"),
            call=CallColumn.concat([(p.call, b) for p, b in zip(parts, bases, strict=True)]),
            listed=sparse("listed"),
            blank_lines=sum(p.blank for p in parts), id_index=id_space.index or None,
            long_keys=None if any(p.long_keys is None for p in parts) else np.concatenate(
                [np.asarray(p.long_keys, dtype=np.int64) + b
                 for p, b in zip(parts, bases, strict=True)]))

    @classmethod
    def concat(cls, stores: Sequence[Store]) -> Store:
        """Stores end to end (files loaded by different paths, in load order)."""
        if len(stores) == 1:
            return stores[0]
        parts = [s.as_part() for s in stores]
        out = cls.from_parts(parts)
        # from_parts rebuilds error codes from the sparse dict; keep the exact arrays
        out.error_code = pd.array(np.concatenate([np.asarray(s.error_code, dtype=object)
                                                  for s in stores]), dtype="Int64")
        # (every piece's codes already fit int64)
        return out

    def as_part(self) -> Part:
        codes = self.error_code
        sparse = {
            "error_code": {int(i): int(codes[i]) for i in np.flatnonzero(~pd.isna(codes))},
            "error_message": _nonnull(self.error_message),
            "is_tool_error": {int(i): True for i in np.flatnonzero(self.is_tool_error)},
            "batch": {int(i): int(self.batch[i]) for i in np.flatnonzero(self.batch >= 0)},
            "reason": _nonnull(self.reason),
            "local_time": {int(i): True for i in np.flatnonzero(self.local_time)},
        }
        return Part(n=self.n, kind=self.kind, id=self.id, id_key=self.id_key,
                    id_code=self.id_code, method=self.method, size=self.size, ts=self.ts, session=self.session,
                    stream=self.stream, direction=self.direction, sparse=sparse,
                    flags=self.flags, extra=self.extra, raw=_source_of(self.raw),
                    source=_source_of(self.source), blank=self.blank_lines, ref=self.ref,
                    progress=self.progress, version=self.version,
                    empty_result=self.empty_result, long_keys=self.long_keys,
                    call=self.call, listed=self.listed)

    # -- reading ----------------------------------------------------------------------------
    def values(self, name: str) -> list[Any]:
        """A column as the reference ``Columns`` list (Python values, None where missing)."""
        if name in ("session", "stream", "method"):
            codes, cats = getattr(self, name)
            table = [*cats, None]
            return [table[c] for c in codes.tolist()]
        if name == "direction":
            return [(None, "c2s", "s2c")[d + 1] for d in self.direction.tolist()]
        if name == "kind":
            return [KINDS[k] for k in self.kind.tolist()]
        if name == "ts":
            return [None if v != v else v for v in self.ts.tolist()]
        if name == "batch":
            return [None if b < 0 else b for b in self.batch.tolist()]
        if name == "error_code":
            return [None if v is pd.NA else int(v) for v in self.error_code]
        if name == "flags":
            return [self.flags.get(i, ()) for i in range(self.n)]
        if name in ("ref", "progress", "version"):
            d = getattr(self, name).as_dict()
            return [d.get(i) for i in range(self.n)]
        col = getattr(self, name)
        return col.tolist() if hasattr(col, "tolist") else list(col)

    def codes_of(self, name: str, value: Any) -> int:
        """The code of ``value`` in a categorical column (-2 when absent: matches no row)."""
        cats = getattr(self, name)[1]
        try:
            return cats.index(value)
        except ValueError:
            return -2


def _take(part: Part, name: str) -> Any:
    """A column of a part, let go by the part (the caller keeps the only reference)."""
    value = getattr(part, name)
    setattr(part, name, None)
    return value


def _unknown_ts(n: int) -> np.ndarray:
    """Capture times of ``n`` frames that have none: one NaN seen ``n`` times (no memory)."""
    return np.broadcast_to(np.float64(np.nan), (n,))


def _no_ts(ts: np.ndarray) -> bool:
    return ts.strides == (0,) or (len(ts) > 0 and bool(np.isnan(ts).all()))


def _small(codes: tuple[np.ndarray, list[Any]]) -> tuple[np.ndarray, list[Any]]:
    """Codes in the smallest signed integer type that holds them."""
    c, cats = codes
    dtype = np.int8 if len(cats) < 127 else np.int16 if len(cats) < 32767 else np.int32
    return c.astype(dtype, copy=False), cats


def _objects(values: Sequence[Any]) -> np.ndarray:
    """An object array of the values as they are (a list value stays one element)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _nonnull(arr: np.ndarray) -> dict[int, Any]:
    idx = np.flatnonzero(pd.notna(arr)) if len(arr) else np.empty(0, dtype=np.int64)
    return {int(i): arr[i] for i in idx}


def _cat_arrays(arrays: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    if len(arrays) == 1:
        return np.asarray(arrays[0], dtype=dtype)
    return np.concatenate([np.asarray(a, dtype=dtype) for a in arrays]) if arrays \
        else np.empty(0, dtype=dtype)


def _fill(n: int, values: dict[int, Any], dtype: Any, default: Any) -> np.ndarray:
    out = np.full(n, default, dtype=dtype)
    if values:
        rows = np.fromiter(values, dtype=np.int64, count=len(values))
        if dtype is object:
            out[rows] = _objects(list(values.values()))
        else:
            out[rows] = np.array(list(values.values()), dtype=dtype)
    return out


def _concat_codes(pieces: Sequence[tuple[np.ndarray, list[Any]]],
                  space: Codes | None = None) -> tuple[np.ndarray, list[Any]]:
    """Codes of consecutive pieces in one code space (categories in order of first sight),
    numbered through ``space`` (its ``index`` then holds value -> code)."""
    if len(pieces) == 1:
        return pieces[0][0].astype(np.int32, copy=False), list(pieces[0][1])
    if space is None:
        space = Codes()  # the loader's numbering (in C when the scanner is built)
    out = []
    if space.values:  # the first piece numbered through it already: its codes stay
        if space.values != pieces[0][1]:
            raise ValueError("the first piece's values are not the code space's")
        out.append(pieces[0][0].astype(np.int32, copy=False))
        pieces = pieces[1:]
    for codes, local in pieces:
        remap = np.append(space.codes(list(local), canon=True), -1).astype(np.int32)
        out.append(remap[codes])  # codes of -1 pick the last entry: -1
    return np.concatenate(out), space.values


def _source_of(col: Any) -> TextSource:
    if isinstance(col, LazyTextArray):
        if col._rows is None or len(col) == len(col.source) and np.array_equal(
                col.rows, np.arange(len(col.source))):
            return col.source
        return ListSource(col.to_numpy())
    return ListSource(col)


def _text(sources: Sequence[TextSource]) -> Any:
    """An object array when every part holds its text in memory, else a lazy column."""
    if all(isinstance(s, ListSource) for s in sources):
        return _cat_arrays([s.values for s in sources], object)  # type: ignore[attr-defined]
    src = sources[0] if len(sources) == 1 else MultiSource(sources)
    return LazyTextArray(src)
