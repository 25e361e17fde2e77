"""FastMCP 4 (client and server) on the 2026-07-28 wire, over stdio (tap) and Streamable
HTTP (HAR), recorded by ``scripts/record_fastmcp.py``: 2026 traffic from a second
implementation. Its findings, checked by hand: the client's ``ping`` (2026-07-28 removed
it; the server answers -32601) and the ``add`` call with a string argument (answered as a
tool error)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation

CAPTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "fastmcp").iterdir())


def test_both_are_here():
    assert [p.suffix for p in CAPTURES] == [".har", ".jsonl"]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.suffix[1:])
def test_a_fastmcp_2026_session(path):
    t = mn.load(path)
    assert t.summary()["protocol_version"] == "2026-07-28"
    p, f = t.pairs, t.frames
    assert len(p) == 13 and p["method"].iloc[0] == "server/discover"
    assert "initialize" not in set(f["method"].dropna())
    assert set(p["outcome"].astype(str)) == {"result", "tool_error", "error"}
    assert sorted(p["progress_count"].tolist())[-2:] == [2, 3]
    ping = int(p.loc[p["method"] == "ping", "request_seq"].iloc[0])
    assert sorted(zip(t.violations["rule"], t.violations["seq"].tolist(), strict=True)) == [
        ("removed-method", ping)]
    bad = f[f["raw"].astype(str).str.contains('"a":"x"')]["seq"].tolist()
    with conversation.deep():
        deep = {(x.rule, x.seq) for x in conversation.check(t)
                if x.severity in ("error", "warning")}
    assert deep == {("removed-method", ping), ("tool-arguments-schema", bad[0])}
