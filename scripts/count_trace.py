"""Count what a correct analyser must find in a trace, without the mcp_notebook library.

``python scripts/count_trace.py data/*.jsonl data/*.har`` prints one JSON object per
trace. ``scripts/make_data.py`` uses it to write the counts table of ``data/README.md``;
``tests/capture/test_data_readme.py`` checks that table against ``mn.load(...).summary()``.
The two implementations share no code on purpose.

Rules (those of DESIGN.md): a frame is every row: a message, an unparsable line
(``invalid``), a stderr line, a log line (the tap's ``meta`` records; in a HAR, an SSE
event that carries no JSON-RPC message such as ``endpoint``, and a GET or DELETE that
carried none). Requests pair with responses on (session, requesting side, id as exact
JSON); ``cancelled`` counts requests whose sender cancelled them while in flight
(answered afterwards or not); ``unanswered`` counts requests that got no response;
``orphans`` are responses to no request (a null id included); ``duplicates`` are the
second and later responses to one request. A result whose ``isError`` is true is a
``tool_error`` (also counted in ``results``).
"""

from __future__ import annotations

import json
import sys
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
    for e in json.loads(path.read_text("utf-8"))["log"]["entries"]:
        req, resp = e["request"], e["response"]
        start = _ts(e["startedDateTime"])
        end = start + e["time"] / 1000
        session = next((h["value"] for h in req["headers"] + resp["headers"]
                        if h["name"].lower() == "mcp-session-id"), None)
        content = resp["content"]
        got = 0
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


def count(rows: list[tuple[str, str | None, str, str | None]]) -> dict[str, int]:
    c = dict.fromkeys(KEYS, 0)
    pending: dict[tuple, dict[str, Any]] = {}
    answered: set[tuple] = set()
    requests: list[dict[str, Any]] = []
    other = {"c2s": "s2c", "s2c": "c2s"}
    for kind, direction, raw, session in rows:
        c["frames"] += 1
        if kind != "frame":
            c[kind] += 1
            continue
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            c["invalid"] += 1
            continue
        c["messages"] += 1
        key_id = json.dumps(msg.get("id"), separators=(",", ":"))
        if "method" in msg:
            if "id" in msg:
                c["requests"] += 1
                req = {"key": (session, direction, key_id), "answered": False,
                       "cancelled": False}
                requests.append(req)
                pending[req["key"]] = req
            else:
                c["notifications"] += 1
                if msg["method"] == "notifications/cancelled":
                    ref = json.dumps(msg.get("params", {}).get("requestId"),
                                     separators=(",", ":"))
                    req = pending.get((session, direction, ref))
                    if req is not None:
                        req["cancelled"] = True
            continue
        if "error" in msg:
            c["errors"] += 1
        else:
            c["results"] += 1
            if isinstance(msg.get("result"), dict) and msg["result"].get("isError") is True:
                c["tool_errors"] += 1
        key = (session, other[direction], key_id)
        if key in pending:
            pending.pop(key)["answered"] = True
            answered.add(key)
        elif key in answered:
            c["duplicates"] += 1
        else:
            c["orphans"] += 1
    for req in requests:
        c["pairs" if req["answered"] else "unanswered"] += 1
        c["cancelled"] += req["cancelled"]
    return c


def count_file(path: Path) -> dict[str, int]:
    """The counts of one ``.jsonl`` (tap) or ``.har`` trace."""
    rows = rows_of_har(path) if path.suffix == ".har" else rows_of_tap(path)
    return count(rows)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps({"trace": Path(arg).name, **count_file(Path(arg))}))
