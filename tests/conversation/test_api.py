"""The trace-level questions: conformance per peer, logical calls, and the CLI's check."""

from __future__ import annotations

from pathlib import Path

from test_conversation_rules import CASES, V26, ir, ok26, r26

from helpers import INIT, load_rows, ok, req, tap
from mcp_notebook import conversation
from mcp_notebook.cli import main

PEERS = Path(__file__).resolve().parents[1] / "fixtures" / "peers"


def status(c, peer, requirement):
    row = c[(c["peer"] == peer) & (c["requirement"] == requirement)]
    assert len(row) == 1, (peer, requirement, c)
    return row.iloc[0]


def test_conformance_kept_broken_and_not_exercised(tmp_path):
    good = load_rows(tmp_path, INIT + [("c2s", req(1, "ping")), ("s2c", ok(1, {}))]).conformance()
    assert status(good, "s", "ping")["status"] == "kept"
    assert status(good, "s", "tools-list")["status"] == "not exercised"
    assert status(good, "t", "mcp-client-initialization")["status"] == "kept"
    bad = load_rows(tmp_path, INIT + [("c2s", req(1, "ping")),
                                      ("s2c", ok(1, {"pong": 1}))]).conformance()
    row = status(bad, "s", "ping")
    assert (row["status"], row["rules"], row["first_seq"]) == ("broken", "ping-result-not-empty", 4)


def test_conformance_of_a_recorded_run_of_the_suite():
    import mcp_notebook as mn

    t = mn.load(PEERS / "conformance-demo-http.har")
    c = t.conformance()
    server = c[c["peer"] == "mcp-notebook-demo"]
    assert set(server["requirement"]) == {q.id for q in conversation.conformance.REQUIREMENTS
                                          if q.role == "server"}
    exercised = set(server.loc[server["status"] != "not exercised", "requirement"])
    assert {"server-initialize", "ping", "tools-list", "tools-call-simple-text"} <= exercised
    assert set(server["status"]) <= {"kept", "broken", "not exercised"}


def test_calls_link_the_rounds_of_a_2026_call(tmp_path):
    rows = [r26(1, "tools/call", {"name": "t"}), ir(1, requestState="abc"),
            r26(2, "tools/call", {"name": "t", "requestState": "abc", "inputResponses": {}}),
            ok26(2, {"content": []}), r26(3, "tools/list"), ok26(3, {"tools": []})]
    p = conversation.calls(load_rows(tmp_path, rows, **V26)).set_index("request_seq")
    assert list(p.loc[[0, 2, 4], "call"]) == [0, 0, 4]
    assert list(p.loc[[0, 2, 4], "round"]) == [1, 2, 1]


def test_mcp_notebook_check_runs_the_schema_rules(tmp_path, capsys):
    bad, _, _ = CASES["schema-params"]
    path = tap(tmp_path / "bad.jsonl", bad)
    assert main(["check", str(path), "--all"]) == 1
    out = capsys.readouterr().out
    assert "[schema-params]" in out and "/params/uri" in out
    assert conversation.DEEP["schema-params"] == 0  # the limit is back after the command


def test_the_reference_checker_gives_the_same_findings(tmp_path):
    """The list-based oracle (tests/oracle: readers, the Python walks, the list checks)
    runs the conversation rules on its lists: the same violations."""
    import pandas as pd
    from oracle.pipeline import reference_columns, reference_tables

    import mcp_notebook as mn

    for code, (bad, _, opts) in CASES.items():
        path = tap(tmp_path / f"{code}.jsonl", bad)
        with conversation.deep():
            vec = mn.load(path, **opts).violations
            ref = reference_tables(reference_columns([path]), opts.get("version"))[2]
        pd.testing.assert_frame_equal(vec, ref, obj=code)
        assert code in set(vec["rule"])
