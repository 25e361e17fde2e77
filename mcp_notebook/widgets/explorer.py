"""The explorer: a summary strip, the timeline, the inspector, the violations list and the
latency histograms, linked both ways.

A big trace (more than :data:`DEFER_ABOVE` frames) is drawn in two steps: the cell's output
shows the counts, the timeline, the table and the violations at once, and the latency
percentiles and histograms say "computing…" until the kernel, right after the cell, has
computed them and pushed them to the page (one step at a time, so a click in between is
answered in between). :meth:`Explorer.finish` computes them at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import traitlets

from .histogram import LatencyHistograms
from .inspector import Inspector
from .render import STYLE, latency_table_html, summary_html
from .snapshot import StaticFallback
from .timeline import Timeline
from .violations import ViolationsList

__all__ = ["Explorer", "explore", "DEFER_ABOVE", "START_AFTER"]

#: above this many frames the latency percentiles and histograms come after the first paint
DEFER_ABOVE = 200_000
#: the deferred steps start when the page reports its timeline's width (it has drawn the
#: first screen), or this many seconds after the cell when it does not (no page, or the
#: width the page has is the one it was sent)
START_AFTER = 1.0
_PENDING_LATENCY = ('<div class="mnw-muted mn-pending">computing the latency percentiles '
                    "…</div>")


def _after_cell(step: Callable[[], None], delay: float = 0.01) -> bool:
    """Run ``step`` on the kernel's event loop once the running cell has finished (and its
    output has gone to the page), ``delay`` seconds later; False when there is no loop to run
    it later."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    loop.call_later(delay, step)
    return True


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
                 defer: bool | None = None, **kwargs: Any) -> None:
        self.trace = trace
        defer = len(trace.frames) > DEFER_ABOVE if defer is None else defer
        self._summary = trace.summary()
        self.summary = W.HTML(self._summary_html(None if defer else self._latency()))
        self.timeline = Timeline(trace, lane_by=lane_by)
        self.inspector = Inspector(trace, query=query)
        self.violations = ViolationsList(trace.violations)
        self.histograms = LatencyHistograms(trace.pairs, defer=defer)
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
        #: what is left to compute after the first paint, in order
        self._steps: list[Callable[[], None]] = (
            [self._fill_latency, self.histograms.compute] if defer else [])
        if self._steps:
            self.add_class("mn-computing")  # the page (and the benchmark) can tell
            self._started = False
            # the page's first message (its width) says it has drawn the first screen: the
            # steps then run without competing with it, and without a page they start anyway
            self.timeline.observe(self._start, "width")
            if not _after_cell(self._start, START_AFTER):
                self.finish()

    @property
    def pending(self) -> bool:
        """True while parts of the explorer are still being computed (they say so)."""
        return bool(self._steps)

    def finish(self) -> Explorer:
        """Compute now whatever the explorer left for after its first paint; returns it."""
        while self._steps:
            self._run_step()
        return self

    def _run_step(self) -> None:
        step = self._steps.pop(0)
        try:
            step()
        finally:
            if not self._steps:
                self.remove_class("mn-computing")

    def _start(self, _: Any = None) -> None:
        if self._started:
            return
        self._started = True
        self.timeline.unobserve(self._start, "width")
        self._next_step()

    def _next_step(self) -> None:
        if self._steps:
            self._run_step()
        if self._steps and not _after_cell(self._next_step):
            self.finish()

    def _latency(self) -> Any:
        try:
            return self.trace.latency_by_method()
        except Exception:  # noqa: BLE001 - a summary must not stop the view
            return None

    def _summary_html(self, latency: Any, pending: bool | None = None) -> str:
        # the style sheet travels once, with the inspector (a <style> holds for the page)
        html = summary_html(self._summary, latency).replace(STYLE, "", 1)
        if latency is None and pending is not False:
            html = html.replace(latency_table_html(None), _PENDING_LATENCY, 1)
        return html

    def _fill_latency(self) -> None:
        self.summary.value = self._summary_html(self._latency(), pending=False)

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


def explore(trace: Any, *, lane_by: str = "direction", query: str = "",
            defer: bool | None = None) -> Explorer:
    """Summary, timeline and inspector of a trace, linked: select in one, see it in all.

    Parameters
    ----------
    trace
        A loaded trace (``mn.load(...)``).
    lane_by
        Timeline lanes: ``"direction"`` or ``"method"``.
    query
        A starting filter for the inspector.
    defer
        Compute the latency percentiles and histograms after the first paint (the default
        above :data:`DEFER_ABOVE` frames); ``ex.finish()`` computes them at once.
    """
    return Explorer(trace, lane_by=lane_by, query=query, defer=defer)
