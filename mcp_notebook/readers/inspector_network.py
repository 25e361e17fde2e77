"""MCP Inspector v2 network export (``inspector-network-<server>-<time>.json``).

The web Inspector's Network tab lists each HTTP request its MCP client made, and its
Export button writes them as ``JSON.stringify(entries, null, 2)``, each entry ``{id,
timestamp, method, url, requestHeaders, requestBody?, responseStatus?,
responseStatusText?, responseHeaders?, responseBody?, duration?, category?, stream?,
error?}`` (headers as an object of lower-case names; ``stream: {eventCount, closedAt?}``
for a long-lived stream; ``error`` for a request that got no response).

Each entry is read as the HAR entry it describes, by the HAR reader's rules (``har``):
the POST body is a client frame, a JSON reply a server frame, each event of a reply
stream a server frame, sessions from ``mcp-session-id``, an authorization challenge and
the requests to endpoints never sent JSON-RPC (OAuth discovery, say) as ``log`` rows.
What the export holds differently from a HAR:

- **Times.** ``timestamp`` is when the request started; ``duration`` ends when the
  reply's headers arrived, not its body. A JSON reply is placed then; the events of a
  reply stream are all placed then too (``extra["ts_estimated"]``, as a HAR's events
  without their own times), so the latency of a call answered on a stream is its time to
  the first byte, not to its result: the Protocol tab's export has the times of each
  message.
- **A GET stream's events are not in the file**: the export keeps how many there were
  (``stream.eventCount``). Such a stream is a ``log`` row that says so
  (``extra["events_not_held"]``), and the trace's notes sum them up. The server's
  messages sent on it are missing: over Streamable HTTP its own requests and
  notifications, over the 2024-11-05 HTTP+SSE transport every message it sent, answers
  included. Where the export has such a stream, what the client POSTed may answer a
  request made on it (``extra["request_not_held"]``), and, where its reply held no
  message (``Accepted``), has its answer, if any, on it (``extra["answer_not_held"]``):
  the pairs show such requests unanswered and such responses unasked, as the capture has
  them, but ``unanswered-request`` and ``orphan-response`` do not report them (the
  capture, not the peers, left the other half out).
- **Bodies as the Inspector wrote them again.** A JSON body was parsed and written
  again by JavaScript (sensitive members redacted), so the exact bytes, and numbers
  beyond 2^53, are not the wire's.
- **A request that failed** (``error``: the connection refused, say) is its client frame
  and a ``log`` row with the error (``extra["fetch_error"]``); it has no answer.

Loaded together with the Protocol tab's export of the same session (a folder of every
export, say), the network export is left out, with a note: every message it holds is in
the protocol export, with its own time (:func:`same_session`), and read twice each would
be a duplicate.

A broken export costs only what is broken: each entry is decoded on its own, an entry
that cannot be (not an object, not valid JSON) is one ``invalid`` row, and a file cut
inside an entry keeps the entries before the cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ._har_load import _Entry
from ._har_reader import _Reader
from ._jsondoc import salvage
from .base import Record, open_bytes

__all__ = ["name", "description", "sniff", "read", "not_held_note", "same_session"]

name = "inspector-network"
description = "MCP Inspector v2 network export (JSON array of HTTP requests)"

_decode = msgspec.json.Decoder(list[msgspec.Raw]).decode


def sniff(head: str, filename: str) -> int:
    text = head.lstrip()
    if not text.startswith("["):
        return 0
    window = text[:8192]
    if all(k in window for k in ('"requestHeaders"', '"timestamp"', '"url"', '"method"')):
        return 90
    return 0


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the records of an Inspector network export (as the HAR reader gives a HAR's:
    in file order, each with the step that puts them in time order)."""
    return _NetworkReader(path, session).run()


