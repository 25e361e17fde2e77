"""HAR out: a capture of MCP over HTTP written back as a HAR 1.2 document.

Only frames read from a HAR (``source`` = ``<file>#entry<N>...``) can be written: a
trace of stdio or of any other format raises :class:`NotHTTPTraffic` (a HAR made up for
stdio messages would show HTTP exchanges that never happened).

Each entry of the capture becomes one entry again, in the order of the capture's entry
numbers, built from its frames as :mod:`mcp_notebook.readers.har` reads them:

- the POST body is the request frame's text; the reply is the JSON response frame's text
  (``application/json``) or the SSE events (``text/event-stream``), each with its arrival
  time in ``response.content._sseEvents`` (the recording proxy's extension), its ``id``
  and ``event`` type; a short non-JSON reply (``extra["reply"]``) is the body again;
- a GET or DELETE log row (``GET <url> -> <status>``) is that request again;
- sessions: an HTTP session is the ``Mcp-Session-Id`` header; a stateless exchange
  (session ``<file> entry <N>``) sends ``MCP-Protocol-Version: 2026-07-28``; a session of
  the 2024-11-05 transport is the query of the endpoint URL its ``endpoint`` event gave,
  which the POSTs of that session are sent to; a session named after the file has no
  header. Sessions named after the file take the name of the file written.

- the reader's note on entries that are not MCP traffic (``skipped_entries``) gives
  those entries again, at their numbers, from the methods and URLs it names, so that the
  other entries keep theirs; a body the capture cut keeps its ``_truncated`` size.

Times: ``startedDateTime`` is the request's time (to the nanosecond), ``time`` the
JSON reply's; an SSE event with no time has none again, and its stream opens at the
time of the frame before it (where the reader had placed it); the Mcp-Method, Mcp-Name
and MCP-Protocol-Version headers of a POST as the reader kept them. Not written back:
headers other than these, the URLs of POSTs (the endpoint of a log row or an ``endpoint`` event
when the capture has one, else ``http://localhost/mcp``), entries that made no frame
and are not in that note (a stream with only priming events), and the bodies of
truncated captures beyond what was kept.

>>> import mcp_notebook as mn, tempfile, os
>>> t = mn.load(mn.sample_path("demo-http"))
>>> path = os.path.join(tempfile.mkdtemp(), "demo-http.har")
>>> _ = write_har(t, path)
>>> back = mn.load(path)
>>> back.frames["raw"].tolist() == t.frames["raw"].tolist()
True
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from . import __version__

__all__ = ["NotHTTPTraffic", "har_of", "write_har"]

_SOURCE = re.compile(r"^(?P<file>.*)#entry(?P<n>\d+)(?:/(?P<part>response|event(?P<ev>\d+)))?$")
_LOG = re.compile(r"^(?P<method>GET|DELETE|POST|PUT) (?P<url>\S+) -> (?P<status>\d+|None)")
_STATELESS = "2026-07-28"
_DEFAULT_URL = "http://localhost/mcp"


class NotHTTPTraffic(ValueError):
    """The trace holds frames that were not read from a HAR entry."""


def _iso(ns: int) -> str:
    sec, frac = divmod(int(ns), 1_000_000_000)
    day = datetime.fromtimestamp(sec, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{day}.{frac:09d}Z"


def _ns(ts: Any) -> int | None:
    return None if ts is None or pd.isna(ts) else int(pd.Timestamp(ts).value)


def _sse_block(ev: dict[str, Any]) -> str:
    lines = []
    if ev.get("event"):
        lines.append(f"event: {ev['event']}")
    if ev.get("id") is not None:
        lines.append(f"id: {ev['id']}")
    data = ev.get("data")
    if data is not None:
        lines.extend(f"data: {line}" for line in data.split("\n"))
    return "\n".join(lines) + ("\n\n" if not ev.get("_unterminated") else "")


_HEADER_NAMES = {"mcp-method": "Mcp-Method", "mcp-name": "Mcp-Name",
                 "mcp-protocol-version": "MCP-Protocol-Version"}


class _Entry:
    def __init__(self, n: int) -> None:
        self.n = n
        self.method = "POST"
        self.url: str | None = None
        self.session: Any = None
        self.status: int | None = None
        self.start: int | None = None
        self.body: str | None = None
        self.reply: str | None = None
        self.reply_ts: int | None = None
        self.events: dict[int, dict[str, Any]] = {}
        self.plain: str | None = None  # a short non-JSON reply
        self.log_only = False
        self.proxy_error: str | None = None
        self.body_cut: int | None = None  # the full size of a body the capture cut
        self.reply_cut: int | None = None
        self.aborted: Any = None
        self.skipped = False  # an entry that is not MCP traffic
        self.before: int | None = None  # the time of the last timed frame before this entry's
        self.mcp_headers: dict[str, str] = {}  # Mcp-Method, Mcp-Name, MCP-Protocol-Version


def _entries(trace: Any) -> tuple[str, list[_Entry], dict[Any, str]]:
    f = trace.frames
    files: set[str] = set()
    entries: dict[int, _Entry] = {}
    endpoints: dict[Any, str] = {}  # session -> the endpoint URL the server named
    last: int | None = None
    for row in f.itertuples(index=False):
        m = _SOURCE.match(str(row.source)) if isinstance(row.source, str) else None
        x = trace.extra(row.seq)
        if m is None and str(row.kind) == "log" and x.get("skipped_entries"):
            # the reader's note on entries that are not MCP traffic: made again from the
            # methods and URLs it names (the first five)
            files.add(str(row.source))
            urls = re.findall(r"(?:^|, |: )([A-Z]+ \S+?)(?=,| \.\.\.|$)", str(row.raw))
            for i, n in enumerate(x["skipped_entries"]):
                method, _, url = (urls[min(i, len(urls) - 1)] if urls
                                  else "GET /").partition(" ")
                e = entries.setdefault(int(n), _Entry(int(n)))
                e.method, e.url, e.status, e.skipped = method, url, 200, True
            continue
        if m is None:
            raise NotHTTPTraffic(
                f"frame {row.seq} was not read from a HAR entry (source {row.source!r}): "
                "only captures of MCP over HTTP can be written as HAR")
        files.add(m["file"])
        if len(files) > 1:
            raise NotHTTPTraffic("the trace holds frames of more than one HAR file: "
                                 f"{sorted(files)}")
        n = int(m["n"])
        if n not in entries:
            entries[n] = _Entry(n)
            entries[n].before = last
        e = entries[n]
        if row.ts is not None and not pd.isna(row.ts):
            last = _ns(row.ts)
        e.method = str(x.get("http") or e.method)
        if isinstance(x.get("status"), int):
            e.status = x["status"]
        ts = _ns(row.ts)
        kind = str(row.kind)
        part = m["part"]
        if part is None:
            if e.session is None:
                e.session = row.session
            if x.get("proxy_error"):
                e.proxy_error, e.aborted = str(row.raw), x.get("aborted")
                if e.reply_ts is None:
                    e.reply_ts = ts
                continue
            if kind == "log":
                log = _LOG.match(str(row.raw))
                if log:
                    e.url = log["url"]
                    e.start = ts
                    e.log_only = True
                continue
            e.body, e.start = str(row.raw), ts
            e.body_cut = x.get("truncated_bytes")
            e.mcp_headers = x.get("mcp_headers") or {}  # as the reader kept them
            if isinstance(x.get("reply"), str):
                e.plain = x["reply"]
        elif part == "response":
            if e.session is None:
                e.session = row.session
            e.reply, e.reply_ts = str(row.raw), ts
            e.reply_cut = x.get("truncated_bytes")
        else:
            ev: dict[str, Any] = {"data": str(row.raw)}
            if e.session is None:
                e.session = row.session
            if ts is not None:
                ev["t"] = _iso(ts)
            if x.get("event_id") is not None:
                ev["id"] = str(x["event_id"])
            if x.get("sse_event"):
                ev["event"] = str(x["sse_event"])
            if x.get("sse_event") == "endpoint":
                endpoints[row.session] = str(x.get("endpoint") or row.raw)
            if x.get("sse_incomplete"):
                ev["_unterminated"] = True
            e.events[int(m["ev"])] = ev
    name = files.pop() if files else "trace.har"
    return name, [entries[k] for k in sorted(entries)], endpoints


def har_of(trace: Any) -> dict[str, Any]:
    """The HAR 1.2 document of ``trace`` (see the module's text)."""
    old, entries, endpoints = _entries(trace)
    base = next((e.url for e in entries if e.url and not e.skipped), None) or next(
        iter(endpoints.values()), _DEFAULT_URL)
    out = []
    first_time = next((e.start for e in entries if e.start is not None), None)
    last_start = first_time
    for e in entries:
        if e.skipped:
            e.start = last_start
        session = e.session
        req_headers: list[dict[str, str]] = []
        url = e.url or base
        stateless = isinstance(session, str) and session == f"{old} entry {e.n}"
        if stateless:
            if "mcp-protocol-version" not in e.mcp_headers:
                req_headers.append({"name": "MCP-Protocol-Version", "value": _STATELESS})
        elif session in endpoints:
            url = endpoints[session]
        elif isinstance(session, str) and session != old:
            req_headers.append({"name": "Mcp-Session-Id", "value": session})
        req_headers += [{"name": _HEADER_NAMES.get(k, k), "value": v}
                        for k, v in e.mcp_headers.items()]
        start = e.start if e.start is not None else (
            e.reply_ts if e.reply_ts is not None else e.before if e.before is not None
            else first_time or 0)
        last_start = start
        request: dict[str, Any] = {"method": e.method, "url": url, "httpVersion": "HTTP/1.1",
                                   "cookies": [], "headers": req_headers, "queryString": [],
                                   "headersSize": -1, "bodySize": -1}
        if e.method == "POST":
            request["headers"] = [{"name": "Content-Type", "value": "application/json"},
                                  *req_headers]
            if e.body is not None:
                request["postData"] = {"mimeType": "application/json", "text": e.body}
                request["bodySize"] = len(e.body.encode("utf-8", "surrogateescape"))
                if e.body_cut:
                    request["postData"]["_truncated"] = e.body_cut
        content: dict[str, Any] = {"size": 0, "mimeType": ""}
        if e.events:
            n = max(e.events) + 1
            evs = [e.events.get(i, {"data": None}) for i in range(n)]
            for ev in evs:
                if ev["data"] is None:
                    del ev["data"]
            text = "".join(_sse_block(ev) for ev in evs)
            content = {"size": len(text), "mimeType": "text/event-stream", "text": text,
                       "_sseEvents": evs}
        elif e.reply is not None:
            content = {"size": len(e.reply), "mimeType": "application/json",
                       "text": e.reply}
            if e.reply_cut:
                content["_truncated"] = e.reply_cut
        elif e.plain is not None:
            content = {"size": len(e.plain), "mimeType": "text/plain", "text": e.plain}
        end = e.reply_ts if e.reply_ts is not None else start
        ms = max(end - start, 0) / 1e6
        entry: dict[str, Any] = {
            "startedDateTime": _iso(start),
            "time": ms,
            "request": request,
            "response": {"status": e.status if e.status is not None else 0,
                         "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
                         "headers": [{"name": "Content-Type", "value": content["mimeType"]}]
                         if content["mimeType"] else [],
                         "content": content, "redirectURL": "", "headersSize": -1,
                         "bodySize": content["size"]},
            "cache": {},
            "timings": {"send": 0, "wait": ms, "receive": 0},
        }
        if e.proxy_error is not None:
            entry["_proxyError"] = e.proxy_error
            if e.aborted:
                entry["_aborted"] = e.aborted
        out.append(entry)
    return {"log": {"version": "1.2",
                    "creator": {"name": "mcp_notebook", "version": __version__},
                    "entries": out}}


def write_har(trace: Any, path: str | Path) -> Path:
    """Write ``trace`` (a capture of MCP over HTTP) as a HAR 1.2 file at ``path``."""
    path = Path(path)
    doc = har_of(trace)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return path
