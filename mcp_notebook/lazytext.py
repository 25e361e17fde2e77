"""A text column that stays on disk: a pandas ExtensionArray read by offset on access.

A 1 GB capture holds 1 GB of frame text. Keeping it as Python strings would cost more
memory than the file, so the fast loader keeps, per row, where the text is (file, byte
offset, length) and reads it when asked: one value for display or ``trace.message(seq)``,
many at once (sorted by offset, read in large pieces) for ``.tolist()``, comparisons,
``.str`` methods, ``astype``. Small captures and readers other than the fast path keep
their text in memory; the column then is a plain ``object`` column.

The column behaves as a text column: ``series[i]``, slicing, boolean filtering,
``take``, ``==`` / ``!=`` with a string, ``isin``, ``.tolist()``, ``.str.*`` (each of
these but the first three reads the selected rows), ``astype(str)`` / ``astype("string")``.
The file must not change while the trace is in use: a changed size or modification
time raises :class:`StaleCaptureError` instead of returning other text.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype, register_extension_dtype
from pandas.api.extensions import take as _take

try:  # the same mixin pandas uses for object-dtype text; gives .str its methods
    from pandas.core.strings.object_array import ObjectStringArrayMixin
except ImportError:  # pragma: no cover - very old or very new pandas
    ObjectStringArrayMixin = object  # type: ignore[assignment,misc]

__all__ = ["LazyTextDtype", "LazyTextArray", "TextSource", "ListSource", "FileSource",
           "LabelSource", "MultiSource", "StaleCaptureError", "texts_of"]

_READ_GAP = 1 << 16  # rows closer than this in the file are read in one piece


class StaleCaptureError(RuntimeError):
    """The capture file changed on disk after it was loaded."""


class TextSource:
    """Text for row numbers: :meth:`texts` (many, in one pass) and :meth:`text` (one)."""

    def __len__(self) -> int:
        raise NotImplementedError

    def texts(self, rows: np.ndarray) -> list[str | None]:
        raise NotImplementedError

    def text(self, row: int) -> str | None:
        return self.texts(np.array([row], dtype=np.int64))[0]


class ListSource(TextSource):
    """Text already in memory (a list or an object array)."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) \
            else values

    def __len__(self) -> int:
        return len(self.values)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        return self.values[rows].tolist()

    def text(self, row: int) -> str | None:
        return self.values[row]


_TAP_DECODE = None


def _tap_raw(line: bytes) -> str:
    """The ``raw`` member of a tap record, as the tap reader gives it."""
    global _TAP_DECODE
    if _TAP_DECODE is None:
        from .readers import tap

        _TAP_DECODE = tap
    rec = _TAP_DECODE._decode(line)
    if rec.raw_b64 is not None:
        return _TAP_DECODE._exact(rec.raw_b64, rec.raw)
    return rec.raw


