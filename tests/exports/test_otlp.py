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
from tests.exports.captures import CAPTURES, REPRESENTATIVE, is_har
from tests.exports.idforms import ids_alike_as_strings
from tests.helpers import INIT, load_rows, note, ok, req

ROOT = Path(__file__).resolve().parents[2]
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
        assert attrs.get("mcp_notebook.jsonrpc.request.id_type") == (
            None if request_id is None else "string" if isinstance(request_id, str)
            else "number")
        if row.outcome == "tool_error":
            assert attrs["error.type"] == "tool_error"
        if row.outcome != "tool_error" and pd.notna(row.error_code):
            assert attrs["rpc.response.status_code"] == str(int(row.error_code))
            assert attrs["error.type"] == str(int(row.error_code))
        assert (span.status.code == Status.STATUS_CODE_ERROR) == ("error.type" in attrs)
        if versions.get(row.session) == "2026-07-28":
            assert "mcp.session.id" not in attrs
        assert attrs["network.transport"] == ("tcp" if is_har(path) else "pipe")
        if pd.notna(row.response_seq):
            assert span.end_time_unix_nano - span.start_time_unix_nano == row.latency.value
        params = (trace.message(int(row.request_seq)) or {}).get("params") or {}
        if row.method == "tools/call" and isinstance(params.get("name"), str):
            assert attrs["gen_ai.tool.name"] == params["name"]
            assert attrs["gen_ai.operation.name"] == "execute_tool"
            assert span.name == f"tools/call {params['name']}"
        elif row.method == "prompts/get" and isinstance(params.get("name"), str):
            assert attrs["gen_ai.prompt.name"] == params["name"]
            assert span.name == f"prompts/get {params['name']}"
        else:  # the conventions: no low-cardinality target, the method alone
            assert span.name == row.method
        # execute_tool for a tool call, and not otherwise
        assert ("gen_ai.operation.name" in attrs) == (row.method == "tools/call")
        if row.method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            assert attrs.get("mcp.resource.uri") == (
                params["uri"] if isinstance(params.get("uri"), str) else None)
        progress = [e for e in span.events if e.name == "notifications/progress"]
        assert len(progress) == row.progress_count


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
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


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
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


# -- the docs table and the attributes the capture knows -----------------------------------------
def _spans_of(doc: dict[str, Any]) -> list[Span]:
    return [s for rs in _parse(doc).resource_spans for ss in rs.scope_spans for s in ss.spans]


def _docs_table() -> dict[str, tuple[str, str]]:
    """name -> (conventions, written) of the OpenTelemetry table in docs/exports.md."""
    text = (ROOT / "docs" / "exports.md").read_text("utf-8")
    section = text.split("\n## OpenTelemetry\n", 1)[1].split("\n## ", 1)[0]
    lines = section.split("| name | conventions | written |", 1)[1].splitlines()[2:]
    rows: dict[str, tuple[str, str]] = {}
    for line in lines:
        if not line.startswith("|"):
            break
        name, conventions, written = (c.strip() for c in line.strip("|").split("|")[:3])
        rows[name.strip("`")] = (conventions, written)
    return rows


def _jsonrpc_rows() -> list[tuple[str, Any]]:
    """Requests whose jsonrpc member is 1.0, 2.0, missing, and not a string."""
    one = {"jsonrpc": "1.0", "id": 1, "method": "tools/list"}
    missing = {"id": 2, "method": "ping"}
    number = {"jsonrpc": 2, "id": 3, "method": "ping"}
    return INIT + [("c2s", one), ("s2c", ok(1, {"tools": []})), ("c2s", missing),
                   ("s2c", ok(2)), ("c2s", number), ("s2c", ok(3)),
                   ("c2s", req(4, "ping")), ("s2c", ok(4))]


