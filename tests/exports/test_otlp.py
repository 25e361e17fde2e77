"""OTLP/JSON export, parsed with the official opentelemetry-proto message types."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

import mcp_notebook as mn
from mcp_notebook.otlp import to_otlp, to_otlp_metrics
from tests.exports.idforms import ids_alike_as_strings
from tests.helpers import INIT, load_rows, note, ok, req

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for d in (ROOT / "data", ROOT / "tests" / "fixtures" / "peers")
                  for p in d.iterdir() if p.suffix in (".jsonl", ".har"))
# the client span's attributes in the pinned OpenTelemetry MCP conventions
# (semantic-conventions-genai docs/gen-ai/mcp.md at 0393513, "Client", Attributes), written
# out here from that page, not from the exporter
CONVENTION_ATTRIBUTES = {
    "mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name",
    "jsonrpc.request.id", "mcp.resource.uri", "rpc.response.status_code",
    "gen_ai.operation.name", "jsonrpc.protocol.version", "mcp.protocol.version",
    "mcp.session.id", "network.protocol.name", "network.protocol.version",
    "network.transport", "server.address", "server.port", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}
#: the server span's attributes that the client span does not have (same page, "Server")
SERVER_SPAN_ONLY = {"client.address", "client.port"}
#: this project's own attributes, beside the conventions'
PROJECT = {"mcp_notebook.jsonrpc.request.id_type"}
BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


def _for_protobuf(doc: Any) -> Any:
    """OTLP/JSON ids are hex; protobuf's JSON mapping wants base64 for bytes fields."""
    if isinstance(doc, dict):
        return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in (
            "traceId", "spanId", "parentSpanId") else _for_protobuf(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_for_protobuf(v) for v in doc]
    return doc


def _parse(doc: dict[str, Any]) -> ExportTraceServiceRequest:
    text = json.dumps(doc)  # plain JSON all the way down
    return ParseDict(_for_protobuf(json.loads(text)), ExportTraceServiceRequest())


def _attrs(span: Span) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_every_capture_exports_spans_that_opentelemetry_proto_parses(path: Path) -> None:
    trace = mn.load(path)
    msg = _parse(to_otlp(trace))
    spans = [s for rs in msg.resource_spans for ss in rs.scope_spans for s in ss.spans]
    p = trace.pairs
    requests = p[p["request_seq"].notna() & (p["outcome"] != "duplicate")]
    assert len(spans) == len(requests)
    assert len({s.span_id for s in spans}) == len(spans)
    versions = trace.versions
    # spans are grouped by server: find each request's span by its start and method
    by_start = {(s.start_time_unix_nano, _attrs(s)["mcp.method.name"],
                 _attrs(s).get("jsonrpc.request.id")): s for s in spans}
    assert len(by_start) == len(spans)
    for row in requests.itertuples():
        request_id = trace.message(int(row.request_seq))["id"]
        shown = None if request_id is None else (
            request_id if isinstance(request_id, str) else json.dumps(request_id))
        span = by_start[(row.t_request.value, row.method, shown)]
        attrs = _attrs(span)
        assert len(span.trace_id) == 16 and len(span.span_id) == 8
        assert span.kind == Span.SPAN_KIND_CLIENT
        assert set(attrs) <= CONVENTION_ATTRIBUTES | PROJECT
        assert attrs["mcp.method.name"] == row.method
        assert span.name.split(" ")[0] == row.method
        assert attrs.get("jsonrpc.request.id") == shown
        if row.outcome == "tool_error":
            assert attrs["error.type"] == "tool_error"
        if row.outcome != "tool_error" and pd.notna(row.error_code):
            assert attrs["rpc.response.status_code"] == str(int(row.error_code))
            assert attrs["error.type"] == str(int(row.error_code))
        assert (span.status.code == Status.STATUS_CODE_ERROR) == ("error.type" in attrs)
        if versions.get(row.session) == "2026-07-28":
            assert "mcp.session.id" not in attrs
        assert attrs["network.transport"] == ("pipe" if path.suffix == ".jsonl" else "tcp")
        if pd.notna(row.response_seq):
            assert span.end_time_unix_nano - span.start_time_unix_nano == row.latency.value
        params = (trace.message(int(row.request_seq)) or {}).get("params") or {}
        if row.method == "tools/call" and isinstance(params.get("name"), str):
            assert attrs["gen_ai.tool.name"] == params["name"]
            assert attrs["gen_ai.operation.name"] == "execute_tool"
            assert span.name == f"tools/call {params['name']}"
        progress = [e for e in span.events if e.name == "notifications/progress"]
        assert len(progress) == row.progress_count


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_duration_histograms_parse_and_count_every_answered_request(path: Path) -> None:
    trace = mn.load(path)
    msg = ParseDict(json.loads(json.dumps(to_otlp_metrics(trace))),
                    ExportMetricsServiceRequest())
    (metric,) = msg.resource_metrics[0].scope_metrics[0].metrics
    assert metric.name == "mcp.client.operation.duration" and metric.unit == "s"
    points = metric.histogram.data_points
    p = trace.pairs
    answered = p[p["request_seq"].notna() & p["response_seq"].notna()
                 & (p["outcome"] != "duplicate")]
    assert sum(pt.count for pt in points) == len(answered)
    for pt in points:
        assert list(pt.explicit_bounds) == BUCKETS
        assert sum(pt.bucket_counts) == pt.count
    total = answered["latency"].dt.total_seconds().sum()
    assert sum(pt.sum for pt in points) == pytest.approx(total)


