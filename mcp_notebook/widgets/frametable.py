"""The inspector's table: frames joined with their pair, and one page of it as text.

Pure functions (no widgets). :func:`frame_table` adds to every frame what the inspector
filters and shows: the pair's outcome and latency, the partner frame, the method of a
response (taken from its request) and whether a violation points at it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..info import info_column
from .aggregate import positions

__all__ = ["TABLE_COLUMNS", "frame_table", "page_rows", "rows_at", "pair_of", "fmt_latency",
           "fmt_offset"]

#: The columns shown in the table, in order, with their headings.
TABLE_COLUMNS = [("seq", "#"), ("time", "time"), ("direction", "dir"), ("kind", "kind"),
                 ("method", "method"), ("info", "info"), ("outcome", "outcome"),
                 ("latency", "latency"), ("size", "bytes"), ("flag", "!"),
                 ("session", "session"), ("id_key", "id")]


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _codes(s: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Integer codes (-1: missing) and categories of a column, without string copies."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.cat.codes.to_numpy().astype(np.int64), list(s.cat.categories)
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(uniq)


def _present(codes: np.ndarray, cats: list[Any]) -> pd.Categorical:
    """``pd.Categorical(values)``: only the categories that occur, sorted, from codes."""
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(cats)))
    names = [cats[i] for i in used.tolist()]
    order = sorted(range(len(names)), key=lambda i: names[i])
    remap = np.full(len(cats) + 1, -1, dtype=np.int64)  # remap[-1] stays -1
    remap[used[order]] = np.arange(len(order))
    return pd.Categorical.from_codes(remap[codes], categories=[names[i] for i in order])


def frame_table(trace: Any) -> pd.DataFrame:
    """Every frame with its pair's facts; the DataFrame the filter language runs on.

    Columns: ``seq, ts, session, stream, direction, kind, id_key, method, error_code,
    is_tool_error, size, source, raw, info`` (from ``frames``; a response's ``method`` is its
    request's), ``outcome, latency, pair_seq`` (from ``pairs``; ``pair_seq`` is -1
    when the frame has no partner) and ``has_violation``.

    The join runs on the pairs' integer arrays (row positions, category codes, int64
    nanoseconds): no merge, no string per row.
    """
    f, p, v = trace.frames, trace.pairs, trace.violations
    n = len(f)
    seq = f["seq"].to_numpy(dtype=np.int64)
    cols = ["seq", "ts", "session", "stream", "direction", "kind", "id_key", "method",
            "error_code", "is_tool_error", "size", "source", "raw"]
    # the frames' columns as they are (categoricals, tz), no copy; the new ones are added
    # in one DataFrame below (a column set on a frame is a copy of a million values each)
    df = pd.DataFrame({c: f[c].reset_index(drop=True) for c in cols}, copy=False)
    df["info"] = (f["info"].reset_index(drop=True) if "info" in f.columns
                  else info_column(df))  # lazy: read a window at a time
    if not isinstance(df["ts"].dtype, pd.DatetimeTZDtype):
        ts = pd.to_datetime(df["ts"], utc=True) if df["ts"].dtype == object else df["ts"]
        df["ts"] = ts.dt.tz_localize("UTC") if getattr(ts.dt, "tz", None) is None else ts
    if df["is_tool_error"].dtype != bool:
        df["is_tool_error"] = df["is_tool_error"].fillna(False).astype(bool)
    nat = np.iinfo(np.int64).min
    outcome = np.full(n, -1, dtype=np.int64)  # codes into the pairs' outcome categories
    latency = np.full(n, nat, dtype=np.int64)  # nanoseconds, NaT as its int
    pair_seq = np.full(n, -1, dtype=np.int64)
    # a response's method comes from its request: worked on category codes (an object
    # array of a million method names would cost ~100 MB of new strings)
    mcodes, cats = _codes(df["method"])
    categorical = isinstance(df["method"].dtype, pd.CategoricalDtype)
    missing = mcodes < 0
    filled = False
    oc_codes, oc_cats = _codes(p["outcome"]) if len(p) else (np.zeros(0, np.int64), [])
    if n and len(p):
        rq = positions(seq, _num(p["request_seq"]))
        rs = positions(seq, _num(p["response_seq"]))
        lat = p["latency"]
        if not pd.api.types.is_timedelta64_dtype(lat.dtype):
            lat = pd.to_timedelta(lat)
        lat_ns = np.asarray(lat.to_numpy(dtype="timedelta64[ns]").view(np.int64))
        pm_codes, pm_cats = _codes(p["method"])
        index = {c: i for i, c in enumerate(cats)}
        for name in pm_cats:  # the pairs' methods among the frames' (new ones appended)
            if name not in index:
                index[name] = len(cats)
                cats.append(name)
        pm = np.array([index[c] for c in pm_cats] + [-1], dtype=np.int64)[pm_codes]
        rq_seq = np.where(rq >= 0, seq[np.maximum(rq, 0)], -1)
        rs_seq = np.where(rs >= 0, seq[np.maximum(rs, 0)], -1)
        bad = np.array([c in ("duplicate", "orphan") for c in oc_cats] + [False])
        extra = bad[oc_codes]
        for sel in (extra, ~extra):  # the real pair is written last, so it wins
            a = sel & (rs >= 0)
            outcome[rs[a]] = oc_codes[a]
            latency[rs[a]] = lat_ns[a]
            pair_seq[rs[a]] = rq_seq[a]
            fill = a & missing[np.maximum(rs, 0)] & (pm >= 0)
            if fill.any():
                filled = True
                mcodes[rs[fill]] = pm[fill]
                missing[rs[fill]] = False
        a = ~extra & (rq >= 0)
        outcome[rq[a]] = oc_codes[a]
        latency[rq[a]] = lat_ns[a]
        pair_seq[rq[a]] = rs_seq[a]
    if filled and not categorical:
        df["method"] = pd.Series(np.array(cats + [None], dtype=object)[mcodes], dtype=object)
    elif filled:  # categories sorted, as astype("category") makes them
        order = sorted(range(len(cats)), key=lambda i: cats[i])
        rank = np.empty(len(cats) + 1, dtype=np.int64)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(cats))
        rank[-1] = -1
        df["method"] = pd.Categorical.from_codes(
            rank[mcodes], dtype=pd.CategoricalDtype([cats[i] for i in order]))
    vseq = _num(v["seq"]) if len(v) else np.zeros(0)
    vseq = vseq[~np.isnan(vseq)].astype(np.int64)
    if n and seq[0] == 0 and seq[-1] == n - 1:  # seq is the position
        has = np.zeros(n, dtype=bool)
        has[vseq[(vseq >= 0) & (vseq < n)]] = True
    else:
        has = np.isin(seq, vseq)
    new = pd.DataFrame({"outcome": _present(outcome, [str(c) for c in oc_cats]),
                        "latency": latency.view("m8[ns]"), "pair_seq": pair_seq,
                        "has_violation": has}, copy=False)
    return pd.concat([df, new], axis=1)


def pair_of(table: pd.DataFrame, seq: int) -> int | None:
    """The seq of the frame paired with ``seq`` (request ↔ response), or None."""
    pos = positions(table["seq"].to_numpy(dtype=np.int64), np.asarray([seq]))[0]
    if pos < 0:
        return None
    other = int(table["pair_seq"].iat[pos])
    return None if other < 0 else other


def fmt_latency(td: Any) -> str:
    """A latency as short text: ``340 ms``, ``1.25 s``, ``''`` when unknown."""
    if td is None or pd.isna(td):
        return ""
    s = pd.Timedelta(td).total_seconds()
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def _fmt_time(ts: Any, origin: Any) -> str:
    if ts is None or pd.isna(ts):
        return ""
    if origin is not None and not pd.isna(origin):
        return fmt_offset((ts - origin).total_seconds())
    return pd.Timestamp(ts).strftime("%H:%M:%S.%f")[:-3]


def fmt_offset(s: float) -> str:
    """Seconds since the first frame, with units: ``+0.002 s``, ``+12m 34.5s``, ``+7h 33m 38s``."""
    sign = "−" if s < 0 else "+"
    s = abs(s)
    if s < 60:
        return f"{sign}{s:.3f} s"
    if s < 3600:
        m, r = divmod(s, 60)
        return f"{sign}{int(m)}m {r:04.1f}s"
    h, r = divmod(int(s), 3600)
    m, r = divmod(r, 60)
    return f"{sign}{h}h {m:02d}m {r:02d}s"


def page_rows(table: pd.DataFrame, positions_: np.ndarray, page: int, page_size: int = 50,
              origin: Any = None) -> list[list[str]]:
    """One page of the table as rows of plain strings (the browser sets them as text).

    ``positions_`` are the row positions that pass the filter; ``origin`` (the first
    timestamp) turns times into offsets.
    """
    return rows_at(table, positions_[page * page_size:(page + 1) * page_size], origin)


_ROW_COLUMNS = ["seq", "ts", "session", "direction", "kind", "id_key", "method", "outcome",
                "latency", "size", "has_violation"]


def rows_at(table: pd.DataFrame, positions_: np.ndarray, origin: Any = None,
            rules: Any = None) -> list[list[str]]:
    """The rows at ``positions_`` as lists of plain strings, in :data:`TABLE_COLUMNS` order.

    ``rules`` (seq -> rule codes) names the rules in the flag cell of a flagged row.
    """
    at = np.asarray(positions_, dtype=np.int64)
    shown = [table.columns.get_loc(c) for c in _ROW_COLUMNS]  # not raw: read only if asked
    part = table.iloc[at, shown]
    info = table["info"].iloc[at].tolist() if "info" in table.columns else [""] * len(part)
    rows = []
    for r, line in zip(part.itertuples(index=False), info, strict=True):
        rows.append([
            str(r.seq), _fmt_time(r.ts, origin),
            {"c2s": "→", "s2c": "←"}.get(r.direction, "·"), _s(r.kind), _s(r.method), _s(line),
            _s(r.outcome).replace("_", " "), fmt_latency(r.latency),
            "" if pd.isna(r.size) else f"{int(r.size):,}",
            ("⚠ " + ", ".join((rules or {}).get(int(r.seq), []))).strip()
            if r.has_violation else "",
            _s(r.session), _s(r.id_key),
        ])
    return rows


def _s(v: Any) -> str:
    return "" if v is None or (not isinstance(v, (list, dict)) and pd.isna(v)) else str(v)