def not_held_note(extra: dict[int, dict[str, Any]]) -> list[str]:
    """The trace note on the GET streams whose events an export does not hold."""
    from ..engine.native import extras_with

    counts = [e["events_not_held"] for _, e in extras_with(extra, ("events_not_held",))]
    if not counts:
        return []
    events = sum(c for c in counts if isinstance(c, int))
    return [f"{len(counts)} GET stream(s) of the server's messages ({events} event(s)) are "
            "not in the capture (the Inspector's network export keeps only how many events "
            "each had); the Protocol tab's export holds those messages"]


def same_session(network: Path, protocols: list[Path],
                 read_before: dict[Path, Any] | None = None) -> Path | None:
    """The protocol export among ``protocols`` of the same session as the network export
    ``network``, or None: one that holds every message of it (the same JSON values, as
    many times each), the client's sent within :data:`SAME_TIME` seconds of when the
    network export says their requests started (two sessions that said the same things,
    as two runs of one script do, are told apart by when). ``read_before``: the messages
    of the protocol exports read for an earlier network export (each is read once)."""
    from . import inspector

    held = _messages(read(network))
    if not held:
        return None
    seen = {} if read_before is None else read_before
    for proto in protocols:
        if proto not in seen:
            seen[proto] = _messages(inspector.read(proto))
        there = seen[proto]
        if all(len(sent) <= len(there.get(key, ())) and all(
                any(abs(at - t) <= SAME_TIME for _, t in there[key])
                for flow, at in sent if flow == "c2s")
               for key, sent in held.items()):
            return proto
    return None


def _messages(records: Iterator[Record]) -> dict[str, list[tuple[str | None, float]]]:
    """Each message of ``records`` (by its JSON value) -> the direction and time of each
    record that holds it."""
    out: dict[str, list[tuple[str | None, float]]] = {}
    for rec in records:
        if rec.kind is not None or not rec.raw:
            continue
        try:
            value = json.loads(rec.raw)
        except (ValueError, RecursionError):
            continue
        at = float("nan") if rec.ts is None else rec.ts
        for one in value if isinstance(value, list) else [value]:
            out.setdefault(json.dumps(one, sort_keys=True), []).append((rec.direction, at))
    return out


#: how far apart (seconds) the two exports may stamp one message the client sent
SAME_TIME = 2.0


def _headers(h: Any) -> list[dict[str, Any]]:
    """An export's headers (an object) as a HAR's list."""
    return [{"name": str(k), "value": v} for k, v in h.items()] if isinstance(h, dict) else []


def _content_type(headers: list[dict[str, Any]]) -> Any:
    """The value of the first ``Content-Type`` of a HAR header list ("" if none)."""
    return next((h["value"] for h in headers if h["name"].lower() == "content-type"), "")


def _har_entry(e: dict[str, Any]) -> dict[str, Any]:
    """The HAR entry an export entry describes (the generic form ``_Entry`` reads)."""
    req_headers = _headers(e.get("requestHeaders"))
    request: dict[str, Any] = {"method": e.get("method", ""), "url": e.get("url", ""),
                               "headers": req_headers}
    body = e.get("requestBody")
    if body is not None:
        request["postData"] = {"mimeType": _content_type(req_headers), "text": body}
    out: dict[str, Any] = {"startedDateTime": e.get("timestamp"), "request": request}
    duration = e.get("duration")
    if isinstance(duration, (int, float)) and not isinstance(duration, bool):
        out["time"] = duration
        out["timings"] = {"send": 0, "wait": duration, "receive": 0}
    status = e.get("responseStatus")
    if status is not None or "responseHeaders" in e:
        resp_headers = _headers(e.get("responseHeaders"))
        content: dict[str, Any] = {"mimeType": _content_type(resp_headers)}
        if e.get("responseBody") is not None:
            content["text"] = e["responseBody"]
        out["response"] = {"status": status, "headers": resp_headers, "content": content}
    return out


