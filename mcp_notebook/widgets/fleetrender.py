"""Pure renderers for the view of a collection: the sessions table and latency histograms.

Everything here takes the collection's pandas tables and returns plain strings (table
rows as text for the widget, HTML and SVG for the static fallback), so it is testable
without a kernel. A capture is untrusted input: every name passes through :func:`esc`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..collection import bucket_labels
from .frametable import fmt_latency
from .render import STYLE, esc

__all__ = ["TABLE", "fmt_duration", "fmt_bound", "sort_order", "session_rows",
           "histogram_svg", "histograms_html", "sessions_html", "fleet_html", "fleet_text",
           "session_query"]

#: the sessions table as shown: (heading, column of ``c.sessions``)
TABLE: list[tuple[str, str]] = [
    ("capture", "capture"), ("session", "session"), ("client", "client_name"),
    ("server", "server_name"), ("version", "server_version"),
    ("protocol", "protocol_version"), ("transport", "transport"), ("start", "start"),
    ("duration", "duration"), ("frames", "frames"), ("requests", "requests"),
    ("errors", "errors"), ("tool errors", "tool_errors"), ("unanswered", "unanswered"),
    ("viol. error", "violations_error"), ("viol. warning", "violations_warning"),
    ("viol. info", "violations_info"),
]
_NUMERIC = {"duration", "frames", "requests", "errors", "tool_errors", "unanswered",
            "violations_error", "violations_warning", "violations_info"}


def fmt_duration(td: Any) -> str:
    """A duration as short text: ``340 ms``, ``1.25 s``, ``2 min 5 s``, ``''`` if unknown."""
    if td is None or pd.isna(td):
        return ""
    s = pd.Timedelta(td).total_seconds()
    if s < 60:
        return fmt_latency(td)
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60)} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60)} min"


def fmt_bound(label: str) -> str:
    """An OpenTelemetry bucket bound (seconds, as ``latency_histograms`` names its
    columns) in readable units: ``"0.01"`` -> ``10 ms``, ``"120"`` -> ``2 min``."""
    if label == "+Inf":
        return "∞"
    s = float(label)
    if s < 1:
        return f"{s * 1e3:g} ms"
    if s < 60:
        return f"{s:g} s"
    return f"{s / 60:g} min"


def _cell(col: str, v: Any) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if col == "duration":
        return fmt_duration(v)
    if col == "start":
        return pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S")
    if col in _NUMERIC:
        return f"{int(v):,}"
    return str(v)


def sort_order(sessions: pd.DataFrame, by: str | None = None, ascending: bool = True
               ) -> list[int]:
    """Row positions of ``sessions`` sorted by the column ``by`` (its values, not their
    text; missing values last), stable; the table's own order when ``by`` is None."""
    if by is None or by not in sessions.columns:
        return list(range(len(sessions)))
    key = sessions[by].reset_index(drop=True)
    if key.dtype == object:
        key = key.map(lambda v: None if v is None else str(v))
    return list(key.sort_values(ascending=ascending, kind="stable", na_position="last").index)


def session_rows(sessions: pd.DataFrame, order: Sequence[int] | None = None) -> list[list[str]]:
    """The sessions table as rows of text, one per session in ``order``; each row starts
    with the session's position in ``sessions`` (the widget sends it back on a click),
    then one cell per :data:`TABLE` column."""
    order = range(len(sessions)) if order is None else order
    cols = [c for _, c in TABLE]
    out = []
    for i in order:
        rec = sessions.iloc[int(i)]
        out.append([str(int(i))] + [_cell(c, rec[c]) for c in cols])
    return out


def histogram_svg(counts: Sequence[int], labels: Sequence[str] | None = None, *,
                  title: str = "", width: int = 300, height: int = 120) -> str:
    """One histogram over the OpenTelemetry buckets as SVG text.

    Parameters
    ----------
    counts
        Requests per bucket, in the order of ``labels``.
    labels
        The buckets' upper bounds as ``latency_histograms`` names them (``"0.01"`` ...
        ``"+Inf"``); the OTel buckets by default.
    title
        Shown above the bars (escaped).

    Each bar is a ``rect`` with ``data-count`` (its requests) and ``data-le`` (its
    bound), and a ``title`` tooltip; the x axis is labelled in ms, s and min.
    """
    labels = list(bucket_labels() if labels is None else labels)
    counts = [int(n) for n in counts]
    if len(counts) != len(labels):
        raise ValueError("one count per bucket is needed")
    left, right, top, bottom = 28, 6, 16, 30
    pw, ph = width - left - right, height - top - bottom
    bw = pw / max(len(counts), 1)
    peak = max(counts, default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mnfl-hist" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{esc(title)} latency histogram">',
             f'<text x="{left}" y="11" font-size="11" font-weight="600" '
             f'fill="currentColor">{esc(title)}</text>']
    prev = "0"
    for i, (n, le) in enumerate(zip(counts, labels, strict=True)):
        h = ph * n / peak
        x = left + i * bw
        tip = (f"> {fmt_bound(prev)}: {n:,}" if le == "+Inf" else
               f"{fmt_bound(prev) if i else '0'} – {fmt_bound(le)}: {n:,}")
        parts.append(f'<rect x="{x + 1:.1f}" y="{top + ph - h:.1f}" width="{bw - 2:.1f}" '
                     f'height="{h:.1f}" fill="#4f7ea8" data-count="{n}" data-le="{esc(le)}">'
                     f'<title>{esc(tip)}</title></rect>')
        prev = le
    base = top + ph
    parts.append(f'<line x1="{left}" y1="{base}" x2="{left + pw}" y2="{base}" '
                 'stroke="currentColor" stroke-opacity="0.4"/>')
    parts.append(f'<text x="{left - 3}" y="{top + 8}" font-size="9" text-anchor="end" '
                 f'fill="currentColor">{peak:,}</text>')
    parts.append(f'<text x="{left - 3}" y="{base}" font-size="9" text-anchor="end" '
                 'fill="currentColor">0</text>')
    for i, le in enumerate(labels):
        # every other bound, and the overflow bucket (clear of the last ones)
        if (i % 2 == 0 and i < len(labels) - 3) or le == "+Inf":
            x = left + (i + 1) * bw
            text = "> " + fmt_bound(labels[i - 1]) if le == "+Inf" else fmt_bound(le)
            anchor = "end" if le == "+Inf" else "middle"
            parts.append(f'<text x="{x:.1f}" y="{base + 11}" font-size="8.5" '
                         f'text-anchor="{anchor}" fill="currentColor" '
                         f'fill-opacity="0.75">{esc(text)}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 3}" font-size="9" '
                 'text-anchor="middle" fill="currentColor" fill-opacity="0.75">'
                 'latency (upper bound of bucket)</text></svg>')
    return "".join(parts)


