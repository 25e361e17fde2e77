"""Pure HTML renderers for the inspector and the explorer's summary strip.

Everything that comes from a trace passes through :func:`esc` (``html.escape`` with
quotes): a capture is untrusted input, and these strings end up as HTML widget values.
Nothing here executes or links anything; collapsing uses ``<details>``, no script.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any, NamedTuple

import pandas as pd

from .frametable import fmt_latency

__all__ = ["STYLE", "Mark", "esc", "json_tree_html", "frame_html", "violations_html",
           "summary_html", "latency_table_html", "parse_pointer"]

STYLE = """<style>
.mnw{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:12px;
 color:var(--jp-ui-font-color1,#2b2f33);line-height:1.45}
.mnw-h{font-weight:600;font-size:12.5px;margin:0 0 4px}
.mnw-sub{color:var(--jp-ui-font-color2,#6b7177);font-weight:400}
.mnw-badge{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;margin-right:4px;
 background:#eef1f4;color:#36414d}
.mnw-k-request{background:#e4edf6;color:#23415c}.mnw-k-notification{background:#e1f0ee;color:#22524c}
.mnw-k-result{background:#e6f0e6;color:#2e5530}.mnw-k-error{background:#f8e4e2;color:#7a2b26}
.mnw-k-invalid{background:#f1e3ea;color:#6b2a48}.mnw-k-stderr,.mnw-k-log{background:#f2efe7;color:#5d5238}
.mnw-o-error{background:#f8e4e2;color:#7a2b26}.mnw-o-tool_error{background:#fbf0dc;color:#6e4a08}
.mnw-o-unanswered{background:#ededee;color:#4b4f55}.mnw-o-cancelled{background:#eee8f7;color:#4a3a6b}
.mnw-o-orphan,.mnw-o-duplicate{background:#f7e6e0;color:#6e3423}
.mnw-tree{font-family:var(--jp-code-font-family,ui-monospace,Menlo,Consolas,monospace);
 font-size:11.5px;max-height:420px;overflow:auto;background:var(--jp-layout-color1,#fafbfc);
 border:1px solid var(--jp-border-color2,#e3e6ea);border-radius:4px;padding:6px 8px}
.mnw-tree details{margin-left:14px}.mnw-tree>details{margin-left:0}
.mnw-tree summary{cursor:pointer;color:var(--jp-ui-font-color2,#6b7177)}
.mnw-row{margin-left:14px;white-space:pre-wrap;word-break:break-word}
.mnw-key{color:#6b4f8a}.mnw-str{color:#2e6b3a}.mnw-num{color:#1f5f99}.mnw-lit{color:#8a3b6b}
.mnw-more{color:#8a5a00;font-style:italic}
.mnw-mark{--mnw-m:var(--jp-warn-color1,#f57c00);border-radius:2px;outline:1px solid var(--mnw-m);
 background:color-mix(in srgb,var(--mnw-m) 16%,transparent)}
.mnw-mark-error{--mnw-m:var(--jp-error-color1,#d32f2f)}
.mnw-mark-info{--mnw-m:var(--jp-info-color1,#0288d1)}
.mnw-mark-picked{outline-width:2px;background:color-mix(in srgb,var(--mnw-m) 24%,transparent)}
.mnw-mark,.mnw-mark .mnw-key{color:var(--jp-content-font-color0,#000)}
.mnw-marks{margin:2px 0 4px;color:var(--jp-ui-font-color1,#2b2f33)}
.mnw-marks .mnw-mark{padding:0 4px}
.mnw-hit{background:var(--jp-search-selected-match-background-color,#ffd54f);color:var(--jp-search-selected-match-color,#000);border-radius:2px}
.mnw-raw{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:11.5px;
 white-space:pre-wrap;word-break:break-all;max-height:300px;overflow:auto;margin:0;
 background:var(--jp-layout-color1,#fafbfc);border:1px solid var(--jp-border-color2,#e3e6ea);
 border-radius:4px;padding:6px 8px}
.mnw-viol{--mnw-v:var(--jp-error-color1,#c0392b);border-left:3px solid var(--mnw-v);
 padding:2px 8px;margin:4px 0;background:color-mix(in srgb,var(--mnw-v) 8%,transparent)}
.mnw-viol.mnw-warning{--mnw-v:var(--jp-warn-color1,#e08e0b)}
.mnw-viol.mnw-info{--mnw-v:var(--jp-border-color1,#7f8c8d)}
.mnw-spec{color:var(--jp-ui-font-color2,#5b6167);font-style:italic;margin-top:2px}
.mnw-strip{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:flex-start}
.mnw-count{display:inline-flex;flex-direction:column;align-items:flex-start;min-width:52px}
.mnw-count b{font-size:16px;font-weight:600;font-variant-numeric:tabular-nums}
.mnw-count span{color:var(--jp-ui-font-color2,#6b7177);font-size:11px}
.mnw-count.mnw-bad b{color:#b03a2e}
table.mnw-t{border-collapse:collapse;font-size:11.5px;font-variant-numeric:tabular-nums}
table.mnw-t th{text-align:left;font-weight:600;color:var(--jp-ui-font-color2,#6b7177);
 border-bottom:1px solid var(--jp-border-color2,#e3e6ea);padding:2px 10px 2px 0}
table.mnw-t td{padding:1px 10px 1px 0;white-space:nowrap}
table.mnw-t td.mnw-r,table.mnw-t th.mnw-r{text-align:right}
.mnw-muted{color:var(--jp-ui-font-color2,#8a9096)}
.mn-inspector .widget-hbox{gap:6px 10px;flex-wrap:wrap}
.mn-inspector .widget-hbox.mn-detail{flex-wrap:nowrap;margin-top:6px}
.mn-inspector .mnw code{font-size:11px;background:var(--jp-layout-color2,#f3f4f6);
 padding:1px 4px;border-radius:3px;word-break:break-word}
</style>"""


def esc(value: Any) -> str:
    """Text made safe for an HTML widget: ``&<>"'`` escaped."""
    return html.escape("" if value is None else str(value), quote=True)


class _Budget:
    def __init__(self, nodes: int) -> None:
        self.left = nodes


class Mark(NamedTuple):
    """A finding to mark in a frame's tree: the JSON pointer of its member (RFC 6901), its
    severity, the text of its tooltip, whether it is the finding picked in a list, and a
    short line naming it above the tree (the tooltip's text when empty)."""

    pointer: str
    severity: str
    text: str
    picked: bool = False
    label: str = ""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """``"/params/arguments/a"`` -> ``("params", "arguments", "a")`` (``~1`` is ``/``, ``~0``
    is ``~``); ``""`` is the whole value."""
    if not pointer:
        return ()
    parts = pointer[1:].split("/") if pointer.startswith("/") else pointer.split("/")
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in parts)


def _resolve(value: Any, path: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The deepest member of ``value`` on ``path`` that exists, and what of the path is
    missing below it ("" when the whole path exists)."""
    here = value
    for i, key in enumerate(path):
        if isinstance(here, dict) and key in here:
            here = here[key]
        elif isinstance(here, list) and key.isdigit() and int(key) < len(here):
            here = here[int(key)]
        else:
            return path[:i], "/".join(path[i:])
    return path, ""


def _marks_by_path(value: Any, marks: Iterable[Mark]) -> dict[tuple[str, ...], list[Mark]]:
    out: dict[tuple[str, ...], list[Mark]] = {}
    for m in marks:
        path, missing = _resolve(value, parse_pointer(m.pointer))
        text = m.text + (f" (no member {missing} here)" if missing else "")
        out.setdefault(path, []).append(m._replace(text=text))
    return out


def _mark_attrs(marks: list[Mark] | None) -> tuple[str, str]:
    """The extra classes and the title attribute of a marked node."""
    if not marks:
        return "", ""
    worst = min((m.severity for m in marks), key=lambda s: {"error": 0, "warning": 1}.get(s, 2))
    cls = f" mnw-mark mnw-mark-{esc(worst)}" + (" mnw-mark-picked" if any(m.picked for m in marks)
                                               else "")
    title = "\n".join(m.text for m in marks)
    return cls, f' title="{esc(title)}" data-pointer="{esc(marks[0].pointer)}"'


def _leaf(value: Any, max_str: int) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > max_str:
            more = len(text) - max_str
            return (f'<span class="mnw-str">{esc(text[:max_str])}</span>'
                    f'<span class="mnw-more"> … {more:,} more characters</span>')
        return f'<span class="mnw-str">{esc(text)}</span>'
    if isinstance(value, bool) or value is None:
        return f'<span class="mnw-lit">{esc(json.dumps(value))}</span>'
    if isinstance(value, (int, float)):
        return f'<span class="mnw-num">{esc(value)}</span>'
    return f'<span class="mnw-str">{esc(repr(value))}</span>'


class _Tree(NamedTuple):
    open_depth: int
    max_items: int
    max_str: int
    max_depth: int
    budget: _Budget
    marks: dict[tuple[str, ...], list[Mark]]
    opens: set[tuple[str, ...]]  # the containers on the way to a mark: open


def _node(key: str | None, value: Any, depth: int, tree: _Tree,
          path: tuple[str, ...] = ()) -> str:
    label = "" if key is None else f'<span class="mnw-key">{esc(key)}</span>: '
    tree.budget.left -= 1
    cls, title = _mark_attrs(tree.marks.get(path))
    if not isinstance(value, (dict, list)):
        return f'<div class="mnw-row{cls}"{title}>{label}{_leaf(value, tree.max_str)}</div>'
    is_dict = isinstance(value, dict)
    n = len(value)
    shape = f"{{ {n} key{'s' if n != 1 else ''} }}" if is_dict else f"[ {n} item{'s' if n != 1 else ''} ]"
    if n == 0:
        return (f'<div class="mnw-row{cls}"{title}>{label}<span class="mnw-lit">'
                f'{"{}" if is_dict else "[]"}</span></div>')
    if depth >= tree.max_depth or tree.budget.left <= 0:
        return (f'<div class="mnw-row{cls}"{title}>{label}<span class="mnw-more">{esc(shape)} … '
                f'(not expanded: too deep or too large)</span></div>')
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    shown = items[:tree.max_items]
    kids = "".join(_node(str(k), v, depth + 1, tree, (*path, str(k))) for k, v in shown)
    if len(items) > len(shown):
        kids += f'<div class="mnw-row mnw-more">… {len(items) - len(shown):,} more</div>'
    opened = " open" if depth < tree.open_depth or path in tree.opens else ""
    summary = f'<summary class="{cls.strip()}"{title}>' if cls else "<summary>"
    return f'<details{opened}>{summary}{label}{esc(shape)}</summary>{kids}</details>'


def json_tree_html(value: Any, open_depth: int = 3, max_items: int = 200, max_str: int = 2000,
                   max_depth: int = 30, max_nodes: int = 4000,
                   marks: Iterable[Mark] = ()) -> str:
    """A decoded JSON value as a collapsible, fully escaped tree.

    Containers deeper than ``open_depth`` start collapsed; long strings, long lists,
    deep nesting and huge values are cut with a visible note. Each of ``marks`` (a
    finding's JSON pointer) marks its member, with the finding as its tooltip, and opens
    the containers on the way to it; a pointer to a member the value lacks marks the
    deepest one it has.
    """
    by_path = _marks_by_path(value, marks)
    opens = {p[:i] for p in by_path for i in range(len(p) + 1)}
    tree = _Tree(open_depth, max_items, max_str, max_depth, _Budget(max_nodes), by_path, opens)
    return '<div class="mnw-tree">' + _node(None, value, 0, tree) + "</div>"


def _badge(text: str, cls: str = "") -> str:
    return f'<span class="mnw-badge {esc(cls)}">{esc(text)}</span>' if text else ""


def frame_html(row: dict[str, Any] | None, message: Any, raw: str | None, title: str,
               max_raw: int = 20000, context: dict[str, Any] | None = None,
               marks: Iterable[Mark] = ()) -> str:
    """One frame: a heading with its facts, then its JSON tree (or its raw text).

    ``context`` is what the reader kept beside the frame (``Trace.extra``): its HTTP
    status is shown with the facts. ``marks`` are findings marked in the tree, each also
    named (pointer and text) above it.
    """
    if row is None:
        return (f'<div class="mnw"><div class="mnw-h">{esc(title)}</div>'
                '<div class="mnw-muted">none</div></div>')
    facts = [f"#{row.get('seq')}"]
    for key in ("direction", "session", "source"):
        v = row.get(key)
        if v is not None and not (isinstance(v, float) and pd.isna(v)) and str(v) not in ("", "nan"):
            facts.append(str(v))
    if context and context.get("status") is not None:
        facts.append(f"HTTP {context['status']}")
    lat = fmt_latency(row.get("latency"))
    head = (f'<div class="mnw-h">{esc(title)} '
            + _badge(str(row.get("kind") or ""), f"mnw-k-{row.get('kind')}")
            + (_badge(str(row.get("method")), "") if _present(row.get("method")) else "")
            + (_badge(str(row.get("outcome")).replace("_", " "), f"mnw-o-{row.get('outcome')}")
               if _present(row.get("outcome")) else "")
            + (_badge(lat) if lat else "")
            + f'<span class="mnw-sub">{esc(" · ".join(facts))}</span></div>')
    marks = list(marks)
    if message is not None:
        body = json_tree_html(message, marks=marks)
        if marks:
            body = "".join(
                f'<div class="mnw-marks"><span class="{_mark_attrs([m])[0].strip()}">'
                f"<code>{esc(m.pointer or '/')}</code></span> {esc(m.label or m.text)}</div>"
                for m in marks) + body
    else:
        text = raw or ""
        cut = len(text) - max_raw
        body = (f'<pre class="mnw-raw">{esc(text[:max_raw])}</pre>'
                + (f'<div class="mnw-more">… {cut:,} more characters</div>' if cut > 0 else ""))
    return f'<div class="mnw">{head}{body}</div>'


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and pd.isna(v)) and str(v) not in ("",
                                                                                          "nan")


def violations_html(rows: Iterable[dict[str, Any]]) -> str:
    """The violations on a frame, each with its rule, message and the spec sentence."""
    parts = []
    for v in rows:
        sev = str(v.get("severity") or "info")
        parts.append(
            f'<div class="mnw-viol mnw-{esc(sev)}"><b>{esc(sev)}</b> '
            f'<code>{esc(v.get("rule"))}</code> — {esc(v.get("message"))}'
            + (f'<div class="mnw-spec">{esc(v.get("spec"))}</div>' if _present(v.get("spec"))
               else "") + "</div>")
    if not parts:
        return '<div class="mnw mnw-muted">no violations on this frame</div>'
    return '<div class="mnw">' + "".join(parts) + "</div>"


def _heading(col: str) -> str:
    """``p50_ms`` -> ``p50``, ``error_rate`` -> ``error rate``, ``tool_errors`` -> ``tool errors``."""
    return col[:-3] if col.endswith("_ms") else col.replace("_", " ")


def fmt_ms(ms: float) -> str:
    """Milliseconds as short text with their unit: ``850 µs``, ``2.9 ms``, ``13.3 s``, ``4 min``."""
    if ms is None or pd.isna(ms):
        return ""
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    if ms < 1000:
        return f"{ms:.3g} ms"
    if ms < 120_000:
        return f"{ms / 1000:.3g} s"
    return f"{ms / 60_000:.3g} min"


def fmt_rate(r: float) -> str:
    """A rate as a rounded percentage: ``0``, ``<0.1 %``, ``1.2 %``, ``33 %``."""
    if r is None or pd.isna(r):
        return ""
    if r == 0:
        return "0"
    pct = 100 * r
    return "<0.1 %" if pct < 0.1 else f"{pct:.2g} %" if pct < 10 else f"{pct:.0f} %"


def latency_table_html(lat: pd.DataFrame | None, limit: int = 12) -> str:
    """Latency percentiles per method (whatever columns ``latency_by_method()`` gives),
    with units in the cells (``_ms`` columns as ms/s/min) and rates as percentages."""
    if lat is None or len(lat) == 0:
        return '<div class="mnw-muted">no answered requests</div>'
    df = lat.reset_index() if lat.index.name or not isinstance(lat.index, pd.RangeIndex) else lat
    df = df.head(limit)
    cols = [str(c) for c in df.columns]
    head = "".join(f'<th class="{"" if i == 0 else "mnw-r"}">{esc(_heading(c))}</th>'
                   for i, c in enumerate(cols))
    body = []
    for rec in df.itertuples(index=False):
        cells = []
        for i, v in enumerate(rec):
            col = cols[i]
            if isinstance(v, pd.Timedelta) or (hasattr(v, "dtype") and "timedelta" in str(
                    getattr(v, "dtype", ""))):
                text = fmt_latency(v)
            elif col.endswith("_ms") and isinstance(v, (int, float)):
                text = fmt_ms(float(v))
            elif col.endswith("rate") and isinstance(v, (int, float)):
                text = fmt_rate(float(v))
            elif isinstance(v, float):
                text = "" if pd.isna(v) else f"{v:,.0f}" if float(v).is_integer() or abs(v) >= 100 \
                    else f"{v:,.3g}"
            else:
                text = "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)
            cells.append(f'<td class="{"" if i == 0 else "mnw-r"}">{esc(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<div class="mnw-muted">… {len(lat) - limit} more methods</div>'
            if len(lat) > limit else "")
    return f'<table class="mnw-t"><tr>{head}</tr>{"".join(body)}</table>{more}'


_COUNTS = [("frames", "frames", False), ("requests", "requests", False),
           ("notifications", "notifications", False), ("results", "results", False),
           ("errors", "errors", True), ("tool_errors", "tool errors", True),
           ("unanswered", "unanswered", True), ("cancelled", "cancelled", False),
           ("orphans", "orphans", True), ("duplicates", "duplicates", True)]


def _total(v: Any) -> int:
    if isinstance(v, dict):
        for k in ("total", "all"):
            if k in v:
                return int(v[k])
        sev = v.get("by_severity") or v.get("severity")
        if isinstance(sev, dict):
            return int(sum(int(x) for x in sev.values()))
        return int(sum(int(x) for x in v.values() if isinstance(x, (int, float))))
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def summary_html(summary: dict[str, Any], latency: pd.DataFrame | None = None) -> str:
    """The explorer's summary strip: counts, latency percentiles per method, error codes."""
    counts = []
    for key, label, bad in _COUNTS:
        if key not in summary:
            continue
        n = _total(summary[key])
        cls = " mnw-bad" if bad and n else ""
        counts.append(f'<span class="mnw-count{cls}"><b>{n:,}</b><span>{esc(label)}</span></span>')
    nviol = _total(summary.get("violations", 0))
    counts.append(f'<span class="mnw-count{" mnw-bad" if nviol else ""}"><b>{nviol:,}</b>'
                  '<span>violations</span></span>')
    version = summary.get("protocol_version")
    meta = (f'<div class="mnw-muted">protocol {esc(version)} · {esc(summary.get("sessions", ""))}'
            ' session(s)</div>') if version else ""
    codes = summary.get("error_codes") or {}
    if isinstance(codes, dict) and codes:
        rows = "".join(f"<tr><td>{esc(c)}</td><td class='mnw-r'>{esc(n)}</td></tr>"
                       for c, n in list(codes.items())[:10])
        code_html = f'<table class="mnw-t"><tr><th>error code</th><th class="mnw-r">n</th></tr>{rows}</table>'
    else:
        code_html = '<div class="mnw-muted">no error codes</div>'
    return (f'{STYLE}<div class="mnw"><div class="mnw-strip">{"".join(counts)}</div>{meta}'
            '<div class="mnw-strip" style="margin-top:6px;gap:24px">'
            f'<div><div class="mnw-h">latency by method</div>{latency_table_html(latency)}</div>'
            f'<div><div class="mnw-h">error codes</div>{code_html}</div></div></div>')
