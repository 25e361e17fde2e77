"""OTLP/JSON back in: the MCP request spans of an OpenTelemetry trace export (this
library's, or any tracer's that follows the MCP conventions) as a boundary frame, and a
payload-free Trace of it (``mn.load`` of such a file: the ``otlp`` format;
:func:`mcp_notebook.otlp.trace_from_otlp`).

:mod:`mcp_notebook.otlp` writes what this reads; the names are those of its table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pandas as pd

from .boundary_table import BOUNDARY_COLUMNS, error_type

__all__ = ["boundary_from_otlp", "spans_of", "ID_TYPE"]

#: the JSON type of the request id (``string``, ``number``, ...), beside the conventions'
#: ``jsonrpc.request.id`` (a string, which cannot tell ``9`` from ``"9"``); this project's
#: own attribute, not one of the conventions
ID_TYPE = "mcp_notebook.jsonrpc.request.id_type"


# -- back in: OTLP/JSON spans of MCP requests to a payload-free trace ---------------------------
#: requests only a server sends (MCP schema's ServerRequest union, less ping)
_SERVER_REQUESTS = {"sampling/createMessage", "elicitation/create", "roots/list"}


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return None
    for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if key in v:
            return _number(v[key]) if key == "intValue" else v[key]
    return None


def _number(value: Any) -> int | None:
    """An OTLP/JSON integer (a string or a number); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _attrs_of(item: Any) -> dict[str, Any]:
    attrs = item.get("attributes") if isinstance(item, dict) else None
    return {a["key"]: _value(a.get("value")) for a in attrs
            if isinstance(a, dict) and isinstance(a.get("key"), str)
            } if isinstance(attrs, list) else {}


def _list(item: Any, key: str) -> list[Any]:
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, list) else []


def _id_key(text: str | None, kind: Any = None) -> str | None:
    """The compact JSON of an id written as a string: as its type (:data:`ID_TYPE`) says
    where the span has one; else a number stays a number."""
    if not isinstance(text, str):
        return None if text is None else msgspec.json.encode(text).decode("utf-8")
    if kind == "string":
        return msgspec.json.encode(text).decode("utf-8")
    if kind in ("number", "boolean", "object", "array"):
        return text  # the id's own JSON text
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        value = None
    if isinstance(value, int) and not isinstance(value, bool):
        return text
    return msgspec.json.encode(text).decode("utf-8")


