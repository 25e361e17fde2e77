"""HAR reader: Streamable HTTP and HTTP+SSE captures, hand-built from the specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import har, sniff
from mcp_notebook.table import settled

from . import harkit

MESSAGES = ("request", "notification", "result", "error")


@pytest.fixture
def streamable(tmp_path: Path) -> Path:
    return harkit.streamable(tmp_path / "session.har")


def rows(path: Path) -> list[tuple]:
    return [(r.source.split("#", 1)[1] if "#" in r.source else r.source, r.direction,
             r.kind, r.session) for r in settled(har.read(path))]


def test_streamable_http_records(streamable):
    assert sniff(streamable) == "har"
    assert rows(streamable) == [
        ("entry0", "c2s", None, "abc"),  # initialize; session from the response header
        ("entry0/event1", "s2c", None, "abc"),  # event0 is the priming event: no row
        ("entry1", "c2s", None, "abc"),  # notifications/initialized -> 202
        ("entry2/event1", "s2c", None, "abc"),  # GET stream, no per-event time: a server
        ("entry2/event2", "s2c", None, "abc"),  # request goes where the stream opened
        ("entry3", "c2s", None, "abc"),  # the client's answer to roots/list -> 202
        ("entry4", "c2s", None, "abc"),
        ("entry4/event0", "s2c", None, "abc"),  # progress, at the first byte
        ("entry4/event1", "s2c", None, "abc"),  # the result, at the first byte too
        ("entry4/event2", "s2c", None, "abc"),  # the same result again, at the entry's end
        ("entry5", "c2s", None, "abc"),
        ("entry5/response", "s2c", None, "abc"),  # application/json
        ("entry6", "c2s", None, "gone"),
        ("entry6/response", "s2c", None, "gone"),  # 404 body: a transport error
        ("entry7", "c2s", None, "abc"),  # "not json at all": the table makes it invalid
        ("entry7/response", None, "log", "abc"),  # 400 text/plain
        ("entry10", None, "log", "abc"),  # DELETE
        ("session.har", None, "log", "session.har"),  # OPTIONS + favicon left out, said so
    ]


def test_streamable_http_extras(streamable):
    recs = {r.source.split("#", 1)[-1]: r for r in settled(har.read(streamable))}
    assert recs["entry0/event1"].extra == {"http": "POST", "status": 200, "event_id": "s0_1",
                                           "ts_estimated": True}
    assert recs["entry1"].extra == {"http": "POST", "status": 202}
    assert recs["entry2/event2"].extra["sse_event"] == "heartbeat"
    assert recs["entry6/response"].extra["transport_error"] == 404
    assert recs["entry7/response"].extra["transport_error"] == 400
    assert "ts_estimated" in recs["entry4/event1"].extra
    assert recs["entry2/event1"].ts is None
    assert recs["session.har"].extra["skipped_entries"] == [8, 9]
    assert recs["entry0"].ts == pytest.approx(harkit.T0.timestamp())
    assert recs["entry5/response"].ts == pytest.approx(harkit.T0.timestamp() + 0.8 + 0.006)


def test_streamable_http_trace(streamable):
    t = mn.load(streamable)
    f = t.frames
    msg = f[f.kind.isin(MESSAGES)]
    assert ((msg.direction == "c2s").sum(), (msg.direction == "s2c").sum()) == (6, 7)
    assert list(f[f.kind == "invalid"].source.str.split("#").str[1]) == [
        "entry2/event2", "entry7"]  # the heartbeat event is not a message; junk POST body
    assert set(f.session.astype(str)) == {"abc", "gone", "session.har"}
    p = t.pairs
    got = sorted(zip(p.method.astype(object).fillna(""), p.outcome.astype(str), strict=True))
    assert ("tools/call", "duplicate") in got and ("tools/call", "result") in got
    assert ("roots/list", "result") in got and ("initialize", "result") in got
    assert (t.violations.rule == "duplicate-response").sum() == 1


def test_old_http_sse_transport(tmp_path):
    path = harkit.old_sse(tmp_path / "old.har")
    recs = list(settled(har.read(path)))
    assert [(r.source.split("#")[1], r.direction, r.kind, r.session) for r in recs] == [
        ("entry0/event0", None, "log", "9f1c"),  # the endpoint event names the session
        ("entry1", "c2s", None, "9f1c"),
        ("entry0/event1", "s2c", None, "9f1c"),  # responses come on the GET stream, with no
        ("entry2", "c2s", None, "9f1c"),  # time: each is placed after its request
        ("entry3", "c2s", None, "9f1c"),
        ("entry0/event3", "s2c", None, "9f1c"),  # (event2 is a ": ping" comment)
    ]
    assert recs[1].extra == {"http": "POST", "status": 202, "reply": "Accepted"}
    assert recs[0].extra["endpoint"] == "http://127.0.0.1:8000/messages/?session_id=9f1c"
    t = mn.load(path)
    assert list(t.pairs.outcome) == ["result", "result"]


def test_per_event_times_from_the_recording_proxy(tmp_path):
    path = harkit.stamped(tmp_path / "proxy.har")
    recs = list(settled(har.read(path)))
    order = [r.source.split("#")[1] for r in recs]
    # the ping on the GET stream arrived at t=5 s: between the POSTs at 4 s and 6 s
    assert order == ["entry0", "entry0/response", "entry2", "entry2/response",
                     "entry1/event1", "entry3"]
    ping = recs[4]
    assert ping.ts == pytest.approx(harkit.T0.timestamp() + 5.0)
    assert ping.extra == {"http": "GET", "status": 200, "event_id": "g_1"}
    t = mn.load(path)
    assert set(zip(t.pairs.method.astype(str), t.pairs.outcome.astype(str), strict=True)) == {
        ("initialize", "result"), ("tools/list", "result"), ("ping", "result")}


@pytest.mark.parametrize("text,reason", [
    ("{not json", "not a HAR file (not valid JSON"),
    ('{"log": {"version": "1.2"}}', "not a HAR file (no log.entries array)"),
])
def test_broken_har_is_one_invalid_row(tmp_path, text, reason):
    p = tmp_path / "x.har"
    p.write_text(text)
    recs = list(settled(har.read(p)))
    assert len(recs) == 1 and recs[0].kind == "invalid" and recs[0].reason.startswith(reason)


def test_base64_bodies_truncation_and_proxy_errors(tmp_path):
    import base64

    body = json.dumps(harkit.msg(id=5, method="ping"))
    e1 = harkit.entry("POST", at=0, mime="application/json", reply='{"jsonrpc":"2.0","id":5,"re')
    e1["request"]["postData"] = {"mimeType": "application/json", "_encoding": "base64",
                                 "text": base64.b64encode(body.encode()).decode()}
    e1["response"]["content"]["_truncated"] = 90000
    e2 = harkit.entry("POST", at=1, body=harkit.msg(id=6, method="ping"), status=502,
                      mime="text/plain", reply="mcp-notebook proxy: cannot reach ...",
                      _proxyError="ClientConnectorError: refused")
    path = harkit.write(tmp_path / "x.har", [e1, e2])
    recs = list(settled(har.read(path)))
    assert recs[0].raw == body
    assert recs[1].kind == "invalid" and "full size 90000" in recs[1].reason
    assert recs[3].kind == "log" and recs[3].extra["proxy_error"].startswith("ClientConnector")
    assert len(recs) == 4  # the proxy's own 502 text is not a server reply


def test_proxy_event_without_a_time_is_placed_causally(tmp_path):
    path = harkit.stamped(tmp_path / "proxy.har")
    doc = json.loads(path.read_text())
    del doc["log"]["entries"][1]["response"]["content"]["_sseEvents"][1]["t"]
    path.write_text(json.dumps(doc))
    recs = list(settled(har.read(path)))
    ping = next(r for r in recs if r.source.endswith("entry1/event1"))
    assert ping.ts is None and ping.raw == harkit.js(harkit.msg(id=0, method="ping"))
    assert len(recs) == 6
