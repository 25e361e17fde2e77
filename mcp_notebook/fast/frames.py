"""The frames DataFrame, built from a :class:`~mcp_notebook.fast.store.Store` column by column."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..engine.checks import distinct_codes
from ..table import FRAME_COLUMNS, empty
from .store import DIRS, KINDS, Store

__all__ = ["frames_frame", "categorical", "categorical_used", "times"]

#: datetime64[ns] holds the years 1677-2262; a capture time outside them is unknown (NaT)
_MAX_TS = 9.2e9


def times(values: np.ndarray) -> pd.Series:
    """Unix seconds (NaN: unknown) as UTC datetimes, exactly as ``pd.to_datetime(unit="s")`` makes them
    with ``pd.to_datetime(unit="s")``: whole seconds, then the fraction rounded to the
    nanosecond (pandas' own steps, here in half the time; a test holds them equal)."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) > 1 and v.strides[0] == 0:  # one value for every row (a format without times)
        return pd.Series(times(v[:1]).array.repeat(len(v)))
    unknown = ~(np.abs(v) < _MAX_TS)  # NaN and inf too
    v = np.where(unknown, 0.0, v)
    whole = v.astype(np.int64)  # toward zero
    ns = whole * 1_000_000_000
    ns += (np.round(v - whole, 9) * 1e9).astype(np.int64)
    ns[unknown] = np.iinfo(np.int64).min  # NaT
    return pd.Series(ns.view("M8[ns]")).dt.tz_localize("UTC")


def categorical(codes: np.ndarray, cats: list[Any]) -> pd.Categorical:
    """``pd.Categorical(values)`` (sorted categories) from codes and first-seen categories."""
    if not cats:
        return pd.Categorical([None] * len(codes)) if len(codes) < 2 else \
            pd.Categorical.from_codes(codes, dtype=pd.Categorical([None]).dtype)
    try:
        order = sorted(range(len(cats)), key=cats.__getitem__)
    except TypeError:  # values that do not sort: let pandas decide, as it does for a list
        table = np.array([*cats, None], dtype=object)
        return pd.Categorical(table[codes])
    try:
        dtype = pd.Categorical([cats[i] for i in order]).dtype
    except UnicodeEncodeError:  # undecodable bytes (surrogate escapes): shown as \xNN
        table = np.array([*cats, None], dtype=object)
        return _shown(list(table[codes]))
    if order == list(range(len(cats))):  # first seen is sorted already (one value, often)
        return pd.Categorical.from_codes(codes, dtype=dtype)
    rank = np.empty(len(cats) + 1, dtype=np.int32)
    rank[np.array(order, dtype=np.int64)] = np.arange(len(cats), dtype=np.int32)
    rank[-1] = -1
    return pd.Categorical.from_codes(rank[codes], dtype=dtype)


def _shown(values: list[Any]) -> pd.Categorical:
    return pd.Categorical([v.encode("utf-8", "surrogateescape").decode(
        "utf-8", "backslashreplace") if isinstance(v, str) else v for v in values])


def categorical_used(codes: np.ndarray, cats: list) -> pd.Categorical:
    """``pd.Categorical`` of the values the codes name (categories: those used, sorted)."""
    used = np.array([c for c in distinct_codes(codes) if c >= 0], dtype=np.int64)
    if len(used) == len(cats):
        return categorical(codes, cats)
    remap = np.full(len(cats) + 1, -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return categorical(remap[codes], [cats[i] for i in used.tolist()])


def frames_frame(s: Store) -> pd.DataFrame:
    n = s.n
    if n == 0:
        return empty(FRAME_COLUMNS)
    data = {
        "seq": np.arange(n, dtype=np.int64),
        "ts": times(s.ts),
        "session": categorical_used(*s.session),
        "stream": categorical_used(*s.stream),
        "direction": pd.Categorical.from_codes(s.direction.astype(np.int8), categories=list(DIRS)),
        "kind": pd.Categorical.from_codes(s.kind, categories=list(KINDS)),
        "id": pd.Series(s.id, dtype=object, copy=False),
        "id_key": pd.Series(s.id_key, dtype=object, copy=False),
        "method": categorical_used(*s.method),
        "error_code": s.error_code,
        "error_message": pd.Series(s.error_message, dtype=object, copy=False),
        "is_tool_error": pd.Series(s.is_tool_error, dtype=bool, copy=False),
        "size": pd.Series(s.size, dtype="int64", copy=False),
        "raw": _text(s.raw),
        "source": _text(s.source),
        "batch": _batch(s.batch),
        "reason": pd.Series(s.reason, dtype=object, copy=False),
        "local_time": pd.Series(s.local_time, dtype=bool, copy=False),
    }
    return pd.DataFrame(data, copy=False)


def _batch(batch: np.ndarray) -> Any:
    return pd.arrays.IntegerArray(np.where(batch >= 0, batch, 0).astype(np.int64), batch < 0)


def _text(col: Any) -> Any:
    if isinstance(col, np.ndarray):
        return pd.Series(col, dtype=object, copy=False)
    return pd.Series(col, copy=False)
