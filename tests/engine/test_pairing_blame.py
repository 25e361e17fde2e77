"""Pairing and the unanswered rules blame the side at fault, on the user's path.

Each capture is loaded with ``mn.load`` and read as ``t.pairs`` and ``t.violations``;
every test also holds the loaded tables equal to the reference pipeline (the Python
walk and checks). The autouse ``scanner`` fixture runs each test with the C extension
(the C pairing walk) and without it (the numpy walk), so the three engines agree.

- An id reused while a request with it is open: answers are taken first in, first out,
  the reuse is the requester's ``request-id-in-flight``, the answers are neither
  duplicates nor orphans, and a reuse left without an answer of its own is not the
  answerer's ``unanswered-request`` (issue 13, defect 6).
- A request sent after the side that should answer it has closed (the tap's records of
  it): ``unanswered-after-close`` (info), not ``unanswered-request`` (issue 13, defect 7).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from oracle.pipeline import comparable, materialised, reference_columns, reference_tables

import mcp_notebook as mn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import INIT, note, ok, req, tap  # noqa: E402

STDIN_EOF = "client closed stdin; closing the server's stdin"


def load_checked(path: Path) -> mn.Trace:
    """``mn.load(path)``, its tables held equal to the reference pipeline's."""
    t = mn.load(path)
    frames, pairs, violations = reference_tables(reference_columns([path]))
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(comparable(t.violations), violations)
    return t


def found(t: mn.Trace) -> list[tuple[str, int, Any]]:
    v = t.violations
    return [(r, int(s), None if pd.isna(q) else int(q))
            for r, s, q in zip(v["rule"], v["seq"], v["related_seq"], strict=True)]


def answers(t: mn.Trace, id_key: str) -> list[tuple[int, Any, str]]:
    p = t.pairs[t.pairs["id_key"] == id_key]
    return [(int(q), None if pd.isna(r) else int(r), o) for q, r, o in
            zip(p["request_seq"], p["response_seq"], p["outcome"].astype(str), strict=True)]


# -- 13.6: an id reused in flight ------------------------------------------------------------

def test_an_id_reused_in_flight_is_answered_first_in_first_out(tmp_path: Path) -> None:
    """Two calls with id 5 at once, answered in turn: the first answer is the first call's,
    the second the second's; the one finding is the client's reuse. (Before: the first
    answer went to the second call and the real second answer was a duplicate-response
    error against the server.)"""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("c2s", req(5, "tools/call", {"name": "first"})),     # 3
        ("c2s", req(5, "tools/call", {"name": "second"})),    # 4
        ("s2c", ok(5, {"content": [{"type": "text", "text": "first"}]})),   # 5
        ("s2c", ok(5, {"content": [{"type": "text", "text": "second"}]})),  # 6
    ]))
    assert answers(t, "5") == [(3, 5, "result"), (4, 6, "result")]
    assert found(t) == [("request-id-in-flight", 4, 3)]


def test_a_retry_in_flight_answered_once_is_the_clients_fault_alone(tmp_path: Path) -> None:
    """The client re-sends id 2 before the answer came, and the server answers once: the
    answer is the first call's, and the retry's own finding is the only one (no
    unanswered-request against the server). (Before: the answer went to the retry and the
    first call was reported unanswered.)"""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("c2s", req(2, "tools/list")),   # 3
        ("c2s", req(2, "tools/list")),   # 4: the retry
        ("s2c", ok(2, {"tools": []})),   # 5
    ]))
    assert answers(t, "2") == [(3, 5, "result"), (4, None, "unanswered")]
    assert found(t) == [("request-id-in-flight", 4, 3)]


def test_no_answer_is_owed_to_a_null_id_or_a_notification_with_an_id(tmp_path: Path) -> None:
    """A request with a null id, and a notifications/* method sent with an id, are their
    sender's errors; the other side that takes them for notifications and does not answer
    is not told it left a request unanswered. (Before: an unanswered-request warning on
    each.)"""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("c2s", '{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),   # 3
        ("c2s", req(4, "notifications/roots/list_changed")),          # 4
        ("c2s", req(5, "tools/list")),                                 # 5: owed an answer
    ]))
    assert found(t) == [("request-id-type", 3, None), ("notification-with-id", 4, None),
                        ("unanswered-request", 5, None)]