class _NetworkReader(_Reader):
    """The HAR reader on the entries of a network export (see the module's doc)."""

    STAMP = "timestamp"

    def __init__(self, path: Path, session: str | None) -> None:
        super().__init__(path, session)
        self.streams: dict[int, Any] = {}  # entry -> its ``stream`` (a GET stream's count)
        self.errors: dict[int, str] = {}  # entry -> the request's ``error``
        self.only: str | None = None  # the one session the entries name, if one

    def load(self, held: list[Any] | None = None) -> tuple[list[_Entry] | None, str | None]:
        with open_bytes(self.path) as f:
            data = f.read()
        tail: list[Record] = []
        try:
            items: list[tuple[int, Any]] = list(enumerate(_decode(data.removeprefix(
                b"\xef\xbb\xbf"))))
        except (msgspec.DecodeError, RecursionError) as exc:
            items = salvage(data, (), what="an Inspector network export", unit="entry",
                            name=self.name, sess=self.default, exc=exc, tail=tail)
            if not items and tail:
                self.bad.extend(tail)
                return [], None
        entries: list[tuple[int, Any]] = []
        for i, raw in items:
            try:
                e = json.loads(bytes(raw).decode("utf-8", "surrogateescape"))
            except (ValueError, RecursionError) as why:
                self.bad.append(Record(raw=bytes(raw)[:2000].decode("utf-8", "replace"),
                                       session=self.default, stream="http",
                                       source=f"{self.name}#entry{i}", kind="invalid",
                                       reason=f"an export entry that is not valid JSON: {why}"))
                continue
            if not isinstance(e, dict):
                self.bad.append(Record(raw=str(e)[:2000], session=self.default, stream="http",
                                       source=f"{self.name}#entry{i}", kind="invalid",
                                       reason="an export entry that is not an object"))
                continue
            if e.get("stream") is not None:
                self.streams[i] = e["stream"]
            if e.get("error") is not None:
                self.errors[i] = str(e["error"])
            entries.append((i, _har_entry(e)))
        self.bad.extend(tail)
        out = self.entries(entries)
        named = {super(_NetworkReader, self).session_of(e) for e in out} - {self.default}
        self.only = named.pop() if len(named) == 1 else None
        return out, None

    def not_held(self, e: _Entry) -> bool:
        """As a HAR's, but a stream the export counted no event of holds nothing missing."""
        if not super().not_held(e):
            return False
        stream = self.streams.get(e.index)
        return not (isinstance(stream, dict) and stream.get("eventCount") == 0)

    def session_of(self, e: _Entry) -> str:
        """As a HAR's; an entry that names no session (the 2024-11-05 transport's GET
        stream, whose ``endpoint`` event the export does not hold) is in the one session
        the others name, where they name one."""
        session = super().session_of(e)
        return self.only if session == self.default and self.only else session

    def entry(self, e: _Entry) -> Iterator[Record]:
        if e.index in self.errors:  # never reached the server: no answer was owed
            return self.records(e)
        return super().entry(e)

    def records(self, e: _Entry) -> Iterator[Record]:
        src, session, base = self.heading(e)
        error = self.errors.get(e.index)
        if error is not None:  # no response: the request as sent, and why it got none
            if e.method == "POST" and e.body is not None:
                yield Record(raw=e.body, ts=e.start, direction="c2s", session=session,
                             stream="http", source=src, extra=dict(base))
            yield Record(raw=f"{e.method} {e.url}: {error}", ts=e.end, session=session,
                         stream="http", source=src, kind="log",
                         extra={**base, "fetch_error": error})
            return
        stream = self.streams.get(e.index)
        if e.method == "GET" and e.sse and not e.reply and isinstance(stream, dict):
            count = stream.get("eventCount")
            n = count if isinstance(count, int) and not isinstance(count, bool) else None
            said = "an unknown number of events" if n is None else f"{n} event(s)"
            yield Record(raw=f"GET {e.url} -> {e.status}: a stream of {said} the network "
                         "export does not hold (it keeps their count only)", ts=e.start,
                         session=session, stream="http", source=src, kind="log",
                         extra={**base, "events_not_held": n if n is not None else -1})
            return
        yield from super().records(e)
