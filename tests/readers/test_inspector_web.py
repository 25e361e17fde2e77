"""Real MCP Inspector v2 protocol exports (``scripts/record_inspector_web.py``: the web UI
driven in headless Chromium against server-everything, over stdio and over Streamable
HTTP, then its Protocol tab's Export), read by each of the reader's four paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.readers import inspector, sniff

from .test_inspector import _path_forced

EXPORTS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "inspector-web").glob(
    "inspector-protocol-*.json"))
IDS = ["http" if "%3A" in p.name else "stdio" for p in EXPORTS]


def test_both_are_here():
    assert sorted(IDS) == ["http", "stdio"]


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
