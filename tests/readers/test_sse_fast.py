"""SSE bodies of usual events only are read by splitting at blank lines; the events are
those the line-by-line parser gives, on any body (random ones here)."""

from __future__ import annotations

import random

from mcp_notebook.readers import _sse

PIECES = ["event: message\n", "event:\n", "event: a:b\n", "data: {}\n", "data:x\n",
          "data:  two\n", "data: a:b\n", "\n", "\n\n", ": ping\n", "id: 7\n", "retry: 5\n",
          "\r\n", "data: \r\n", "\ufeff", "x: y\n", "data: {\"id\":1}\n\n"]


def _slow(body: str, monkeypatch) -> list:
    with monkeypatch.context() as m:
        m.setattr(_sse, "_simple", lambda body: None)
        return _sse.parse_sse(body)


def test_fast_events_are_the_parsers_events(monkeypatch):
    rng = random.Random(18)
    fast_bodies = 0
    for _ in range(5000):
        body = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))
        if _sse._simple(body) is not None:
            fast_bodies += 1
        assert _sse.parse_sse(body) == _slow(body, monkeypatch), repr(body)
    assert fast_bodies > 30  # the regular expression did read some of them


def test_usual_body_is_read_by_the_split():
    body = "event: message\ndata: {\"id\":1}\n\ndata: {}\n\n"
    got = _sse._simple(body)
    assert got is not None and [(e.index, e.event, e.data) for e in got] == [
        (0, "message", '{"id":1}'), (1, None, "{}")]


LINES = ["event: message", "event:", "event: a:b", "data: {}", "data:x", "data:  two",
         "data: a:b", "", "", ": ping", "id: 7", "retry: 5", "data: \r", "\ufeffdata: 1",
         "x: y", 'data: {"id":1}', "event:message", "data:"]


def test_events_of_lines_are_the_parsers_events_of_their_body():
    rng = random.Random(26)
    usual = 0
    for _ in range(20000):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 9))]
        body = "\n".join(lines) + "\n"
        if _sse._simple(body) is not None:
            usual += 1
        assert _sse.parse_sse_lines(lines) == _sse.parse_sse(body), repr(lines)
    assert usual > 50  # bodies of usual events only: read line by line
