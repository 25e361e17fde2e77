"""Timeline geometry: spans, ticks and lanes from a trace, and the visible-window payload.

Pure functions over the trace's DataFrames (no widgets, no kernel). :func:`prepare` turns
``frames`` / ``pairs`` / ``violations`` into flat numpy arrays once; :func:`view` (in
:mod:`.viewport`, re-exported here) cuts the visible window out of them at the view's
resolution into the small JSON payload the browser draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "OUTCOMES",
    "TICK_KINDS",
    "SEVERITIES",
    "Prepared",
    "time_axis",
    "positions",
    "prepare",
]

#: Span colours are keyed by these outcomes (index = code sent to the browser).
OUTCOMES = ["result", "error", "tool_error", "unanswered", "cancelled"]
#: Tick kinds: frames that are not half of a drawn span.
TICK_KINDS = ["notification", "stderr", "log", "invalid", "orphan", "duplicate"]
SEVERITIES = ["error", "warning", "info"]
_DIR_LABEL = {"c2s": "client → server", "s2c": "server → client", "log": "stderr / log"}
_MAX_METHOD_LANES = 30
#: the longest lane or method label sent to the browser: a capture can name a session or a
#: method with 300,000 characters, which no canvas label or tooltip needs
LABEL_MAX = 120


def clip_label(text: str, limit: int = LABEL_MAX) -> str:
    """``text`` cut to ``limit`` characters, the cut shown by an ellipsis and the full length.

    >>> clip_label("x" * 500, 20)
    'xxxxxxxxxx… (500 ch)'
    >>> clip_label("tools/call")
    'tools/call'
    """
    if len(text) <= limit:
        return text
    tail = f"… ({len(text):,} ch)"
    return text[: max(limit - len(tail), 1)] + tail


@dataclass
class Prepared:
    """Everything the timeline draws, as flat arrays in axis units (seconds or seq)."""

    axis: str  # "time" (seconds since origin) or "seq" (no timestamps in the trace)
    origin: pd.Timestamp | None
    extent: tuple[float, float]
    lanes: list[str]
    methods: list[str]
    sessions: list[str]  # names (clipped), in order of first frame
    lane_session: np.ndarray  # per lane: its session's index in ``sessions``, -1 for none
    n_frames: int
    span_t0: np.ndarray
    span_t1: np.ndarray
    span_open: np.ndarray  # bool: no response (drawn to the end of its session)
    span_lane: np.ndarray
    span_outcome: np.ndarray
    span_seq: np.ndarray  # request seq
    span_rseq: np.ndarray  # response seq, -1 when none
    span_method: np.ndarray
    tick_t: np.ndarray
    tick_lane: np.ndarray
    tick_kind: np.ndarray
    tick_seq: np.ndarray
    tick_method: np.ndarray
    viol_t: np.ndarray
    viol_lane: np.ndarray
    viol_sev: np.ndarray
    viol_seq: np.ndarray
    viol_rule: np.ndarray  # codes into ``rules``
    rules: list[str]
    ev_t: np.ndarray  # in-flight events, sorted
    ev_count: np.ndarray  # requests in flight just after each event
    frame_x: np.ndarray  # axis position of every frame (by position)
    frame_seq: np.ndarray

    def x_of_seq(self, seq: int) -> float | None:
        """Axis position of a frame, or None when the seq is unknown."""
        pos = positions(self.frame_seq, np.asarray([seq]))[0]
        return None if pos < 0 else float(self.frame_x[pos])


def time_axis(frames: pd.DataFrame) -> tuple[np.ndarray, str, pd.Timestamp | None]:
    """Axis position of every frame: seconds since the first timestamp, or the seq.

    Frames without a timestamp take the previous frame's time (or the next one's at the
    start), so they still sit in capture order. A trace with no timestamps at all is
    drawn on a seq axis. Worked on the times' int64 nanoseconds (no Timedelta objects:
    a million frames in a few milliseconds).
    """
    if len(frames) == 0:
        return np.zeros(0), "seq", None
    ts = frames["ts"]
    if not isinstance(ts.dtype, pd.DatetimeTZDtype):
        ts = pd.to_datetime(ts, utc=True)
    if ts.dtype.unit != "ns":
        ts = ts.dt.as_unit("ns")
    ns = np.asarray(ts.array.asi8)
    valid = ns != np.iinfo(np.int64).min  # NaT
    if not valid.any():
        return frames["seq"].to_numpy(dtype=float), "seq", None
    o = int(ns[valid].min())
    origin = pd.Timestamp(o, unit="ns", tz="UTC")
    x = (ns - o) / 1e9
    if not valid.all():  # forward fill, then the first known time back to the start
        idx = np.where(valid, np.arange(len(ns)), 0)
        np.maximum.accumulate(idx, out=idx)
        first = int(np.argmax(valid))
        idx[:first] = first
        x = x[idx]
    return x, "time", origin


def positions(frame_seq: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """Row positions of ``seqs`` in ``frame_seq`` (sorted ascending); -1 where absent or NaN."""
    seqs = np.asarray(seqs, dtype=float)
    out = np.full(len(seqs), -1, dtype=np.int64)
    ok = ~np.isnan(seqs)
    if not ok.any() or len(frame_seq) == 0:
        return out
    want = seqs[ok].astype(np.int64)
    n = len(frame_seq)
    if frame_seq[0] == 0 and frame_seq[-1] == n - 1:  # sorted and unique: seq is the position
        inside = (want >= 0) & (want < n)
        out[np.flatnonzero(ok)[inside]] = want[inside]
        return out
    pos = np.searchsorted(frame_seq, want)
    pos_c = np.minimum(pos, len(frame_seq) - 1)
    hit = frame_seq[pos_c] == want
    out[np.flatnonzero(ok)[hit]] = pos_c[hit]
    return out


def _seq_col(df: pd.DataFrame, col: str) -> np.ndarray:
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _factor(s: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes (-1 where missing) and category names of a column (no string copies)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.cat.codes.to_numpy(dtype=np.int64), [str(c) for c in s.cat.categories]
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), [str(u) for u in uniq]


def _lut(cats: list[str], table: dict[str, int], default: int) -> np.ndarray:
    """A code → value lookup; code -1 (missing) reads the last slot, ``default``."""
    return np.array([table.get(c, default) for c in cats] + [default], dtype=np.int64)


_ORPHAN, _DUP, _INVALID = (TICK_KINDS.index(k) for k in ("orphan", "duplicate", "invalid"))


def prepare(trace, lane_by: str = "direction") -> Prepared:
    """Flatten a trace into timeline arrays.

    Parameters
    ----------
    trace
        Anything with ``frames``, ``pairs`` and ``violations`` DataFrames (a Trace).
    lane_by
        ``"direction"``: one lane per session and sending side (its requests as spans,
        its notifications as ticks) plus a stderr/log lane; ``"method"``: one lane per
        method (the most frequent ones), plus a stderr/log lane.
    """
    if lane_by not in ("direction", "method"):
        raise ValueError(f"lane_by must be 'direction' or 'method', not {lane_by!r}")
    frames, pairs, viol = trace.frames, trace.pairs, trace.violations
    n = len(frames)
    frame_seq = frames["seq"].to_numpy(dtype=np.int64)
    x, axis, origin = time_axis(frames)
    extent = (float(x.min()), float(x.max())) if n else (0.0, 1.0)

    # sessions, in order of their first frame; each ends at its last frame
    s_codes, s_cats = _factor(frames["session"])
    ns = len(s_cats) + 1  # the last session slot is "no session"
    s_all = np.where(s_codes < 0, ns - 1, s_codes)
    session_end = np.full(ns, extent[0])
    if n:
        np.maximum.at(session_end, s_all, x)

    # spans: requests that have a request frame and are not orphans / duplicates
    oc_codes, oc_cats = _factor(pairs["outcome"])
    is_bad = _lut(oc_cats, {"orphan": 1, "duplicate": 1}, 0)[oc_codes] == 1
    req_seq = _seq_col(pairs, "request_seq")
    resp_seq = _seq_col(pairs, "response_seq")
    span_idx = np.flatnonzero(~np.isnan(req_seq) & ~is_bad)
    sp_req = positions(frame_seq, req_seq[span_idx])
    keep = sp_req >= 0
    span_idx, sp_req = span_idx[keep], sp_req[keep]
    sp_resp = positions(frame_seq, resp_seq[span_idx])
    sp_cancel = positions(frame_seq, _seq_col(pairs, "cancel_seq")[span_idx])
    t0 = x[sp_req] if n else np.zeros(0)
    # an unanswered request is in flight until its session's last frame, not the trace's
    open_end = session_end[s_all[sp_req]] if n else np.zeros(0)
    t1 = np.where(sp_resp >= 0, x[np.maximum(sp_resp, 0)] if n else 0.0,
                  np.where(sp_cancel >= 0, x[np.maximum(sp_cancel, 0)] if n else 0.0, open_end))
    t1 = np.maximum(t1, t0)
    span_open = (sp_resp < 0) & (sp_cancel < 0)
    span_outcome = _lut(oc_cats, {o: i for i, o in enumerate(OUTCOMES)},
                        OUTCOMES.index("unanswered"))[oc_codes[span_idx]]

    # ticks: every frame that is not half of a drawn span
    in_span = np.zeros(n, dtype=bool)
    in_span[sp_req] = True
    in_span[sp_resp[sp_resp >= 0]] = True
    tick_pos = np.flatnonzero(~in_span)
    k_codes, k_cats = _factor(frames["kind"])
    kind_lut = {k: i for i, k in enumerate(TICK_KINDS)}
    kind_lut.update(request=_ORPHAN, result=_ORPHAN, error=_ORPHAN)  # loose message frames
    tick_kind = _lut(k_cats, kind_lut, _INVALID)[k_codes[tick_pos]]
    bad_idx = np.flatnonzero(is_bad)
    where = positions(tick_pos, positions(frame_seq, resp_seq[bad_idx]).astype(float))
    ok = where >= 0
    tick_kind[where[ok]] = _lut(oc_cats, {"orphan": _ORPHAN, "duplicate": _DUP},
                                _ORPHAN)[oc_codes[bad_idx[ok]]]

    # methods, most frequent first (responses take their request's method)
    fm_codes, fm_cats = _factor(frames["method"])
    pm_codes, pm_cats = _factor(pairs["method"])
    union = list(dict.fromkeys(fm_cats + pm_cats))
    uidx = {m: i for i, m in enumerate(union)}
    tick_u = _lut(fm_cats, uidx, -1)[fm_codes[tick_pos]]
    span_u = _lut(pm_cats, uidx, -1)[pm_codes[span_idx]]
    both = np.concatenate([tick_u, span_u])
    counts = np.bincount(both[both >= 0], minlength=len(union))
    order = np.argsort(-counts, kind="stable")
    order = order[counts[order] > 0]
    methods = [clip_label(str(union[i])) for i in order]
    rank = np.full(len(union) + 1, -1, dtype=np.int64)  # rank[-1] stays -1 (no method)
    rank[order] = np.arange(len(order))
    span_method, tick_method = rank[span_u], rank[tick_u]

    # lanes
    # sessions in order of their first frame (a hash pass, no sort of a million codes)
    seen = pd.unique(s_all).astype(np.int64)
    first = np.full(ns, n, dtype=np.int64)
    first[seen] = np.arange(len(seen))  # the rank of first appearance
    s_order = [int(k) for k in seen if k < ns - 1]
    s_rank = np.full(ns, -1, dtype=np.int64)
    s_rank[s_order] = np.arange(len(s_order))
    sessions = [clip_label(str(s_cats[k])) for k in s_order]
    if lane_by == "direction":
        d_codes, d_cats = _factor(frames["direction"])
        tick_d = _lut(d_cats, {"c2s": 0, "s2c": 1}, 2)[d_codes[tick_pos]]
        flip = np.isin(tick_kind, [_ORPHAN, _DUP]) & (tick_d < 2)  # the would-be requester
        tick_d = np.where(flip, 1 - tick_d, tick_d)
        r_codes, r_cats = _factor(pairs["requester"])
        span_d = _lut(r_cats, {"c2s": 0, "client": 0, "s2c": 1, "server": 1}, 0)[
            r_codes[span_idx]]
        span_key = s_all[sp_req] * 3 + span_d
        tick_key = s_all[tick_pos] * 3 + tick_d
        found = np.flatnonzero(np.bincount(span_key, minlength=ns * 3)
                               + np.bincount(tick_key, minlength=ns * 3))
        uniq: list[int] = sorted(found.tolist(), key=lambda k: (first[k // 3], k % 3))
        # room for " · server → client" after the session's name
        names = [clip_label(str(c), LABEL_MAX - 20) for c in s_cats] + [""]
        multi = len({k // 3 for k in uniq}) > 1
        labels = [_DIR_LABEL["c2s"], _DIR_LABEL["s2c"], _DIR_LABEL["log"]]
        lanes = [f"{names[k // 3]} · {labels[k % 3]}" if multi and names[k // 3] else
                 labels[k % 3] for k in uniq]
        lane_of = np.full(ns * 3, -1, dtype=np.int64)
        lane_of[uniq] = np.arange(len(uniq))
        span_lane, tick_lane = lane_of[span_key], lane_of[tick_key]
        lane_session = s_rank[np.asarray(uniq, dtype=np.int64) // 3] if uniq else \
            np.zeros(0, dtype=np.int64)
    else:
        top = methods[:_MAX_METHOD_LANES]
        rest = len(methods) > len(top)
        lanes = list(top) + (["other methods"] if rest else [])
        other = len(lanes) - 1 if rest else -1
        log_needed = bool((tick_method < 0).any()) or bool((span_method < 0).any())
        log_lane = len(lanes)
        if log_needed:
            lanes.append("stderr / log / no method")

        def lane_for(codes: np.ndarray) -> np.ndarray:
            out = np.where(codes < len(top), codes, other)
            return np.where(codes < 0, log_lane, out).astype(np.int64)

        span_lane, tick_lane = lane_for(span_method), lane_for(tick_method)
        lane_session = np.full(len(lanes), -1, dtype=np.int64)

    # violations sit on the lane where their frame is drawn
    frame_lane = np.full(n, -1, dtype=np.int64)
    frame_lane[sp_req] = span_lane
    answered = sp_resp >= 0
    frame_lane[sp_resp[answered]] = span_lane[answered]
    frame_lane[tick_pos] = tick_lane
    v_pos = positions(frame_seq, _seq_col(viol, "seq")) if len(viol) else np.zeros(0, int)
    v_ok = v_pos >= 0
    if len(viol):
        sv_codes, sv_cats = _factor(viol["severity"])
        v_sev = _lut(sv_cats, {k: i for i, k in enumerate(SEVERITIES)}, 2)[sv_codes][v_ok]
        ru_codes, rules = _factor(viol["rule"])
        v_rule = ru_codes[v_ok]
    else:
        v_sev = np.zeros(0, dtype=np.int64)
        v_rule, rules = np.zeros(0, dtype=np.int64), []

    # in flight: +1 at each span start, -1 at each end (an unanswered request's end is its
    # session's last frame: after that nothing is waiting for it in this capture)
    ev_t = np.concatenate([t1, t0])  # ends first: a stable sort keeps them before starts
    order = np.argsort(ev_t, kind="stable")  # two nearly sorted runs: one merge
    # an event is an end (-1) when its index is among the first len(t1): no gather of ±1s
    ev_t, ev_count = ev_t[order], np.cumsum(np.where(order < len(t1), -1, 1))

    i64 = np.int64
    return Prepared(
        axis=axis, origin=origin, extent=extent, lanes=lanes, methods=methods, n_frames=n,
        sessions=sessions, lane_session=np.asarray(lane_session, dtype=np.int64),
        span_t0=t0, span_t1=t1, span_open=span_open, span_lane=span_lane,
        span_outcome=np.asarray(span_outcome, dtype=i64),
        span_seq=frame_seq[sp_req] if n else np.zeros(0, i64),
        span_rseq=np.where(sp_resp >= 0, frame_seq[np.maximum(sp_resp, 0)] if n else -1, -1),
        span_method=span_method,
        tick_t=x[tick_pos] if n else np.zeros(0), tick_lane=tick_lane,
        tick_kind=np.asarray(tick_kind, dtype=i64), tick_seq=frame_seq[tick_pos],
        tick_method=tick_method,
        viol_t=x[v_pos[v_ok]] if n else np.zeros(0), viol_lane=frame_lane[v_pos[v_ok]],
        viol_sev=np.asarray(v_sev, dtype=i64), viol_seq=frame_seq[v_pos[v_ok]],
        viol_rule=np.asarray(v_rule, dtype=np.int64), rules=[clip_label(r) for r in rules],
        ev_t=ev_t, ev_count=ev_count, frame_x=x, frame_seq=frame_seq,
    )

