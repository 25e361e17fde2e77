"""The boundary table's columns and its files read back: what :mod:`mcp_notebook.boundary`
writes and the ``boundary`` and ``otlp`` readers read (this layer, below the trace, holds
the format; the view is made from a trace up there)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..table import empty

__all__ = ["BOUNDARY_COLUMNS", "ERROR_TYPES", "TARGET", "error_type", "read_boundary",
           "normalise"]


#: name -> (dtype, meaning)
BOUNDARY_COLUMNS: dict[str, tuple[str, str]] = {
    "session": ("category", "session of the operation"),
    "requester": ("category", "the side that sent the request or notification: c2s or s2c"),
    "kind": ("category", "request, notification, or response (a response with no request)"),
    "method": ("category", "the method (empty for an orphan response)"),
    "name": ("object", "the tool or prompt name (params.name), or the resource URI (params.uri)"),
    "id_key": ("object", "the request id's compact JSON text"),
    "ref": ("object", "the id a notifications/cancelled names, or the progress token of a "
                      "notifications/progress or of a request's _meta (compact JSON)"),
    "progress": ("float64", "the progress value of a notifications/progress"),
    "request_seq": ("Int64", "seq of the request or notification in the capture"),
    "response_seq": ("Int64", "seq of the (first) response"),
    "start": ("datetime64[ns, UTC]", "time of the request or notification"),
    "duration": ("timedelta64[ns]", "time from the request to its response"),
    "outcome": ("category", "result, error, tool_error, unanswered, cancelled, orphan, "
                            "duplicate, or notification"),
    "error_code": ("Int64", "error.code of an error response"),
    "error_type": ("object", "the error code's name (invalid_params, ...) or tool_error"),
    "is_error": ("bool", "the operation failed: a JSON-RPC error or a tool's isError"),
    "bytes_in": ("Int64", "bytes of the request or notification (into the answering side)"),
    "bytes_out": ("Int64", "bytes of the response (out of the answering side)"),
    "protocol_version": ("object", "the session's protocol version"),
    "client_name": ("object", "clientInfo.name from initialize (2026-07-28: from _meta)"),
    "client_version": ("object", "clientInfo.version from initialize"),
    "server_name": ("object", "serverInfo.name from the initialize result (or _meta)"),
    "server_version": ("object", "serverInfo.version from the initialize result"),
}

#: JSON-RPC 2.0 and MCP error codes by name; a code in neither is ``server_error`` within
#: -32099..-32000 (JSON-RPC's reserved range) and ``error_<code>`` elsewhere.
ERROR_TYPES: dict[int, str] = {
    -32700: "parse_error",
    -32600: "invalid_request",
    -32601: "method_not_found",
    -32602: "invalid_params",
    -32603: "internal_error",
    -32002: "resource_not_found",
    -32042: "url_elicitation_required",
}

#: methods whose params name a target, and the params member that holds it
TARGET = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
           "resources/subscribe": "uri", "resources/unsubscribe": "uri",
           "notifications/resources/updated": "uri"}

def error_type(code: Any, tool_error: bool = False) -> str | None:
    """The name of a JSON-RPC error code; ``tool_error`` for a result with isError."""
    if tool_error:
        return "tool_error"
    if code is None or code is pd.NA or (isinstance(code, float) and math.isnan(code)):
        return None
    code = int(code)
    if code in ERROR_TYPES:
        return ERROR_TYPES[code]
    return "server_error" if -32099 <= code <= -32000 else f"error_{code}"


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError("a .parquet boundary file needs pyarrow: "
                          "pip install 'mcp_notebook[parquet]', or write .jsonl") from None


def read_boundary(path: str | Path) -> pd.DataFrame:
    """A boundary file written by :func:`write_boundary`, back as the boundary frame."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        _need_pyarrow()
        b = pd.read_parquet(path)
    else:
        rows = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()
                if line.strip()]
        b = pd.DataFrame(rows)
        if "duration_ms" in b:
            ms = pd.to_numeric(b.pop("duration_ms"))
            b["duration"] = pd.to_timedelta(np.round(ms * 1e6), unit="ns")
        if "start" in b:
            b["start"] = pd.to_datetime(b["start"], utc=True, format="ISO8601")
    return normalise(b)


def normalise(b: pd.DataFrame) -> pd.DataFrame:
    """A frame with (some of) the boundary columns as the boundary frame: every column of
    ``BOUNDARY_COLUMNS`` in order and dtype, what is missing empty."""
    out = empty(BOUNDARY_COLUMNS)
    n = len(b)
    cols = {}
    for col, (dtype, _) in BOUNDARY_COLUMNS.items():
        values = b[col] if col in b else pd.Series([None] * n)
        if dtype == "category":
            cols[col] = values.astype(object).where(values.notna(), None).astype("category")
        elif dtype == "object":
            cols[col] = values.astype(object).where(values.notna(), None)
        elif dtype == "bool":
            cols[col] = values.fillna(False).astype(bool)
        elif dtype.startswith("datetime"):
            cols[col] = pd.to_datetime(values, utc=True)
        elif dtype.startswith("timedelta"):
            cols[col] = pd.to_timedelta(values)
        else:
            cols[col] = pd.array(values, dtype=dtype)
    return pd.DataFrame(cols, columns=list(out.columns)).reset_index(drop=True)


