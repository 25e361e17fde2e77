"""HAR 1.2 captures of MCP over HTTP: Streamable HTTP (2025-03-26 on) and HTTP+SSE (2024-11-05).

Every entry of an MCP endpoint gives records:

- a POST body is one client-to-server frame (``source`` = ``file#entry<N>``, N counts
  ``log.entries`` from 0);
- an ``application/json`` response is one server-to-client frame
  (``file#entry<N>/response``);
- a ``text/event-stream`` response (a POST's reply stream or a GET stream) gives one
  frame per SSE event with data (``file#entry<N>/event<M>``, M counts the event blocks of
  the body from 0); priming events (no data), keep-alive comments and retry hints make
  no row. An event whose type is not ``message`` is kept with ``extra["sse_event"]``
  set (the old transport's ``endpoint`` event is a ``log`` row that names the session);
- a GET or DELETE with no messages, a transport failure the server answered with a
  non-JSON body, and anything the proxy noted (``_proxyError``) are ``log`` rows.

``extra`` keeps the HTTP facts: ``status`` (on the request frame and on response
frames: a 202 is visible there), ``event_id`` (the SSE ``id``), ``transport_error`` (the
status, on bodies of 4xx/5xx replies: such an error is about the HTTP request, not an
answer to a JSON-RPC id, and is not paired), ``sse_incomplete`` (the stream ended
inside the event) and ``ts_estimated`` (see below).

Sessions: the ``Mcp-Session-Id`` header (request, else response); for the old transport
the ``sessionId`` / ``session_id`` query parameter of the endpoint URL given by the
``endpoint`` event; else the ``session`` argument or the file name.

Times: a request at ``startedDateTime``; a JSON reply at the entry's end; an SSE event
at its own arrival time when the HAR has one (``response.content._sseEvents[i].t``,
written by mcp-notebook's recording proxy). Without it, the events of a POST's reply
stream are placed from the entry's timings (the last at the entry's end, the others at
its first byte; ``extra["ts_estimated"]``), and the events of a GET stream, which may
arrive at any time while it is open, get no time. Records come out sorted by time
(stable; no time sorts last), so with arrival times the events of a long GET stream
fall between the POSTs they interleave with, and without them they come after all POSTs
(a response is never placed before its request).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from ._logtext import looks_like_json
from ._sse import SSEEvent, parse_sse
from .base import Record, open_text
from .tap import parse_ts

__all__ = ["name", "description", "sniff", "read"]

name = "har"
description = "HAR 1.2 of MCP over HTTP (Streamable HTTP and 2024-11-05 HTTP+SSE)"

_SESSION_PARAMS = ("sessionId", "session_id", "sessionid")


def sniff(head: str, filename: str) -> int:
    text = head.lstrip()
    if text.startswith("{") and '"log"' in head[:4096] and '"entries"' in head:
        return 95 if filename.lower().endswith(".har") else 90
    return 30 if filename.lower().endswith(".har") else 0


def _header(headers: Any, wanted: str) -> str | None:
    if not isinstance(headers, list):
        return None
    for h in headers:
        if isinstance(h, dict) and str(h.get("name", "")).lower() == wanted:
            value = h.get("value")
            return value if isinstance(value, str) else None
    return None


def _body(obj: Any) -> str | None:
    """The text of a HAR ``postData`` / ``content`` (base64 decoded), or None."""
    if not isinstance(obj, dict):
        return None
    text = obj.get("text")
    if not isinstance(text, str):
        return None
    if obj.get("encoding") == "base64":
        try:
            return base64.b64decode(text).decode("utf-8", "surrogateescape")
        except ValueError:
            return text
    return text


def _ms(value: Any) -> float:
    return float(value) / 1000 if isinstance(value, (int, float)) and value > 0 else 0.0


def _session_from_url(url: str) -> str | None:
    query = parse_qs(urlsplit(url).query)
    for key in _SESSION_PARAMS:
        if query.get(key):
            return query[key][0]
    return None


def _endpoint(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class _Entry:
    """The facts of one HAR entry the records need."""

    def __init__(self, index: int, e: dict[str, Any]) -> None:
        self.index = index
        req = e.get("request") if isinstance(e.get("request"), dict) else {}
        resp = e.get("response") if isinstance(e.get("response"), dict) else {}
        self.raw = e
        self.method = str(req.get("method", "")).upper()
        self.url = str(req.get("url", ""))
        self.req_headers = req.get("headers")
        self.resp_headers = resp.get("headers")
        self.post = req.get("postData") if isinstance(req.get("postData"), dict) else None
        self.body = _body(self.post)
        content = resp.get("content") if isinstance(resp.get("content"), dict) else {}
        self.content = content
        self.reply = _body(content)
        status = resp.get("status")
        self.status = status if isinstance(status, int) else None
        mime = _header(self.resp_headers, "content-type") or str(content.get("mimeType") or "")
        self.sse = "text/event-stream" in mime.lower()
        self.start = parse_ts(e.get("startedDateTime")) if isinstance(
            e.get("startedDateTime"), str) else None
        timings = e.get("timings") if isinstance(e.get("timings"), dict) else {}
        first = sum(_ms(timings.get(k)) for k in ("blocked", "dns", "connect", "send", "wait"))
        total = _ms(e.get("time")) or first + _ms(timings.get("receive"))
        self.first_byte = None if self.start is None else self.start + first
        self.end = None if self.start is None else self.start + total

    def session_header(self) -> str | None:
        return (_header(self.req_headers, "mcp-session-id")
                or _header(self.resp_headers, "mcp-session-id"))

    def is_mcp(self, endpoints: set[str]) -> bool:
        if self.method == "POST" and self.body is not None and looks_like_json(self.body):
            return True
        if self.sse or self.session_header() is not None:
            return True
        return self.method in ("GET", "DELETE") and _endpoint(self.url) in endpoints


class _Reader:
    def __init__(self, path: Path, session: str | None) -> None:
        self.name = path.name
        self.path = path
        self.default = session or path.name
        self.old_sessions: dict[str, str] = {}  # endpoint URL (with query) -> session

    def load(self) -> tuple[list[_Entry] | None, str | None]:
        try:
            with open_text(self.path) as f:
                doc = json.load(f)
        except (ValueError, UnicodeDecodeError) as exc:
            return None, f"not a HAR file (not valid JSON: {exc})"
        entries = doc.get("log", {}).get("entries") if isinstance(doc, dict) and isinstance(
            doc.get("log"), dict) else None
        if not isinstance(entries, list):
            return None, "not a HAR file (no log.entries array)"
        return [_Entry(i, e) for i, e in enumerate(entries) if isinstance(e, dict)], None

    def run(self) -> Iterator[Record]:
        entries, problem = self.load()
        if entries is None:
            yield Record(raw="", session=self.default, stream="http", source=self.name,
                         kind="invalid", reason=problem)
            return
        endpoints = {_endpoint(e.url) for e in entries
                     if e.method == "POST" and e.body is not None and looks_like_json(e.body)}
        out: list[Record] = []
        skipped: list[_Entry] = []
        for e in entries:
            if e.is_mcp(endpoints):
                out.extend(self.entry(e))
            else:
                skipped.append(e)
        if skipped:
            urls = sorted({f"{e.method} {_endpoint(e.url)}" for e in skipped})
            out.append(Record(raw=f"{len(skipped)} HAR entries are not MCP traffic and were "
                              f"left out: {', '.join(urls[:5])}" + (" ..." if len(urls) > 5
                                                                    else ""),
                              session=self.default, stream="http", source=self.name,
                              kind="log", extra={"skipped_entries": [e.index for e in skipped]}))
        order = {id(r): i for i, r in enumerate(out)}
        out.sort(key=lambda r: (r.ts if r.ts is not None else float("inf"), order[id(r)]))
        yield from out

    # -- one entry -------------------------------------------------------------------------

    def session_of(self, e: _Entry) -> str:
        header = e.session_header()
        if header:
            return header
        if e.url in self.old_sessions:
            return self.old_sessions[e.url]
        return _session_from_url(e.url) or self.default

    def entry(self, e: _Entry) -> Iterator[Record]:
        src = f"{self.name}#entry{e.index}"
        session = self.session_of(e)
        base: dict[str, Any] = {"http": e.method}
        if e.status is not None:
            base["status"] = e.status
        failed = e.status is not None and e.status >= 400
        if e.method == "POST":
            if e.body is None:
                yield Record(raw="", ts=e.start, direction="c2s", session=session,
                             stream="http", source=src, kind="invalid", extra=dict(base),
                             reason="a POST whose body the HAR does not hold")
            else:
                yield self.truncated(Record(raw=e.body, ts=e.start, direction="c2s",
                                            session=session, stream="http", source=src,
                                            extra=dict(base)), e.post)
        note = e.raw.get("_proxyError")
        if isinstance(note, str):
            yield Record(raw=note, ts=e.end, session=session, stream="http", source=src,
                         kind="log", extra={**base, "transport_error": e.status or 502})
            return
        if e.sse:
            yield from self.events(e, session, src, base, failed)
        elif e.reply and e.reply.strip():
            extra = dict(base)
            rec = Record(raw=e.reply, ts=e.end, direction="s2c", session=session,
                         stream="http", source=f"{src}/response", extra=extra)
            if failed:
                extra["transport_error"] = e.status
                if not looks_like_json(e.reply):
                    rec.kind, rec.direction = "log", None
            yield self.truncated(rec, e.content)
        elif e.method != "POST":
            text = f"{e.method} {e.url} -> {e.status}"
            if e.method == "GET" and e.status == 200:
                text += " (stream body not captured)"
            yield Record(raw=text, ts=e.start, session=session, stream="http", source=src,
                         kind="log", extra=dict(base))

    @staticmethod
    def truncated(rec: Record, holder: dict[str, Any] | None) -> Record:
        size = holder.get("_truncated") if isinstance(holder, dict) else None
        if size:
            rec.kind = "invalid"
            rec.reason = (f"the capture kept only the first part of this body (full size "
                          f"{size} bytes)")
            rec.extra["truncated_bytes"] = size
        return rec

    def events(self, e: _Entry, session: str, src: str, base: dict[str, Any],
               failed: bool) -> Iterator[Record]:
        stamped = e.content.get("_sseEvents")
        if isinstance(stamped, list) and all(isinstance(x, dict) for x in stamped):
            events = [_from_proxy(i, x) for i, x in enumerate(stamped)]
            times: list[float | None] = [parse_ts(x.get("t")) if isinstance(x.get("t"), str)
                                         else None for x in stamped]
            estimated = False
        else:
            events = parse_sse(e.reply or "")
            estimated = e.method == "POST"
            if estimated:  # the reply stream of one POST: bounded by the entry's timings
                times = [e.first_byte] * len(events)
                if events:
                    times[-1] = e.end
            else:  # a GET stream's events may arrive at any time while it is open
                times = [None] * len(events)
        if not e.reply and not events:
            yield Record(raw=f"{e.method} {e.url} -> {e.status} (stream body not captured)",
                         ts=e.start, session=session, stream="http", source=src, kind="log",
                         extra=dict(base))
            return
        for ev, ts in zip(events, times):
            if ev.event == "endpoint":  # 2024-11-05: where to POST, naming the session
                url = urljoin(e.url, (ev.data or "").strip())
                session = _session_from_url(url) or url
                self.old_sessions[url] = session
                yield Record(raw=ev.data or "", ts=ts, session=session, stream="sse",
                             source=f"{src}/event{ev.index}", kind="log",
                             extra={**base, "sse_event": "endpoint", "endpoint": url})
                continue
            if ev.empty:
                continue  # priming event, keep-alive comment, retry hint
            extra = dict(base)
            if ev.id is not None:
                extra["event_id"] = ev.id
            if ev.event not in (None, "message"):
                extra["sse_event"] = ev.event
            if not ev.complete:
                extra["sse_incomplete"] = True
            if estimated:
                extra["ts_estimated"] = True
            if failed:
                extra["transport_error"] = e.status
            yield Record(raw=ev.data or "", ts=ts, direction="s2c", session=session,
                         stream="sse", source=f"{src}/event{ev.index}", extra=extra)


def _from_proxy(index: int, x: dict[str, Any]) -> SSEEvent:
    data = x.get("data")
    retry = x.get("retry")
    return SSEEvent(index, data if isinstance(data, str) else None,
                    x.get("event") if isinstance(x.get("event"), str) else None,
                    x.get("id") if isinstance(x.get("id"), str) else None,
                    int(retry) if isinstance(retry, str) and retry.isdigit() else None,
                    complete=not x.get("_unterminated"),
                    comment=x.get("comment") if isinstance(x.get("comment"), str) else None)


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the records of a HAR file, in time order."""
    return _Reader(path, session).run()
