"""The sequence diagram: client and server lifelines, one arrow per message.

``mn.sequence(t)`` picks the messages of one session (or a range, or the frames a
timeline's brush selected), links each request to its response, cancellation and
progress notifications, marks the frames a rule flagged, and draws it all as SVG in
Python (:mod:`.seqdraw`). The same SVG is the static picture in nbconvert HTML and on
GitHub, a file (:meth:`Sequence.save`), and what the small interactive view shows: a
click on an arrow selects that frame (``selected_seq``) and highlights its pair.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import pandas as pd
import traitlets

from .aggregate import clip_label
from .seqdraw import Msg, draw_svg
from .snapshot import StaticFallback

__all__ = ["Sequence", "sequence", "pick_frames", "messages"]

_STATIC = Path(__file__).parent / "static"
MAX_MESSAGES = 300


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _bound(frames: pd.DataFrame, value: Any, side: str) -> np.ndarray:
    """Mask of frames at or after (``side="start"``) / at or before ``value``: a seq
    number (int) or a time (a Timestamp or a string pandas reads as one)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        seq = frames["seq"].to_numpy()
        return seq >= value if side == "start" else seq <= value
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{side}= takes a frame number or a time, not {value!r}") from exc
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts
    col = pd.to_datetime(frames["ts"], utc=True)
    return np.asarray((col >= ts) if side == "start" else (col <= ts), dtype=bool)


def pick_frames(trace: Any, session: Any = None, *, start: Any = None, end: Any = None,
                frames: Any = None) -> tuple[pd.DataFrame, str]:
    """The frames a diagram shows, and a sentence saying which.

    ``frames`` (a subset of ``trace.frames`` or a boolean mask over it) wins; then
    ``session``; with neither, a trace of one session shows it, a trace of several shows
    its first session and says how to pick another.
    """
    f = trace.frames
    mask = np.ones(len(f), dtype=bool)
    what = []
    if frames is not None:
        if isinstance(frames, pd.DataFrame):
            mask = f["seq"].isin(frames["seq"]).to_numpy()
        else:
            mask = np.asarray(frames, dtype=bool)
            if mask.shape != (len(f),):
                raise ValueError(f"frames= as a mask needs {len(f):,} values, one per frame "
                                 f"of trace.frames, not {mask.shape}")
        what.append("the selected range")
    names = [str(s) for s in f["session"].dropna().unique()]
    if session is not None:
        if str(session) not in names:
            shown = ", ".join(repr(n) for n in names[:8]) + (" …" if len(names) > 8 else "")
            raise ValueError(f"no session {session!r} in this trace; its sessions: {shown}")
        mask &= (f["session"].astype(object) == session).to_numpy(dtype=bool)
        what.append(f"session {clip_label(str(session), 60)}")
    elif frames is None and len(names) > 1:
        first = f["session"].dropna().iloc[0]
        mask &= (f["session"].astype(object) == first).to_numpy(dtype=bool)
        what.append(f"session {clip_label(str(first), 60)} (1 of {len(names):,}; "
                    "pass session= for another)")
    if start is not None:
        mask &= _bound(f, start, "start")
        what.append(f"from {start}")
    if end is not None:
        mask &= _bound(f, end, "end")
        what.append(f"to {end}")
    return f.loc[mask], " · ".join(what) or "the whole trace"


def _summary(msg: Any, kind: str, method: str) -> str:
    """A short line for one message when the trace has no ``info`` column."""
    if not isinstance(msg, dict):
        return method or kind
    if kind in ("request", "notification"):
        params = msg.get("params")
        extra = ""
        if isinstance(params, dict):
            for key in ("name", "uri", "ref", "level"):
                if isinstance(params.get(key), (str, int, float)):
                    extra = f" {params[key]}"
                    break
            if method == "notifications/progress":
                p, tot = params.get("progress"), params.get("total")
                extra = f" {p}" + (f"/{tot}" if tot is not None else "")
            elif method == "notifications/cancelled":
                extra = f" request {params.get('requestId')}"
        return f"{method}{extra}"
    if kind == "error":
        err = msg.get("error")
        if isinstance(err, dict):
            return f"error {err.get('code')} {err.get('message', '')}".strip()
        return "error"
    res = msg.get("result")
    if isinstance(res, dict):
        if isinstance(res.get("content"), list):
            types = ", ".join(dict.fromkeys(str(c.get("type")) for c in res["content"]
                                            if isinstance(c, dict)))
            return ("isError: " if res.get("isError") else "result: ") + (types or "no content")
        keys = ", ".join(list(res)[:4])
        return f"result {{{keys}}}" if keys else "result {}"
    return "result"


