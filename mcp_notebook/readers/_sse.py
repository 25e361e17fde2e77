"""Server-Sent Events: split a ``text/event-stream`` body into events (WHATWG rules).

Lines end with CRLF, LF or CR; a byte order mark opening the stream is skipped; ``:``
starts a comment; ``field: value`` with one
optional space; ``data`` lines join with ``\\n``; a blank line ends an event. Unlike a
browser, this keeps what a capture needs: every event's position, id and type, events
with no data (MCP servers send such *priming* events), comment-only blocks (keep-alive
pings: an event with ``data=None`` and ``comment`` set, counted so that positions match
the recording proxy's ``_sseEvents``), and an event the stream was cut inside
(``complete=False``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEEvent", "parse_sse", "parse_sse_lines", "simple_spans"]

_LINES = re.compile(r"\r\n|\r|\n")


@dataclass(slots=True)
class SSEEvent:
    index: int  # position among the events of the body, from 0
    data: str | None  # None when the event had no ``data`` line
    event: str | None = None  # the ``event:`` type; None means "message"
    id: str | None = None
    retry: int | None = None
    complete: bool = True  # False: the body ended before the blank line
    comment: str | None = None  # the ``:`` lines of the block, joined with ``\n``

    @property
    def empty(self) -> bool:
        """No data at all, or only blanks (a priming or keep-alive event)."""
        return self.data is None or not self.data or self.data.isspace()


def _simple(body: str) -> list[SSEEvent] | None:
    """The events of a body made of usual events only (an optional ``event:`` line, one
    ``data:`` line, a blank line; as :func:`parse_sse` reads them), found block by block at
    the blank lines; None when the body holds anything else."""
    if not body.startswith(("data:", "event:")) or not body.endswith("\n\n") or "\r" in body:
        return None
    events: list[SSEEvent] = []
    add = events.append
    find, starts = body.find, body.startswith
    pos, n = 0, len(body)
    while pos < n:  # each block in place: no copy of the body's blocks
        end = find("\n\n", pos)
        if end < 0:
            return None  # more line breaks after the last event
        event = None
        at = pos
        if starts("event:", pos, end):
            at = find("\n", pos, end) + 1
            if not at:
                return None
            event = body[pos + 7:at - 1] if starts("event: ", pos, end) else body[pos + 6:at - 1]
            if ":" in event:
                return None
        if not starts("data:", at, end) or find("\n", at, end) >= 0:
            return None
        add(SSEEvent(len(events), body[at + 6:end] if starts("data: ", at, end)
                     else body[at + 5:end], event or None, None, None))
        pos = end + 2
    return events


def simple_spans(body: bytes) -> list[tuple[int, int, bytes | None]] | None:
    """:func:`_simple` of a body's UTF-8 bytes: ``(start, end, event type)`` of each
    event's data in ``body`` (the type None where the event has no ``event:`` line, as
    :func:`parse_sse` gives ``event``), or None when the body holds anything else. A
    type is given as its bytes (the events' types are compared, not kept)."""
    if not body.startswith((b"data:", b"event:")) or not body.endswith(b"\n\n") \
            or b"\r" in body:
        return None
    out: list[tuple[int, int, bytes | None]] = []
    add = out.append
    find, starts = body.find, body.startswith
    pos, n = 0, len(body)
    while pos < n:
        end = find(b"\n\n", pos)
        if end < 0:
            return None
        event = None
        at = pos
        if starts(b"event:", pos, end):
            at = find(b"\n", pos, end) + 1
            if not at:
                return None
            event = body[pos + 7:at - 1] if starts(b"event: ", pos, end) else \
                body[pos + 6:at - 1]
            if b":" in event:
                return None
        if not starts(b"data:", at, end) or find(b"\n", at, end) >= 0:
            return None
        add((at + 6 if starts(b"data: ", at, end) else at + 5, end, event or None))
        pos = end + 2
    return out


def parse_sse_lines(lines: list[str]) -> list[SSEEvent]:
    """``parse_sse("\\n".join(lines) + "\\n")`` for lines with no line break in them: the
    usual events (an optional ``event:`` line, one ``data:`` line, a blank line) read
    line by line, without joining the body; any other body by :func:`parse_sse`."""
    events: list[SSEEvent] = []
    i, n = 0, len(lines)
    while i < n:
        t = lines[i]
        event = None
        if t.startswith("event:"):
            event = t[7:] if t.startswith("event: ") else t[6:]
            i += 1
            if ":" in event or "\r" in event or i >= n:
                break
            t = lines[i]
        if not t.startswith("data:") or i + 1 >= n or lines[i + 1] != "" or "\r" in t:
            break
        events.append(SSEEvent(len(events), t[6:] if t.startswith("data: ") else t[5:],
                               event or None, None, None))
        i += 2
    else:
        return events
    return parse_sse("\n".join(lines) + "\n")


def parse_sse(body: str) -> list[SSEEvent]:
    """The events of an SSE body, in order.

    >>> [(e.index, e.id, e.data) for e in parse_sse("id: 1\\ndata: \\n\\nid: 2\\ndata: {}\\n\\n")]
    [(0, '1', ''), (1, '2', '{}')]
    """
    simple = _simple(body)
    if simple is not None:
        return simple
    events: list[SSEEvent] = []
    data: list[str] | None = None
    event = ident = None
    retry: int | None = None
    fields = False
    comments: list[str] = []
    lines = _LINES.split(body.removeprefix("\ufeff"))  # a BOM opening the stream is no text
    if lines and lines[-1] == "":
        lines.pop()  # the empty text after the last line break
    for line in lines:
        if line == "":
            if fields or comments:
                events.append(SSEEvent(len(events), "\n".join(data) if data is not None
                                       else None, event, ident, retry,
                                       comment="\n".join(comments) if comments else None))
            data, event, ident, retry, fields, comments = None, None, None, None, False, []
            continue
        if line.startswith(":"):
            comments.append(line[2:] if line[1:2] == " " else line[1:])
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        fields = True
        if name == "data":
            if data is None:
                data = []
            data.append(value)
        elif name == "event":
            event = value or None
        elif name == "id":
            ident = value
        elif name == "retry" and value.isdigit():
            retry = int(value)
    if fields or comments:
        events.append(SSEEvent(len(events), "\n".join(data) if data is not None else None,
                               event, ident, retry, complete=False,
                               comment="\n".join(comments) if comments else None))
    return events