def histograms_html(hist: pd.DataFrame, limit: int = 24) -> str:
    """Small multiples: one :func:`histogram_svg` per row of ``c.latency_histograms()``,
    titled by the group (method) with its count and mean."""
    if hist is None or len(hist) == 0:
        return '<div class="mnw mnw-muted">no answered requests</div>'
    labels = bucket_labels()
    cells = []
    for name, rec in hist.head(limit).iterrows():
        n = int(rec["count"])
        mean = fmt_latency(pd.Timedelta(seconds=float(rec["sum_s"]) / n)) if n else ""
        title = f"{name} · {n:,} · mean {mean}" if mean else f"{name} · {n:,}"
        svg = histogram_svg([rec[b] for b in labels], labels, title=title)
        cells.append(f'<div class="mnfl-cell" data-group="{esc(name)}">{svg}</div>')
    more = (f'<div class="mnw-muted">… {len(hist) - limit} more</div>'
            if len(hist) > limit else "")
    return ('<div class="mnw mnfl-grid" style="display:flex;flex-wrap:wrap;gap:6px 14px;'
            f'color:var(--jp-ui-font-color1,#2b2f33)">{"".join(cells)}</div>{more}')


def sessions_html(sessions: pd.DataFrame, limit: int = 50) -> str:
    """The sessions table as static HTML (the first ``limit`` rows)."""
    def align(c: str) -> str:  # inline too: an exported page's own CSS aligns cells right
        return ('class="mnw-r" style="text-align:right"' if c in _NUMERIC else
                'style="text-align:left"')

    head = "".join(f"<th {align(c)}>{esc(h)}</th>" for h, c in TABLE)
    body = []
    for row in session_rows(sessions, range(min(limit, len(sessions)))):
        cells = "".join(f"<td {align(c)}>{esc(v)}</td>"
                        for (_, c), v in zip(TABLE, row[1:], strict=True))
        body.append(f"<tr>{cells}</tr>")
    more = (f'<div class="mnw-muted">… {len(sessions) - limit:,} more sessions</div>'
            if len(sessions) > limit else "")
    return f'<table class="mnw-t mnfl-static"><tr>{head}</tr>{"".join(body)}</table>{more}'


def _headline(c: Any) -> str:
    s = c.sessions
    return (f"{len(c):,} capture(s), {len(s):,} session(s), {int(s['requests'].sum()):,} "
            f"requests, {int(s['errors'].sum()):,} errors, "
            f"{int(s['tool_errors'].sum()):,} tool errors, violations "
            f"{int(s['violations_error'].sum()):,} error / "
            f"{int(s['violations_warning'].sum()):,} warning / "
            f"{int(s['violations_info'].sum()):,} info, {len(c.skipped):,} skipped")


def fleet_text(c: Any) -> str:
    """The ``text/plain`` summary of a collection."""
    return f"<Collection {_headline(c)}>"


def fleet_html(c: Any, limit: int = 50) -> str:
    """A collection as one static picture: the headline, the sessions table and the
    latency histograms per method (what nbconvert keeps in an HTML export)."""
    return (f'{STYLE}<div class="mnw mnfl"><div class="mnw-h">{esc(_headline(c))}</div>'
            f'{sessions_html(c.sessions, limit)}'
            '<div class="mnw-h" style="margin-top:8px">latency by method '
            '<span class="mnw-sub">(OpenTelemetry MCP duration buckets)</span></div>'
            f'{histograms_html(c.latency_histograms("method"))}</div>')


def session_query(session: Any) -> str:
    """The inspector filter that keeps one session's frames ('' for no session id)."""
    if session is None or (not isinstance(session, str) and pd.isna(session)):
        return ""
    text = str(session).replace("\\", "\\\\").replace('"', '\\"')
    return f'session:"{text}"'