def spans_of(doc: Any, problems: list[tuple[str, str]] | None = None
             ) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(where, resource attributes, span)`` of each span object of an OTLP/JSON
    document; what is not shaped as OTLP is ``(where, why)`` in ``problems``."""
    problems = [] if problems is None else problems
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        problems.append(("document", "not an OTLP/JSON trace export (no resourceSpans list)"))
        return
    for i, rs in enumerate(doc["resourceSpans"]):
        if not isinstance(rs, dict):
            problems.append((f"resourceSpans[{i}]", "not an object"))
            continue
        resource = _attrs_of(rs.get("resource")) if isinstance(rs.get("resource"), dict) else {}
        for j, ss in enumerate(_list(rs, "scopeSpans")):
            for k, span in enumerate(_list(ss, "spans")):
                where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                if isinstance(span, dict):
                    yield where, resource, span
                else:
                    problems.append((where, "not an object"))


def boundary_from_otlp(doc: Any, problems: list[tuple[str, str]] | None = None
                       ) -> pd.DataFrame:
    """The boundary frame of the MCP request spans of an OTLP/JSON document.

    What spans do not hold comes back empty (sizes, client name and version) or inferred:
    the requester from the method (a server sends ``sampling/createMessage``,
    ``elicitation/create`` and ``roots/list``; the client everything else), the session
    from ``mcp.session.id`` or else the trace id, an id from its string and its type
    (:data:`ID_TYPE`; a span without it, from another tracer: ``"7"`` is read as the
    number 7), and a span that ends when it starts as unanswered. A span with no
    ``mcp.method.name`` is not an MCP span and is left out; one that cannot be read (no
    start time, say) is ``(where, why)`` in ``problems``.
    """
    problems = [] if problems is None else problems
    ops: list[dict[str, Any]] = []
    events: list[tuple[int, dict[str, Any]]] = []  # (time, row) of the notifications
    for where, resource, span in spans_of(doc, problems):
        a = _attrs_of(span)
        method = a.get("mcp.method.name")
        if not isinstance(method, str):
            continue  # not an MCP span
        start, end = (_number(span.get(k)) for k in ("startTimeUnixNano", "endTimeUnixNano"))
        if start is None or end is None or not 0 <= start <= end < 1 << 63:
            problems.append((where, "no start and end time (startTimeUnixNano, "
                             "endTimeUnixNano) that can be read, the end not before the start"))
            continue
        session = a.get("mcp.session.id") or f"trace:{span.get('traceId', '')}"
        requester = "s2c" if method in _SERVER_REQUESTS else "c2s"
        code = _number(a.get("rpc.response.status_code"))
        error = a.get("error.type")
        answered = end != start or error is not None
        id_key = _id_key(a.get("jsonrpc.request.id"), a.get(ID_TYPE))
        token = msgspec.json.encode(f"span:{span.get('spanId', '')}").decode()
        evs = [e for e in _list(span, "events") if isinstance(e, dict)]
        target = a.get("gen_ai.tool.name") or a.get("gen_ai.prompt.name") \
            or a.get("mcp.resource.uri")
        ops.append({
            "session": str(session), "requester": requester, "kind": "request",
            "method": method, "id_key": id_key,
            "name": target if isinstance(target, str) else None,
            "ref": token if any(e.get("name") == "notifications/progress" for e in evs)
            else None,
            "start": start, "end": end if answered else None,
            "outcome": "tool_error" if error == "tool_error" else
            "error" if code is not None else "result" if answered else "unanswered",
            "error_code": code,
            "protocol_version": _text(a.get("mcp.protocol.version")),
            "server_name": _text(resource.get("service.name")),
            "server_version": _text(resource.get("service.version")),
        })
        for e in evs:
            name = e.get("name")
            when = _number(e.get("timeUnixNano"))
            if name not in ("notifications/progress", "notifications/cancelled") \
                    or when is None or not 0 <= when < 1 << 63:
                continue
            progress = name == "notifications/progress"
            value = _attrs_of(e).get("mcp_notebook.progress")
            events.append((when, {
                "session": str(session), "kind": "notification", "method": name,
                "requester": ("c2s" if requester == "s2c" else "s2c") if progress
                else requester,
                "ref": token if progress else id_key,
                "progress": value if isinstance(value, (int, float)) else None,
                "start": when, "end": None, "outcome": "notification",
                "protocol_version": ops[-1]["protocol_version"],
                "server_name": ops[-1]["server_name"],
                "server_version": ops[-1]["server_version"],
            }))
    # capture order: every request, response and notification by its time
    marks = [(op["start"], 0, i, "request") for i, op in enumerate(ops)]
    marks += [(op["end"], 1, i, "response") for i, op in enumerate(ops) if op["end"] is not None]
    rows = ops + [row for _, row in events]
    marks += [(t, 0, len(ops) + k, "request") for k, (t, _) in enumerate(events)]
    for seq, (_, _, i, what) in enumerate(sorted(marks)):
        rows[i]["request_seq" if what == "request" else "response_seq"] = seq
    b = pd.DataFrame(rows)
    n = len(b)

    def col(name: str) -> pd.Series:
        return b[name] if name in b else pd.Series([None] * n, dtype=object)

    start = pd.to_datetime(pd.to_numeric(col("start")), unit="ns", utc=True)
    end = pd.to_datetime(pd.to_numeric(col("end")), unit="ns", utc=True)
    out = pd.DataFrame({
        "session": col("session"), "requester": col("requester"), "kind": col("kind"),
        "method": col("method"), "name": col("name"), "id_key": col("id_key"),
        "ref": col("ref"), "progress": pd.to_numeric(col("progress")).astype("float64"),
        "request_seq": pd.array(col("request_seq"), dtype="Int64"),
        "response_seq": pd.array(col("response_seq"), dtype="Int64"),
        "start": start, "duration": end - start, "outcome": col("outcome"),
        "error_code": pd.array(col("error_code"), dtype="Int64"),
    })
    out["error_type"] = [error_type(c, o == "tool_error")
                         for c, o in zip(out["error_code"], out["outcome"], strict=True)]
    out["is_error"] = out["error_type"].notna()
    out["bytes_in"] = pd.array([None] * n, dtype="Int64")
    out["bytes_out"] = pd.array([None] * n, dtype="Int64")
    for name in ("protocol_version", "client_name", "client_version", "server_name",
                 "server_version"):
        out[name] = col(name).astype(object).where(col(name).notna(), None)
    for name in ("name", "id_key", "ref", "error_type"):
        out[name] = out[name].astype(object).where(out[name].notna(), None)
    out = out.sort_values("request_seq", kind="stable").reset_index(drop=True)
    for name in ("session", "requester", "kind", "method", "outcome"):
        out[name] = out[name].astype("category")
    return out[list(BOUNDARY_COLUMNS)]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
