"""Drawing a sequence diagram as SVG: lifelines, one arrow per message, activation bars.

Pure: takes :class:`Msg` rows (what :mod:`.sequence` picks from a trace) and returns one
SVG string, which is both the static picture (nbconvert, GitHub, a file) and what the
interactive view shows. Every string from a trace is XML-escaped; colours come from
JupyterLab's theme variables with light fallbacks, inside a ``<style>`` of the SVG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from .units import fmt_duration, fmt_offset

__all__ = ["Msg", "draw_svg", "ROW_H"]

ROW_H = 24
TOP = 64
TIME_W = 132
GAP = 430  # client lifeline to server lifeline
SESSION_GAP = 70
VIOL_W = 230
NOTE_W = 290  # room for stderr / log notes right of the server lifeline
LABEL_CHARS = 64

STYLE = """
.mns-bg{fill:var(--jp-layout-color0,#ffffff)}
.mns-t{fill:var(--jp-ui-font-color1,#24292f);font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);font-size:11.5px}
.mns-dim{fill:var(--jp-ui-font-color2,#57606a)}
.mns-head{font-weight:600;font-size:12.5px}
.mns-life{stroke:var(--jp-border-color1,#8c959f);stroke-width:1;stroke-dasharray:4 4}
.mns-box{fill:var(--jp-layout-color2,#eef1f4);stroke:var(--jp-border-color1,#8c959f)}
.mns-act{fill:var(--jp-layout-color3,#d0d7de);stroke:var(--jp-border-color1,#8c959f);stroke-width:.8}
.mns-act.mns-open{fill:none;stroke-dasharray:3 3}
.mns-msg line{stroke-width:1.6}
.mns-msg:hover line{stroke-width:3}
.mns-msg.mns-sel line{stroke-width:3.2}
.mns-msg.mns-pair line{stroke-width:2.6;stroke-dasharray:none}
.mns-msg.mns-sel .mns-t,.mns-msg.mns-pair .mns-t{font-weight:600}
.mns-request line,.mns-request polygon{stroke:#2f6fad;fill:#2f6fad}
.mns-result line,.mns-result polygon{stroke:#3d8147;fill:#3d8147}
.mns-error line,.mns-error polygon{stroke:#c0392b;fill:#c0392b}
.mns-tool_error line,.mns-tool_error polygon{stroke:#b7791f;fill:#b7791f}
.mns-notification line,.mns-notification polygon{stroke:#2d8c82;fill:#2d8c82}
.mns-progress line,.mns-progress polygon{stroke:#2d8c82;fill:#2d8c82}
.mns-cancel line,.mns-cancel polygon{stroke:#7b5fb0;fill:#7b5fb0}
.mns-invalid line,.mns-invalid polygon{stroke:#8e3b5f;fill:#8e3b5f}
.mns-result line,.mns-error line,.mns-tool_error line{stroke-dasharray:6 3}
.mns-progress line{stroke-dasharray:2 3}
.mns-cancel line{stroke-dasharray:8 3 2 3}
.mns-note{fill:var(--jp-ui-font-color2,#6e6a5e);font-style:italic}
.mns-v-error{fill:#c0392b}.mns-v-warning{fill:#d98b0b}.mns-v-info{fill:#7f8c8d}
.mns-vt{fill:var(--jp-ui-font-color1,#24292f);font-size:11px}
"""


@dataclass
class Msg:
    """One row of the diagram: a message (or a log line) of one session."""

    seq: int
    lane: int  # the session's position among the diagram's sessions
    direction: str | None  # "c2s", "s2c", or None for a note (stderr / log)
    kind: str  # request, result, error, tool_error, notification, progress, cancel, invalid, note
    label: str  # one line: method and info
    t: float | None = None  # seconds since the diagram's first row
    pair: int | None = None  # the partner frame (request <-> response)
    target: int | None = None  # the request a cancel or progress notification is about
    latency: float | None = None  # a request's: seconds to its response
    ends: int | None = None  # a request's: the seq its activation ends at (response/cancel)
    open_reason: str = ""  # a request with no end in view: why ("no response", "#123 later")
    violations: list[tuple[str, str, str]] = field(default_factory=list)  # (rule, sev, text)


def _x(s: str) -> str:
    return escape(s, {'"': "&quot;"})


def _clip(s: str, n: int = LABEL_CHARS) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def draw_svg(rows: list[Msg], sessions: list[str], *, title: str = "", note: str = "",
             axis: str = "time") -> str:
    """The whole diagram as one ``<svg>`` element (UTF-8 text, no script).

    Parameters
    ----------
    rows
        The messages in capture order.
    sessions
        The session names (``Msg.lane`` indexes them): each gets a client and a server
        lifeline.
    title, note
        A heading and a line under it (what is shown, what was left out).
    axis
        ``"time"`` (``Msg.t`` is shown as relative time) or ``"seq"``.
    """
    ns = max(1, len(sessions))
    client_x = [TIME_W + 40 + i * (GAP + SESSION_GAP) for i in range(ns)]
    server_x = [c + GAP for c in client_x]
    viol_x = server_x[-1] + NOTE_W
    width = viol_x + VIOL_W
    top = TOP + (14 if note else 0)
    opens = [m for m in rows if m.kind == "request" and m.open_reason]
    bottom = top + 40 + max(1, len(rows)) * ROW_H + 6
    height = bottom + 16 + 16 * min(len(opens), 6) + 10
    y_of = {m.seq: top + 40 + i * ROW_H + ROW_H // 2 for i, m in enumerate(rows)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mn-sequence" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="{_x(title or "sequence diagram")}">',
           f"<style>{STYLE}</style>", f'<rect class="mns-bg" width="{width}" height="{height}"/>']
    if title:
        out.append(f'<text class="mns-t mns-head" x="12" y="20">{_x(_clip(title, 140))}</text>')
    if note:
        out.append(f'<text class="mns-t mns-dim" x="12" y="38">{_x(_clip(note, 180))}</text>')
    out.append(f'<text class="mns-t mns-dim" x="12" y="{top + 22}">'
               f'{"time" if axis == "time" else ""}</text>'
               f'<text class="mns-t mns-dim" x="{TIME_W - 8}" y="{top + 22}" '
               f'text-anchor="end">#</text>')
    for i in range(ns):
        name = sessions[i] if i < len(sessions) else ""
        for x, who in ((client_x[i], "client"), (server_x[i], "server")):
            out.append(f'<line class="mns-life" x1="{x}" y1="{top + 30}" x2="{x}" '
                       f'y2="{bottom}"/>')
            out.append(f'<rect class="mns-box" x="{x - 60}" y="{top}" width="120" height="30" '
                       f'rx="4"/><text class="mns-t mns-head" x="{x}" y="{top + 14}" '
                       f'text-anchor="middle">{who}</text>')
            if name and ns > 1 or (name and who == "server"):
                out.append(f'<text class="mns-t mns-dim" x="{x}" y="{top + 26}" '
                           f'text-anchor="middle" font-size="10">{_x(_clip(name, 18))}</text>')

    # activation bars on the receiver's lifeline: request row to its end (or the bottom)
    depth: dict[tuple[int, str], list[int]] = {}
    for m in rows:
        if m.kind != "request" or m.direction not in ("c2s", "s2c"):
            continue
        side = "server" if m.direction == "c2s" else "client"
        x = (server_x if side == "server" else client_x)[m.lane]
        y0 = y_of[m.seq]
        y1 = y_of.get(m.ends, bottom) if m.ends is not None else bottom
        stack = [e for e in depth.get((m.lane, side), []) if e > y0]
        off = 5 * len(stack)
        stack.append(y1)
        depth[(m.lane, side)] = stack
        cls = "mns-act" + ("" if m.ends in y_of else " mns-open")
        out.append(f'<rect class="{cls}" data-seq="{m.seq}" x="{x - 4 + off}" y="{y0}" '
                   f'width="8" height="{max(4, y1 - y0)}"><title>#{m.seq} '
                   f'{_x(_clip(m.label, 200))}: '
                   f'{_x(m.open_reason) if m.ends not in y_of else "answered"}</title></rect>')

    for m in rows:
        y = y_of[m.seq]
        when = "" if m.t is None else fmt_offset(m.t)
        out.append(f'<text class="mns-t mns-dim" x="12" y="{y + 4}">{_x(when)}</text>'
                   f'<text class="mns-t mns-dim" x="{TIME_W - 8}" y="{y + 4}" '
                   f'text-anchor="end">{m.seq}</text>')
        attrs = f'data-seq="{m.seq}"' + (f' data-pair="{m.pair}"' if m.pair is not None else "")
        attrs += f' data-target="{m.target}"' if m.target is not None else ""
        tip = f"#{m.seq} {m.label}"
        if m.pair is not None:
            tip += f"\n{'response' if m.kind == 'request' else 'request'}: #{m.pair}"
        if m.latency is not None:
            tip += f" after {fmt_duration(m.latency)}"
        if m.target is not None:
            tip += f"\nabout request #{m.target}"
        for rule, sev, text in m.violations:
            tip += f"\n{sev} {rule}: {text}"
        if m.direction not in ("c2s", "s2c"):
            x = server_x[m.lane] + 12
            out.append(f'<g class="mns-msg mns-{m.kind}" {attrs}><title>{_x(tip)}</title>'
                       f'<text class="mns-t mns-note" x="{x}" y="{y + 4}">'
                       f'{_x(_clip(m.label, 40))}</text></g>')
        else:
            a, b = client_x[m.lane], server_x[m.lane]
            if m.direction == "s2c":
                a, b = b, a
            d = 1 if b > a else -1
            a2, b2 = a + d * 5, b - d * 6
            label = m.label
            if m.kind == "request" and m.latency is not None:
                label += f" · {fmt_duration(m.latency)}"
            if m.pair is not None and m.kind in ("result", "error", "tool_error"):
                label = f"↩ #{m.pair} " + label
            if m.target is not None:
                label += f" (→ #{m.target})"
            out.append(f'<g class="mns-msg mns-{m.kind}" {attrs}><title>{_x(tip)}</title>'
                       f'<line x1="{a2}" y1="{y}" x2="{b2}" y2="{y}"/>'
                       f'<polygon points="{b2 + d * 2},{y} {b2 - d * 7},{y - 4} '
                       f'{b2 - d * 7},{y + 4}"/>'
                       f'<rect x="{min(a, b)}" y="{y - ROW_H // 2}" width="{GAP}" '
                       f'height="{ROW_H}" fill="transparent"/>'
                       f'<text class="mns-t" x="{(a + b) / 2:.0f}" y="{y - 4}" '
                       f'text-anchor="middle">{_x(_clip(label))}</text></g>')
        if m.violations:
            rules = ", ".join(dict.fromkeys(r for r, _, _ in m.violations))
            sev = min((s for _, s, _ in m.violations),
                      key=lambda s: ["error", "warning", "info"].index(s)
                      if s in ("error", "warning", "info") else 3)
            out.append(f'<g class="mns-viol" data-seq="{m.seq}"><title>{_x(tip)}</title>'
                       f'<circle class="mns-v-{_x(sev)}" cx="{viol_x}" cy="{y}" r="6"/>'
                       f'<text x="{viol_x}" y="{y + 4}" text-anchor="middle" fill="#fff" '
                       f'font-size="10" font-weight="700" font-family="sans-serif">!</text>'
                       f'<text class="mns-t mns-vt" x="{viol_x + 11}" y="{y + 4}">'
                       f'{_x(_clip(rules, 34))}</text></g>')
    for i, m in enumerate(opens[:6]):
        out.append(f'<text class="mns-t mns-dim" x="{TIME_W + 40}" y="{bottom + 16 + 16 * i}">'
                   f'request #{m.seq} ({_x(_clip(m.label, 50))}): {_x(m.open_reason)}</text>')
    if len(opens) > 6:
        out.append(f'<text class="mns-t mns-dim" x="{viol_x}" y="{bottom + 16}">'
                   f'… and {len(opens) - 6:,} more open requests</text>')
    out.append("</svg>")
    return "".join(out)
