"""The explorer: a summary strip, the timeline, the inspector, the violations list and the
latency histograms, linked both ways."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import traitlets

from .histogram import LatencyHistograms
from .inspector import Inspector
from .render import summary_html
from .snapshot import StaticFallback
from .timeline import Timeline
from .violations import ViolationsList

__all__ = ["Explorer", "explore"]


class Explorer(StaticFallback, W.VBox):
    """Summary, timeline and inspector of one trace, sharing one selection.

    Traits
    ------
    selected_seq
        The selected frame everywhere: setting it (from Python, a click on the timeline,
        a row of the table or a jump button) selects it in every view, and the inspector
        shows the frame beside its pair.
    selected_range
        The time range brushed on the timeline (it filters the inspector's table).
    """

    selected_seq = traitlets.Int(None, allow_none=True)
    selected_range = traitlets.Any(None)

    def __init__(self, trace: Any, *, lane_by: str = "direction", query: str = "",
                 **kwargs: Any) -> None:
        self.trace = trace
        try:
            latency = trace.latency_by_method()
        except Exception:  # noqa: BLE001 - a summary must not stop the view
            latency = None
        self.summary = W.HTML(summary_html(trace.summary(), latency))
        self.timeline = Timeline(trace, lane_by=lane_by)
        self.inspector = Inspector(trace, query=query)
        self.violations = ViolationsList(trace.violations)
        self.histograms = LatencyHistograms(trace.pairs)
        traitlets.link((self.timeline, "selected_seq"), (self, "selected_seq"))
        traitlets.link((self.inspector, "selected_seq"), (self, "selected_seq"))
        traitlets.dlink((self, "selected_seq"), (self.violations, "selected_seq"))
        self.violations.observe(self._on_violation, "picked")
        self.histograms.observe(self._on_bar, "query")
        traitlets.dlink((self.timeline, "selected_range"), (self, "selected_range"))
        self.timeline.observe(self._on_range, "brush")
        lists = W.VBox([self.violations, self.histograms], layout=W.Layout(width="100%"))
        lists.add_class("mn-lists")
        super().__init__([self.summary, self.timeline, self.inspector, lists], **kwargs)
        self.add_class("mn-explorer")

    def _on_violation(self, change: Any) -> None:
        i = change["new"]
        items = self.violations.items
        if 0 <= i < len(items):
            # the finding's frame and, beside it, the frame the rule relates it to
            self.inspector.focus(items[i]["seq"], items[i]["related"], items[i])

    def _on_bar(self, change: Any) -> None:
        self.inspector.query = change["new"]

    def _on_range(self, change: Any) -> None:
        if len(change["new"]) != 2:
            self.inspector.set_range(None)
            return
        a, b = change["new"]
        if self.timeline.prepared.axis == "time":
            label = f"{_signed(a)} s … {_signed(b)} s"
        else:
            label = f"#{int(round(a))} … #{int(round(b))}"
        self.inspector.set_range(self.timeline.range_mask(), label)


def _signed(x: float) -> str:
    return f"{'−' if x < 0 else '+'}{abs(x):.3f}"


def explore(trace: Any, *, lane_by: str = "direction", query: str = "") -> Explorer:
    """Summary, timeline and inspector of a trace, linked: select in one, see it in all.

    Parameters
    ----------
    trace
        A loaded trace (``mn.load(...)``).
    lane_by
        Timeline lanes: ``"direction"`` or ``"method"``.
    query
        A starting filter for the inspector.
    """
    return Explorer(trace, lane_by=lane_by, query=query)
