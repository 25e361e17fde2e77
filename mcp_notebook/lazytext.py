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
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype, register_extension_dtype
from pandas.api.extensions import take as _take

try:  # the same mixin pandas uses for object-dtype text; gives .str its methods
    from pandas.core.strings.object_array import ObjectStringArrayMixin
except ImportError:  # pragma: no cover - very old or very new pandas
    ObjectStringArrayMixin = object  # type: ignore[assignment,misc]

from .textsources import (  # noqa: F401
    FileSource,
    LabelSource,
    ListSource,
    MultiSource,
    StaleCaptureError,
    TextSource,
)

__all__ = ["LazyTextDtype", "LazyTextArray", "TextSource", "ListSource", "FileSource",
           "LabelSource", "MultiSource", "StaleCaptureError", "texts_of"]


@register_extension_dtype
class LazyTextDtype(ExtensionDtype):
    """Text read on demand (see :mod:`mcp_notebook.lazytext`)."""

    name = "lazytext"
    type: Any = str
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
        self._n = len(source) if self._rows is None else len(self._rows)

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
