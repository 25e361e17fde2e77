"""The three DataFrames built from the reference ``Columns`` lists, row by row (the
oracle the column store's tables are held to)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mcp_notebook.engine.walks import PairRow
from mcp_notebook.table import FRAME_COLUMNS, PAIR_COLUMNS, Columns, empty, int64_or_na

__all__ = ["frames_frame", "pairs_frame", "times"]

#: datetime64[ns] holds the years 1677-2262; a capture time outside them is unknown (NaT)
_MAX_TS = 9.2e9


def times(values: list[float | None]) -> pd.Series:
    s = pd.Series(values, dtype="float64")
    s = s.where(s.abs() < _MAX_TS)  # also NaN for inf
    return pd.to_datetime(s, unit="s", utc=True).astype("datetime64[ns, UTC]")


def _categorical(values: list[Any]) -> pd.Categorical:
    """``pd.Categorical``, with text holding undecodable bytes (surrogate escapes, e.g. a
    server name in a damaged log) shown as ``\\xNN`` instead of failing."""
    try:
        return pd.Categorical(values)
    except UnicodeEncodeError:
        return pd.Categorical([v.encode("utf-8", "surrogateescape").decode(
            "utf-8", "backslashreplace") if isinstance(v, str) else v for v in values])


def frames_frame(c: Columns) -> pd.DataFrame:
    n = len(c)
    if n == 0:
        return empty(FRAME_COLUMNS)
    data = {
        "seq": pd.RangeIndex(n).to_numpy(),
        "ts": times(c.ts),
        "session": _categorical(c.session),
        "stream": _categorical(c.stream),
        "direction": pd.Categorical(c.direction, categories=["c2s", "s2c"]),
        "kind": pd.Categorical(c.kind, categories=["request", "notification", "result", "error",
                                                   "invalid", "stderr", "log"]),
        "id": pd.Series(c.id, dtype=object),
        "id_key": pd.Series(c.id_key, dtype=object),
        "method": _categorical(c.method),
        "error_code": int64_or_na(c.error_code),
        "error_message": pd.Series(c.error_message, dtype=object),
        "is_tool_error": pd.Series(c.is_tool_error, dtype=bool),
        "size": pd.Series(c.size, dtype="int64"),
        "raw": pd.Series(c.raw, dtype=object),
        "source": pd.Series(c.source, dtype=object),
        "batch": pd.array(c.batch, dtype="Int64"),
        "reason": pd.Series(c.reason, dtype=object),
        "local_time": pd.Series(c.local_time, dtype=bool),
    }
    from mcp_notebook.info import with_info  # the info column, made lazily from raw

    return with_info(pd.DataFrame(data))


def pairs_frame(rows: list[PairRow], frames: pd.DataFrame, c: Columns) -> pd.DataFrame:
    if not rows:
        return empty(PAIR_COLUMNS)
    req = [r.request_seq for r in rows]
    resp = [r.response_seq for r in rows]
    ts = frames["ts"].dt.tz_convert(None).to_numpy(dtype="datetime64[ns]")

    def at(seqs: list[int | None]) -> pd.Series:
        idx = np.fromiter((-1 if q is None else q for q in seqs), dtype="int64", count=len(seqs))
        out = np.full(len(seqs), np.datetime64("NaT"), dtype="datetime64[ns]")
        mask = idx >= 0
        out[mask] = ts[idx[mask]]
        return pd.Series(out).dt.tz_localize("UTC")

    t_req, t_resp = at(req), at(resp)
    ids = [c.id[r.request_seq] if r.request_seq is not None else
           (c.id[r.response_seq] if r.response_seq is not None else None) for r in rows]
    codes = [c.error_code[r.response_seq] if r.response_seq is not None else None for r in rows]
    df = pd.DataFrame({
        "request_seq": pd.array(req, dtype="Int64"),
        "response_seq": pd.array(resp, dtype="Int64"),
        "session": _categorical([r.session for r in rows]),
        "requester": pd.Categorical([r.requester for r in rows], categories=["c2s", "s2c"]),
        "id": pd.Series(ids, dtype=object),
        "id_key": pd.Series([r.id_key for r in rows], dtype=object),
        "method": _categorical([r.method for r in rows]),
        "outcome": pd.Categorical([r.outcome for r in rows], categories=[
            "result", "error", "tool_error", "unanswered", "cancelled", "orphan", "duplicate"]),
        "error_code": int64_or_na(codes),
        "t_request": t_req.array,
        "t_response": t_resp.array,
        "latency": (t_resp - t_req).array,
        "cancel_seq": pd.array([r.cancel_seq for r in rows], dtype="Int64"),
        "progress_count": pd.Series([r.progress_count for r in rows], dtype="int64").values,
    })
    return df
