"""HAR reader on the HARs the project's recording proxy captured from real servers (data/).

Expected numbers are counted from each file with plain ``json`` (no library code): the
POST bodies, the SSE events that carry data, the GET / DELETE entries without messages.
The files may be re-recorded (ids, ports and a few counts change), so nothing volatile is
written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import har, sniff
from mcp_notebook.table import settled

DATA = Path(__file__).parent.parent.parent / "data"
HARS = sorted(DATA.glob("*.har"))
MESSAGES = ("request", "notification", "result", "error")


def independent_count(path: Path) -> dict[str, object]:
    entries = json.loads(path.read_text())["log"]["entries"]
    c2s = s2c = log = priming = 0
    sessions = set()
    for e in entries:
        req, resp = e["request"], e["response"]
        events = resp["content"].get("_sseEvents") or []
        if req["method"] == "POST" and req.get("postData", {}).get("text"):
            c2s += 1
        data = [ev for ev in events if ev.get("data")]
        priming += sum(1 for ev in events if "data" in ev and not ev["data"])
        s2c += sum(1 for ev in data if ev.get("event") != "endpoint")
        log += sum(1 for ev in data if ev.get("event") == "endpoint")
        if req["method"] in ("GET", "DELETE") and not data:
            log += 1
        for h in resp["headers"] + req["headers"]:
            if h["name"].lower() == "mcp-session-id":
                sessions.add(h["value"])
        for ev in data:
            if ev.get("event") == "endpoint":
                sessions.add(ev["data"].split("session_id=")[1])
    return {"c2s": c2s, "s2c": s2c, "log": log, "priming": priming, "sessions": sessions}


@pytest.mark.skipif(not HARS, reason="no recorded HAR in data/")
@pytest.mark.parametrize("path", HARS, ids=[p.name for p in HARS])
def test_recorded_har(path):
    want = independent_count(path)
    assert sniff(path) == "har"
    t = mn.load(path)
    f = t.frames
    msg = f[f.kind.isin(MESSAGES)]
    assert (msg.direction == "c2s").sum() == want["c2s"]
    assert (msg.direction == "s2c").sum() == want["s2c"]
    assert (f.kind == "log").sum() == want["log"]
    assert (f.kind == "invalid").sum() == 0
    assert set(f.session.astype(str)) == want["sessions"] and len(want["sessions"]) == 1
    # every event has its own arrival time, and every response comes after its request
    assert not f.ts.isna().any()
    assert not any("ts_estimated" in t.extra(i) for i in range(len(f)))
    assert f.ts.is_monotonic_increasing
    assert not t.pairs.outcome.isin(["orphan", "duplicate"]).any()
    # priming events (an id, empty data) made no row; no event is of another type
    assert not any("sse_event" in t.extra(i) and t.extra(i)["sse_event"] != "endpoint"
                   for i in range(len(f)))
    events_with_ids = sum(1 for i in range(len(f)) if "event_id" in t.extra(i))
    if want["priming"]:  # the everything server keeps an event store: ids on every event
        assert events_with_ids == want["s2c"]


@pytest.mark.skipif(not (DATA / "demo-sse.har").exists(), reason="no demo-sse.har")
def test_old_transport_endpoint_names_the_session():
    recs = list(settled(har.read(DATA / "demo-sse.har")))
    assert recs[0].kind == "log" and recs[0].extra["sse_event"] == "endpoint"
    assert all(r.extra.get("reply") == "Accepted" for r in recs if r.direction == "c2s")
