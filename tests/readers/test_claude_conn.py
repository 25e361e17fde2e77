"""Claude Desktop's connection tracker takes a short way when one connection to a server
is open; on random sequences of openings, closings, log lines and messages it chooses
what the full rules choose, with the same words for a guess."""

from __future__ import annotations

import random

from mcp_notebook.readers._claude_conn import Tracker

KINDS = ["request", "request", "result", "error", "notification", "invalid"]


def _run(steps: list[tuple], short: bool) -> list[tuple]:
    t = Tracker()
    t.one_open = short
    out = []
    for step in steps:
        what, server, ts = step[:3]
        if what == "open":
            out.append(t.open(server, ts).session)
        elif what == "close":
            out.append(t.close(server, ts).session)
        elif what == "log":
            out.append(t.for_log(server, step[3], ts, step[4]).session)
        else:
            conn, why = t.for_message(server, ts, *step[3:])
            out.append((conn.session, why))
    return out


def test_one_open_connection_takes_the_full_rules_choice():
    rng = random.Random(26)
    single = 0
    for _ in range(300):
        steps: list[tuple] = []
        ts = 0.0
        for _ in range(rng.randint(1, 40)):
            ts += rng.choice([0.0, 0.5, 30.0, 4000.0])
            server = rng.choice(["a", "a", "b"])
            r = rng.random()
            if r < 0.08:
                steps.append(("open", server, ts))
            elif r < 0.12:
                steps.append(("close", server, ts))
            elif r < 0.18:
                steps.append(("log", server, ts, rng.choice(["Initializing", "x"]),
                              rng.random() < 0.3))
            else:
                kind = rng.choice(KINDS)
                method = rng.choice(["initialize", "tools/call", None])
                steps.append(("msg", server, ts, rng.random() < 0.5, kind,
                              rng.choice([None, "1", "2", '"a"']), method))
        short, full = _run(steps, True), _run(steps, False)
        assert short == full, steps
        single += sum(1 for s in steps if s[0] == "msg")
    assert single > 1000
