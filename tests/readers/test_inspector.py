"""MCP Inspector v2 protocol export (hand-built from the export's documented shape)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import inspector, sniff

EXPORT = Path(__file__).parent / "data" / "inspector-protocol-everything-2026-05-20T10-00-05.000Z.json"


def test_records():
    assert sniff(EXPORT) == "inspector"
    recs = list(inspector.read(EXPORT))
    assert [(r.source.split("#")[1], r.direction, r.kind) for r in recs] == [
        ("entry0", "c2s", None), ("entry0/response", "s2c", None),
        ("entry1", "c2s", None),
        ("entry2", "c2s", None), ("entry2/response", "s2c", None),
        ("entry3", "s2c", None),
        ("entry4", "s2c", None), ("entry4/response", "c2s", None),  # origin: server
        ("entry5", "c2s", None), ("entry5/error", None, "log"),
    ]
    assert recs[1].ts - recs[0].ts == pytest.approx(0.012, abs=1e-6)
    assert recs[8].raw == '{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}'
    assert recs[9].raw == "MCP error -32001: Request timed out"


def test_trace():
    t = mn.load(EXPORT)
    p = t.pairs
    assert list(zip(p.method.astype(str), p.outcome.astype(str), p.requester.astype(str),
                    strict=True)) == [
        ("initialize", "result", "c2s"), ("tools/call", "error", "c2s"),
        ("sampling/createMessage", "result", "s2c"), ("ping", "unanswered", "c2s")]
    assert t.frames.id[8] == 2**64 + 1  # exact, not a float
    assert "big-id" in set(t.violations.rule)


def test_not_an_export(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("[1, ")
    [rec] = inspector.read(p)
    assert rec.kind == "invalid" and rec.reason.startswith("not an Inspector protocol export")
