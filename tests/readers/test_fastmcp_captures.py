"""FastMCP 4 server traffic (``scripts/record_fastmcp.py``), over stdio (tap) and
Streamable HTTP (HAR): with the FastMCP client on the 2026-07-28 wire (``server/discover``,
stateless), and with the official TypeScript SDK client in the handshake era
(``initialize``, 2025-11-25, where the server's elicitation reaches the client). Their
findings, checked by hand: the FastMCP client's ``ping`` (2026-07-28 removed it; the server
answers -32601), and in every capture the ``add`` call with a string argument (answered
as a tool error)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "fastmcp"
CAPTURES = sorted(FOLDER.iterdir())


def test_all_four_are_here():
    assert [p.name for p in CAPTURES] == [
        "fastmcp-2026-http.har", "fastmcp-2026-stdio.jsonl", "fastmcp-ts-client-http.har",
        "fastmcp-ts-client-stdio.jsonl"]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_a_fastmcp_session(path):
    t = mn.load(path)
    p, f = t.pairs, t.frames
    modern = "2026" in path.name
    assert t.summary()["protocol_version"] == ("2026-07-28" if modern else "2025-11-25")
    assert p["method"].iloc[0] == ("server/discover" if modern else "initialize")
    assert len(p) == (13 if modern else 12)
    assert set(p["outcome"].astype(str)) == {"result", "tool_error", "error"}
    assert sorted(p["progress_count"].tolist())[-1] == 3
    # the server's elicitation: refused on the 2026 wire, a server request otherwise
    asks = p[p["method"] == "elicitation/create"]
    assert asks["requester"].astype(str).tolist() == ([] if modern else ["s2c"])
    ping = int(p.loc[p["method"] == "ping", "request_seq"].iloc[0])
    found = sorted(zip(t.violations["rule"], t.violations["seq"].tolist(), strict=True))
    assert found == ([("removed-method", ping)] if modern else [])
    bad = f[f["raw"].astype(str).str.contains('"a":"x"')]["seq"].tolist()
    with conversation.deep():
        deep = {(x.rule, x.seq) for x in conversation.check(t)
                if x.severity in ("error", "warning")}
    assert deep == set(found) | {("tool-arguments-schema", bad[0])}
