"""MCP Inspector v2 protocol export (hand-built from the export's documented shape)."""

from __future__ import annotations

import json
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


def _export(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps(entries, indent=2), encoding="utf-8")
    return path


def _at(ms: int) -> str:
    return f"2026-05-20T10:00:{ms // 1000:02d}.{ms % 1000:03d}Z"


def _progress(ms: int, n: int) -> dict:
    return {"id": f"p{n}", "timestamp": _at(ms), "direction": "notification",
            "origin": "server",
            "message": {"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": "t", "progress": n, "total": 2}}}


CALL = {"id": "c", "timestamp": _at(1000), "direction": "request", "origin": "client",
        "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "slow", "_meta": {"progressToken": "t"}}},
        "response": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, "duration": 500}


def test_frames_in_time_order_not_export_order(tmp_path):
    # the export holds the request with its response; the progress sent meanwhile follows
    path = _export(tmp_path / "e.json", [CALL, _progress(1200, 1), _progress(1400, 2)])
    recs = list(inspector.read(path))
    assert [r.source.split("#")[1] for r in recs] == [
        "entry0", "entry1", "entry2", "entry0/response"]
    t = mn.load(path)
    assert "progress-after-response" not in set(t.violations.rule)
    assert t.pairs.progress_count.tolist() == [2]
    assert t.frames.ts.is_monotonic_increasing


def test_untimed_response_stays_after_its_request_and_ties_keep_export_order(tmp_path):
    call = {k: v for k, v in CALL.items() if k != "duration"}
    path = _export(tmp_path / "e.json", [_progress(1000, 1), call, _progress(900, 2)])
    assert [r.source.split("#")[1] for r in inspector.read(path)] == [
        "entry2", "entry0", "entry1", "entry1/response"]


def _path_forced(monkeypatch, path_name: str) -> None:
    """Read exports by one of the reader's four paths: the C pass, the column path of
    the compacted export, its records one by one (``doc``), or entry by entry."""
    if path_name != "c":
        monkeypatch.setattr(inspector, "inspector_columns", lambda *a: None)
    if path_name in ("doc", "entries"):
        monkeypatch.setattr(inspector, "_columns", lambda *a: None)
    if path_name == "entries":
        monkeypatch.setattr(inspector, "compacted",
                            lambda path, decode: (None, Path(path).read_bytes()))


@pytest.mark.parametrize("path_name", ["c", "columns", "doc", "entries"])
def test_a_response_timed_by_its_duration_goes_last_in_its_millisecond(
        tmp_path, monkeypatch, path_name):
    # the response arrived in the millisecond 1500 (1000 + 500), as did the second
    # progress notification: which came first the export cannot say, so no finding
    _path_forced(monkeypatch, path_name)
    ping = {"id": "q", "timestamp": _at(1500), "direction": "request", "origin": "client",
            "message": {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            "response": {"jsonrpc": "2.0", "id": 2, "result": {}}, "duration": 0}
    late = _progress(1501, 3)
    path = _export(tmp_path / "e.json", [CALL, _progress(1200, 1), _progress(1500, 2), ping,
                                         late])
    assert [r.source.split("#")[1] for r in inspector.read(path)] == [
        "entry0", "entry1", "entry2", "entry3", "entry0/response", "entry3/response",
        "entry4"]
    t = mn.load(path)
    # the notification a millisecond after the response is after it
    assert t.violations[["rule", "seq"]].values.tolist() == [["progress-after-response", 6]]
    assert t.frames.ts.is_monotonic_increasing


def test_the_order_of_times_out_of_any_range_warns_nothing():
    import warnings

    import numpy as np

    ts = np.array([1e303, np.nan, -1e303, 1.5, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        order = inspector._order(ts, np.array([False, True, True, False, True]))
    assert order.tolist() == [2, 3, 0, 1, 4]
