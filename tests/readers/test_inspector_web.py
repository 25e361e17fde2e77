"""Real MCP Inspector v2 protocol exports (``scripts/record_inspector_web.py``: the web UI
driven in headless Chromium against server-everything, over stdio, Streamable HTTP and
the 2024-11-05 HTTP+SSE transport, then its Protocol tab's Export), read by each of the
reader's four paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.readers import inspector, sniff

from .test_inspector import _path_forced

WEB = Path(__file__).resolve().parents[1] / "fixtures" / "inspector-web"
EXPORTS = sorted(WEB.glob("inspector-protocol-*.json"))


def _transport(export: Path) -> str:
    """stdio, or the transport of the network export of the same server (its port)."""
    if "%3A" not in export.name:
        return "stdio"
    network = next(WEB.glob(f"inspector-network-{export.name.split('-')[2]}-*.json"))
    entries = json.loads(network.read_text("utf-8"))
    return "sse" if any(e["url"].endswith("/sse") for e in entries) else "http"


IDS = [_transport(p) for p in EXPORTS]


def test_every_transport_is_here():
    assert sorted(IDS) == ["http", "sse", "stdio"]


@pytest.mark.parametrize("export", EXPORTS, ids=IDS)
def test_it_is_found_and_read_whole(export):
    assert sniff(export) == "inspector"
    entries = json.loads(export.read_text("utf-8"))
    answered = sum("response" in e for e in entries)
    t = mn.load(export)
    assert len(t.frames) == len(entries) + answered
    assert set(t.frames["kind"]) == {"request", "result", "notification"}


@pytest.mark.parametrize("path_name", ["c", "columns", "doc", "entries"])
@pytest.mark.parametrize("export", EXPORTS, ids=IDS)
def test_every_path_pairs_it_with_no_finding(monkeypatch, export, path_name):
    _path_forced(monkeypatch, path_name)
    t = mn.load(export)
    p = t.pairs
    assert set(p["outcome"].astype(str)) == {"result"}
    assert {"initialize", "tools/list", "tools/call", "roots/list"} <= set(p["method"])
    # the server's own request (roots/list), answered by the Inspector
    assert p.loc[p["method"] == "roots/list", "requester"].astype(str).tolist() == ["s2c"]
    # the long-running call's five progress notifications, before its result
    assert p["progress_count"].sum() == 5
    assert t.violations.empty
    assert t.frames["ts"].is_monotonic_increasing
    with conversation.deep():
        assert not [f for f in conversation.check(t) if f.severity in ("error", "warning")]


@pytest.mark.parametrize("export", EXPORTS, ids=IDS)
def test_the_paths_give_the_same_frames(monkeypatch, export):
    want = [(r.source, r.raw, r.ts, r.direction) for r in inspector.read(export)]
    for name in ("columns", "doc", "entries"):
        with monkeypatch.context() as m:
            _path_forced(m, name)
            assert [(r.source, r.raw, r.ts, r.direction)
                    for r in inspector.read(export)] == want
