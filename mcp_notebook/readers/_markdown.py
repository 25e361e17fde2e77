"""Captures pasted into Markdown (an issue, a chat, a README): find the wrapping, take it off.

A log pasted into an issue comes wrapped, in any combination of:

- ``>`` quote prefixes, nested (``> > ``), on every line;
- a fenced block, ```` ``` ```` or ``~~~`` with or without a language tag, opening the
  paste (after any quote prefix); every fence line (opening or closing, and any later
  block's) becomes a blank line;
- the same leading indentation on every line (a block indented four spaces, a block
  inside a list item);
- every line in inline backticks (`` `line` `` or ``` `` line `` ```).

The wrapping is read from the file's head, for all line formats alike (nothing here
knows a format), and then taken off every line: a line that lacks part of it keeps
what it has. A file whose head is not wrapped as a whole (prose around a code block, as
in a README) is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Wrapping", "detect", "unwrap"]

_QUOTE = re.compile(r" {0,3}> ?")
_FENCE = re.compile(r"\s*(?:`{3,}|~{3,})[^`]*$")
_TICKS = re.compile(r"(`+)(.*?)\1$")
_HEAD_LINES = 400


@dataclass(frozen=True)
class Wrapping:
    """What wraps every line of a paste."""

    quote: int = 0  # levels of ``>`` quoting
    fenced: bool = False  # fence lines (``` or ~~~) to blank out
    indent: str = ""  # the leading blanks every line shares
    ticks: bool = False  # every line in inline backticks

    def __bool__(self) -> bool:
        return bool(self.quote or self.fenced or self.indent or self.ticks)

    def describe(self) -> str:
        """What was taken off, in words (for the trace's notes)."""
        parts = []
        if self.quote:
            parts.append(f"'> ' quote prefixes ({self.quote} level{'s' * (self.quote > 1)})")
        if self.fenced:
            parts.append("a fenced code block")
        if self.indent:
            parts.append(f"an indentation of {len(self.indent)} character(s)")
        if self.ticks:
            parts.append("inline backticks around every line")
        return "Markdown wrapping taken off every line: " + ", ".join(parts)


def _dequote(line: str, levels: int) -> str:
    for _ in range(levels):
        m = _QUOTE.match(line)
        if m is None:
            if line.strip() == ">":
                return ""
            break
        line = line[m.end():]
    return line


def _depth(line: str) -> int:
    n = 0
    while True:
        m = _QUOTE.match(line)
        if m is None:
            return n + (line.strip() == ">")
        n, line = n + 1, line[m.end():]


def detect(lines: list[str]) -> Wrapping:
    """The wrapping shared by the (first) lines of a file; falsy when there is none.

    >>> detect(["> ```json", '> {"a": 1}', "> ```"]).describe()
    "Markdown wrapping taken off every line: '> ' quote prefixes (1 level), a fenced code block"
    >>> bool(detect(["Here is my log:", "```", "{}", "```"]))
    False
    """
    body = [ln for ln in lines[:_HEAD_LINES] if ln.strip()]
    if not body:
        return Wrapping()
    quote = min(_depth(ln) for ln in body)
    body = [_dequote(ln, quote) for ln in body]
    body = [ln for ln in body if ln.strip()]
    fenced = bool(body) and _FENCE.match(body[0]) is not None
    content = [ln for ln in body if _FENCE.match(ln) is None] if fenced else body
    indent = ""
    if content:
        first = content[0]
        indent = first[:len(first) - len(first.lstrip(" \t"))]
        for ln in content[1:]:
            while indent and not ln.startswith(indent):
                indent = indent[:-1]
    ticks = bool(content) and all(_TICKS.match(ln[len(indent):].rstrip()) for ln in content)
    return Wrapping(quote, fenced, indent, ticks)


def unwrap(line: str, w: Wrapping) -> str:
    """One line without its wrapping (a fence line becomes a blank line).

    >>> w = Wrapping(quote=2, indent="  ", ticks=True)
    >>> unwrap("> >   `{\\"id\\": 1}`", w)
    '{"id": 1}'
    """
    if w.quote:
        line = _dequote(line, w.quote)
    if w.fenced and _FENCE.match(line):
        return ""
    if w.indent:  # at most the shared indentation, as far as this line has it
        k = 0
        while k < len(w.indent) and line[k:k + 1] in (" ", "\t"):
            k += 1
        line = line[k:]
    if w.ticks:
        m = _TICKS.match(line.rstrip())
        if m:
            line = m.group(2)
            if line[:1] == " " and line[-1:] == " " and line.strip():
                line = line[1:-1]  # as Markdown: one space each side, for a tick inside
    return line