def test_a_result_that_echoes_a_null_request_id_is_not_the_servers_fault(
        tmp_path: Path) -> None:
    """The client sent id null; the server answered with the same null id, as JSON-RPC
    asks: the one finding is the client's request-id-type. A null-id result with no such
    request before it is still result-id-null. (Before: a result-id-null error against
    the server for echoing the id, and an unanswered-request warning.)"""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("s2c", '{"jsonrpc":"2.0","id":null,"result":{}}'),              # 3: nothing to echo
        ("c2s", '{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),    # 4
        ("s2c", '{"jsonrpc":"2.0","id":null,"result":{"tools":[]}}'),    # 5: the echo
    ]))
    assert found(t) == [("result-id-null", 3, None), ("request-id-type", 4, None)]


def test_a_reuse_after_a_cancel_takes_the_answer_the_cancelled_call_never_got(
        tmp_path: Path) -> None:
    """The client cancels 7 and sends a new 7: the server honoured the cancel, so its one
    answer is the new call's; nobody is told the server left a request unanswered."""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("c2s", req(7, "tools/call", {"name": "slow"})),                      # 3
        ("c2s", note("notifications/cancelled", {"requestId": 7})),           # 4
        ("c2s", req(7, "tools/call", {"name": "fast"})),                      # 5
        ("s2c", ok(7, {"content": []})),                                      # 6
    ]))
    assert answers(t, "7") == [(3, None, "cancelled"), (5, 6, "result")]
    assert found(t) == [("request-id-in-flight", 5, 3)]


def test_a_reused_id_and_its_type_twin(tmp_path: Path) -> None:
    """Id 1 twice in flight and an answer with id "1": that answer is the server's fault
    (id-type-mismatch, pointing at the latest 1); the two answers with id 1 are the two
    calls', in turn, and no duplicate."""
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + [
        ("c2s", req(1, "tools/list")),   # 3
        ("c2s", req(1, "tools/list")),   # 4
        ("s2c", ok("1", {"tools": []})),  # 5
        ("s2c", ok(1, {"tools": []})),   # 6
        ("s2c", ok(1, {"tools": []})),   # 7
    ]))
    assert answers(t, "1") == [(3, 6, "result"), (4, 7, "result")]
    assert found(t) == [("request-id-in-flight", 4, 3), ("id-type-mismatch", 5, 4)]


def test_a_long_queue_of_one_id(tmp_path: Path) -> None:
    """300 calls with id 9 in flight at once, every seventh cancelled, then 300 answers:
    each answer finds its call (those not cancelled first), none is a duplicate."""
    calls = [("c2s", req(9, "tools/call", {"name": f"n{k}"})) for k in range(300)]
    cancels = [("c2s", note("notifications/cancelled", {"requestId": 9}))
               for _ in range(0, 300, 7)]
    answers_ = [("s2c", ok(9, {"content": []})) for _ in range(300)]
    t = load_checked(tap(tmp_path / "c.jsonl", INIT + calls + cancels + answers_))
    rules = pd.Series([r for r, _, _ in found(t)]).value_counts().to_dict()
    assert rules == {"request-id-in-flight": 299, "response-after-cancel": len(cancels)}
    got = answers(t, "9")
    assert len(got) == 300 and all(r is not None for _, r, _ in got)
    first = len(INIT) + 300 + len(cancels)  # the seq of the first answer
    # the calls not cancelled are answered first, in order; then the cancelled ones
    kept = [q for q, _, o in got if o != "cancelled"]
    assert [r for q, r, o in got if o != "cancelled"] == list(range(first, first + len(kept)))


