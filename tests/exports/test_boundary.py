"""The boundary view: one row per operation, and no payload text in the files it writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import mcp_notebook as mn
from mcp_notebook.boundary import BOUNDARY_COLUMNS, latency_table, read_boundary, write_boundary
from mcp_notebook.export import write as write_frames
from tests.exports.captures import CAPTURES, REPRESENTATIVE
from tests.helpers import INIT, err, load_rows, note, ok, req

ROOT = Path(__file__).resolve().parents[2]
META = "io.modelcontextprotocol/"
MIN_LEN = 7  # strings of 6 characters or fewer ("text", "object", ...) are not payload
TARGETS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
           "resources/subscribe": "uri", "resources/unsubscribe": "uri",
           "notifications/resources/updated": "uri"}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _messages(path: Path) -> list[dict[str, Any]]:
    """Every JSON-RPC message of a capture, decoded here with json from the raw text."""
    t = mn.load(path)
    out = []
    f = t.frames
    first = f["batch"].isna() | (f["batch"] == 0)  # a batch's members share its raw text
    for raw in f.loc[first & f["kind"].isin(["request", "notification", "result", "error"]),
                     "raw"]:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        out.extend(m for m in (value if isinstance(value, list) else [value])
                   if isinstance(m, dict))
    return out


def _payload_and_allowed(path: Path) -> tuple[set[str], set[str]]:
    """The strings of params/result/error members, and the identifiers allowed out."""
    payload: set[str] = set()
    allowed: set[str] = {str(s) for s in mn.load(path).sessions() if s is not None}
    for m in _messages(path):
        for member in ("params", "result", "error"):
            payload.update(s for s in _strings(m.get(member)) if len(s) >= MIN_LEN)
        if isinstance(m.get("method"), str):
            allowed.add(m["method"])
        if m.get("id") is not None:  # the envelope's id (a subscription names it too)
            allowed.add(str(m["id"]))
        params, result = m.get("params"), m.get("result")
        if isinstance(params, dict):  # ids and tokens a cancel or progress names
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            for ref in (params.get("requestId"), params.get("progressToken"),
                        meta.get("progressToken")):
                if isinstance(ref, (str, int)):
                    allowed.add(str(ref))
            target = params.get(TARGETS.get(m.get("method"), ""))
            if isinstance(target, str):
                allowed.add(target)
        for body, info in ((params, "clientInfo"), (result, "serverInfo")):
            if isinstance(body, dict) and isinstance(body.get(info), dict):
                allowed.update(str(body[info].get(k)) for k in ("name", "version"))
            meta = body.get("_meta") if isinstance(body, dict) else None
            meta = meta if isinstance(meta, dict) else {}  # 2026-07-28: in every message
            if isinstance(meta.get(META + info), dict):
                allowed.update(str(meta[META + info].get(k)) for k in ("name", "version"))
            for where in (body if isinstance(body, dict) else {}, meta):
                if isinstance(where.get("protocolVersion"), str):
                    allowed.add(where["protocolVersion"])
                if isinstance(where.get(META + "protocolVersion"), str):
                    allowed.add(where[META + "protocolVersion"])
    # a payload string inside an allowed identifier ("everything" in a server's name) is
    # the identifier's text, not a leak
    payload = {s for s in payload - allowed if not any(s in a for a in allowed)}
    return payload, allowed


def _parquet_text(path: Path) -> str:
    table = pq.read_table(path)
    cells = [str(v) for col in table.columns for v in col.to_pylist() if v is not None]
    meta = [(k + v).decode("utf-8", "replace") for k, v in (table.schema.metadata or {}).items()]
    return "\n".join(cells + meta)


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_no_payload_string_reaches_the_boundary_files(path: Path, tmp_path: Path) -> None:
    payload, _ = _payload_and_allowed(path)
    trace = mn.load(path)
    jsonl = write_boundary(trace, tmp_path / "events.jsonl")
    parquet = write_boundary(trace, tmp_path / "events.parquet")
    texts = {
        "jsonl": jsonl.read_text("utf-8"),
        "jsonl decoded": "\n".join(s for line in jsonl.read_text("utf-8").splitlines()
                                   for s in _strings(json.loads(line))),
        "parquet bytes": parquet.read_bytes().decode("latin-1"),
        "parquet values": _parquet_text(parquet),
    }
    for where, text in texts.items():
        leaks = sorted(s for s in payload if s in text)
        assert not leaks, f"{where} of {path.name} holds payload text: {leaks[:5]}"


def test_the_payload_check_finds_payload_where_there_is_some(tmp_path: Path) -> None:
    """The detector is not blind: the frames export of every capture with payload shows it."""
    found = 0
    for path in CAPTURES:
        payload, _ = _payload_and_allowed(path)
        write_frames(mn.load(path), tmp_path / "frames.jsonl", "jsonl")
        text = (tmp_path / "frames.jsonl").read_text("utf-8")
        found += bool(payload) and any(s in text or json.dumps(s)[1:-1] in text
                                       for s in payload)
    assert found >= len(CAPTURES) // 2


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_latency_by_method_from_the_boundary_file_alone(path: Path, suffix: str,
                                                        tmp_path: Path) -> None:
    trace = mn.load(path)
    back = read_boundary(write_boundary(trace, tmp_path / f"events{suffix}"))
    pd.testing.assert_frame_equal(latency_table(back), trace.latency_by_method())


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_one_row_per_operation(path: Path) -> None:
    trace = mn.load(path)
    b = trace.boundary()
    assert list(b.columns) == list(BOUNDARY_COLUMNS)
    msgs = _messages(path)
    assert int((b["kind"] == "notification").sum()) == sum(
        "method" in m and "id" not in m for m in msgs)
    requests = b[b["kind"] == "request"]
    assert len(requests) == int(trace.pairs["request_seq"].notna().sum())
    # names come from each request's own params; a name that is not a string is left out
    for row in requests[requests["method"].isin(list(TARGETS))].itertuples():
        params = trace.message(int(row.request_seq)).get("params") or {}
        target = params.get(TARGETS[row.method]) if isinstance(params, dict) else None
        assert row.name == (target if isinstance(target, str) else None)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_boundary_file_reads_back_to_the_same_frame(suffix: str, tmp_path: Path) -> None:
    trace = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
    b = trace.boundary()
    back = read_boundary(write_boundary(trace, tmp_path / f"events{suffix}"))
    pd.testing.assert_frame_equal(back, b, check_categorical=False)


CALLS = INIT + [
    ("c2s", req(1, "tools/call", {"name": "search", "arguments": {"q": "secret query"}})),
    ("s2c", ok(1, {"content": [{"type": "text", "text": "no such thing"}], "isError": True})),
    ("c2s", req(2, "tools/frobnicate")),
    ("s2c", err(2, -32601, "Method not found")),
    ("c2s", req(3, "prompts/get", {"name": "greeting"})),
    ("s2c", err(3, -32602, "Missing argument: who")),
    ("c2s", req(4, "resources/read", {"uri": "file:///notes.txt"})),
    ("s2c", err(4, -32002, "Resource not found")),
    ("c2s", req(5, "tools/call", {"name": "slow"})),
    ("s2c", err(5, -32001, "Request timed out")),
    ("c2s", req(6, "tools/call", {"name": "echo"})),
    ("s2c", err(6, 7, "odd")),
    ("c2s", note("notifications/cancelled", {"requestId": 9})),
]


@pytest.mark.parametrize("id_key, name, outcome, error_code, error_type", [
    ("0", None, "result", None, None),
    ("1", "search", "tool_error", None, "tool_error"),
    ("2", None, "error", -32601, "method_not_found"),
    ("3", "greeting", "error", -32602, "invalid_params"),
    ("4", "file:///notes.txt", "error", -32002, "resource_not_found"),
    ("5", "slow", "error", -32001, "server_error"),
    ("6", "echo", "error", 7, "error_7"),
])
def test_error_types_and_targets(tmp_path: Path, id_key: str, name: str | None, outcome: str,
                                 error_code: int | None, error_type: str | None) -> None:
    b = load_rows(tmp_path, CALLS).boundary()
    row = b[b["id_key"] == id_key].iloc[0]
    assert row["name"] == name
    assert row["outcome"] == outcome
    assert (None if pd.isna(row["error_code"]) else int(row["error_code"])) == error_code
    assert row["error_type"] == error_type
    assert bool(row["is_error"]) == (error_type is not None)
    assert (row["client_name"], row["server_name"], row["protocol_version"]) == (
        "t", "s", "2025-06-18")


def test_sizes_are_the_frames_bytes(tmp_path: Path) -> None:
    trace = load_rows(tmp_path, CALLS)
    b = trace.boundary()
    f = trace.frames
    row = b[b["id_key"] == "1"].iloc[0]
    assert row["bytes_in"] == len(f["raw"].iat[int(row["request_seq"])].encode())
    assert row["bytes_out"] == len(f["raw"].iat[int(row["response_seq"])].encode())


PAIR_FACTS = ["session", "requester", "id_key", "method", "outcome", "error_code",
              "progress_count"]


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_payload_free_trace_from_the_file_pairs_and_times_like_the_capture(
        path: Path, suffix: str, tmp_path: Path) -> None:
    trace = mn.load(path)
    events = write_boundary(trace, tmp_path / f"events{suffix}")
    free = mn.Trace.from_boundary(events)
    assert free.payload_free and not trace.payload_free
    assert free.violations.empty and list(free.violations.columns) == list(
        trace.violations.columns)

    def facts(t: mn.Trace) -> pd.DataFrame:
        p = t.pairs
        out = p[PAIR_FACTS].astype(object).where(p[PAIR_FACTS].notna(), None)
        out["cancelled_by_notification"] = p["cancel_seq"].notna()
        return out.reset_index(drop=True)

    pd.testing.assert_frame_equal(facts(free), facts(trace))
    # the loader keeps times as float seconds: equal to well under a microsecond
    pd.testing.assert_frame_equal(free.latency_by_method(), trace.latency_by_method(),
                                  check_exact=False, rtol=0, atol=1e-3)
    assert free.protocol_version == trace.protocol_version
    # and its own boundary view is the one it was made from, but for the renumbered frames
    same = [c for c in BOUNDARY_COLUMNS if c not in ("request_seq", "response_seq", "start",
                                                     "duration")]
    pd.testing.assert_frame_equal(free.boundary()[same], trace.boundary()[same],
                                  check_categorical=False)
    payload, _ = _payload_and_allowed(path)
    values = "\n".join(s for raw in free.frames["raw"] for s in _strings(json.loads(raw)))
    assert not [s for s in payload if s in values]


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
def test_the_timeline_draws_the_same_spans_from_the_boundary_alone(path: Path) -> None:
    trace = mn.load(path)
    free = mn.Trace.from_boundary(trace.boundary())
    va, vb = mn.timeline(trace).view, mn.timeline(free).view
    a, b = va["spans"], vb["spans"]
    for key in ("method", "outcome", "open"):
        assert b[key] == a[key], key
    # lanes by name: the capture has a stderr / log lane the boundary leaves out
    assert [vb["lanes"][i] for i in b["lane"]] == [va["lanes"][i] for i in a["lane"]]
    # times are drawn from the first frame, a log line the boundary may leave out: compare
    # them from the first span on; an open span runs to the capture's last frame, which may
    # be such a line too
    assert [t - b["t0"][0] for t in b["t0"]] == pytest.approx(
        [t - a["t0"][0] for t in a["t0"]], abs=1e-6)
    closed = [i for i, o in enumerate(a["open"]) if not o]
    assert [b["t1"][i] - b["t0"][0] for i in closed] == pytest.approx(
        [a["t1"][i] - a["t0"][0] for i in closed], abs=1e-6)


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_messages_read_in_one_pass_are_those_of_trace_message(path: Path) -> None:
    from mcp_notebook.boundary.view import messages_of

    trace = mn.load(path)
    seqs = list(range(len(trace)))
    assert messages_of(trace, seqs) == [trace.message(s) for s in seqs]


def test_an_empty_capture_gives_empty_files_with_their_columns(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    trace = mn.load(tmp_path / "empty.jsonl")
    for suffix in (".jsonl", ".parquet"):
        back = read_boundary(write_boundary(trace, tmp_path / f"events{suffix}"))
        assert back.empty and list(back.columns) == list(BOUNDARY_COLUMNS)
    free = mn.Trace.from_boundary(trace.boundary())
    assert free.pairs.empty and free.latency_by_method().empty


def test_the_export_tests_run_on_every_bundled_trace() -> None:
    """What the package ships as its bundled traces, every one (the gzipped one too)."""
    from mcp_notebook.bundled import _traces
    from tests.exports.captures import BUNDLED

    assert [p.name for p in BUNDLED] == [p.name for p in _traces()]
    assert {p.name for p in BUNDLED} <= {p.name for p in CAPTURES}
    assert any(p.name.endswith(".gz") for p in BUNDLED)
