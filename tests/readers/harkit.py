"""Build HAR 1.2 files by hand, from the HAR spec and the MCP transport spec.

Used until (and beside) the HARs the project's recording proxy captured from real
servers in ``data/``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

T0 = datetime(2025, 6, 18, 12, 0, 0, tzinfo=timezone.utc)
URL = "http://127.0.0.1:3001/mcp"


def iso(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def entry(method: str, url: str = URL, *, at: float = 0.0, body: Any = None,
          headers: dict[str, str] | None = None, status: int = 200, mime: str = "",
          reply: str | None = None, reply_headers: dict[str, str] | None = None,
          wait_ms: float = 5.0, receive_ms: float = 1.0, events: list[dict] | None = None,
          **extensions: Any) -> dict[str, Any]:
    """One HAR entry; ``body`` (dict or text) is the POST body, ``reply`` the response text."""
    req: dict[str, Any] = {
        "method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
        "queryString": [], "headersSize": -1, "bodySize": -1}
    if body is not None:
        text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        req["postData"] = {"mimeType": "application/json", "text": text}
    rh = dict(reply_headers or {})
    if mime:
        rh.setdefault("Content-Type", mime)
    content: dict[str, Any] = {"size": len(reply or ""), "mimeType": mime}
    if reply is not None:
        content["text"] = reply
    if events is not None:
        content["_sseEvents"] = events
    e = {"startedDateTime": iso(at), "time": wait_ms + receive_ms, "request": req,
         "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                      "cookies": [], "headers": [{"name": k, "value": v} for k, v in rh.items()],
                      "content": content, "redirectURL": "", "headersSize": -1,
                      "bodySize": -1},
         "cache": {}, "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0,
                                  "wait": wait_ms, "receive": receive_ms}}
    e.update(extensions)
    return e


def sse(*events: str) -> str:
    """An SSE body from event blocks (each a string of field lines)."""
    return "".join(block + "\n\n" for block in events)


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    doc = {"log": {"version": "1.2", "creator": {"name": "hand", "version": "1"},
                   "entries": entries}}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


def msg(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def js(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


SID = {"Mcp-Session-Id": "abc"}
INIT = msg(id=0, method="initialize", params={
    "protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
    "clientInfo": {"name": "hand", "version": "1"}})
INIT_OK = msg(id=0, result={"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "srv", "version": "1"}})


def streamable(path: Path) -> Path:
    """A Streamable HTTP session with every case the reader must handle (see the test)."""
    call = msg(id=1, method="tools/call", params={"name": "slow", "arguments": {},
                                                  "_meta": {"progressToken": "p1"}})
    progress = msg(method="notifications/progress", params={"progressToken": "p1",
                                                            "progress": 1, "total": 2})
    done = msg(id=1, result={"content": [{"type": "text", "text": "ok"}], "isError": False})
    return write(path, [
        entry("POST", at=0.0, body=INIT, mime="text/event-stream",
              reply=sse("id: s0_0\ndata: ", "id: s0_1\nevent: message\ndata: " + js(INIT_OK)),
              reply_headers=SID),
        entry("POST", at=0.1, body=msg(method="notifications/initialized"), headers=SID,
              status=202, reply=""),
        entry("GET", at=0.2, headers=SID, mime="text/event-stream", wait_ms=2,
              receive_ms=5000,
              reply=sse(": ping", "id: g_1\ndata: " + js(msg(id=0, method="roots/list")),
                        "event: heartbeat\ndata: {\"n\": 1}")),
        entry("POST", at=0.3, body=msg(id=0, result={"roots": []}), headers=SID, status=202,
              reply=""),
        entry("POST", at=0.4, body=call, headers=SID, mime="text/event-stream",
              wait_ms=3, receive_ms=200,
              reply=sse("data: " + js(progress), "id: c1_2\ndata: " + js(done),
                        "id: c1_3\ndata: " + js(done))),
        entry("POST", at=0.8, body=msg(id=2, method="tools/list"), headers=SID,
              mime="application/json", reply=js(msg(id=2, result={"tools": []}))),
        entry("POST", at=0.9, body=msg(id=3, method="tools/list"),
              headers={"Mcp-Session-Id": "gone"}, status=404, mime="application/json",
              reply=js(msg(id=None, error={"code": -32001, "message": "Session not found"}))),
        entry("POST", at=1.0, body="not json at all", headers=SID, status=400,
              mime="text/plain", reply="Bad Request: body is not JSON"),
        entry("OPTIONS", at=1.1, status=204),
        entry("GET", "http://127.0.0.1:3001/favicon.ico", at=1.2, status=404),
        entry("DELETE", at=1.3, headers=SID, status=200),
    ])


def old_sse(path: Path) -> Path:
    """A 2024-11-05 HTTP+SSE session as a browser would save it (no per-event times)."""
    base = "http://127.0.0.1:8000"
    post = f"{base}/messages/?session_id=9f1c"
    return write(path, [
        entry("GET", f"{base}/sse", at=0.0, mime="text/event-stream", receive_ms=3000,
              reply=sse("event: endpoint\ndata: /messages/?session_id=9f1c",
                        "event: message\ndata: " + js(INIT_OK),
                        ": ping - 2025-06-18 12:00:01.000000+00:00",
                        "event: message\ndata: " + js(msg(id=1, result={"tools": []})))),
        entry("POST", post, at=0.1, body=INIT, status=202, mime="text/plain",
              reply="Accepted"),
        entry("POST", post, at=0.2, body=msg(method="notifications/initialized"), status=202,
              mime="text/plain", reply="Accepted"),
        entry("POST", post, at=0.3, body=msg(id=1, method="tools/list"), status=202,
              mime="text/plain", reply="Accepted"),
    ])


def stamped(path: Path) -> Path:
    """Like the recording proxy writes it: per-event arrival times in ``_sseEvents``."""
    get_reply = sse("id: g_0\ndata: ", "id: g_1\ndata: " + js(msg(id=0, method="ping")))
    return write(path, [
        entry("POST", at=0.0, body=INIT, mime="application/json", reply=js(INIT_OK),
              reply_headers=SID),
        entry("GET", at=0.1, headers=SID, mime="text/event-stream", receive_ms=9000,
              reply=get_reply, _incomplete=True,
              events=[{"t": iso(0.15), "id": "g_0", "data": ""},
                      {"t": iso(5.0), "id": "g_1", "data": js(msg(id=0, method="ping"))}]),
        entry("POST", at=4.0, body=msg(id=1, method="tools/list"), headers=SID,
              mime="application/json", reply=js(msg(id=1, result={"tools": []}))),
        entry("POST", at=6.0, body=msg(id=0, result={}), headers=SID, status=202, reply=""),
    ])
