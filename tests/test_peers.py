"""``Trace.peers()``: one reading of what ``initialize`` says, used by the boundary view and
the sessions table alike."""

from __future__ import annotations

import mcp_notebook as mn
from helpers import INIT, load_rows, ok, req


def test_the_last_answered_initialize_counts(tmp_path):
    again = [("c2s", req(7, "initialize", {"protocolVersion": "2025-11-25",
                                           "clientInfo": {"name": "t2", "version": "2"}})),
             ("s2c", ok(7, {"protocolVersion": "2025-11-25",
                            "serverInfo": {"name": "s2", "version": 3}}))]
    t = load_rows(tmp_path, INIT + again)
    (info,) = t.peers().values()
    assert info == {"protocol_version": "2025-11-25", "client_name": "t2",
                    "client_version": "2", "server_name": "s2", "server_version": None}


def test_boundary_and_sessions_say_the_same():
    t = mn.load(mn.sample_path("demo-http"))
    peers = t.peers()
    b = t.boundary()
    for s, info in peers.items():
        rows = b[b["session"] == s]
        for col, value in info.items():
            assert set(rows[col].dropna()) <= {value}, (s, col)
    sessions = mn.load_many([mn.sample_path("demo-http")]).sessions
    for _, row in sessions.iterrows():
        info = peers[row["session"]]
        assert {k: row[k] for k in info} == info


def test_a_session_without_initialize(tmp_path):
    """No version is made up (the checker's default is not the session's), but one its
    requests name in ``_meta`` (2026-07-28) is said."""
    t = load_rows(tmp_path, [("c2s", req(1, "tools/list")), ("s2c", ok(1))])
    (info,) = t.peers().values()
    assert info == dict.fromkeys(info)
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    t = load_rows(tmp_path, [("c2s", req(1, "tools/list", meta)), ("s2c", ok(1))])
    assert next(iter(t.peers().values()))["protocol_version"] == "2026-07-28"
