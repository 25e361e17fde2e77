"""OpenTelemetry export: one span per request, named and attributed per the OpenTelemetry
semantic conventions for MCP, as OTLP/JSON.

Conventions followed: ``docs/gen-ai/mcp.md`` of open-telemetry/semantic-conventions-genai
at commit 0393513 (status: Development), whose MCP page moved there from
open-telemetry/semantic-conventions (last full version there at 7b0c0fe).

The attributes (:data:`ATTRIBUTES`, and :data:`PROJECT_ATTRIBUTES` in this project's
own namespace) are in the table of ``docs/exports.md``, with where each comes from and
when it is left out (a test compares that table with what is written).

Span name ``{mcp.method.name} {target}`` (target: the tool or prompt name), kind CLIENT
(the requester's view: from the request to its response), status ERROR when ``error.type``
is set. Progress and cancel notifications are span events (the progress value as
``mcp_notebook.progress``). A ``params._meta.traceparent`` on the request gives the span
its trace and parent. ``mcp_notebook.jsonrpc.request.id_type`` says whether the id was
a string or a number, which ``jsonrpc.request.id``, a string, cannot (``9`` and ``"9"``
come back apart). The status description (the error message) and tool arguments and
results are not exported: they are payload.

OTLP/JSON writes trace and span ids as hex and 64-bit integers as strings (the OTLP
specification's JSON mapping).

>>> import mcp_notebook as mn
>>> doc = to_otlp(mn.load(mn.sample_path("everything-stdio-basics")))
>>> spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
>>> [s["name"] for s in spans][:4]
['initialize', 'tools/list', 'tools/call echo', 'tools/call get-sum']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from . import __version__
from .boundary import iter_boundary, trace_from_boundary
from .boundary.links import notification_targets
from .boundary.view import CHUNK
from .engine.gcpause import gc_paused
from .protocol import versions as V
from .readers.otlp_facts import HttpFacts, envelopes, network_attributes
from .readers.otlp_spans import ID_TYPE, boundary_from_otlp

__all__ = ["to_otlp", "to_otlp_metrics", "write_otlp", "boundary_from_otlp", "trace_from_otlp",
           "DURATION_BUCKETS", "ATTRIBUTES", "PROJECT_ATTRIBUTES"]

#: the conventions' explicit bucket boundaries for the operation-duration histograms (s)
DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
#: every span attribute of the conventions this exporter writes (where the capture knows it)
ATTRIBUTES = ("mcp.method.name", "mcp.session.id", "mcp.protocol.version",
              "jsonrpc.request.id", "jsonrpc.protocol.version", "gen_ai.tool.name",
              "gen_ai.prompt.name", "mcp.resource.uri", "gen_ai.operation.name", "error.type",
              "rpc.response.status_code", "network.transport", "network.protocol.name",
              "network.protocol.version", "server.address", "server.port")
#: the span and event attributes of this project's own namespace (not in the conventions)
PROJECT_ATTRIBUTES = (ID_TYPE, "mcp_notebook.progress")
SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2
_RESOURCE = {"resources/read", "resources/subscribe", "resources/unsubscribe"}
_STATELESS = "2026-07-28"
#: the JSON type of an id by the first character of its compact JSON text
_JSON_TYPE = {'"': "string", "t": "boolean", "f": "boolean", "{": "object", "[": "array"}


def _hex(data: str, n: int) -> str:
    return hashlib.sha256(data.encode("utf-8", "surrogateescape")).hexdigest()[: 2 * n]


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _ns(ts: pd.Timestamp) -> str:
    return str(int(ts.value))


def _request_id(id_key: Any) -> str | None:
    if not isinstance(id_key, str):
        return None
    if id_key == "null":
        return None
    if not id_key.startswith('"'):
        return id_key  # a number (or an id of the wrong type) as its JSON text
    try:
        value = msgspec.json.decode(id_key)
    except (msgspec.DecodeError, RecursionError):
        return id_key
    return value if isinstance(value, str) else id_key


def _span_events(trace: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The progress and cancel notifications that name a request
    (:func:`~mcp_notebook.boundary.links.notification_targets`) and have a time, to be span
    events: the request seq each belongs to (ascending), its seq, whether it is a
    progress; three arrays (the events are made a chunk of spans at a time)."""
    notes, targets, progress = notification_targets(trace)
    ts = trace.frames["ts"].to_numpy(dtype="datetime64[ns]")
    keep = ~np.isnat(ts[notes])
    notes, targets, progress = notes[keep], targets[keep], progress[keep]
    order = np.lexsort((notes, targets))
    return targets[order], notes[order], progress[order]


