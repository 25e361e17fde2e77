"""Count what a correct analyser must find in a trace, without the mcp_notebook library.

``python scripts/count_trace.py data/*.jsonl data/*.har`` prints one JSON object per
trace. ``scripts/make_data.py`` uses it to write the counts table of ``data/README.md``;
``tests/capture/test_data_readme.py`` checks that table against ``mn.load(...).summary()``.
The two implementations share no code on purpose.

Rules (those of DESIGN.md): a frame is every row: a message, an unparsable line
(``invalid``), a stderr line, a log line (the tap's ``meta`` records; in a HAR, an SSE
event that carries no JSON-RPC message such as ``endpoint``, and a GET or DELETE that
carried none); each element of a JSON array (a batch) is a frame. Requests pair with
responses on (session, requesting side, id as exact JSON), the oldest open request first
when an id is reused while in flight (a HAR POST without a session id whose reply is in
its own body is a scope of its own: stateless HTTP); ``cancelled`` counts requests whose sender cancelled them while in flight
(answered afterwards or not); ``unanswered`` counts requests that got no response (a
POST answered by an authorization challenge, 401 or 403 with ``WWW-Authenticate``, carried
no message: its body and reply are log rows);
``orphans`` are responses to no request (a null id included); ``duplicates`` are the
second and later responses to one request. A result whose ``isError`` is true is a
``tool_error`` (also counted in ``results``).
"""

from __future__ import annotations

import json
import sys
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Any

KEYS = ["frames", "messages", "requests", "notifications", "results", "errors", "tool_errors",
        "invalid", "stderr", "log", "pairs", "unanswered", "cancelled", "orphans", "duplicates"]


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def rows_of_tap(path: Path) -> list[tuple[str, str | None, str]]:
    """``(kind, direction, raw)`` per record: kind is ``frame``, ``stderr`` or ``log``."""
    rows = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec["dir"] in ("c2s", "s2c"):
            rows.append(("frame", rec["dir"], rec["raw"], rec.get("session")))
        else:
            rows.append(("stderr" if rec["dir"] == "stderr" else "log", None, rec["raw"],
                         rec.get("session")))
    return rows


def rows_of_har(path: Path) -> list[tuple[str, str | None, str, str | None]]:
    """The HAR's frames in time order: POST bodies, JSON replies, SSE events with data."""
    timed: list[tuple[float, int, tuple[str, str | None, str, str | None]]] = []
    n = 0
    for i, e in enumerate(json.loads(path.read_text("utf-8"))["log"]["entries"]):
        req, resp = e["request"], e["response"]
        start = _ts(e["startedDateTime"])
        end = start + e["time"] / 1000
        session = next((h["value"] for h in req["headers"] + resp["headers"]
                        if h["name"].lower() == "mcp-session-id"), None)
        content = resp["content"]
        replies = any(ev.get("data") for ev in content.get("_sseEvents", [])) or (
            content.get("text", "").strip() != ""
            and content.get("mimeType", "").startswith("application/json"))
        if session is None and req["method"] == "POST" and replies:
            # No session, and the reply is in this POST's own body (stateless Streamable
            # HTTP: one request in, its response out): the exchange is the scope, so two
            # clients that number their ids alike are not taken for one.
            session = f"#exchange{i}"
        got = 0
        challenged = resp["status"] == 401 or resp["status"] == 403 and any(
            h["name"].lower() == "www-authenticate" for h in resp["headers"])
        if challenged and req["method"] == "POST":
            # an authorization challenge: the message was not read; body and reply are logs
            timed.append((start, n, ("log", None, req.get("postData", {}).get("text", ""),
                                     session)))
            n += 1
            if content.get("text", "").strip():
                timed.append((end, n, ("log", None, content["text"], session)))
                n += 1
            continue
        if req["method"] == "POST" and req.get("postData", {}).get("text"):
            timed.append((start, n, ("frame", "c2s", req["postData"]["text"], session)))
            n += 1
            got += 1
        if "_sseEvents" in content:
            for ev in content["_sseEvents"]:
                if not ev.get("data"):
                    continue  # priming events and keep-alives are not frames
                kind = "frame" if ev.get("event", "message") == "message" else "log"
                timed.append((_ts(ev["t"]), n, (kind, "s2c" if kind == "frame" else None,
                                                ev["data"], session)))
                n += 1
                got += 1
        elif content.get("text", "").strip() and content["mimeType"].startswith(
                "application/json"):
            timed.append((end, n, ("frame", "s2c", content["text"], session)))
            n += 1
            got += 1
        if not got and req["method"] != "POST":
            timed.append((start, n, ("log", None, f"{req['method']} {req['url']}", session)))
            n += 1
    return [row for _, _, row in sorted(timed)]


