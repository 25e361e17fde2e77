"""``_har_sessions.sessions``: the sessions found once per distinct (facts, URL, GET) of
each run of entries (no entry read one by one) against the entry-by-entry walk (the
same function made to walk, as where entries are read one by one), on random HTTP+SSE
and Streamable shapes: endpoint events before, between and after the requests naming
their URL, several endpoint events in one stream, stateless requests, sessions named by
headers or by URLs, URLs that cannot be parsed."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from mcp_notebook.readers import _har_sessions
from mcp_notebook.readers._har_session import _session_from_url
from mcp_notebook.readers._har_unicode import _escaped


def _case(rng: random.Random):
    n = rng.randint(1, 80)
    ids = [f"s{k}" for k in range(4)]
    urls = [f"http://h/messages?sessionId={s}" for s in ids] + [
        "http://h/mcp", "http://h/sse", "http://[::1", "http://h/m?session_id=x"]
    shared = [(rng.choice([None, None, "hdr1", "hdr2", "\ud800bad"]), rng.random() < 0.15,
               (), "text/event-stream") for _ in range(5)]
    facts = [rng.choice(shared) for _ in range(n)]
    get = np.array([rng.random() < 0.2 for _ in range(n)], dtype=bool)
    url = [rng.choice(urls) for _ in range(n)]
    endpoints: dict[int, list[tuple[int, str]]] = {}
    for i in np.flatnonzero(get).tolist():
        if rng.random() < 0.7:
            endpoints[i] = [(q, rng.choice([f"/messages?sessionId={rng.choice(ids)}",
                                            "/messages", " http://[::1 "]))
                            for q in sorted(rng.sample(range(6), rng.randint(1, 3)))]
    entry, sub = [], []
    for i in range(n):
        for q in range(rng.randint(0, 4)):
            entry.append(i)
            sub.append(q)
    status = [rng.choice([None, 200]) for _ in range(n)]
    return (facts, url, get, endpoints, np.array(entry, dtype=np.int64),
            np.array(sub, dtype=np.int64), status, np.arange(n, dtype=np.float64))


def _reader(walk: bool):
    return SimpleNamespace(
        reader=SimpleNamespace(old_sessions={}), entries={-1: None} if walk else {},
        escaped=_escaped, default="cap.har", session_from_url=_session_from_url,
        name="cap.har")


@pytest.mark.parametrize("seed", range(300))
def test_runs_as_the_walk(seed):
    case = _case(random.Random(seed))
    fast = _har_sessions.sessions(_reader(False), *case)
    walk = _har_sessions.sessions(_reader(True), *case)
    names_f, names_w = fast[1], walk[1]
    assert names_f == names_w  # coded in the same order
    assert fast[0].tolist() == walk[0].tolist()
    assert [(i, q, r.raw, r.ts, r.session, r.source, r.extra) for i, q, r in fast[2]] == \
        [(i, q, r.raw, r.ts, r.session, r.source, r.extra) for i, q, r in walk[2]]
