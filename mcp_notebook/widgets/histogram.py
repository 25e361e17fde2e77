"""Per-method latency histograms linked to the table: a click on a bar filters to it.

The bars are the OpenTelemetry buckets of :func:`mcp_notebook.collection.latency_histograms`
drawn by :func:`~.fleetrender.histogram_svg` (an SVG built in Python, so it is also the
static picture). A click on a bar sets ``picked`` to ``{"method", "lo", "hi"}`` (bounds in
seconds, ``hi`` empty for the overflow bucket) and ``query`` to the filter that keeps those
requests and their responses, e.g. ``method:tools/call latency>10ms latency<=20ms``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import pandas as pd
import traitlets

from ..collection import bucket_labels, latency_histograms
from .fleetrender import histogram_svg
from .render import esc
from .snapshot import StaticFallback

__all__ = ["LatencyHistograms", "histograms_svg", "bucket_query", "PENDING"]

_STATIC = Path(__file__).parent / "static"
#: what a deferred histogram widget shows until its bars are drawn
PENDING = '<div class="mnh-none mnh-pending">computing the latency histograms…</div>'


def _ms(seconds: str) -> str:
    return f"{float(seconds) * 1000:g}ms"


def bucket_query(method: str, lo: str, hi: str) -> str:
    """The filter text for one bar: ``method:<m> latency>lo latency<=hi`` (OTel buckets
    hold ``(lo, hi]``)."""
    m = f'"{method}"' if (" " in method or '"' in method or "," in method) else method
    parts = [f"method:{m}"]
    if lo and float(lo) > 0:
        parts.append(f"latency>{_ms(lo)}")
    if hi and hi != "+Inf":
        parts.append(f"latency<={_ms(hi)}")
    return " ".join(parts)


def histograms_svg(pairs: pd.DataFrame, limit: int = 12) -> str:
    """One histogram per method (the busiest ``limit``), as HTML holding SVG."""
    if pairs is None or not len(pairs) or not pairs["latency"].notna().any():
        return '<div class="mnh-none">no answered requests: no latencies to show</div>'
    h = latency_histograms(pairs)
    labels = bucket_labels()
    out = []
    for method, row in h.head(limit).iterrows():
        n = int(row["count"])
        title = f"{method} · {n:,} request{'' if n == 1 else 's'}"
        out.append(f'<div class="mnh-one" data-method="{esc(method)}">'
                   + histogram_svg([int(row[b]) for b in labels], labels, title=title,
                                   width=280, height=110) + "</div>")
    more = (f'<div class="mnh-more">{len(h) - limit:,} more methods not drawn</div>'
            if len(h) > limit else "")
    return '<div class="mnh-grid">' + "".join(out) + "</div>" + more


class LatencyHistograms(StaticFallback, anywidget.AnyWidget):
    """Latency histograms per method; clicking a bar sets ``query`` for the table."""

    _esm = _STATIC / "histogram.js"
    svg = traitlets.Unicode("").tag(sync=True)
    picked = traitlets.Dict().tag(sync=True)
    query = traitlets.Unicode("")

    def __init__(self, pairs: pd.DataFrame, *, limit: int = 12, defer: bool = False,
                 **kwargs: Any) -> None:
        self._pairs, self._limit = pairs, limit
        super().__init__(svg=PENDING if defer else histograms_svg(pairs, limit), **kwargs)

    @property
    def pending(self) -> bool:
        """True until the bars are drawn (a deferred widget shows "computing…" until then)."""
        return self.svg == PENDING

    def compute(self) -> None:
        """Draw the bars now (a widget made with ``defer=True`` waits for this call)."""
        if self.pending:
            self.svg = histograms_svg(self._pairs, self._limit)

    @traitlets.observe("picked")
    def _on_pick(self, change: Any) -> None:
        p = change["new"] or {}
        if isinstance(p.get("method"), str):
            self.query = bucket_query(p["method"], str(p.get("lo", "")), str(p.get("hi", "")))
