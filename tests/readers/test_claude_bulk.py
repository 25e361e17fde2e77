"""Claude Desktop's tracker taking a run of messages at once (``Tracker.for_messages``,
what a run of spans on one connection goes through) leaves each connection as taking
them one at a time (``Tracker.for_message``) does: the same request ids remembered, in
the same order, the same requests in flight with the same ticks, the same last time;
and both keep the ids as the plain rule says (the last ``MEMORY`` distinct ids, an id
used again kept in its place)."""

from __future__ import annotations

import random

import pytest

from mcp_notebook.readers import _claude_conn
from mcp_notebook.readers._claude_conn import Tracker

KINDS = ["request", "request", "result", "error", "notification"]


def _messages(rng: random.Random, n: int, ids: int) -> list[tuple]:
    out = []
    ts = 0.0
    fresh = 0
    for _ in range(n):
        ts += rng.choice([0.0, 0.001, 1.0])
        kind = rng.choice(KINDS)
        c2s = rng.random() < 0.5
        if kind == "notification":
            key = None
        elif rng.random() < 0.5:  # ids counting up (Claude's and most servers')
            fresh += 1
            key = str(fresh)
        else:
            key = rng.choice([None, *(str(k) for k in range(ids))])
        method = rng.choice(["ping", "tools/call", None]) if kind != "result" else None
        out.append((None if rng.random() < 0.05 else ts, c2s, kind, key, method))
    return out


def _plain(messages: list[tuple], memory: int) -> tuple[list[str], list[str]]:
    """The ids each side used, by the plain rule (a dict as an ordered set, its first
    key dropped when over ``memory``)."""
    sides: tuple[dict[str, None], dict[str, None]] = ({}, {})
    for _, c2s, kind, key, _ in messages:
        if kind == "request" and key is not None:
            used = sides[0 if c2s else 1]
            used[key] = None
            if len(used) > memory:
                del used[next(iter(used))]
    return list(sides[0]), list(sides[1])


def _state(t: Tracker) -> tuple:
    conn = t.live["s"][0]
    assert list(conn.client_order) == list(conn.client_ids)
    assert list(conn.server_order) == list(conn.server_ids)
    return (list(conn.client_ids), list(conn.server_ids), dict(conn.pending_c),
            dict(conn.pending_s), conn.last_ts, t._tick, t.last["s"] is conn)


@pytest.mark.parametrize("seed", range(40))
def test_a_run_at_once_leaves_what_one_at_a_time_leaves(monkeypatch, seed):
    rng = random.Random(seed)
    memory = rng.choice([1, 3, 8, 50])
    monkeypatch.setattr(_claude_conn, "MEMORY", memory)
    messages = _messages(rng, rng.randint(1, 400), rng.choice([2, 10, 1000]))
    one, bulk = Tracker(), Tracker()
    for t in (one, bulk):
        t.open("s", 0.0)
    at = 0
    while at < len(messages):
        run = messages[at:at + rng.choice([1, 2, 7, 60, 400])]
        at += len(run)
        for m in run:
            one.for_message("s", *m)
        ts, c2s, kinds, keys, methods = (list(x) for x in zip(*run, strict=True))
        said = bulk.for_messages("s", ts, c2s, kinds, keys, methods)
        assert said is not None and said[1] == {}
        assert _state(bulk) == _state(one)
    client, server = _plain(messages, memory)
    assert _state(bulk)[:2] == (client, server)


def test_ids_counting_up_past_the_memory(monkeypatch):
    """The usual log: every id new, many more than ``MEMORY`` in one run and over runs."""
    monkeypatch.setattr(_claude_conn, "MEMORY", 16)
    messages = [(float(k), True, "request", str(k), "ping") for k in range(100)]
    one, bulk = Tracker(), Tracker()
    for t in (one, bulk):
        t.open("s", 0.0)
    for m in messages:
        one.for_message("s", *m)
    for lo, hi in ((0, 5), (5, 12), (12, 70), (70, 71), (71, 100)):
        run = messages[lo:hi]
        bulk.for_messages("s", *(list(x) for x in zip(*run, strict=True)))
    assert _state(bulk) == _state(one)
    assert _state(bulk)[0] == [str(k) for k in range(84, 100)]