def _session_ids(trace: Any, b: pd.DataFrame, streams: list[str]) -> list[str | None]:
    files = {str(p).replace("\\", "/").rsplit("/", 1)[-1] for p in trace.paths}
    out: list[str | None] = []
    for row, stream in zip(b.itertuples(index=False), streams, strict=True):
        s = row.session
        ok = (isinstance(s, str) and stream in ("http", "sse") and s not in files
              and V.normalise(row.protocol_version) != _STATELESS)
        out.append(s if ok else None)
    return out


def to_otlp(trace: Any) -> dict[str, Any]:
    """The requests of ``trace`` as an OTLP/JSON ``ExportTraceServiceRequest``.

    One resource per server (``service.name``/``service.version`` from ``serverInfo``),
    one span per request; see the module documentation for names and attributes.
    :func:`write_otlp` writes the same spans as it goes (a resource per server and chunk).
    """
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    with gc_paused():
        for rs in iter_resource_spans(trace):
            key = tuple(a["value"]["stringValue"] for a in rs["resource"]["attributes"])
            if key in merged:
                merged[key]["scopeSpans"][0]["spans"].extend(rs["scopeSpans"][0]["spans"])
            else:
                merged[key] = rs
    return {"resourceSpans": list(merged.values())}


def iter_resource_spans(trace: Any, chunk: int = CHUNK) -> Iterator[dict[str, Any]]:
    """The ``ResourceSpans`` of ``trace``: for each chunk of operations
    (:func:`~mcp_notebook.boundary.iter_boundary`), one per server."""
    targets, notes, progress = _span_events(trace)
    begins = _session_starts(trace)
    stream = trace.frames["stream"].astype(object).to_numpy()
    sources = trace.frames["source"]
    facts = HttpFacts(list(trace.paths))
    ts = trace.frames["ts"].to_numpy(dtype="datetime64[ns]").astype(np.int64)
    for b in iter_boundary(trace, chunk):
        req = b[(b["kind"] == "request") & b["request_seq"].notna()
                & (b["outcome"] != "duplicate")]
        if req.empty:
            continue
        seqs = req["request_seq"].to_numpy(dtype=np.int64)
        lo, hi = np.searchsorted(targets, [seqs[0], seqs[-1] + 1])
        mine: dict[int, list[dict[str, Any]]] = {}
        _, values = trace.references(notes[lo:hi])
        for k, value in zip(range(int(lo), int(hi)), values.tolist(), strict=True):
            attrs = [] if not progress[k] or value != value else [
                {"key": "mcp_notebook.progress", "value": {"doubleValue": float(value)}}]
            mine.setdefault(int(targets[k]), []).append({
                "timeUnixNano": str(int(ts[notes[k]])), "attributes": attrs,
                "name": "notifications/progress" if progress[k]
                else "notifications/cancelled"})
        streams = [str(stream[s]) for s in seqs]
        http = [k for k, st in enumerate(streams) if st in ("http", "sse")]
        where = dict(zip(http, sources.take(seqs[http]).tolist(), strict=True))
        network = [network_attributes(facts.of(where[k])) if k in where else []
                   for k in range(len(seqs))]
        yield from _resources(trace, req, seqs, streams, mine, begins, network)


def _session_starts(trace: Any) -> dict[str, int]:
    """Session label (``-`` for none) -> the time (ns) of its first frame: with the label,
    what the ids of its spans are made from, so that two captures with a session of the
    same name (``no-such-session``, a file name) do not give spans the same ids."""
    f = trace.frames
    ns = f["ts"].to_numpy(dtype="datetime64[ns]").astype(np.int64)
    known = ~np.isnat(f["ts"].to_numpy(dtype="datetime64[ns]"))
    labels = f["session"].astype(object).where(f["session"].notna(), "-")
    first = pd.Series(ns[known]).groupby(labels[known].to_numpy()).min()
    return {str(k): int(v) for k, v in first.items()}