@st.composite
def reused_traffic(draw: st.DrawFn) -> list[tuple[float, str, Any]]:
    """Both sides send requests from a tiny pool of ids (so they are reused, also while
    in flight) and cancel some; the other side answers each request at most once, after
    it was sent, in any order, echoing its id exactly: an honest answerer."""
    events: list[tuple[float, str, Any]] = []
    n = draw(st.integers(1, 14))
    for i in range(n):
        side = draw(st.sampled_from(["c2s", "s2c"]))
        other = "s2c" if side == "c2s" else "c2s"
        rid = draw(st.sampled_from([1, "1", 2]))
        t0 = 10.0 * i
        events.append((t0, side, req(rid, "tools/call" if side == "c2s" else "roots/list")))
        answer = draw(st.one_of(st.none(), st.integers(1, 60)))
        if answer is not None:
            reply = ok(rid, {}) if draw(st.booleans()) else {
                "jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "x"}}
            events.append((t0 + answer + 0.5, other, reply))
        cancel = draw(st.one_of(st.none(), st.integers(1, 60)))
        if cancel is not None:
            events.append((t0 + cancel + 0.25, side,
                           note("notifications/cancelled", {"requestId": rid})))
    events.sort(key=lambda e: e[0])
    return events


@seed(20261201)
@settings(max_examples=50, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(reused_traffic())
def test_an_honest_answerer_is_never_blamed_for_reused_ids(
        events: list[tuple[float, str, Any]]) -> None:
    """Whatever ids the requesters reuse and cancel, an answerer that answers each request
    at most once gets no duplicate-response, orphan-response or id-type-mismatch; the
    engine agrees with the oracle on every such capture."""
    with tempfile.TemporaryDirectory() as tmp:
        path = tap(Path(tmp) / "c.jsonl", INIT + [(d, m) for _, d, m in events])
        t = load_checked(path)
    rules = {r for r, _, _ in found(t)}
    assert not rules & {"duplicate-response", "orphan-response", "id-type-mismatch"}
    # each answer found a request open under its key
    answered = sum(1 for _, _, m in events if "method" not in m)
    assert int(t.pairs["response_seq"].notna().sum()) == answered + 1  # + initialize


# -- 13.7: requests after the answering side has closed ---------------------------------------

def short_session(name: str) -> list[dict[str, Any]]:
    """A real client's short stdio session through the tap: initialize, one call, close;
    the server asks for the roots only after the client has closed its input."""
    rows = [("meta", "started node server.js stdio")] + INIT + [
        ("c2s", req(1, "tools/list")),
        ("s2c", ok(1, {"tools": []})),
        ("meta", STDIN_EOF),
        ("s2c", req(0, "roots/list")),
        ("meta", "server exited with code 0"),
    ]
    return [{"dir": d, "raw": m if isinstance(m, str) else json.dumps(m), "session": name}
            for d, m in rows]


def write_records(path: Path, records: list[dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, rec in enumerate(records):
            f.write(json.dumps({"ts": 1_796_000_000.0 + i / 100, **rec}) + "\n")
    return path


def test_server_requests_after_the_client_closed_its_input_are_info(tmp_path: Path) -> None:
    """Eight short sessions, each with a roots/list sent after the tap's stdin-eof record:
    eight info findings that say why no answer came (pointing at the stdin-eof row), no
    unanswered-request warning. (Before: eight warnings.)"""
    records = [r for k in range(8) for r in short_session(f"run-{k}")]
    t = load_checked(write_records(tmp_path / "runs.jsonl", records))
    v = t.violations
    assert "unanswered-request" not in set(v["rule"])
    after = v[v["rule"] == "unanswered-after-close"]
    assert len(after) == 8 and set(after["severity"].astype(str)) == {"info"}
    f = t.frames
    eof_rows = f.index[(f["kind"] == "log") & (f["raw"].astype(str) == STDIN_EOF)].tolist()
    assert after["related_seq"].astype(int).tolist() == eof_rows
    assert all(int(s) == e + 1 for s, e in zip(after["seq"], eof_rows, strict=True))
    assert all("the client had closed its input to the server before this request; "
               "no answer could come" in m for m in after["message"])
    # the pairs still say what happened: no answer
    roots = t.pairs[t.pairs["method"] == "roots/list"]
    assert len(roots) == 8 and set(roots["outcome"].astype(str)) == {"unanswered"}


def test_only_requests_after_the_close_are_excused(tmp_path: Path) -> None:
    """A server request sent before the client closed is still a warning; a client request
    after the server exited is info; once the tap starts the server again, requests are
    held to answers again."""
    rows = INIT + [
        ("s2c", req(0, "roots/list")),                      # 3: before the close: warning
        ("meta", STDIN_EOF),                                # 4
        ("s2c", req(1, "sampling/createMessage", {})),      # 5: info
        ("meta", "server exited with code 0"),              # 6
        ("c2s", req(2, "ping")),                            # 7: info (the server is gone)
        ("meta", "started node server.js stdio"),           # 8
        ("c2s", req(3, "ping")),                            # 9: warning
    ]
    t = load_checked(tap(tmp_path / "c.jsonl", rows, session="s"))
    assert found(t) == [("unanswered-request", 3, None), ("unanswered-after-close", 5, 4),
                        ("unanswered-after-close", 7, 6), ("unanswered-request", 9, None)]
    msg = t.violations.set_index("seq")["message"]
    assert "the server had exited before this request" in msg[7]


def test_the_bundled_captures_close_cleanly() -> None:
    """The bundled tap captures end with the client closing the server's input: nothing
    they hold is excused by it (their requests were all sent before)."""
    data = Path(__file__).resolve().parents[2] / "data"
    for name in ("everything-stdio-server-requests.jsonl", "everything-stdio-basics.jsonl"):
        t = load_checked(data / name)
        assert "unanswered-after-close" not in set(t.violations["rule"]), name
