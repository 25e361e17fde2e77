"""The timeline's visible-window payload: what the browser draws for one view.

:func:`view` cuts the window out of a :class:`~.aggregate.Prepared` trace at the view's
resolution and returns the small JSON payload the browser draws; when too many items are
visible it sends per-lane bins instead, so a 1,000,000-frame trace never ships more than
a few hundred KB per update. Sessions the picker hides or collapses are mapped by
:func:`.lanes.lane_map`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .aggregate import OUTCOMES, SEVERITIES, TICK_KINDS, Prepared
from .lanes import lane_map

__all__ = ["inflight_max", "view"]


def inflight_max(ev_t: np.ndarray, ev_count: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Most requests in flight at once within each bin ``[edges[i], edges[i+1])``."""
    nb = len(edges) - 1
    if nb <= 0:
        return np.zeros(0, dtype=np.int64)
    start = np.searchsorted(ev_t, edges[:-1], side="right")  # events at the edge: in carry
    stop = np.maximum(np.searchsorted(ev_t, edges[1:], side="left"), start)
    carry = np.where(start > 0, ev_count[np.maximum(start - 1, 0)], 0) if len(ev_t) else \
        np.zeros(nb, dtype=np.int64)
    out = np.asarray(carry, dtype=np.int64).copy()
    nonempty = stop > start
    if nonempty.any() and len(ev_t):
        inner = np.maximum.reduceat(ev_count, np.minimum(start, len(ev_t) - 1))
        out[nonempty] = np.maximum(out[nonempty], inner[nonempty])
    return np.maximum(out, 0)


def _present(codes: np.ndarray, k: int) -> list[int]:
    """The codes (0 .. k-1) that occur: a count per code, no sort of the visible items."""
    return np.flatnonzero(np.bincount(codes[codes >= 0], minlength=k)).tolist()


def _r(a: np.ndarray) -> list:
    return np.round(a.astype(float), 6).tolist()


def _fmt(n: int) -> str:
    return f"{n:,}"


