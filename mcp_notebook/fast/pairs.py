"""The pairs DataFrame, built from a :class:`~mcp_notebook.engine.pairing.PairTable`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine.pairing import OUTCOMES, PairTable
from ..table import PAIR_COLUMNS, empty
from .frames import categorical_used, times
from .store import DIRS, Store

__all__ = ["pairs_frame", "categorical_used"]


def pairs_frame(pt: PairTable, store: Store, frames: pd.DataFrame | None = None
                ) -> pd.DataFrame:
    """The pairs table; its times are those of the frames table, ``frames`` when it was
    built already, else made from the store's times as the frames table makes them (the
    pairs need no frames table of their own)."""
    if not len(pt):
        return empty(PAIR_COLUMNS)
    req, resp = pt.request_seq, pt.response_seq

    ts = frames["ts"] if frames is not None else times(store.ts)
    ts_ns = np.asarray(ts.array.asi8)  # the frames' times (ns; NaT as its int)
    nat = np.iinfo(np.int64).min

    def at(seqs: np.ndarray) -> pd.Series:
        picked = np.where(seqs >= 0, ts_ns[np.maximum(seqs, 0)], nat)
        return pd.Series(picked.view("M8[ns]")).dt.tz_localize("UTC")

    t_req, t_resp = at(req), at(resp)
    has_req = req >= 0
    ids = np.empty(len(pt), dtype=object)
    ids[has_req] = store.id[req[has_req]]
    other = ~has_req & (resp >= 0)
    ids[other] = store.id[resp[other]]
    codes = store.error_code
    got = resp >= 0
    vals = np.zeros(len(pt), dtype=np.int64)
    mask = np.ones(len(pt), dtype=bool)
    if got.any():
        sub = codes[resp[got]]
        mask[got] = np.asarray(sub.isna())
        vals[got] = np.asarray(sub.fillna(0), dtype=np.int64)

    def opt(a: np.ndarray) -> pd.arrays.IntegerArray:
        # the pair table's own int64 array: -1 marks a missing value, masked here
        return pd.arrays.IntegerArray(a, a < 0)

    return pd.DataFrame({
        "request_seq": opt(req),
        "response_seq": opt(resp),
        "session": categorical_used(pt.session, store.session[1]),
        "requester": pd.Categorical.from_codes(pt.requester, categories=list(DIRS)),
        # object columns as declared (pandas would otherwise infer a str dtype: slower,
        # and unlike the frames table's id_key)
        "id": pd.Series(ids, dtype=object, copy=False),
        "id_key": pd.Series(pt.id_key, dtype=object, copy=False),
        "method": categorical_used(pt.method, store.method[1]),
        "outcome": pd.Categorical.from_codes(pt.outcome, categories=list(OUTCOMES)),
        "error_code": pd.arrays.IntegerArray(vals, mask),
        "t_request": t_req.array,
        "t_response": t_resp.array,
        "latency": (t_resp - t_req).array,
        "cancel_seq": opt(pt.cancel_seq),
        "progress_count": pt.progress_count,
    }, copy=False)
