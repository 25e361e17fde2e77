"""The timeline's static picture: the current view payload drawn as SVG.

Pure: takes what :func:`.aggregate.view` sends the browser (items or bins, already cut
to the window and bounded in size) and draws lanes, spans, ticks, violation markers, the
in-flight strip, a readable axis and a legend of what is on screen. It is what nbconvert
HTML, GitHub and nbviewer show where the live timeline was.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from .units import fmt_count, fmt_offset

__all__ = ["timeline_svg", "OUTCOME_COLOR", "TICK_COLOR", "SEV_COLOR"]

OUTCOME_COLOR = {"result": "#79a6c9", "error": "#d36b66", "tool_error": "#e2a542",
                 "unanswered": "#a9adb3", "cancelled": "#a891cf"}
OUTCOME_LABEL = {"result": "result", "error": "error", "tool_error": "tool error (isError)",
                 "unanswered": "unanswered", "cancelled": "cancelled"}
TICK_COLOR = {"notification": "#3e8e85", "stderr": "#9c8a68", "log": "#b9ae92",
              "invalid": "#8e3b5f", "orphan": "#d2785a", "duplicate": "#c45f8a"}
SEV_COLOR = {"error": "#c0392b", "warning": "#e08e0b", "info": "#7f8c8d"}
LABEL_W, AXIS_H, LANE_H, STRIP_H = 190, 24, 30, 40
STATIC_BINS = 240  # the most bins per lane in a picture


def _x(s: object) -> str:
    return escape(str(s), {'"': "&quot;"})


def _step(span: float, target: float) -> float:
    raw = span / max(1.0, target)
    p = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 5, 10):
        if m * p >= raw:
            return m * p
    return 10 * p


def _counts(row: dict, nb: int) -> list[int]:
    if "counts" in row:
        return list(row["counts"])
    c = [0] * nb
    for b, n in zip(row["idx"], row["n"], strict=True):
        c[b] = n
    return c


def _merge(B: dict, k: int) -> dict:
    """Bins ``k`` at a time (sums), so a binned picture stays small."""
    nb = -(-B["n"] // k)

    def merged(rows: list) -> list:
        out = []
        for row in rows:
            c = [0] * nb
            for b, n in enumerate(_counts(row, B["n"])):
                c[b // k] += n
            out.append({"lane": row["lane"], "cat": row["cat"], "counts": c})
        return out

    return {"n": nb, "edges": B["edges"], "spans": merged(B["spans"]),
            "ticks": merged(B["ticks"]), "viol": merged(B["viol"])}


def timeline_svg(v: dict, width: int = 960) -> str:
    """An SVG of one timeline view payload (see :func:`.aggregate.view`)."""
    lanes = v.get("lanes") or []
    lo, hi = v.get("window") or [0.0, 1.0]
    hi = hi if hi > lo else lo + 1.0
    pw = width - LABEL_W - 12
    legend_y = AXIS_H + max(1, len(lanes)) * LANE_H + STRIP_H + 18
    height = legend_y + 40

    def X(t: float) -> float:
        return LABEL_W + (t - lo) / (hi - lo) * pw

    def top(lane: int) -> int:
        return AXIS_H + lane * LANE_H

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mn-timeline-snapshot" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
           'aria-label="timeline">'
           "<style>.mnts-bg{fill:var(--jp-layout-color0,#fff)}"
           ".mnts-band{fill:var(--jp-layout-color2,#f3f4f6)}"
           ".mnts-t{fill:var(--jp-ui-font-color1,#2b2f33);font:12px var(--jp-ui-font-family,"
           "system-ui,sans-serif)}.mnts-dim{fill:var(--jp-ui-font-color2,#6b7177)}"
           ".mnts-line{stroke:var(--jp-border-color2,#dde0e4)}</style>",
           f'<rect class="mnts-bg" width="{width}" height="{height}"/>']
    for i, name in enumerate(lanes):
        if i % 2 == 0:
            out.append(f'<rect class="mnts-band" x="0" y="{top(i)}" width="{width}" '
                       f'height="{LANE_H}"/>')
        label = str(name) if len(str(name)) <= 30 else str(name)[:29] + "…"
        out.append(f'<text class="mnts-t" x="8" y="{top(i) + 19}">{_x(label)}</text>')
    strip = AXIS_H + len(lanes) * LANE_H + 4
    out.append(f'<text class="mnts-t mnts-dim" x="8" y="{strip + 22}">in flight</text>')
    if v.get("axis") == "time":
        step = _step(hi - lo, max(2.0, pw / 110))
        t = math.ceil(lo / step) * step
        while t <= hi + 1e-12:
            x = X(t)
            out.append(f'<line class="mnts-line" x1="{x:.1f}" x2="{x:.1f}" y1="{AXIS_H - 5}" '
                       f'y2="{strip + STRIP_H}"/><text class="mnts-t mnts-dim" x="{x:.1f}" '
                       f'y="14" text-anchor="middle">{_x(fmt_offset(round(t, 9)))}</text>')
            t += step
    outcomes, kinds, sevs = v.get("outcomes", []), v.get("tick_kinds", []), v.get("severities", [])
    if v.get("mode") == "items":
        s = v["spans"]
        ends: dict[int, list[float]] = {}  # per lane: where each of 3 sub-rows is free
        for i in sorted(range(len(s["t0"])), key=lambda j: s["t0"][j]):
            a, b = X(s["t0"][i]), max(X(s["t1"][i]), X(s["t0"][i]) + 3)
            e = ends.setdefault(s["lane"][i], [])
            r = next((j for j, end in enumerate(e) if end + 1 < a), None)
            if r is None:
                r = len(e) if len(e) < 3 else e.index(min(e))
                e.append(b) if r == len(e) else None
            e[r] = max(e[r], b)
            h = 3 if s["open"][i] else (LANE_H - 12) / 3 - 1
            y = top(s["lane"][i]) + (LANE_H - 6 if s["open"][i] else 5 + r * (h + 1))
            color = OUTCOME_COLOR.get(outcomes[s["outcome"][i]], "#999")
            out.append(f'<rect x="{a:.1f}" y="{y:.1f}" width="{b - a:.1f}" height="{h:.1f}" '
                       f'fill="{color}" data-seq="{int(s["seq"][i])}"/>')
        k = v["ticks"]
        for i in range(len(k["t"])):
            x, y = X(k["t"][i]), top(k["lane"][i])
            color = TICK_COLOR.get(kinds[k["kind"][i]], "#999")
            out.append(f'<rect x="{x - 1:.1f}" y="{y + 5}" width="2" height="{LANE_H - 10}" '
                       f'fill="{color}"/>')
        vv = v["viol"]
        marks = [(vv["t"][i], vv["lane"][i], vv["sev"][i]) for i in range(len(vv["t"]))]
    else:
        B = v.get("bins") or {"n": 1, "edges": [lo, hi], "spans": [], "ticks": [], "viol": []}
        nb, (e0, e1) = B["n"], B["edges"]
        if nb > STATIC_BINS:  # a picture needs fewer bins than the live canvas: merge them
            B = _merge(B, -(-nb // STATIC_BINS))
            nb = B["n"]
        bw = (e1 - e0) / nb
        peak: dict[int, int] = {}
        for row in B["spans"] + B["ticks"]:
            peak[row["lane"]] = max(peak.get(row["lane"], 1), max(_counts(row, nb)))
        for group, colors, names in ((B["spans"], OUTCOME_COLOR, outcomes),
                                     (B["ticks"], TICK_COLOR, kinds)):
            for row in group:
                c, lane = _counts(row, nb), row["lane"]
                mx = math.log1p(peak[lane])
                d = []
                for b, n in enumerate(c):
                    if n:
                        h = max(1.5, math.log1p(n) / mx * (LANE_H - 10))
                        a = X(e0 + b * bw)
                        d.append(f"M{a:.1f} {top(lane) + LANE_H - 4 - h:.1f}h"
                                 f"{max(1.0, X(e0 + (b + 1) * bw) - a - 0.3):.1f}v{h:.1f}"
                                 f"h-{max(1.0, X(e0 + (b + 1) * bw) - a - 0.3):.1f}z")
                color = colors.get(names[row["cat"]], "#999")
                out.append(f'<path d="{"".join(d)}" fill="{color}" fill-opacity="0.85"/>')
        marks = [(e0 + (b + 0.5) * bw, row["lane"], row["cat"]) for row in B["viol"]
                 for b, n in enumerate(_counts(row, nb)) if n]
    for t, lane, sev in marks[:3000]:
        x, y = X(t), top(lane) + 1
        out.append(f'<path d="M{x - 4.5:.1f} {y}h9l-4.5 7z" '
                   f'fill="{SEV_COLOR.get(sevs[sev], "#c0392b")}"/>')
    f = v.get("inflight") or {}
    counts = f.get("max") or []
    if counts:
        mx, base, nb = max(1, max(counts)), strip + STRIP_H - 4, len(counts)
        (e0, e1), pts = f["edges"], []
        for b, c in enumerate(counts):
            y = base - c / mx * (STRIP_H - 12)
            pts.append(f"{X(e0 + b * (e1 - e0) / nb):.1f},{y:.1f} "
                       f"{X(e0 + (b + 1) * (e1 - e0) / nb):.1f},{y:.1f}")
        out.append(f'<polygon points="{X(e0):.1f},{base} {" ".join(pts)} {X(e1):.1f},{base}" '
                   'fill="#8fb0cc"/>')
        out.append(f'<text class="mnts-t mnts-dim" x="{width - 16}" y="{strip + 10}" '
                   f'text-anchor="end">at most {fmt_count(mx)} in flight</text>')
    present = v.get("present") or {}
    items = ([(OUTCOME_COLOR.get(outcomes[i], "#999"), OUTCOME_LABEL.get(outcomes[i], ""))
              for i in present.get("outcomes", [])]
             + [(TICK_COLOR.get(kinds[i], "#999"), kinds[i]) for i in present.get("tick_kinds", [])]
             + [(SEV_COLOR.get(sevs[i], "#999"), f"{sevs[i]} violation")
                for i in present.get("severities", [])])
    x = 8
    for color, label in items:
        out.append(f'<rect x="{x}" y="{legend_y - 9}" width="12" height="9" rx="2" '
                   f'fill="{color}"/><text class="mnts-t" x="{x + 16}" y="{legend_y}">'
                   f'{_x(label)}</text>')
        x += 26 + 7 * len(label)
    out.append(f'<text class="mnts-t mnts-dim" x="8" y="{legend_y + 22}">'
               f'{_x(v.get("note", ""))}</text></svg>')
    return "".join(out)