def _resources(trace: Any, req: pd.DataFrame, seqs: np.ndarray, streams: list[str],
               events: dict[int, list[dict[str, Any]]], begins: dict[str, int],
               network: list[list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    sessions = _session_ids(trace, req, streams)
    tps, jsonrpc = envelopes(trace, seqs.tolist())
    parents: dict[int, tuple[str, str | None]] = dict(tps)
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    start = req["start"].to_numpy(dtype="datetime64[ns]")
    known = ~np.isnat(start)
    start_ns = start.astype(np.int64)
    took = req["duration"].to_numpy(dtype="timedelta64[ns]")
    end_ns = np.where(np.isnat(took), start_ns, start_ns + took.astype(np.int64))
    codes = req["error_code"].to_numpy(dtype="float64", na_value=np.nan).tolist()
    cols = {c: req[c].astype(object).tolist() for c in (
        "session", "method", "protocol_version", "id_key", "name", "outcome", "server_name",
        "server_version")}
    trace_ids: dict[str, str] = {}
    for n in range(len(req)):
        seq = int(seqs[n])
        session, method = cols["session"][n], str(cols["method"][n])
        key = str(session) if isinstance(session, str) else "-"
        if seq in parents:
            trace_id, parent = parents[seq]
        else:
            if key not in trace_ids:
                trace_ids[key] = _hex(f"trace:{key}:{begins.get(key, '')}", 16)
            trace_id, parent = trace_ids[key], None
        attrs = [_attr("mcp.method.name", method)]
        session_id = sessions[n]
        if session_id:
            attrs.append(_attr("mcp.session.id", session_id))
        version = cols["protocol_version"][n]
        if isinstance(version, str):
            attrs.append(_attr("mcp.protocol.version", version))
        rid = _request_id(cols["id_key"][n])
        if rid is not None:
            attrs.append(_attr("jsonrpc.request.id", rid))
            attrs.append(_attr(ID_TYPE, _JSON_TYPE.get(cols["id_key"][n][:1], "number")))
        if seq in jsonrpc:
            attrs.append(_attr("jsonrpc.protocol.version", jsonrpc[seq]))
        target = cols["name"][n] if isinstance(cols["name"][n], str) else None
        if target is not None:
            if method == "tools/call":
                attrs.append(_attr("gen_ai.tool.name", target))
            elif method == "prompts/get":
                attrs.append(_attr("gen_ai.prompt.name", target))
            elif method in _RESOURCE:
                attrs.append(_attr("mcp.resource.uri", target))
        if method == "tools/call":
            attrs.append(_attr("gen_ai.operation.name", "execute_tool"))
        error = None
        if cols["outcome"][n] == "tool_error":
            error = "tool_error"
        elif codes[n] == codes[n]:
            error = str(int(codes[n]))
            attrs.append(_attr("rpc.response.status_code", error))
        if error is not None:
            attrs.append(_attr("error.type", error))
        attrs.append(_attr("network.transport",
                           "pipe" if streams[n] in ("stdio", "stderr") else "tcp"))
        attrs.extend(network[n])
        name = f"{method} {target}" if method in ("tools/call", "prompts/get") \
            and target else method
        span: dict[str, Any] = {
            "traceId": trace_id,
            "spanId": _hex(f"span:{key}:{seq}:{start_ns[n]}", 8),
            "name": name,
            "kind": SPAN_KIND_CLIENT,
            "startTimeUnixNano": str(int(start_ns[n])) if known[n] else "0",
            "endTimeUnixNano": str(int(end_ns[n])) if known[n] else "0",
            "attributes": attrs,
        }
        if parent:
            span["parentSpanId"] = parent
        evs = events.get(seq)
        if evs:
            span["events"] = evs
        if error is not None:
            span["status"] = {"code": STATUS_ERROR}
        groups.setdefault((cols["server_name"][n], cols["server_version"][n]), []).append(span)
    for (server, version), spans in groups.items():
        attrs = [_attr("service.name", server if isinstance(server, str) else "mcp-server")]
        if isinstance(version, str):
            attrs.append(_attr("service.version", version))
        yield {
            "resource": {"attributes": attrs},
            "scopeSpans": [{"scope": {"name": "mcp_notebook", "version": __version__},
                            "spans": spans}],
        }


def to_otlp_metrics(trace: Any) -> dict[str, Any]:
    """``mcp.client.operation.duration`` as an OTLP/JSON ``ExportMetricsServiceRequest``:
    one histogram point per method, tool or prompt name and error type, in seconds, with
    the conventions' bucket boundaries (summed chunk by chunk)."""
    points: dict[tuple[str | None, ...], dict[str, Any]] = {}
    first = last = None
    for b in iter_boundary(trace):
        t0 = b["start"].min()
        first = t0 if first is None or (pd.notna(t0) and t0 < first) else first
        req = b[(b["kind"] == "request") & b["duration"].notna()
                & (b["outcome"] != "duplicate")]
        if req.empty:
            continue
        t1 = (req["start"] + req["duration"]).max()
        last = t1 if last is None or (pd.notna(t1) and t1 > last) else last
        keys = pd.DataFrame({
            "method": req["method"].astype(object),
            "target": req["name"].where(req["method"].isin(["tools/call", "prompts/get"])),
            "error": [("tool_error" if o == "tool_error" else
                       str(int(c)) if pd.notna(c) else None)
                      for o, c in zip(req["outcome"], req["error_code"], strict=True)],
            "seconds": req["duration"].dt.total_seconds(),
        })
        for key, g in keys.groupby(["method", "target", "error"], dropna=False, sort=False):
            values = g["seconds"].to_numpy()
            counts = np.bincount(np.searchsorted(DURATION_BUCKETS, values, side="left"),
                                 minlength=len(DURATION_BUCKETS) + 1)
            k = tuple(None if not isinstance(v, str) else v for v in key)
            pt = points.get(k)
            if pt is None:
                points[k] = {"count": len(values), "sum": float(values.sum()),
                             "min": float(values.min()), "max": float(values.max()),
                             "buckets": counts}
            else:
                pt["count"] += len(values)
                pt["sum"] += float(values.sum())
                pt["min"] = min(pt["min"], float(values.min()))
                pt["max"] = max(pt["max"], float(values.max()))
                pt["buckets"] = pt["buckets"] + counts
    out = []
    for (method, target, error), pt in sorted(points.items(),
                                              key=lambda kv: tuple(str(v) for v in kv[0])):
        attrs = [_attr("mcp.method.name", str(method))]
        if isinstance(target, str):
            attrs.append(_attr("gen_ai.tool.name" if method == "tools/call"
                               else "gen_ai.prompt.name", target))
        if isinstance(error, str):
            attrs.append(_attr("error.type", error))
        out.append({
            "attributes": attrs, "startTimeUnixNano": _ns(first) if first is not None
            and pd.notna(first) else "0",
            "timeUnixNano": _ns(last) if last is not None and pd.notna(last) else "0",
            "count": str(pt["count"]), "sum": pt["sum"], "min": pt["min"], "max": pt["max"],
            "bucketCounts": [str(int(c)) for c in pt["buckets"]],
            "explicitBounds": [float(x) for x in DURATION_BUCKETS],
        })
    metric = {"name": "mcp.client.operation.duration", "unit": "s",
              "description": "Duration of the MCP request as seen by its sender",
              "histogram": {"dataPoints": out, "aggregationTemporality": 2}}
    return {"resourceMetrics": [{
        "resource": {"attributes": [_attr("service.name", "mcp-server")]},
        "scopeMetrics": [{"scope": {"name": "mcp_notebook", "version": __version__},
                          "metrics": [metric]}],
    }]}


def _json_text(value: Any) -> str:
    """JSON text, by msgspec (fast); by json where a string holds what UTF-8 cannot
    (a lone surrogate from undecodable bytes), written as an escape."""
    try:
        return msgspec.json.encode(value).decode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=False)


def write_otlp(trace: Any, path: str | Path, *, metrics: str | Path | None = None) -> Path:
    """Write the spans of ``trace`` to ``path`` as OTLP/JSON, as it goes (a resource per
    server and chunk of operations: the OTLP JSON mapping allows several with one
    resource); and, if ``metrics`` names a file, the duration histograms there."""
    path = Path(path)
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write('{"resourceSpans":[')
        for k, rs in enumerate(iter_resource_spans(trace)):
            fh.write("," if k else "")
            fh.write(_json_text(rs))
        fh.write("]}")
    if metrics is not None:
        Path(metrics).write_text(json.dumps(to_otlp_metrics(trace), ensure_ascii=False),
                                 encoding="utf-8", errors="backslashreplace")
    return path


def trace_from_otlp(source: dict[str, Any] | str | Path) -> Any:
    """A payload-free Trace from an OTLP/JSON document (or file) of MCP request spans
    (``mn.load`` of the file gives the same trace: the ``otlp`` format)."""
    if not isinstance(source, dict):
        from .load import load

        return load(source, format="otlp")
    trace = trace_from_boundary(boundary_from_otlp(source))
    trace.notes = [n.replace("a boundary view", "OTLP spans") for n in trace.notes]
    return trace