def test_the_docs_table_is_the_pinned_conventions_and_what_is_written(tmp_path: Path) -> None:
    from mcp_notebook.otlp import ATTRIBUTES, PROJECT_ATTRIBUTES

    rows = _docs_table()
    attributes = {n: v for n, v in rows.items() if "." in n and v[0] != "metric"}
    assert {n for n, (c, _) in attributes.items()
            if c not in ("server span only", "not in the conventions")} == CONVENTION_ATTRIBUTES
    assert {n for n, (c, _) in attributes.items() if c == "server span only"} == SERVER_SPAN_ONLY
    written = {n for n, (_, w) in attributes.items() if w == "yes"}
    assert written == set(ATTRIBUTES) | set(PROJECT_ATTRIBUTES)
    assert {n for n, (_, w) in attributes.items() if w != "yes"} == \
        (CONVENTION_ATTRIBUTES | SERVER_SPAN_ONLY) - written
    # what the exporter writes for every bundled trace (and one whose jsonrpc is not 2.0)
    docs = [to_otlp(mn.load(p)) for p in CAPTURES]
    docs.append(to_otlp(load_rows(tmp_path, _jsonrpc_rows())))
    seen = {a.key for doc in docs for s in _spans_of(doc)
            for a in [*s.attributes, *(x for e in s.events for x in e.attributes)]}
    assert seen == written
    assert rows["mcp.client.operation.duration"] == ("metric", "yes")


def test_jsonrpc_protocol_version_is_written_when_it_is_not_2_0(tmp_path: Path) -> None:
    spans = _spans_of(to_otlp(load_rows(tmp_path, _jsonrpc_rows())))
    by_id = {_attrs(s)["jsonrpc.request.id"]: _attrs(s) for s in spans}
    assert by_id["1"]["jsonrpc.protocol.version"] == "1.0"
    for rid in ("0", "2", "3", "4"):  # 2.0 (initialize is 0), missing, a number, 2.0
        assert "jsonrpc.protocol.version" not in by_id[rid]


HARS = [p for p in CAPTURES if is_har(p)]


@pytest.mark.parametrize("path", HARS, ids=[p.name for p in HARS])
def test_a_har_capture_gives_the_http_version_and_server_of_its_entries(path: Path) -> None:
    from urllib.parse import urlsplit

    entries = json.loads(path.read_text("utf-8"))["log"]["entries"]
    known = {(urlsplit(e["request"]["url"]).hostname, urlsplit(e["request"]["url"]).port,
              e["response"]["httpVersion"].removeprefix("HTTP/")) for e in entries}
    spans = _spans_of(to_otlp(mn.load(path)))
    assert spans
    for span in spans:
        a = {x.key: x.value for x in span.attributes}
        assert a["network.protocol.name"].string_value == "http"
        got = (a["server.address"].string_value, a["server.port"].int_value,
               a["network.protocol.version"].string_value)
        assert got in known


def test_network_facts_are_those_the_har_says_and_left_out_where_it_does_not(
        tmp_path: Path) -> None:
    har = json.loads((ROOT / "data" / "demo-http.har").read_text("utf-8"))
    for e in har["log"]["entries"]:
        e["request"]["url"] = "https://mcp.example.com/mcp"
        e["request"]["httpVersion"] = "h2"
        e["response"]["httpVersion"] = ""
    path = tmp_path / "h2.har"
    path.write_text(json.dumps(har), encoding="utf-8")
    trace = mn.load(path)
    spans = _spans_of(to_otlp(trace))
    for span in spans:
        a = {x.key: x.value for x in span.attributes}
        assert (a["server.address"].string_value, a["server.port"].int_value,
                a["network.protocol.version"].string_value) == ("mcp.example.com", 443, "2")
    path.unlink()  # the HAR gone: what it said is not known, and nothing is guessed
    again = _spans_of(to_otlp(trace))
    assert len(again) == len(spans)
    for span in again:
        assert not {"network.protocol.name", "network.protocol.version", "server.address",
                    "server.port"} & set(_attrs(span))
    for span in _spans_of(to_otlp(mn.load(ROOT / "data" / "demo-stdio.jsonl"))):
        assert not {"network.protocol.name", "server.address"} & set(_attrs(span))