class FileSource(TextSource):
    """Lines of a file, by byte offset and length; tap rows give their record's ``raw``.

    ``tap`` is None for a file whose lines are the text (bare NDJSON), or a boolean array:
    True where the row's text is the ``raw`` member of the tap record on that line.
    """

    def __init__(self, path: str | os.PathLike[str], offsets: np.ndarray, lengths: np.ndarray,
                 tap: np.ndarray | None = None, overrides: dict[int, str] | None = None) -> None:
        self.path = os.fspath(path)
        self.offsets = offsets
        self.lengths = lengths
        self.tap = tap
        self.overrides = overrides or {}  # rows whose text is kept in memory
        st = os.stat(self.path)
        self._stamp = (st.st_size, st.st_mtime_ns)

    def __len__(self) -> int:
        return len(self.offsets)

    def _check(self, fd: int) -> None:
        st = os.fstat(fd)
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            raise StaleCaptureError(
                f"{os.path.basename(self.path)} changed on disk after it was loaded; "
                "load it again (the frame text is read from the file on demand)")

    def _plain(self) -> FileSource:
        """This source without its overrides (same file, offsets and stamp)."""
        plain = object.__new__(FileSource)
        plain.__dict__.update(self.__dict__)
        plain.overrides = {}
        return plain

    def _decode(self, row: int, data: bytes) -> str:
        if self.tap is not None and self.tap[row]:
            try:
                return _tap_raw(data)
            except (msgspec.DecodeError, RecursionError):
                pass
        return data.decode("utf-8", "surrogateescape")

    def text(self, row: int) -> str | None:
        if row in self.overrides:
            return self.overrides[row]
        fd = os.open(self.path, os.O_RDONLY)
        try:
            self._check(fd)
            data = os.pread(fd, int(self.lengths[row]), int(self.offsets[row]))
        finally:
            os.close(fd)
        return self._decode(row, data)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        out: list[str | None] = [None] * len(rows)
        if self.overrides:
            over = self.overrides
            keep = []
            for k, r in enumerate(rows.tolist()):
                if r in over:
                    out[k] = over[r]
                else:
                    keep.append(k)
            if len(keep) < len(rows):
                sel = np.asarray(keep, dtype=np.int64)
                for k, v in zip(keep, FileSource.texts(self._plain(), rows[sel]), strict=True):
                    out[k] = v
                return out
        if not len(rows):
            return out
        order = np.argsort(self.offsets[rows], kind="stable")
        srt = rows[order]
        starts = self.offsets[srt]
        ends = starts + self.lengths[srt]
        # pieces: runs of rows whose gaps are small, read with one pread each
        gap = starts[1:] - np.maximum.accumulate(ends)[:-1]
        cut = np.flatnonzero(gap > _READ_GAP) + 1
        bounds = np.concatenate(([0], cut, [len(srt)]))
        fd = os.open(self.path, os.O_RDONLY)
        try:
            self._check(fd)
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                lo = int(starts[a])
                hi = int(ends[a:b].max())
                buf = os.pread(fd, hi - lo, lo)
                mv = memoryview(buf)
                for k in range(a, b):
                    s = int(starts[k]) - lo
                    out[int(order[k])] = self._decode(int(srt[k]),
                                                      bytes(mv[s:s + int(self.lengths[srt[k]])]))
        finally:
            os.close(fd)
        return out


class LabelSource(TextSource):
    """``"<name>:<line>"`` labels made on demand, with explicit labels for some rows."""

    def __init__(self, name: str, lines: np.ndarray, overrides: dict[int, str] | None = None):
        self.name = name
        self.lines = lines
        self.overrides = overrides or {}

    def __len__(self) -> int:
        return len(self.lines)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        name, over = self.name, self.overrides
        rows_l = np.asarray(rows).tolist()
        lines = self.lines[rows].tolist()
        if not over:
            return [f"{name}:{n}" for n in lines]
        return [over.get(r, f"{name}:{n}") for r, n in zip(rows_l, lines, strict=True)]

    def text(self, row: int) -> str | None:
        got = self.overrides.get(row)
        return got if got is not None else f"{self.name}:{int(self.lines[row])}"


class MultiSource(TextSource):
    """Several sources end to end: global row ``r`` is row ``r - base`` of its part."""

    def __init__(self, parts: Sequence[TextSource]) -> None:
        flat: list[TextSource] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, MultiSource) else [p])
        self.parts = flat
        self.bases = np.cumsum([0] + [len(p) for p in flat], dtype=np.int64)

    def __len__(self) -> int:
        return int(self.bases[-1])

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        part = np.searchsorted(self.bases, rows, side="right") - 1
        out: list[str | None] = [None] * len(rows)
        for p in np.unique(part).tolist():
            sel = np.flatnonzero(part == p)
            got = self.parts[p].texts(rows[sel] - self.bases[p])
            for k, v in zip(sel.tolist(), got, strict=True):
                out[k] = v
        return out

    def text(self, row: int) -> str | None:
        p = int(np.searchsorted(self.bases, row, side="right")) - 1
        return self.parts[p].text(row - int(self.bases[p]))


