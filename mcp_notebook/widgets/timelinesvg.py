"""The timeline's static picture: the current view payload drawn as SVG.

Pure: takes what :func:`.viewport.view` sends the browser (items or bins, already cut
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
STATIC_BINS = 160  # the most bins per lane in a picture


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
    """An SVG of one timeline view payload (see :func:`.viewport.view`)."""
    lanes = v.get("lanes") or []
    lo, hi = v.get("window") or [0.0, 1.0]
    hi = hi if hi > lo else lo + 1.0
    pw = width - LABEL_W - 12
    legend_y = AXIS_H + max(1, len(lanes)) * LANE_H + STRIP_H + 18
    height = legend_y + 40 + 18 * 2  # room for a legend of three lines

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
        # per lane, three step areas: answered requests, the others (errors, tool errors,
        # unanswered, cancelled) over them, and the other frames; log scale per lane
        groups: dict[tuple[int, int], list[int]] = {}
        for key, rows in ((0, B["spans"]), (2, B["ticks"])):
            for row in rows:
                g = key + (1 if key == 0 and outcomes[row["cat"]] != "result" else 0)
                acc = groups.setdefault((row["lane"], g), [0] * nb)
                for b, n in enumerate(_counts(row, nb)):
                    acc[b] += n
        fills = {0: OUTCOME_COLOR["result"], 1: OUTCOME_COLOR["error"],
                 2: TICK_COLOR["notification"]}
        xs = [round(X(e0 + b * bw)) for b in range(nb + 1)]

        def area(c: list[int], lane: int, g: int, heights: list[float]) -> None:
            base = top(lane) + (LANE_H - 4 if g < 2 else 9)
            d = [f"M{xs[0]} {base}"]
            for b, h in enumerate(heights):
                d.append(f"V{round(base - h) if c[b] else base}H{xs[b + 1]}")
            out.append(f'<path d="{"".join(d)}V{base}Z" fill="{fills[g]}" '
                       'fill-opacity="0.9"/>')

        for lane in sorted({k[0] for k in groups}):
            ok, bad = groups.get((lane, 0), [0] * nb), groups.get((lane, 1), [0] * nb)
            total = [a + b for a, b in zip(ok, bad, strict=True)]
            mx = math.log1p(max(max(total), 1))
            tall = [max(1.5, math.log1p(n) / mx * (LANE_H - 10)) if n else 0.0 for n in total]
            if any(total):
                area(total, lane, 0, tall)
            if any(bad):  # the share of the bar that did not end in a result
                area(bad, lane, 1, [max(1.0, hh * b / n) if n else 0.0
                                    for hh, b, n in zip(tall, bad, total, strict=True)])
            ticks = groups.get((lane, 2))
            if ticks:
                tm = math.log1p(max(max(ticks), 1))
                area(ticks, lane, 2, [max(1.0, math.log1p(n) / tm * 5) for n in ticks])
        marks = [(e0 + (b + 0.5) * bw, row["lane"], row["cat"]) for row in B["viol"]
                 for b, n in enumerate(_counts(row, nb)) if n]
    # one marker per lane and pixel column (the most severe), one path per severity
    best: dict[tuple[int, int], tuple[int, float]] = {}
    for t, lane, sev in marks:
        cell = (lane, round(X(t) / 6))
        if cell not in best or sev < best[cell][0]:
            best[cell] = (sev, t)
    paths: dict[int, list[str]] = {}
    for (lane, _), (sev, t) in best.items():
        paths.setdefault(sev, []).append(f"M{X(t) - 4.5:.0f} {top(lane) + 1}h9l-4.5 7z")
    for sev, d in sorted(paths.items(), reverse=True):
        out.append(f'<path d="{"".join(d)}" fill="{SEV_COLOR.get(sevs[sev], "#c0392b")}"/>')
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
    x, y = 8, legend_y
    for color, label in items:
        w = 26 + 7 * len(label)
        if x + w > width - 8:  # wrap the legend
            x, y = 8, y + 18
        out.append(f'<rect x="{x}" y="{y - 9}" width="12" height="9" rx="2" '
                   f'fill="{color}"/><text class="mnts-t" x="{x + 16}" y="{y}">'
                   f'{_x(label)}</text>')
        x += w
    out.append(f'<text class="mnts-t mnts-dim" x="8" y="{y + 22}">'
               f'{_x(v.get("note", ""))}</text></svg>')
    return "".join(out)
