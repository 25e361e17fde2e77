"""Small traces built by hand, shaped exactly like the Trace contract (frames, pairs, violations).

The widgets only use ``frames``, ``pairs``, ``violations``, ``message(seq)``, ``summary()``
and ``latency_by_method()``; this kit builds those from a list of tap-like lines so the
views can be tested on precise cases without the loader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

FRAME_COLUMNS = ["seq", "ts", "session", "stream", "direction", "kind", "id", "id_key", "method",
                 "error_code", "error_message", "is_tool_error", "size", "raw", "source", "batch",
                 "reason"]
PAIR_COLUMNS = ["request_seq", "response_seq", "session", "requester", "id", "id_key", "method",
                "outcome", "error_code", "t_request", "t_response", "latency", "cancel_seq",
                "progress_count"]
VIOLATION_COLUMNS = ["rule", "severity", "seq", "related_seq", "message", "spec", "versions"]


def _classify(raw: str):
    try:
        msg = json.loads(raw)
    except ValueError:
        return "invalid", None
    if not isinstance(msg, dict):
        return "invalid", None
    if "method" in msg:
        return ("request" if "id" in msg else "notification"), msg
    if "error" in msg:
        return "error", msg
    if "result" in msg:
        return "result", msg
    return "invalid", msg


@dataclass
class KitTrace:
    frames: pd.DataFrame
    pairs: pd.DataFrame
    violations: pd.DataFrame
    _messages: dict = field(default_factory=dict)

    def message(self, seq: int):
        return self._messages.get(int(seq))

    def extra(self, seq: int) -> dict:
        return {}  # what a reader keeps beside a frame: nothing, in a built trace

    def summary(self) -> dict:
        f, p = self.frames, self.pairs
        return {
            "frames": len(f), "messages": int(f["kind"].isin(
                ["request", "notification", "result", "error"]).sum()),
            "requests": int((f["kind"] == "request").sum()),
            "notifications": int((f["kind"] == "notification").sum()),
            "responses": int(f["kind"].isin(["result", "error"]).sum()),
            "results": int((f["kind"] == "result").sum()),
            "errors": int((f["kind"] == "error").sum()),
            "tool_errors": int(f["is_tool_error"].sum()),
            "pairs": int(p["response_seq"].notna().sum()),
            "unanswered": int(p["outcome"].isin(["unanswered", "cancelled"]).sum()),
            "cancelled": int((p["outcome"] == "cancelled").sum()),
            "orphans": int((p["outcome"] == "orphan").sum()),
            "duplicates": int((p["outcome"] == "duplicate").sum()),
            "sessions": int(f["session"].nunique()),
            "protocol_version": "2025-06-18",
            "methods": f["method"].dropna().value_counts().to_dict(),
            "error_codes": f["error_code"].dropna().astype(int).value_counts().to_dict(),
            "violations": {"total": len(self.violations)},
        }

    def latency_by_method(self) -> pd.DataFrame:
        p = self.pairs.dropna(subset=["latency"])
        g = p.groupby("method")["latency"]
        return pd.DataFrame({"count": g.size(), "p50": g.quantile(0.5), "p90": g.quantile(0.9),
                             "p99": g.quantile(0.99)})


def make_trace(lines, violations=()) -> KitTrace:
    """Build a trace from ``(ts, dir, raw[, session])`` tuples.

    ``dir`` is ``c2s``, ``s2c`` or ``stderr``; ``ts`` is unix seconds or None.
    ``violations`` are ``(rule, severity, seq, message, spec)`` tuples.
    """
    rows, messages = [], {}
    for seq, line in enumerate(lines):
        ts, d, raw = line[:3]
        session = line[3] if len(line) > 3 else "s1"
        if d == "stderr":
            kind, msg = "stderr", None
        else:
            kind, msg = _classify(raw)
        messages[seq] = msg
        mid = msg.get("id") if msg else None
        err = msg.get("error") if msg and kind == "error" else None
        res = msg.get("result") if msg and kind == "result" else None
        rows.append({
            "seq": seq, "ts": pd.NaT if ts is None else pd.Timestamp(ts, unit="s", tz="UTC"),
            "session": session, "stream": "stderr" if d == "stderr" else "stdio",
            "direction": None if d == "stderr" else d, "kind": kind,
            "id": mid, "id_key": None if mid is None else json.dumps(mid, separators=(",", ":")),
            "method": msg.get("method") if msg else None,
            "error_code": err.get("code") if isinstance(err, dict) else None,
            "error_message": err.get("message") if isinstance(err, dict) else None,
            "is_tool_error": bool(isinstance(res, dict) and res.get("isError") is True),
            "size": len(raw.encode()), "raw": raw, "source": f"kit.jsonl:{seq + 1}",
            "batch": None, "reason": None,
        })
    frames = pd.DataFrame(rows, columns=FRAME_COLUMNS)
    frames["ts"] = pd.to_datetime(frames["ts"], utc=True)
    frames["error_code"] = frames["error_code"].astype("Int64")
    frames["batch"] = frames["batch"].astype("Int64")

    open_req: dict = {}
    pairs = []
    cancels = {}
    for r in rows:
        msg = messages[r["seq"]]
        if r["kind"] == "notification" and r["method"] == "notifications/cancelled":
            rid = (msg.get("params") or {}).get("requestId")
            cancels[(r["session"], "s2c" if r["direction"] == "s2c" else "c2s",
                     json.dumps(rid))] = r["seq"]
        if r["kind"] == "request":
            key = (r["session"], r["direction"], r["id_key"])
            open_req[key] = len(pairs)
            pairs.append({"request_seq": r["seq"], "response_seq": None, "session": r["session"],
                          "requester": r["direction"], "id": r["id"], "id_key": r["id_key"],
                          "method": r["method"], "outcome": "unanswered", "error_code": None,
                          "t_request": r["ts"], "t_response": pd.NaT, "cancel_seq": None,
                          "progress_count": 0})
        elif r["kind"] in ("result", "error"):
            requester = "c2s" if r["direction"] == "s2c" else "s2c"
            key = (r["session"], requester, r["id_key"])
            i = open_req.get(key)
            if i is None or pairs[i]["response_seq"] is not None:
                pairs.append({"request_seq": None if i is None else pairs[i]["request_seq"],
                              "response_seq": r["seq"], "session": r["session"],
                              "requester": requester, "id": r["id"], "id_key": r["id_key"],
                              "method": None if i is None else pairs[i]["method"],
                              "outcome": "orphan" if i is None else "duplicate",
                              "error_code": r["error_code"], "t_request": pd.NaT,
                              "t_response": r["ts"], "cancel_seq": None, "progress_count": 0})
                continue
            p = pairs[i]
            p["response_seq"] = r["seq"]
            p["t_response"] = r["ts"]
            p["error_code"] = r["error_code"]
            p["outcome"] = ("error" if r["kind"] == "error" else
                            "tool_error" if r["is_tool_error"] else "result")
    for key, cseq in cancels.items():
        i = open_req.get(key)
        if i is not None:
            pairs[i]["cancel_seq"] = cseq
            if pairs[i]["response_seq"] is None:
                pairs[i]["outcome"] = "cancelled"
    pdf = pd.DataFrame(pairs, columns=PAIR_COLUMNS)
    for c in ("request_seq", "response_seq", "cancel_seq", "error_code"):
        pdf[c] = pdf[c].astype("Int64")
    pdf["t_request"] = pd.to_datetime(pdf["t_request"], utc=True)
    pdf["t_response"] = pd.to_datetime(pdf["t_response"], utc=True)
    pdf["latency"] = pdf["t_response"] - pdf["t_request"]
    vdf = pd.DataFrame(
        [{"rule": r, "severity": s, "seq": q, "related_seq": None, "message": m, "spec": sp,
          "versions": "all"} for r, s, q, m, sp in violations], columns=VIOLATION_COLUMNS)
    vdf["seq"] = vdf["seq"].astype("Int64")
    vdf["related_seq"] = vdf["related_seq"].astype("Int64")
    return KitTrace(frames, pdf, vdf, messages)


def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)


def res(i, result=None):
    return json.dumps({"jsonrpc": "2.0", "id": i, "result": {} if result is None else result})


def err(i, code, message):
    return json.dumps({"jsonrpc": "2.0", "id": i, "error": {"code": code, "message": message}})


def note(method, params=None):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)


T0 = 1_750_000_000.0


def sample_trace() -> KitTrace:
    """One session with each outcome, a progress notification, stderr and a violation.

    seq: 0 initialize, 1 its result, 2 initialized, 3 tools/list, 4 tools/call (slow),
    5 tools/list result, 6 progress for 4, 7 tools/call result (tool error), 8 stderr,
    9 resources/read, 10 its error, 11 ping (unanswered), 12 sampling request (s2c),
    13 its result (c2s), 14 tools/call 9, 15 cancel of 9, 16 orphan result id 77.
    """
    lines = [
        (T0 + 0.000, "c2s", req(0, "initialize", {"protocolVersion": "2025-06-18"})),
        (T0 + 0.010, "s2c", res(0, {"protocolVersion": "2025-06-18"})),
        (T0 + 0.020, "c2s", note("notifications/initialized")),
        (T0 + 0.100, "c2s", req(1, "tools/list")),
        (T0 + 0.150, "c2s", req(2, "tools/call", {"name": "slow", "_meta": {"progressToken": 7}})),
        (T0 + 0.160, "s2c", res(1, {"tools": []})),
        (T0 + 0.300, "s2c", note("notifications/progress", {"progressToken": 7, "progress": 1})),
        (T0 + 0.650, "s2c", res(2, {"content": [], "isError": True})),
        (T0 + 0.700, "stderr", "server warming up"),
        (T0 + 0.800, "c2s", req(3, "resources/read", {"uri": "file:///x"})),
        (T0 + 0.820, "s2c", err(3, -32002, "Resource not found")),
        (T0 + 0.900, "c2s", req(4, "ping")),
        (T0 + 1.000, "s2c", req(0, "sampling/createMessage", {"messages": []})),
        (T0 + 1.200, "c2s", res(0, {"role": "assistant"})),
        (T0 + 1.300, "c2s", req(9, "tools/call", {"name": "hang"})),
        (T0 + 1.400, "c2s", note("notifications/cancelled", {"requestId": 9})),
        (T0 + 1.500, "s2c", res(77)),
    ]
    viols = [("response-id-unknown", "warning", 16, "this response matches no request",
              "“Responses MUST include the same ID as the request they correspond to.” — spec")]
    return make_trace(lines, viols)


def big_trace(n_requests: int, seed: int = 0) -> KitTrace:
    """A synthetic trace of ``n_requests`` request/response pairs and some notifications."""
    rng = np.random.default_rng(seed)
    t = T0 + np.cumsum(rng.exponential(0.01, n_requests))
    lat = rng.exponential(0.05, n_requests)
    methods = np.array(["tools/call", "tools/list", "resources/read", "ping"])
    lines = []
    for i in range(n_requests):
        m = str(methods[i % 4])
        lines.append((float(t[i]), "c2s", req(i, m)))
        lines.append((float(t[i] + lat[i]), "s2c", err(i, -32603, "boom") if i % 17 == 0
                      else res(i)))
        if i % 5 == 0:
            lines.append((float(t[i] + lat[i] / 2), "s2c", note("notifications/message")))
    lines.sort(key=lambda x: x[0])
    return make_trace(lines)


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "widgets"
_TAG = re.compile(r"<\s*(script|img|svg|a|iframe)\b", re.I)


def no_live_markup(html: str) -> None:
    """Fail if ``html`` holds a live tag or handler that came from a trace."""
    assert not _TAG.search(html), html
    assert 'onerror="' not in html and "onload=" not in html.replace("onload=alert", "")
