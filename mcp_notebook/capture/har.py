"""HAR 1.2 writing for the recording proxy: entries, SSE events, a crash-tolerant file.

The proxy (:mod:`mcp_notebook.capture.proxy`) writes standard HAR 1.2
(http://www.softwareishard.com/blog/har-12-spec/) with these documented extensions (HAR
allows custom fields whose names start with ``_``):

``response.content._sseEvents``
    for a ``text/event-stream`` response, one object per SSE event block, in arrival
    order: ``{"t": "<ISO 8601 UTC arrival time>", "id": ..., "event": ..., "data": ...,
    "retry": ..., "comment": ...}``; only the fields present in the block are written
    (``data`` lines joined with ``\\n`` as the SSE spec says; ``comment`` holds ``:``
    lines). ``t`` is when the proxy read the blank line that ends the event. A priming
    event (an ``id`` with empty ``data``) and comment-only keep-alives are recorded too:
    a reader should skip events without ``data``. The whole stream is also kept intact
    in ``response.content.text``.
``_seq``
    the order in which the proxy received the requests (0, 1, ...). Entries are written
    as they finish (a POST answered while a long SSE stream is still open is written
    first); the finished file is sorted by ``startedDateTime``.
``_incomplete``
    ``true`` when the entry had not finished when the proxy stopped; ``_aborted`` is
    ``"client"`` or ``"server"`` when that side closed the connection mid-response;
    ``_proxyError`` holds the reason when the target could not be reached (the proxy
    then answered 502 itself).
``_truncated``
    the full body size when a body was longer than the proxy's cap and only its start
    was kept.

Crash tolerance: the file is valid HAR after every finished entry. Each entry is written
in place just before the closing ``]}}``, with one ``write``; only entries still in flight
are lost if the proxy dies.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
import threading
from datetime import datetime, timezone
from typing import Any

__all__ = ["iso", "SseParser", "HarWriter", "body_content", "header_list"]

TRAILER = b"\n]}}\n"
_EOL = re.compile(r"\r\n|\r|\n")


def iso(ts: float) -> str:
    """ISO 8601 UTC with microseconds, e.g. ``2025-01-01T12:00:00.123456Z``."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(
        timespec="microseconds").replace("+00:00", "Z")


def header_list(raw: Any) -> list[dict[str, str]]:
    """HAR ``headers`` from raw ``(name, value)`` byte or text pairs, case and order kept."""
    out = []
    for name, value in raw:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        out.append({"name": name, "value": value})
    return out


def body_content(data: bytes) -> dict[str, Any]:
    """``{"text": ...}`` for UTF-8 bodies, else ``{"text": <base64>, "encoding": "base64"}``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


class SseParser:
    """Incremental ``text/event-stream`` parser that stamps each event's arrival time.

    Examples
    --------
    >>> p = SseParser()
    >>> p.feed(b"event: message\\r\\nid: 7\\r\\ndata: {}\\r", 1.0)
    >>> p.feed(b"\\n\\r\\n: ping\\n\\n", 2.0)
    >>> [(e["event"], e["id"], e["data"]) for e in p.events[:1]], p.events[1]["comment"]
    ([('message', '7', '{}')], 'ping')
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []  # the current line, still without its end
        self._skip_lf = False  # the last chunk ended on CR: a leading LF belongs to it
        self._fields: dict[str, Any] = {}
        self._data: list[str] = []
        self._comments: list[str] = []

    def feed(self, chunk: bytes, ts: float) -> None:
        """Add bytes that arrived at unix time ``ts``."""
        text = self._decoder.decode(chunk)
        if self._skip_lf and text:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
        pos = 0
        for m in _EOL.finditer(text):
            self._parts.append(text[pos:m.start()])
            line = "".join(self._parts)
            self._parts = []
            pos = m.end()
            if m.group() == "\r" and pos == len(text):
                self._skip_lf = True
            self._line(line, ts)
        if pos < len(text):
            self._parts.append(text[pos:])

    def _line(self, line: str, ts: float) -> None:
        if line == "":
            self._dispatch(ts)
            return
        if line.startswith(":"):
            self._comments.append(line[1:].lstrip(" ") if line[1:2] == " " else line[1:])
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name in ("event", "id", "retry"):
            self._fields[name] = value
        else:
            self._fields.setdefault("_other", []).append(line)

    def _dispatch(self, ts: float) -> None:
        if not (self._fields or self._data or self._comments):
            return
        event: dict[str, Any] = {"t": iso(ts)}
        for key in ("id", "event"):
            if key in self._fields:
                event[key] = self._fields[key]
        if self._data:
            event["data"] = "\n".join(self._data)
        if "retry" in self._fields:
            event["retry"] = self._fields["retry"]
        if self._comments:
            event["comment"] = "\n".join(self._comments)
        if "_other" in self._fields:
            event["_other"] = self._fields["_other"]
        self.events.append(event)
        self._fields, self._data, self._comments = {}, [], []

    def close(self, ts: float) -> None:
        """End of stream: an unterminated last event is kept, marked ``_unterminated``."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._parts.append(tail)
        if self._parts:
            self._line("".join(self._parts), ts)
            self._parts = []
        if self._fields or self._data or self._comments:
            self._dispatch(ts)
            self.events[-1]["_unterminated"] = True


class HarWriter:
    """Write a HAR 1.2 file that stays valid after every added entry.

    Parameters
    ----------
    path
        The ``.har`` file (replaced).
    creator
        ``{"name": ..., "version": ...}`` for ``log.creator``.
    comment
        ``log.comment``.
    """

    def __init__(self, path: str | os.PathLike[str], creator: dict[str, str],
                 comment: str = "") -> None:
        self.path = os.fspath(path)
        self._head = {"version": "1.2", "creator": creator}
        if comment:
            self._head["comment"] = comment
        self._entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._f = open(self.path, "wb")
        self._f.write(self._prefix() + TRAILER)
        self._f.flush()

    def _prefix(self) -> bytes:
        head = json.dumps(self._head, ensure_ascii=False)[:-1]  # without the closing brace
        return ('{"log": ' + head + ', "entries": [\n').encode("utf-8")

    @staticmethod
    def _dump(entry: dict[str, Any]) -> bytes:
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def add(self, entry: dict[str, Any]) -> None:
        """Append one finished entry (written at once, file valid afterwards)."""
        data = self._dump(entry)
        with self._lock:
            if self._f.closed:
                return
            sep = b",\n" if self._entries else b""
            self._entries.append(entry)
            self._f.seek(-len(TRAILER), os.SEEK_END)
            self._f.write(sep + data + TRAILER)
            self._f.flush()

    def close(self) -> None:
        """Rewrite the file with the entries sorted by ``startedDateTime``, atomically."""
        with self._lock:
            if self._f.closed:
                return
            self._f.close()
            entries = sorted(self._entries, key=lambda e: (e["startedDateTime"], e.get("_seq", 0)))
            tmp = self.path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(self._prefix())
                f.write(b",\n".join(self._dump(e) for e in entries))
                f.write(TRAILER)
            os.replace(tmp, self.path)

    def __len__(self) -> int:
        return len(self._entries)
