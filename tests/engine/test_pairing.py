"""Pairing on (session, requester, id_key): every outcome, both directions."""

import pandas as pd

from helpers import INIT, err, load_rows, note, ok, req


def outcomes(t):
    return list(zip(t.pairs["id_key"], t.pairs["requester"].astype(object),
                    t.pairs["outcome"].astype(str), strict=True))


def test_every_outcome(tmp_path):
    rows = INIT + [
        ("c2s", req(1, "tools/call", {"name": "ok"})),
        ("s2c", ok(1, {"content": []})),
        ("c2s", req(2, "tools/call", {"name": "fails"})),
        ("s2c", ok(2, {"content": [], "isError": True})),
        ("c2s", req(3, "nope")),
        ("s2c", err(3)),
        ("c2s", req(4, "tools/call", {"name": "slow"})),
        ("c2s", note("notifications/cancelled", {"requestId": 4})),
        ("c2s", req(5, "tools/call", {"name": "hangs"})),
        ("s2c", ok(99)),                     # orphan
        ("s2c", ok(1, {"content": []})),      # duplicate
    ]
    t = load_rows(tmp_path, rows)
    got = {k: o for k, _, o in outcomes(t)}
    assert got["0"] == "result"
    assert dict((k, o) for k, _, o in outcomes(t) if o != "duplicate")["1"] == "result"
    assert got["2"] == "tool_error" and got["3"] == "error" and got["4"] == "cancelled"
    assert got["5"] == "unanswered" and got["99"] == "orphan"
    assert [o for k, _, o in outcomes(t) if k == "1"] == ["result", "duplicate"]
    s = t.summary()
    assert (s["requests"], s["pairs"], s["unanswered"], s["cancelled"], s["orphans"],
            s["duplicates"], s["tool_errors"], s["errors"]) == (6, 4, 2, 1, 1, 1, 1, 1)
    err_row = t.pairs[t.pairs["id_key"] == "3"].iloc[0]
    assert err_row["error_code"] == -32601


def test_both_sides_use_the_same_numeric_id_at_once(tmp_path):
    rows = INIT + [
        ("c2s", req(1, "tools/call", {"name": "ask"})),
        ("s2c", req(1, "sampling/createMessage", {"messages": []})),  # server's own id 1
        ("c2s", ok(1, {"role": "assistant", "content": {"type": "text", "text": "hi"}})),
        ("s2c", ok(1, {"content": []})),
    ]
    t = load_rows(tmp_path, rows)
    p = t.pairs.set_index("method")
    assert p.loc["tools/call", "request_seq"] == 3 and p.loc["tools/call", "response_seq"] == 6
    assert p.loc["sampling/createMessage", "request_seq"] == 4
    assert p.loc["sampling/createMessage", "response_seq"] == 5
    assert p.loc["sampling/createMessage", "requester"] == "s2c"
    assert t.violations.empty, t.violations


def test_string_and_int_ids_never_pair_silently(tmp_path):
    t = load_rows(tmp_path, INIT + [("c2s", req(1, "tools/list")), ("s2c", ok("1", {"tools": []}))])
    assert outcomes(t)[-2:] == [("1", "c2s", "unanswered"), ('"1"', "c2s", "orphan")]
    v = t.violations
    row = v[v["rule"] == "id-type-mismatch"].iloc[0]
    assert (row["seq"], row["related_seq"]) == (4, 3)


def test_huge_ids_round_trip_exactly(tmp_path):
    big = 2**64 + 1
    rows = [("c2s", f'{{"jsonrpc":"2.0","id":{big},"method":"ping"}}'),
            ("s2c", f'{{"jsonrpc":"2.0","id":{big},"result":{{}}}}')]
    t = load_rows(tmp_path, rows)
    assert t.frames["id"].tolist() == [big, big]
    assert t.pairs["id"].tolist() == [big] and t.pairs["outcome"].tolist() == ["result"]
    assert t.message(0)["id"] == big
    assert "big-id" in set(t.violations["rule"])


def test_sessions_keep_ids_apart(tmp_path):
    import mcp_notebook as mn
    from helpers import tap

    a = tap(tmp_path / "a.jsonl", [("c2s", req(1, "ping"))])
    b = tap(tmp_path / "b.jsonl", [("s2c", ok(1))])
    t = mn.load([a, b])
    assert sorted(t.pairs["outcome"].astype(str)) == ["orphan", "unanswered"]
    assert t.summary()["sessions"] == 2


def test_late_response_after_cancel_is_legal_and_shown(tmp_path):
    rows = INIT + [("c2s", req(7, "tools/call", {"name": "slow"})),
                   ("c2s", note("notifications/cancelled", {"requestId": 7, "reason": "t/o"})),
                   ("s2c", ok(7, {"content": []}))]
    t = load_rows(tmp_path, rows)
    row = t.pairs[t.pairs["id_key"] == "7"].iloc[0]
    assert row["outcome"] == "cancelled" and row["cancel_seq"] == 4 and row["response_seq"] == 5
    v = t.violations
    assert set(v["rule"]) == {"response-after-cancel"}
    assert set(v["severity"].astype(str)) == {"info"}


def test_progress_links_by_token(tmp_path):
    rows = INIT + [
        ("c2s", req(2, "tools/call", {"name": "long", "_meta": {"progressToken": "tok"}})),
        ("s2c", note("notifications/progress", {"progressToken": "tok", "progress": 1, "total": 3})),
        ("s2c", note("notifications/progress", {"progressToken": "tok", "progress": 2, "total": 3})),
        ("s2c", ok(2, {"content": []})),
        ("s2c", note("notifications/progress", {"progressToken": "tok", "progress": 3})),
    ]
    t = load_rows(tmp_path, rows)
    assert t.pairs.set_index("method").loc["tools/call", "progress_count"] == 2
    assert list(t.violations["rule"]) == ["progress-after-response"]


def test_latency(tmp_path):
    t = load_rows(tmp_path, INIT)
    lat = t.pairs.iloc[0]["latency"]
    assert isinstance(lat, pd.Timedelta) and abs(lat.total_seconds() - 0.01) < 1e-6
    table = t.latency_by_method()
    assert table.loc["initialize", "count"] == 1
    assert abs(table.loc["initialize", "p50_ms"] - 10.0) < 1e-3


def test_finding_refs_read_at_once_are_sparse_get():
    """The refs of the C walk's findings, read by one search (``_refs_of``), are what
    ``Sparse.get`` gives one finding at a time: object and float values, a repeated
    row, rows before, between and after the stored ones, an empty store."""
    import random

    import numpy as np

    from mcp_notebook.engine.pairing import _refs_of
    from mcp_notebook.fast.store import Sparse

    rng = random.Random(3)
    for _ in range(200):
        rows = sorted(rng.sample(range(200), rng.randint(0, 30)))
        kind = rng.choice(["object", "float"])
        if kind == "object":
            values = [rng.choice([f"tok{r}", r, None, 2.5, ("x", r)]) for r in rows]
            sp = Sparse(rows, values)
        else:
            sp = Sparse(rows, np.array([r / 3 for r in rows]), dtype=np.float64)
        asked = [rng.randrange(-5, 210) for _ in range(rng.randint(0, 40))]
        got = _refs_of(sp, asked)
        assert [got.get(s) for s in asked] == [sp.get(s) for s in asked]
        assert all(type(got[s]) is type(sp.get(s)) for s in asked if s in got)
