"""The frames related to a selected one: its pair, its cancellation, its progress.

Pure functions over a trace and its :func:`~.frametable.frame_table`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from .aggregate import positions

__all__ = ["Related", "related"]

_MAX_PROGRESS_SCAN = 2000


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


class Related(dict):
    """``pair``, ``cancel`` (seqs or None), ``progress`` (list of seqs), ``request`` seq."""


def _pair_row(pairs: pd.DataFrame, seq: int) -> pd.Series | None:
    for col in ("request_seq", "response_seq"):
        hit = pairs.loc[pd.to_numeric(pairs[col], errors="coerce") == seq]
        if len(hit):
            real = hit.loc[~hit["outcome"].isin(["duplicate", "orphan"])]
            return (real if len(real) else hit).iloc[0]
    return None


def _int(v: Any) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


def related(trace: Any, table: pd.DataFrame, seq: int) -> Related:
    """What the inspector can jump to from frame ``seq``.

    ``progress`` lists the ``notifications/progress`` frames whose ``progressToken``
    matches the request's ``params._meta.progressToken`` (same session, after the
    request, up to its response or the end of the trace).
    """
    out = Related(pair=None, cancel=None, progress=[], request=None)
    seqs = table["seq"].to_numpy(dtype=np.int64)
    pos = positions(seqs, np.asarray([seq]))[0]
    if pos < 0:
        return out
    other = int(table["pair_seq"].iat[pos])
    out["pair"] = None if other < 0 else other
    row = _pair_row(trace.pairs, seq)
    if row is None:
        return out
    out["cancel"] = _int(row.get("cancel_seq"))
    req = _int(row.get("request_seq"))
    out["request"] = req
    if req is None:
        return out
    msg = trace.message(req)
    params = msg.get("params") if isinstance(msg, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if token is None:
        return out
    end = _int(row.get("response_seq"))
    cand = (table["method"] == "notifications/progress") & (table["seq"] > req)
    cand &= table["session"] == table["session"].iat[positions(seqs, np.asarray([req]))[0]]
    if end is not None:
        cand &= table["seq"] < end
    want = _canon(token)
    found = []
    for s in table.loc[cand.to_numpy(dtype=bool), "seq"].head(_MAX_PROGRESS_SCAN):
        m = trace.message(int(s))
        p = m.get("params") if isinstance(m, dict) else None
        if isinstance(p, dict) and _canon(p.get("progressToken")) == want:
            found.append(int(s))
    out["progress"] = found
    return out