@register_extension_dtype
class LazyTextDtype(ExtensionDtype):
    """Text read on demand (see :mod:`mcp_notebook.lazytext`)."""

    name = "lazytext"
    type = str
    kind = "O"
    na_value = np.nan  # as for object columns: what .str methods put where a row is missing

    @classmethod
    def construct_array_type(cls) -> type[LazyTextArray]:
        return LazyTextArray

    @property
    def _is_boolean(self) -> bool:
        return False


_CHUNK = 1 << 16


class LazyTextArray(ObjectStringArrayMixin, ExtensionArray):  # type: ignore[misc]
    """Rows of a :class:`TextSource`; ``-1`` marks a missing value."""

    _dtype = LazyTextDtype()

    def __init__(self, source: TextSource, rows: np.ndarray | None = None) -> None:
        self.source = source
        # None: every row of the source, in order (no index array is kept for that)
        self._rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        self._n = len(source) if rows is None else len(self._rows)

    @property
    def rows(self) -> np.ndarray:
        """The source row of each element (-1: missing)."""
        return np.arange(self._n, dtype=np.int64) if self._rows is None else self._rows

    def _slice_rows(self, a: int, b: int) -> np.ndarray:
        return np.arange(a, min(b, self._n), dtype=np.int64) if self._rows is None \
            else self._rows[a:b]

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def _from_sequence(cls, scalars: Any, *, dtype: Any = None, copy: bool = False) -> LazyTextArray:
        if isinstance(scalars, LazyTextArray):
            return scalars.copy() if copy else scalars
        values = np.array([None if _isna(v) else v for v in scalars], dtype=object)
        return cls(ListSource(values))

    @classmethod
    def _from_factorized(cls, uniques: np.ndarray, original: LazyTextArray) -> LazyTextArray:
        return cls(ListSource(np.asarray(uniques, dtype=object)))

    # -- the ExtensionArray interface ---------------------------------------------------------
    @property
    def dtype(self) -> LazyTextDtype:
        return self._dtype

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return 0 if self._rows is None else int(self._rows.nbytes)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, np.integer)):
            if self._rows is None:
                i = int(item) + (self._n if item < 0 else 0)
                if not 0 <= i < self._n:
                    raise IndexError(item)
                return self.source.text(i)
            r = int(self._rows[item])
            return None if r < 0 else self.source.text(r)
        item = pd.api.indexers.check_array_indexer(self, item)
        return type(self)(self.source, self.rows[item])

    def isna(self) -> np.ndarray:
        return np.zeros(self._n, dtype=bool) if self._rows is None else self._rows < 0

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> LazyTextArray:
        if allow_fill and fill_value is not None and not _isna(fill_value):
            values = np.asarray(self.to_numpy(), dtype=object)
            taken = _take(values, indices, allow_fill=True, fill_value=fill_value)
            return type(self)(ListSource(taken))
        rows = _take(self.rows, indices, allow_fill=allow_fill, fill_value=-1)
        return type(self)(self.source, rows)

    def copy(self) -> LazyTextArray:
        return type(self)(self.source, None if self._rows is None else self._rows.copy())

    @classmethod
    def _concat_same_type(cls, to_concat: Sequence[LazyTextArray]) -> LazyTextArray:
        first = to_concat[0].source
        if all(a.source is first for a in to_concat):
            return cls(first, np.concatenate([a.rows for a in to_concat]))
        parts, rows = [], []
        base = 0
        for a in to_concat:
            parts.append(a.source)
            rows.append(np.where(a.rows >= 0, a.rows + base, -1))
            base += len(a.source)
        return cls(MultiSource(parts), np.concatenate(rows))

    # -- reading ------------------------------------------------------------------------------
    def _read(self) -> np.ndarray:
        out = np.empty(self._n, dtype=object)
        for a in range(0, self._n, _CHUNK):
            rows = self._slice_rows(a, a + _CHUNK)
            ok = rows >= 0
            got = np.empty(len(rows), dtype=object)
            if ok.all():
                got[:] = self.source.texts(rows)
            elif ok.any():
                got[ok] = self.source.texts(rows[ok])
            out[a:a + len(rows)] = got
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        values = self._read()
        return values if dtype is None or np.dtype(dtype) == np.dtype(object) \
            else values.astype(dtype)

    def to_numpy(self, dtype: Any = None, copy: bool = False, na_value: Any = None) -> np.ndarray:
        values = self._read()
        if na_value is not None:
            values[self.isna()] = na_value
        return values if dtype is None or np.dtype(dtype) == object else values.astype(dtype)

    def tolist(self) -> list[Any]:
        return self._read().tolist()

    def __iter__(self) -> Any:
        for a in range(0, self._n, _CHUNK):
            yield from type(self)(self.source, self._slice_rows(a, a + _CHUNK))._read().tolist()

    def astype(self, dtype: Any, copy: bool = True) -> Any:
        if isinstance(dtype, LazyTextDtype) or dtype == "lazytext":
            return self.copy() if copy else self
        values = self._read()
        if isinstance(dtype, ExtensionDtype) or isinstance(dtype, str) and dtype not in (
                "object", "O"):
            return pd.array(values, dtype=dtype)
        return values.astype(dtype, copy=False)

    def __arrow_array__(self, type: Any = None) -> Any:
        import pyarrow as pa

        return pa.array(self._read(), type=type or pa.string(), from_pandas=True)

    def _values_for_factorize(self) -> tuple[np.ndarray, Any]:
        return self._read(), None

    def _values_for_argsort(self) -> np.ndarray:
        return self._read()

    def unique(self) -> LazyTextArray:
        return type(self)(ListSource(pd.unique(self._read())))

    def isin(self, values: Any) -> np.ndarray:
        return np.asarray(pd.Series(self._read(), dtype=object).isin(values))

    def _cmp_method(self, other: Any, op: Any) -> np.ndarray:
        mine = self._read()
        if isinstance(other, (LazyTextArray, pd.Series, pd.Index, np.ndarray, list)):
            other = np.asarray(other, dtype=object)
        result = op(mine, other)
        if op is operator.ne:
            result = np.asarray(result, dtype=bool) | self.isna()
        else:
            result = np.asarray(result, dtype=bool) & ~self.isna()
        return result

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._cmp_method(other, operator.eq)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._cmp_method(other, operator.ne)

    def _formatter(self, boxed: bool = False) -> Any:
        return str if boxed else repr

    def _reduce(self, name: str, *, skipna: bool = True, keepdims: bool = False, **kw: Any) -> Any:
        values = self._read()
        if skipna:
            values = values[~self.isna()]
        if name in ("min", "max"):
            return getattr(pd.Series(values, dtype=object), name)()
        raise TypeError(f"cannot perform {name} with type lazytext")

    def __getstate__(self) -> dict[str, Any]:
        return {"source": self.source, "rows": self._rows, "n": self._n}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.source, self._rows, self._n = state["source"], state["rows"], state["n"]


def _isna(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def texts_of(column: Any, rows: Sequence[int] | np.ndarray) -> list[str | None]:
    """The text of ``rows`` of a text column (lazy or in memory), read in one pass."""
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(column, LazyTextArray):
        sub = rows if column._rows is None else column._rows[rows]
        ok = sub >= 0
        out: list[str | None] = [None] * len(rows)
        got = column.source.texts(sub[ok])
        for k, v in zip(np.flatnonzero(ok).tolist(), got, strict=True):
            out[k] = v
        return out
    return [column[i] for i in rows.tolist()]