def test_traceparent_and_cancel(tmp_path: Path) -> None:
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    trace = load_rows(tmp_path, INIT + [
        ("c2s", req(1, "tools/call", {"name": "slow", "_meta": {"traceparent": tp,
                                                                 "progressToken": "p1"}})),
        ("s2c", note("notifications/progress", {"progressToken": "p1", "progress": 1})),
        ("c2s", note("notifications/cancelled", {"requestId": 1})),
        ("c2s", req(2, "ping")), ("s2c", ok(2)),
    ])
    spans = [s for rs in _parse(to_otlp(trace)).resource_spans for ss in rs.scope_spans
             for s in ss.spans]
    slow = next(s for s in spans if s.name == "tools/call slow")
    assert slow.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert slow.parent_span_id.hex() == "00f067aa0ba902b7"
    assert [e.name for e in slow.events] == ["notifications/progress",
                                             "notifications/cancelled"]
    ping = next(s for s in spans if s.name == "ping")
    assert ping.parent_span_id == b"" and ping.trace_id != slow.trace_id


ALIKE = [p for p in CAPTURES if ids_alike_as_strings(mn.load(p))]


def test_the_round_trips_meet_ids_alike_as_strings() -> None:
    """The bundled traces hold the case the id's type is written for: 9 and "9"."""
    assert ALIKE


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_export_then_import_gives_the_same_requests(path: Path, tmp_path: Path) -> None:
    from mcp_notebook.otlp import trace_from_otlp, write_otlp

    trace = mn.load(path)
    back = trace_from_otlp(write_otlp(trace, tmp_path / "spans.json"))
    assert back.payload_free

    def requests(t: mn.Trace) -> pd.DataFrame:
        p = t.pairs
        p = p[p["request_seq"].notna() & (p["outcome"] != "duplicate")]
        p = p.sort_values("t_request", kind="stable").reset_index(drop=True)
        cols = ["method", "id_key", "outcome", "error_code", "progress_count"]
        out = p[cols].astype(object).where(p[cols].notna(), None)
        out["cancelled_by_notification"] = p["cancel_seq"].notna()
        out["latency_ms"] = p["latency"].dt.total_seconds() * 1000
        return out

    a, b = requests(trace), requests(back)
    # the loader holds seconds as floats: latencies agree to well under a microsecond
    pd.testing.assert_frame_equal(b, a, check_exact=False, rtol=0, atol=1e-3)
    # 9 and "9" stay two ids, by the id's type beside jsonrpc.request.id
    assert ids_alike_as_strings(back) == ids_alike_as_strings(trace)


def test_span_ids_of_different_captures_differ_though_their_sessions_share_a_name() -> None:
    """Three peer captures name a session ``no-such-session``: a consumer that keys spans by
    id (Phoenix does) would keep one of each pair if their ids were made from the name."""
    peers = ROOT / "tests" / "fixtures" / "peers"
    ids: list[bytes] = []
    for name in ("python-2026-stateless-http.har", "ts-client-demo-http.har",
                 "ts-client-everything-http.har"):
        msg = _parse(to_otlp(mn.load(peers / name)))
        ids += [s.span_id for rs in msg.resource_spans for ss in rs.scope_spans
                for s in ss.spans]
    assert len(ids) == len(set(ids))