def messages(trace: Any, shown: pd.DataFrame) -> list[Msg]:
    """The diagram's rows for ``shown`` (a slice of ``trace.frames``), pairs resolved."""
    if len(shown) == 0:
        return []
    seqs = shown["seq"].to_numpy(dtype=np.int64)
    in_view = set(seqs.tolist())
    sessions = list(dict.fromkeys("" if pd.isna(s) else str(s) for s in shown["session"]))
    lane_of = {s: i for i, s in enumerate(sessions)}
    ts = pd.to_datetime(shown["ts"], utc=True)
    t0 = ts.dropna().min() if ts.notna().any() else None
    info = shown["info"] if "info" in shown.columns else None

    p = trace.pairs
    rq, rs, cs = _num(p["request_seq"]), _num(p["response_seq"]), _num(p["cancel_seq"])
    oc = p["outcome"].astype(object).to_numpy()
    near = np.isin(rq, seqs) | np.isin(rs, seqs) | np.isin(cs, seqs)
    req_of: dict[int, dict] = {}  # request seq -> its pair's facts
    partner: dict[int, int] = {}
    cancel_target: dict[int, int] = {}
    for i in np.flatnonzero(near):
        real = oc[i] not in ("duplicate", "orphan")
        r, s, c = rq[i], rs[i], cs[i]
        if not np.isnan(r) and real:
            lat = p["latency"].iat[i]
            req_of[int(r)] = {"resp": None if np.isnan(s) else int(s),
                              "cancel": None if np.isnan(c) else int(c), "outcome": oc[i],
                              "latency": None if pd.isna(lat) else lat.total_seconds()}
        if not np.isnan(r) and not np.isnan(s):
            partner.setdefault(int(s), int(r))
            if real:
                partner[int(r)] = int(s)
        if not np.isnan(c) and not np.isnan(r):
            cancel_target[int(c)] = int(r)

    viol: dict[int, list[tuple[str, str, str]]] = {}
    v = trace.violations
    if len(v):
        vs = _num(v["seq"])
        for i in np.flatnonzero(np.isin(vs, seqs)):
            viol.setdefault(int(vs[i]), []).append(
                (str(v["rule"].iat[i]), str(v["severity"].iat[i]),
                 clip_label(str(v["message"].iat[i]), 300)))

    tokens: dict[str, int] = {}
    rows: list[Msg] = []
    kinds = shown["kind"].astype(object).to_numpy()
    dirs = shown["direction"].astype(object).to_numpy()
    methods = shown["method"].astype(object).to_numpy()
    tool_err = shown["is_tool_error"].fillna(False).to_numpy(dtype=bool)
    sess = shown["session"].astype(object).to_numpy()
    for j, seq in enumerate(seqs.tolist()):
        kind, method = str(kinds[j]), "" if pd.isna(methods[j]) else str(methods[j])
        direction = dirs[j] if dirs[j] in ("c2s", "s2c") else None
        need_msg = info is None or method == "notifications/progress" or (
            kind == "request")
        msg = trace.message(seq) if need_msg and kind not in ("log", "stderr") else None
        label = (str(info.iat[j]) if info is not None and not pd.isna(info.iat[j])
                 else _summary(msg, kind, method))
        if kind in ("log", "stderr"):
            raw = str(shown["raw"].iat[j]) if "raw" in shown.columns else ""
            label = f"{kind}: {raw}"
        m = Msg(seq=seq, lane=lane_of["" if pd.isna(sess[j]) else str(sess[j])],
                direction=direction if kind not in ("log", "stderr") else None,
                kind="note" if kind in ("log", "stderr") else kind, label=clip_label(label, 200),
                t=None if t0 is None or pd.isna(ts.iat[j]) else
                float((ts.iat[j] - t0).total_seconds()),
                pair=partner.get(seq), violations=viol.get(seq, []))
        if kind == "result" and tool_err[j]:
            m.kind = "tool_error"
        if kind == "request":
            facts = req_of.get(seq)
            params = msg.get("params") if isinstance(msg, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get("progressToken") is not None:
                tokens[json.dumps(meta["progressToken"], sort_keys=True)] = seq
            if facts is not None:
                m.latency = facts["latency"] if facts["resp"] is not None else None
                m.ends = facts["resp"] if facts["resp"] is not None else facts["cancel"]
                if m.ends is None:
                    m.open_reason = "no response in the capture"
                elif m.ends not in in_view:
                    m.open_reason = (f"{'answered' if facts['resp'] is not None else 'cancelled'}"
                                     f" at #{m.ends}, outside the diagram")
        elif method == "notifications/cancelled":
            m.kind, m.target = "cancel", cancel_target.get(seq)
        elif method == "notifications/progress":
            m.kind = "progress"
            params = msg.get("params") if isinstance(msg, dict) else None
            if isinstance(params, dict) and params.get("progressToken") is not None:
                m.target = tokens.get(json.dumps(params["progressToken"], sort_keys=True))
        rows.append(m)
    return rows


class Sequence(StaticFallback, anywidget.AnyWidget):
    """A sequence diagram of some frames of a trace (see :func:`sequence`).

    Traits
    ------
    svg
        The diagram (built in Python; also the static picture).
    selected_seq
        The frame clicked (its pair is highlighted), or set from Python.
    """

    _esm = _STATIC / "sequence.js"
    _css = _STATIC / "sequence.css"
    svg = traitlets.Unicode("").tag(sync=True)
    selected_seq = traitlets.Int(None, allow_none=True).tag(sync=True)

    def __init__(self, trace: Any, shown: pd.DataFrame, what: str, *,
                 max_messages: int = MAX_MESSAGES, **kwargs: Any) -> None:
        self._trace = trace
        total = len(shown)
        self.frames = shown.iloc[:max_messages]
        self.rows = messages(trace, self.frames)
        self.sessions = list(dict.fromkeys("" if pd.isna(s) else str(s)
                                           for s in self.frames["session"]))
        cut = (f"showing the first {len(self.frames):,} of {total:,} frames; pass start=/end= "
               "or a narrower range for the rest" if total > len(self.frames) else
               f"{total:,} frames")
        self.title = f"sequence: {what}"
        self.note = cut
        axis = "time" if any(m.t is not None for m in self.rows) else "seq"
        super().__init__(svg=draw_svg(self.rows, self.sessions, title=self.title,
                                      note=self.note, axis=axis), **kwargs)

    def to_svg(self) -> str:
        """The diagram as a standalone SVG document."""
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + self.svg

    def save(self, path: str | Path) -> Path:
        """Write the diagram to ``path`` as SVG (UTF-8); returns the path."""
        path = Path(path)
        path.write_text(self.to_svg(), encoding="utf-8")
        return path

    def _static_text(self) -> str:
        arrows = sum(m.direction is not None for m in self.rows)
        flagged = sum(bool(m.violations) for m in self.rows)
        return (f"{self.title}: {arrows:,} arrows, {len(self.rows) - arrows:,} notes, "
                f"{flagged:,} flagged frames ({self.note})")

    def _static_svg(self) -> str:
        return self.svg


def sequence(trace: Any, session: Any = None, *, start: Any = None, end: Any = None,
             frames: Any = None, max_messages: int = MAX_MESSAGES) -> Sequence:
    """A sequence diagram: client and server lifelines, one arrow per message.

    Parameters
    ----------
    trace
        A loaded trace, or a timeline (``mn.timeline(t)``) or an explorer
        (``mn.explore(t)``): then the frames the timeline's brush selected (all when
        nothing is brushed).
    session
        The session to draw (default: the only one, or the first).
    start, end
        The first and last frame: frame numbers, or times (``"2026-11-30 00:54:55"``).
    frames
        A subset of ``trace.frames`` (or a boolean mask over it) to draw instead.
    max_messages
        The most rows drawn; the diagram says when it cut.

    Returns
    -------
    Sequence
        A widget; ``.svg`` is the picture, ``.save("x.svg")`` writes it.

    Examples
    --------
    >>> import mcp_notebook as mn
    >>> t = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
    >>> d = mn.sequence(t)
    >>> d.svg.startswith("<svg") and "progress 1/4" in d.svg
    True
    """
    if hasattr(trace, "timeline") and hasattr(trace, "trace"):  # an explorer: its timeline
        trace = trace.timeline
    if hasattr(trace, "range_mask") and hasattr(trace, "_trace"):
        tl = trace
        trace = tl._trace
        if frames is None and len(tl.brush) == 2:
            frames = tl.range_mask()
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")
    shown, what = pick_frames(trace, session, start=start, end=end, frames=frames)
    return Sequence(trace, shown, what, max_messages=max_messages)
