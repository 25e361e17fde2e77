"""Sequence diagrams of an exchange, drawn as SVG from the frames, beside the raw lines.

``sequence(trace, *seqs)`` shows the frames' raw text first and, beside it, a diagram with
one lifeline per side and one arrow per frame (requests solid, answers back, notifications
dashed, unparsable lines crossed). It draws only what was on the wire (direction, kind,
method, id), never the checker's verdicts, so it works on an exercise's blind trace too.

The views' own ``mn.sequence(t)`` (issue 20) will replace this helper; until then the
notebooks call ``mn.teach.sequence`` at the places marked ``# SEQUENCE-DIAGRAM``.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

__all__ = ["SequenceDiagram", "sequence"]

_COLOR = {"request": "#0969da", "result": "#1a7f37", "error": "#cf222e",
          "notification": "#57606a", "invalid": "#bc4c00"}
_ROW, _TOP, _W, _LEFT, _RIGHT = 30, 46, 560, 70, 490
_WIRE = ("request", "result", "error", "notification", "invalid")


def _label(row: Any, msg: Any) -> str:
    kind = str(row["kind"])
    parts = [f"{int(row['seq'])}"]
    if isinstance(row["method"], str):
        parts.append(row["method"])
    elif kind in ("result", "error"):
        parts.append(kind)
        if kind == "error" and isinstance(msg, dict) and isinstance(msg.get("error"), dict):
            parts.append(str(msg["error"].get("code")))
    else:
        parts.append(kind)
    if isinstance(row["id_key"], str) and row["id_key"]:
        parts.append(f"id {row['id_key']}")
    text = " · ".join(parts)
    return text if len(text) <= 58 else text[:57] + "…"


class SequenceDiagram:
    """Raw lines and a sequence diagram of them (``svg`` is the picture alone)."""

    def __init__(self, trace: Any, seqs: tuple[int, ...], max_chars: int) -> None:
        from .blind import unblind

        t = unblind(trace)
        f = t.frames
        if not seqs:
            seqs = tuple(int(s) for s in f.loc[f["kind"].isin(_WIRE), "seq"][:40])
        self.rows: list[tuple[int, str, str, str, str]] = []  # seq, direction, kind, label, raw
        for seq in seqs:
            row = f.iloc[int(seq)]
            raw = str(row["raw"])
            raw = raw if len(raw) <= max_chars else raw[:max_chars - 1] + "…"
            self.rows.append((int(seq), str(row["direction"]), str(row["kind"]),
                              _label(row, t.message(int(seq))), raw))
        self.svg = self._svg()

    def _svg(self) -> str:
        h = _TOP + _ROW * len(self.rows) + 16
        out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='mn-sequence' width='{_W}' "
               f"height='{h}' viewBox='0 0 {_W} {h}' font-family='sans-serif' font-size='11'>",
               "<defs><marker id='mnsq-a' viewBox='0 0 10 10' refX='9' refY='5' "
               "markerWidth='7' markerHeight='7' orient='auto-start-reverse'>"
               "<path d='M0,0L10,5L0,10z' fill='context-stroke'/></marker></defs>"]
        for x, name in ((_LEFT, "client"), (_RIGHT, "server")):
            out.append(f"<rect x='{x - 40}' y='6' width='80' height='22' rx='4' "
                       f"fill='#f6f8fa' stroke='#57606a'/><text x='{x}' y='21' "
                       f"text-anchor='middle' font-weight='bold'>{name}</text>"
                       f"<line x1='{x}' y1='28' x2='{x}' y2='{h - 6}' stroke='#8c959f' "
                       "stroke-dasharray='3,3'/>")
        for i, (_, direction, kind, label, _raw) in enumerate(self.rows):
            y = _TOP + _ROW * i + 14
            color = _COLOR.get(kind, "#57606a")
            a, b = (_LEFT, _RIGHT) if direction == "c2s" else (_RIGHT, _LEFT)
            if direction not in ("c2s", "s2c"):
                out.append(f"<text x='{_W // 2}' y='{y}' text-anchor='middle' fill='#57606a'>"
                           f"{html.escape(label)}</text>")
                continue
            dash = " stroke-dasharray='5,3'" if kind == "notification" else ""
            out.append(f"<line x1='{a}' y1='{y}' x2='{b}' y2='{y}' stroke='{color}' "
                       f"stroke-width='1.6'{dash} marker-end='url(#mnsq-a)'/>")
            if kind == "invalid":
                mx = (a + b) // 2
                out.append(f"<path d='M{mx - 5},{y - 5}L{mx + 5},{y + 5}M{mx - 5},{y + 5}"
                           f"L{mx + 5},{y - 5}' stroke='{color}' stroke-width='2'/>")
            out.append(f"<text x='{(a + b) // 2}' y='{y - 5}' text-anchor='middle' "
                       f"fill='{color}'>{html.escape(label)}</text>")
        out.append("</svg>")
        return "".join(out)

    def save(self, path: str | Path) -> Path:
        """Write the picture as an SVG file."""
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return "\n".join(f"seq {s} {d}: {raw}" for s, d, _, _, raw in self.rows)

    def _repr_html_(self) -> str:
        lines = "\n".join(f"{s:>3} {'→' if d == 'c2s' else '←' if d == 's2c' else '·'} "
                          f"{html.escape(raw)}" for s, d, _, _, raw in self.rows)
        return ("<div class='mn-seq' style='display:flex;gap:12px;align-items:flex-start;"
                "flex-wrap:wrap'><pre class='mn-seq-raw' style='flex:1 1 420px;margin:0;"
                "padding:4px 8px;background:#f6f8fa;font-size:11px;line-height:"
                f"{_ROW}px;overflow-x:auto;padding-top:{_TOP - 10}px'>{lines}</pre>"
                f"<div class='mn-seq-picture'>{self.svg}</div></div>")


def sequence(trace: Any, *seqs: int, max_chars: int = 90) -> SequenceDiagram:
    """The frames ``seqs`` (default: the first 40 messages) as raw lines and a diagram.

    Raw lines come first, each cut at ``max_chars``; the SVG beside them draws the same
    frames in the same order, one row each (``.svg`` the picture, ``.save(path)`` writes it).
    """
    return SequenceDiagram(trace, seqs, max_chars)
