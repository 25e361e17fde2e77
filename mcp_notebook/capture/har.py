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

Crash tolerance: the file on disk is always valid HAR. It is never changed in place: a
new version is written beside it and moved over it; finished entries not yet in a version
wait in an append-only journal beside it (``FILE.har.journal``), folded back in by
:func:`recover` or by the next proxy writing the same file. Only entries still in flight
are lost if the proxy is killed (SIGTERM, SIGINT and SIGHUP keep them, ``_incomplete``).
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = ["iso", "SseParser", "HarWriter", "recover", "body_content", "header_list"]

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
    """Write a HAR 1.2 file that is valid JSON on disk whatever happens to the writer.

    The ``.har`` file is never changed in place: each version is written whole to a new
    file and moved over it (``os.replace``), so a full disk, SIGKILL or a power cut leaves
    the last complete version. Between versions, every finished entry is appended at once
    to a journal beside it (``FILE.har.journal``, one JSON entry per line), which is
    emptied when a version that holds its entries is in place, and removed by
    :meth:`close`. A new version is written after each entry while the file is small
    (under 1 MiB); a larger one is rewritten at most 10% of the time (measured), the
    journal holding what came since (:meth:`flush` writes a version when it is due).

    A writer that finds the journal of one that died (same path) keeps its entries:
    the old version's and the journal's (see :func:`recover`) are the first entries of
    the new file. A write that fails stops the recording, never the caller: ``on_stop``
    is called once with the reason, and the files stay as they were, valid.

    Parameters
    ----------
    path
        The ``.har`` file (replaced, unless a journal says a writer died writing it).
    creator
        ``{"name": ..., "version": ...}`` for ``log.creator``.
    comment
        ``log.comment``.
    on_stop
        Called once with the reason when recording stops on a failed write.
    """

    SMALL = 1 << 20  # bytes under which every entry gets a new version at once
    DUTY = 0.1  # the most of the time spent rewriting a large file

    def __init__(self, path: str | os.PathLike[str], creator: dict[str, str],
                 comment: str = "", on_stop: Callable[[str], None] | None = None) -> None:
        self.path = os.fspath(path)
        self.journal = self.path + ".journal"
        self.on_stop = on_stop
        self._head = {"version": "1.2", "creator": creator}
        if comment:
            self._head["comment"] = comment
        self._lock = threading.Lock()
        #: every entry as written (its JSON bytes), in the order they finished
        self._dumps: list[bytes] = _recovered(self.path, self.journal)
        self._keys = [_sort_key(json.loads(d)) for d in self._dumps]  # for the final order
        self._size = 0  # bytes of the version on disk
        self._pending = 0  # entries in the journal but not yet in a version on disk
        self._cost = 0.0  # seconds the last rewrite took
        self._last = 0.0  # monotonic time of the last rewrite
        self.stopped: str | None = None
        self._journal_fd = os.open(self.journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._write_version(sort=False)
        if self.stopped is None:
            os.ftruncate(self._journal_fd, 0)  # the recovered entries are in the version

    def _prefix(self) -> bytes:
        head = json.dumps(self._head, ensure_ascii=False)[:-1]  # without the closing brace
        return ('{"log": ' + head + ', "entries": [\n').encode("utf-8")

    @staticmethod
    def _dump(entry: dict[str, Any]) -> bytes:
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def _stop(self, exc: OSError) -> None:
        self.stopped = f"cannot write {self.path}: {exc.strerror or exc}"
        for fd in (self._journal_fd,):
            try:
                os.close(fd)
            except OSError:
                pass
        self._journal_fd = -1
        if self.on_stop is not None:
            self.on_stop(self.stopped)

    def _write_version(self, sort: bool) -> None:
        """Write the whole file anew and move it into place (the old one stays if this fails)."""
        dumps = self._dumps
        if sort:
            order = sorted(range(len(dumps)), key=self._keys.__getitem__)
            dumps = [dumps[i] for i in order]
        tmp = self.path + ".tmp"
        t0 = time.monotonic()
        try:
            with open(tmp, "wb") as f:
                f.write(self._prefix())
                for i, d in enumerate(dumps):
                    f.write(b",\n" + d if i else d)
                f.write(TRAILER)
                size = f.tell()
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            self._stop(exc)
            return
        self._size, self._pending = size, 0
        self._last = time.monotonic()
        self._cost = self._last - t0
        try:
            os.ftruncate(self._journal_fd, 0)  # every journalled entry is in this version
        except OSError:
            pass  # the journal's entries are also in the version: a reader skips repeats

    def _due(self) -> bool:
        if not self._pending:
            return False
        if self._size < self.SMALL:
            return True
        return time.monotonic() - self._last >= self._cost * (1 / self.DUTY - 1)

    def add(self, entry: dict[str, Any]) -> None:
        """Record one finished entry: in the journal at once, in the file when due."""
        data = self._dump(entry)
        with self._lock:
            if self._journal_fd < 0:
                return
            try:
                _append(self._journal_fd, data + b"\n")
            except OSError as exc:
                self._stop(exc)
                return
            self._dumps.append(data)
            self._keys.append(_sort_key(entry))
            self._pending += 1
            if self._due():
                self._write_version(sort=False)

    def flush(self) -> None:
        """Write a new version if entries wait in the journal and one is due."""
        with self._lock:
            if self._journal_fd >= 0 and self._due():
                self._write_version(sort=False)

    def close(self) -> None:
        """Write the final file, entries sorted by ``startedDateTime``; remove the journal."""
        with self._lock:
            if self._journal_fd < 0:
                return
            self._write_version(sort=True)
            if self._journal_fd < 0:
                return  # the final write failed: the journal keeps what the file lacks
            os.close(self._journal_fd)
            self._journal_fd = -1
            try:
                os.unlink(self.journal)
            except OSError:
                pass

    def __len__(self) -> int:
        return len(self._dumps)


def _sort_key(entry: dict[str, Any]) -> tuple[str, int]:
    seq = entry.get("_seq", 0)
    return str(entry.get("startedDateTime", "")), seq if isinstance(seq, int) else 0


def _append(fd: int, data: bytes) -> None:
    """Append whole: a cut write is cut back off, so the journal ends on a whole line."""
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        start = -1
    view, written = memoryview(data), 0
    try:
        while view:
            n = os.write(fd, view)
            view, written = view[n:], written + n
    except OSError:
        if written and start >= 0:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
        raise


def _recovered(path: str, journal: str) -> list[bytes]:
    """The entries a writer that died left: its last version's, then its journal's."""
    if not os.path.exists(journal):
        return []
    out: list[bytes] = []
    seen: set[bytes] = set()
    try:
        with open(path, "rb") as f:
            old = json.loads(f.read())["log"]["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        old = []
    try:
        with open(journal, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        lines = []
    for entry in old:
        data = HarWriter._dump(entry)
        seen.add(data)
        out.append(data)
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by the crash
        data = HarWriter._dump(entry)
        if isinstance(entry, dict) and data not in seen:
            seen.add(data)
            out.append(data)
    return out


def recover(path: str | os.PathLike[str]) -> int:
    """Complete a HAR whose proxy died: fold ``FILE.har.journal`` into it.

    Returns the number of entries of the completed file, or -1 when there is no journal
    (the file is complete already and is left alone).
    """
    path = os.fspath(path)
    journal = path + ".journal"
    if not os.path.exists(journal):
        return -1
    try:
        with open(path, "rb") as f:
            head = json.loads(f.read())["log"]
    except (OSError, ValueError, KeyError, TypeError):
        head = {}
    creator = head.get("creator") or {"name": "mcp-notebook proxy", "version": "0"}
    w = HarWriter(path, creator, comment=head.get("comment", ""))
    n = len(w)
    w.close()
    return n
