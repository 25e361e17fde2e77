"""Show rules and frames in a notebook: rules with their spec sentences, frames as JSON.

The notebooks quote the spec through :func:`cite` rather than copying sentences into their
prose, so what they teach is what the checker enforces, word for word.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..protocol.rules import ALL, rule

__all__ = ["Cite", "Frames", "cite", "show"]

_COLOR = {"error": "#cf222e", "warning": "#9a6700", "info": "#0969da"}


class Cite:
    """One or more rules, shown as quotes with their codes (text, HTML or Markdown)."""

    def __init__(self, codes: tuple[str, ...]) -> None:
        self.rules = [rule(c) for c in codes]  # KeyError on an unknown code: a typo to fix

    @staticmethod
    def _versions(versions: tuple[str, ...]) -> str:
        return "all versions" if versions == ALL else ", ".join(versions)

    def __repr__(self) -> str:
        return "\n\n".join(f"{r.code} ({r.severity}, {self._versions(r.versions)}): {r.title}"
                           f"\n  {r.cite}" for r in self.rules)

    def _repr_html_(self) -> str:
        out = []
        for r in self.rules:
            color = _COLOR.get(r.severity, "#57606a")
            out.append(
                f"<blockquote class='mn-cite' style='border-left:4px solid {color};"
                f"margin:6px 0;padding:2px 10px'><div><code>{html.escape(r.code)}</code> "
                f"<span style='color:{color}'>{html.escape(r.severity)}</span> · "
                f"{html.escape(r.title)} <small>({html.escape(self._versions(r.versions))})"
                f"</small></div><div><i>{html.escape(r.cite)}</i></div></blockquote>")
        return "".join(out)


def cite(*codes: str) -> Cite:
    """The catalogue's rules with these codes, ready to display.

    >>> print(cite("notification-answered"))
    notification-answered (error, all versions): Notifications get no reply
      “The receiver MUST NOT send a response.” (MCP 2025-06-18, basic/index.mdx §Notifications)
    """
    return Cite(codes)


class Frames:
    """Frames of a trace, each as a header line and its message as indented JSON."""

    def __init__(self, trace: Any, seqs: tuple[int, ...], max_lines: int) -> None:
        self.items: list[tuple[str, str]] = []
        f = trace.frames
        for seq in seqs:
            row = f.iloc[int(seq)]
            parts = [f"seq {int(seq)}", _dir(row["direction"]), str(row["kind"])]
            if isinstance(row["method"], str):
                parts.append(row["method"])
            msg = trace.message(int(seq))
            text = str(row["raw"]) if msg is None else json.dumps(msg, indent=2,
                                                                   ensure_ascii=False)
            lines = text.splitlines()
            if len(lines) > max_lines:
                more = len(lines) - max_lines
                lines = lines[:max_lines] + [f"… ({more} more line{'s' if more > 1 else ''})"]
            self.items.append((" · ".join(parts), "\n".join(lines)))

    def __repr__(self) -> str:
        return "\n\n".join(f"{head}\n{body}" for head, body in self.items)

    def _repr_html_(self) -> str:
        return "".join(
            f"<div class='mn-frame' style='margin:4px 0'><b>{html.escape(head)}</b>"
            f"<pre style='margin:2px 0;padding:4px 8px;background:#f6f8fa;font-size:12px'>"
            f"{html.escape(body)}</pre></div>" for head, body in self.items)


def _dir(direction: Any) -> str:
    return {"c2s": "client → server", "s2c": "server → client"}.get(direction, "—")


def show(trace: Any, *seqs: int, max_lines: int = 30) -> Frames:
    """Frames ``seqs`` of ``trace``, decoded and indented (long ones cut at ``max_lines``).

    Unparsable frames and log lines are shown as their raw text.
    """
    return Frames(trace, seqs, max_lines)