def view(p: Prepared, lo: float | None = None, hi: float | None = None, width: int = 1000,
         max_items: int = 4000, max_bins: int = 1200, hidden: Iterable[int] = (),
         collapsed: Iterable[int] = ()) -> dict:
    """The JSON payload for one view of the timeline.

    Parameters
    ----------
    p
        The prepared trace.
    lo, hi
        The visible window in axis units (default: the whole trace).
    width
        The plot's width in CSS pixels (sets the number of bins).
    max_items
        Above this many visible spans + ticks, send per-lane bins instead of items.
    max_bins
        The most bins per lane.
    hidden, collapsed
        Session indexes (into ``p.sessions``) to leave out, and to draw as one lane.
    """
    e0, e1 = p.extent
    lo = e0 if lo is None else float(lo)
    hi = e1 if hi is None else float(hi)
    if not hi > lo:
        hi = lo + max(1e-6, (e1 - e0) * 1e-3 or 1.0)
    s_vis = np.flatnonzero((p.span_t0 <= hi) & (p.span_t1 >= lo))
    t_vis = np.flatnonzero((p.tick_t >= lo) & (p.tick_t <= hi))
    v_vis = np.flatnonzero((p.viol_t >= lo) & (p.viol_t <= hi))
    hidden = sorted(set(int(h) for h in hidden))
    lm = lane_map(p.lanes, p.lane_session, p.sessions, hidden, collapsed)
    shown = (f" · {_fmt(len(p.sessions) - len(hidden))} of {_fmt(len(p.sessions))} sessions "
             "shown (pick others under “sessions”)" if hidden else "")
    sl, kl, vl = lm.lut[p.span_lane[s_vis]], lm.lut[p.tick_lane[t_vis]], lm.lut[p.viol_lane[v_vis]]
    s_vis, t_vis, v_vis = s_vis[sl >= 0], t_vis[kl >= 0], v_vis[vl >= 0]
    sl, kl, vl = sl[sl >= 0], kl[kl >= 0], vl[vl >= 0]
    nb = int(max(20, min(max_bins, width // 2)))
    edges = np.linspace(lo, hi, nb + 1)
    out: dict = {
        "axis": p.axis,
        "origin": None if p.origin is None else p.origin.isoformat(),
        "extent": [e0, e1],
        "window": [lo, hi],
        "lanes": lm.labels,
        "lane_session": lm.session,
        "lane_collapsed": lm.collapsed,
        "sessions": p.sessions,
        "hidden": hidden,
        "present": {"outcomes": _present(p.span_outcome[s_vis], len(OUTCOMES)),
                    "tick_kinds": _present(p.tick_kind[t_vis], len(TICK_KINDS)),
                    "severities": _present(p.viol_sev[v_vis], len(SEVERITIES))},
        "outcomes": OUTCOMES,
        "tick_kinds": TICK_KINDS,
        "severities": SEVERITIES,
        "total": {"frames": p.n_frames, "spans": len(p.span_t0), "ticks": len(p.tick_t),
                  "violations": len(p.viol_t)},
        "visible": {"spans": len(s_vis), "ticks": len(t_vis), "violations": len(v_vis)},
        "inflight": {"edges": [lo, hi],
                     "max": inflight_max(p.ev_t, p.ev_count, edges).tolist()},
    }
    if len(s_vis) + len(t_vis) <= max_items:
        used = np.unique(np.concatenate([p.span_method[s_vis], p.tick_method[t_vis]]))
        used = used[used >= 0]
        lut = np.full(len(p.methods) + 1, -1, dtype=np.int64)  # lut[-1] stays -1
        lut[used] = np.arange(len(used))

        def mmap(codes: np.ndarray) -> np.ndarray:
            return lut[codes]

        out["mode"] = "items"
        out["methods"] = [p.methods[int(m)] for m in used]
        out["spans"] = {
            "t0": _r(p.span_t0[s_vis]), "t1": _r(p.span_t1[s_vis]),
            "open": p.span_open[s_vis].astype(int).tolist(),
            "lane": sl.tolist(), "outcome": p.span_outcome[s_vis].tolist(),
            "seq": p.span_seq[s_vis].tolist(), "rseq": p.span_rseq[s_vis].tolist(),
            "method": mmap(p.span_method[s_vis]).tolist() if len(s_vis) else [],
        }
        out["ticks"] = {
            "t": _r(p.tick_t[t_vis]), "lane": kl.tolist(),
            "kind": p.tick_kind[t_vis].tolist(), "seq": p.tick_seq[t_vis].tolist(),
            "method": mmap(p.tick_method[t_vis]).tolist() if len(t_vis) else [],
        }
        out["viol"] = {"t": _r(p.viol_t[v_vis]), "lane": vl.tolist(),
                       "sev": p.viol_sev[v_vis].tolist(), "seq": p.viol_seq[v_vis].tolist(),
                       "rule": [p.rules[c] if c >= 0 else "" for c in p.viol_rule[v_vis].tolist()]}
        out["note"] = (f"showing all {_fmt(len(s_vis))} requests and {_fmt(len(t_vis))} other "
                       f"frames in view (of {_fmt(p.n_frames)} frames)") + shown
        return out

    nl = max(len(lm.labels), 1)
    width_b = (hi - lo) / nb

    def bin_of(t: np.ndarray) -> np.ndarray:
        return np.clip(((t - lo) / width_b).astype(np.int64), 0, nb - 1)

    def grid(lane: np.ndarray, cat: np.ndarray, ncat: int, t: np.ndarray) -> list:
        key = (lane * ncat + cat) * nb + bin_of(np.maximum(t, lo))
        dense = np.bincount(key, minlength=nl * ncat * nb).reshape(nl, ncat, nb)
        rows = []
        for li, ci in zip(*np.nonzero(dense.sum(axis=2)), strict=True):
            row = dense[li, ci]
            nz = np.flatnonzero(row)
            if len(nz) * 2 < nb:  # sparse rows: bin indices and counts only
                rows.append({"lane": int(li), "cat": int(ci), "idx": nz.tolist(),
                             "n": row[nz].tolist()})
            else:
                rows.append({"lane": int(li), "cat": int(ci), "counts": row.tolist()})
        return rows

    out["mode"] = "bins"
    out["methods"] = []
    out["bins"] = {
        "n": nb, "edges": [lo, hi],
        "spans": grid(sl, p.span_outcome[s_vis], len(OUTCOMES), p.span_t0[s_vis]),
        "ticks": grid(kl, p.tick_kind[t_vis], len(TICK_KINDS), p.tick_t[t_vis]),
        "viol": grid(vl, p.viol_sev[v_vis], len(SEVERITIES), p.viol_t[v_vis]),
    }
    out["note"] = (f"showing {_fmt(len(s_vis))} requests and {_fmt(len(t_vis))} other frames "
                   f"(of {_fmt(p.n_frames)}) as {nb:,} bins per lane; zoom in to see each one"
                   ) + shown
    return out
