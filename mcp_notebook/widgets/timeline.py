"""The timeline widget: lanes of request spans and frame ticks over time.

A thin anywidget over :mod:`.aggregate`: the browser reports its window and width, Python
cuts and bins the visible part of the trace and sends only that: ``view`` (a dict, in
Python) travels as ``packed``, its compact JSON compressed with zlib (RFC 1950), which the
page opens with the browser's own ``DecompressionStream("deflate")``. The bin counts of a
million frames compress about tenfold.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import pandas as pd
import traitlets

from .aggregate import Prepared, positions, prepare
from .snapshot import StaticFallback
from .timelinesvg import timeline_svg
from .viewport import view

__all__ = ["Timeline", "timeline", "pack", "unpack"]

_STATIC = Path(__file__).parent / "static"


#: above this many sessions the timeline starts with each session's lanes collapsed
COLLAPSE_ABOVE = 6
#: and shows this many sessions at first (a stateless HTTP capture has one per POST)
SHOW_FIRST = 40


class Timeline(StaticFallback, anywidget.AnyWidget):
    """Lanes per session and direction (or per method); one span per request and response.

    Traits
    ------
    selected_seq
        The selected frame (set by a click, or from Python).
    selected_range
        The brushed range: a ``(start, end)`` pair of UTC Timestamps, or of seq numbers
        when the trace has no timestamps; ``None`` when nothing is brushed.
    lane_by
        ``"direction"`` or ``"method"``.
    hidden, collapsed
        Session indexes (into ``prepared.sessions``) left out by the session picker, and
        drawn as one lane (a click on a session's lane label toggles it). A trace of more
        than six sessions starts collapsed, and of more than forty shows its first forty.
    """

    _esm = _STATIC / "timeline.js"
    _css = _STATIC / "timeline.css"

    view = traitlets.Dict()  # what the page draws; sent as ``packed``
    packed = traitlets.Bytes(b"").tag(sync=True)
    window = traitlets.List(traitlets.Float()).tag(sync=True)
    width = traitlets.Int(400).tag(sync=True)  # the page says its own at once; the first view is coarser
    lane_by = traitlets.Unicode("direction").tag(sync=True)
    selected_seq = traitlets.Int(None, allow_none=True).tag(sync=True)
    brush = traitlets.List(traitlets.Float()).tag(sync=True)
    selected_range = traitlets.Any(None)
    hidden = traitlets.List(traitlets.Int()).tag(sync=True)
    collapsed = traitlets.List(traitlets.Int()).tag(sync=True)
    max_items = traitlets.Int(4000)

    def __init__(self, trace: Any, *, lane_by: str = "direction", **kwargs: Any) -> None:
        self._trace = trace
        self._prepared: dict[str, Prepared] = {}
        self._syncing = False
        self._ready = False  # one first view, not one per trait set below
        super().__init__(lane_by=lane_by, **kwargs)
        p = self.prepared
        if len(p.sessions) > COLLAPSE_ABOVE:
            self.collapsed = list(range(len(p.sessions)))
        if len(p.sessions) > SHOW_FIRST:
            self.hidden = list(range(SHOW_FIRST, len(p.sessions)))
        e0, e1 = p.extent
        pad = max((e1 - e0) * 0.02, 1.0 if p.axis == "seq" else 1e-3)
        self.window = [e0 - pad, e1 + pad]
        self._ready = True
        self.refresh()

    # -- data ---------------------------------------------------------------
    @property
    def prepared(self) -> Prepared:
        """The flattened trace for the current ``lane_by`` (computed once per mode)."""
        if self.lane_by not in self._prepared:
            self._prepared[self.lane_by] = prepare(self._trace, self.lane_by)
        return self._prepared[self.lane_by]

    def refresh(self) -> None:
        """Recompute the payload for the current window and width."""
        lo, hi = (self.window + [None, None])[:2] if len(self.window) == 2 else (None, None)
        payload = view(self.prepared, lo, hi, width=self.width, max_items=self.max_items,
                       hidden=self.hidden, collapsed=self.collapsed)
        self.view = payload

    @traitlets.observe("view")
    def _pack(self, change: Any) -> None:
        self.packed = pack(change["new"])

    @property
    def last_payload_bytes(self) -> int:
        """The bytes of the last view sent (``packed``)."""
        return len(self.packed)

    @property
    def last_view_json_bytes(self) -> int:
        """The size of the last view as plain JSON (what it would cost unpacked)."""
        return len(json.dumps(self.view, separators=(",", ":")))

    @traitlets.validate("lane_by")
    def _check_lane_by(self, proposal: Any) -> str:
        if proposal["value"] not in ("direction", "method"):
            raise traitlets.TraitError("lane_by must be 'direction' or 'method'")
        return proposal["value"]

    @traitlets.observe("window", "width", "lane_by", "max_items", "hidden", "collapsed")
    def _on_window(self, change: Any) -> None:
        if self._ready:
            self.refresh()

    def show_sessions(self, *names: str) -> Timeline:
        """Show only these sessions (by name; none: all of them), as the picker does."""
        known = self.prepared.sessions
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"no session {missing[0]!r}; the sessions: "
                             + ", ".join(repr(k) for k in known[:8]) + (" …" if len(known) > 8 else ""))
        self.hidden = [] if not names else [i for i, k in enumerate(known) if k not in names]
        return self

    def _static_text(self) -> str:
        v, p = self.view, self.prepared
        return (f"timeline of {p.n_frames:,} frames, {len(p.sessions):,} session(s), "
                f"{len(v.get('lanes', [])):,} lanes shown; {v.get('note', '')}")

    def _static_svg(self) -> str:
        # at least as wide as a page view (the first view is coarser than the page)
        return timeline_svg(self.view, width=max(802, self.width + 202))

    # -- selection ----------------------------------------------------------
    @traitlets.observe("selected_seq")
    def _on_selected(self, change: Any) -> None:
        seq = change["new"]
        if seq is None or len(self.window) != 2:
            return
        x = self.prepared.x_of_seq(seq)
        lo, hi = self.window
        if x is not None and not lo <= x <= hi:
            half = (hi - lo) / 2
            self.window = [x - half, x + half]

    def _axis_to_value(self, x: float) -> Any:
        p = self.prepared
        if p.axis == "time" and p.origin is not None:
            return p.origin + pd.to_timedelta(x, unit="s")
        return int(round(x))

    def _value_to_axis(self, v: Any) -> float:
        p = self.prepared
        if p.axis == "time" and p.origin is not None:
            ts = pd.Timestamp(v)
            ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts
            return float((ts - p.origin).total_seconds())
        return float(v)

    @traitlets.observe("brush")
    def _on_brush(self, change: Any) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            b = change["new"]
            self.selected_range = (None if len(b) != 2 else
                                   (self._axis_to_value(min(b)), self._axis_to_value(max(b))))
        finally:
            self._syncing = False

    @traitlets.observe("selected_range")
    def _on_range(self, change: Any) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            r = change["new"]
            self.brush = [] if r is None else sorted(self._value_to_axis(v) for v in r)
        finally:
            self._syncing = False

    def zoom(self, start: Any, end: Any) -> Timeline:
        """Show ``start`` to ``end``: timestamps (or strings pandas reads as one) on a time
        axis, frame numbers when the capture has no times. Returns the timeline, so a
        notebook cell can end with ``tl.zoom(a, b)`` to show it."""
        lo, hi = sorted((self._value_to_axis(start), self._value_to_axis(end)))
        if hi <= lo:
            raise ValueError("zoom needs an end after its start")
        self.window = [lo, hi]
        return self

    def range_mask(self) -> np.ndarray:
        """Boolean mask over ``trace.frames`` of the brushed range (all True when none).

        What the range shows: the frames whose time is inside it, and the request and
        response of every span drawn across it (a request in flight over the whole range
        has both frames outside it, yet the range shows it: counting frames by their own
        time alone said "0 of 60 frames" under a long ``initialize``).
        """
        p = self.prepared
        if len(self.brush) != 2:
            return np.ones(p.n_frames, dtype=bool)
        a, b = sorted(self.brush)
        mask = (p.frame_x >= a) & (p.frame_x <= b)
        across = (p.span_t0 <= b) & (p.span_t1 >= a)
        for seqs in (p.span_seq[across], p.span_rseq[across]):
            pos = positions(p.frame_seq, seqs[seqs >= 0])
            mask[pos[pos >= 0]] = True
        return mask

    def selected_frames(self) -> pd.DataFrame:
        """The frames of the brushed range (:meth:`range_mask`; all frames when nothing is
        brushed)."""
        return self._trace.frames.loc[self.range_mask()]


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def pack(view: dict) -> bytes:
    """A view as the page receives it: compact JSON (NaN and infinities as null, which
    JSON has no other word for), zlib-compressed."""
    try:
        text = json.dumps(view, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(view), separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"), 6)  # 9 is no smaller here, and 4x slower


def unpack(data: bytes) -> dict:
    """The view back from :func:`pack` (what the page does)."""
    return json.loads(zlib.decompress(data).decode("utf-8")) if data else {}


def timeline(trace: Any, *, lane_by: str = "direction") -> Timeline:
    """Show a trace as a zoomable timeline.

    Parameters
    ----------
    trace
        A loaded trace (``mn.load(...)``).
    lane_by
        ``"direction"`` (lanes per session and side) or ``"method"``.
    """
    return Timeline(trace, lane_by=lane_by)
