"""HAR helpers of the proxy: the SSE parser and the crash-tolerant HAR writer."""

from __future__ import annotations

import json

import pytest

from mcp_notebook.capture.har import HarWriter, SseParser, body_content


def _events(chunks: list[bytes]) -> list[dict]:
    p = SseParser()
    for i, c in enumerate(chunks):
        p.feed(c, 1000.0 + i)
    p.close(2000.0)
    return [{k: v for k, v in e.items() if k != "t"} for e in p.events]


@pytest.mark.parametrize("chunks, expected", [
    ([b"event: message\ndata: {}\n\n"], [{"event": "message", "data": "{}"}]),
    ([b"data: a\r\ndata: b\r\n\r\n"], [{"data": "a\nb"}]),
    ([b"data: x\r", b"\n\r", b"\n"], [{"data": "x"}]),  # CRLF split across chunks
    ([b"data: x\r\r"], [{"data": "x"}]),  # bare CR line ends
    ([b'id: 7\ndata:\n\n'], [{"id": "7", "data": ""}]),  # a priming event
    ([b": keep-alive\n\n"], [{"comment": "keep-alive"}]),
    ([b"retry: 500\n\n"], [{"retry": "500"}]),
    ([b"data: caf\xc3", b"\xa9\n\n"], [{"data": "café"}]),  # UTF-8 split across chunks
    ([b"data: cut"], [{"data": "cut", "_unterminated": True}]),
    ([b"\n\n\n"], []),
    ([b"event: endpoint\ndata: /messages/?session_id=1\n\n"],
     [{"event": "endpoint", "data": "/messages/?session_id=1"}]),
])
def test_sse_parser(chunks, expected):
    assert _events(chunks) == expected


def test_sse_event_time_is_when_it_ended():
    p = SseParser()
    p.feed(b"data: a\n", 1.0)
    p.feed(b"\ndata: b\n\n", 2.0)
    assert [e["t"] for e in p.events] == ["1970-01-01T00:00:02.000000Z"] * 2


@pytest.mark.parametrize("data, expected", [
    (b"{}", {"text": "{}"}),
    (b"\xff\x00", {"text": "/wA=", "encoding": "base64"}),
])
def test_body_content(data, expected):
    assert body_content(data) == expected


def _entry(t: str, seq: int) -> dict:
    return {"_seq": seq, "startedDateTime": t, "time": 1, "request": {}, "response": {},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}}


def test_har_writer_is_valid_after_each_entry_and_sorted_at_the_end(tmp_path):
    path = tmp_path / "x.har"
    w = HarWriter(path, {"name": "t", "version": "1"}, comment="c")
    assert json.loads(path.read_text())["log"]["entries"] == []
    times = ["2025-01-01T00:00:03.000000Z", "2025-01-01T00:00:01.000000Z",
             "2025-01-01T00:00:02.000000Z"]
    for i, t in enumerate(times):
        w.add(_entry(t, i))
        log = json.loads(path.read_text())["log"]
        assert [e["_seq"] for e in log["entries"]] == list(range(i + 1))
    w.close()
    log = json.loads(path.read_text())["log"]
    assert log["version"] == "1.2" and log["creator"] == {"name": "t", "version": "1"}
    assert [e["_seq"] for e in log["entries"]] == [1, 2, 0]
    assert not (tmp_path / "x.har.tmp").exists()


@pytest.mark.parametrize("target, path_qs, expected", [
    ("http://127.0.0.1:3001", "/mcp", "http://127.0.0.1:3001/mcp"),
    ("http://127.0.0.1:3001/", "/messages/?session_id=1", "http://127.0.0.1:3001/messages/?session_id=1"),
    ("http://127.0.0.1:3001/mcp", "/", "http://127.0.0.1:3001/mcp"),
    ("http://127.0.0.1:3001/mcp", "/?a=1", "http://127.0.0.1:3001/mcp?a=1"),
    ("http://127.0.0.1:3001/mcp", "/mcp", "http://127.0.0.1:3001/mcp"),
])
def test_proxy_keeps_the_client_path(tmp_path, target, path_qs, expected):
    from mcp_notebook.capture.proxy import RecordingProxy

    proxy = RecordingProxy(target, HarWriter(tmp_path / "p.har", {"name": "t", "version": "1"}))
    assert proxy.upstream_url(path_qs) == expected


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1:8765", ("127.0.0.1", 8765)),
    (":9000", ("127.0.0.1", 9000)),
    ("9000", ("127.0.0.1", 9000)),
    ("[::1]:80", ("::1", 80)),
])
def test_parse_listen(text, expected):
    from mcp_notebook.capture.proxy import parse_listen

    assert parse_listen(text) == expected