def _key(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def messages(rows: list[tuple[str, str | None, str, str | None]]
             ) -> list[tuple[int, str, str | None, dict[str, Any] | None]]:
    """``(seq, kind, direction, message)`` per frame, seq numbering every frame from 0.

    A JSON array is a JSON-RPC batch: each element is a frame of its own (an element
    that is not a JSON-RPC object is ``invalid``; an empty array is one ``invalid``).
    ``kind`` is ``frame`` (message is the parsed object, None when it is not a JSON-RPC
    2.0 object), ``stderr`` or ``log``.
    """
    out: list[tuple[int, str, str | None, dict[str, Any] | None]] = []
    for kind, direction, raw, session in rows:
        if kind != "frame":
            out.append((len(out), kind, None, None))
            continue
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        for msg in (parsed if isinstance(parsed, list) and parsed else [parsed]):
            ok = isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and isinstance(
                msg.get("method", ""), str)  # JSON-RPC 2.0 §4: "method: A String ..."
            out.append((len(out), "frame", direction, {**msg, "@session": session} if ok
                        else None))
    return out


def pair(rows: list[tuple[str, str | None, str, str | None]]) -> dict[str, Any]:
    """Requests and responses paired, frame by frame, from the spec alone.

    A request has ``method`` and ``id``; a notification ``method`` and no ``id``; a
    response ``result`` or ``error`` and no ``method``. A response from one side answers
    a request of the other side in the same session whose id has the same JSON text;
    when several such requests are open (an id reused while the first is in flight),
    the oldest is answered first (FIFO). A response whose id is null or absent answers
    nothing (``null_id``); one with no open or answered request is an orphan; one whose
    requests are all answered is a duplicate of the latest answered one.

    Returns ``pairs`` ``[(request_seq, response_seq)]``, ``unanswered`` request seqs,
    ``orphans`` and ``null_id`` response seqs, ``duplicates``
    ``[(request_seq, response_seq)]``,
    ``cancelled`` request seqs (cancelled by their sender while open),
    ``reused_in_flight`` request seqs (an id already open in their scope), ``requests``
    ``{seq: (session, requester, id_key, method)}`` and ``frames`` (see ``messages``).
    """
    frames = messages(rows)
    other = {"c2s": "s2c", "s2c": "c2s"}
    open_: dict[tuple[Any, ...], deque[int]] = {}
    answered: dict[tuple[Any, ...], list[int]] = {}
    requests: dict[int, tuple[Any, ...]] = {}
    out: dict[str, Any] = {"pairs": [], "orphans": [], "null_id": [], "duplicates": [],
                           "cancelled": set(), "reused_in_flight": [],
                           "frames": frames, "requests": requests}
    for seq, _, direction, msg in frames:
        if msg is None:
            continue
        session = msg["@session"]
        if "method" in msg:
            if "id" in msg:
                key = (session, direction, _key(msg["id"]))
                requests[seq] = (*key, msg["method"])
                if open_.get(key):
                    out["reused_in_flight"].append(seq)
                open_.setdefault(key, deque()).append(seq)
            elif msg["method"] == "notifications/cancelled":
                params = msg.get("params")
                ref = params.get("requestId") if isinstance(params, dict) else None
                waiting = open_.get((session, direction, _key(ref)))
                if waiting:
                    out["cancelled"].add(waiting[0])
            continue
        if "result" not in msg and "error" not in msg:
            continue
        if msg.get("id") is None:
            out["null_id"].append(seq)
            continue
        key = (session, other[direction], _key(msg["id"]))
        if open_.get(key):
            req = open_[key].popleft()
            answered.setdefault(key, []).append(req)
            out["pairs"].append((req, seq))
        elif answered.get(key):
            out["duplicates"].append((answered[key][-1], seq))
        else:
            out["orphans"].append(seq)
    out["unanswered"] = sorted(seq for waiting in open_.values() for seq in waiting)
    out["cancelled"] = sorted(out["cancelled"])
    return out


def count(rows: list[tuple[str, str | None, str, str | None]]) -> dict[str, int]:
    c = dict.fromkeys(KEYS, 0)
    p = pair(rows)
    for _, kind, _, msg in p["frames"]:
        c["frames"] += 1
        if kind != "frame":
            c[kind] += 1
        elif msg is None:
            c["invalid"] += 1
        else:
            c["messages"] += 1
            if "method" in msg:
                c["requests" if "id" in msg else "notifications"] += 1
            elif "error" in msg:
                c["errors"] += 1
            elif "result" in msg:
                c["results"] += 1
                if isinstance(msg["result"], dict) and msg["result"].get("isError") is True:
                    c["tool_errors"] += 1
    for name in ("pairs", "unanswered", "cancelled", "orphans", "duplicates"):
        c[name] = len(p[name])
    c["orphans"] += len(p["null_id"])  # the README's orphans: a null id included
    return c


def rows_of_file(path: Path) -> list[tuple[str, str | None, str, str | None]]:
    return rows_of_har(path) if path.suffix == ".har" else rows_of_tap(path)


def count_file(path: Path) -> dict[str, int]:
    """The counts of one ``.jsonl`` (tap) or ``.har`` trace."""
    return count(rows_of_file(path))


def pair_file(path: Path) -> dict[str, Any]:
    """The pairing of one ``.jsonl`` (tap) or ``.har`` trace (see ``pair``)."""
    return pair(rows_of_file(path))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps({"trace": Path(arg).name, **count_file(Path(arg))}))
