"""Payload size: a notice on large frames, and the context cost of tool definitions.

The seed text on results (``JSONRPCResponse``, "Large result Payloads and Backpressure")
says streaming transports "can stall or drop messages when result objects grow into the
megabyte range"; the notice fires above :data:`LIMIT` bytes (1 MiB by default; set
``payload.LIMIT["bytes"]``). :func:`context_cost` is what each listed tool costs a model's
context: the bytes of its definition as listed and an estimate of its tokens (bytes / 4,
the usual rule of thumb for English and JSON with OpenAI/Anthropic tokenisers; an
estimate, not a count).
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..protocol.rules import Rule
from ._view import NOTIFICATION, REQUEST, RESULT, Hit, View

__all__ = ["RULES", "CHECKS", "LIMIT", "context_cost", "BYTES_PER_TOKEN"]

#: the size above which a params or result frame gets a notice (bytes)
LIMIT: dict[str, int] = {"bytes": 1 << 20}
BYTES_PER_TOKEN = 4

RULES: tuple[Rule, ...] = (
    Rule("large-payload", "info", "Params and results stay out of the megabyte range",
         "MCP imposes no hard size limit on result, but streaming transports (SSE, "
         "WebSocket) can stall or drop messages when result objects grow into the megabyte "
         "range", "seed text “What is JSONRPCResponse?”, §Large result Payloads and "
         "Backpressure",
         "Consider pagination (cursor-based) or out-of-band resource references (a "
         "resource link) rather than embedding large blobs directly in the message.",
         topic="payload"),
)


def _large(view: View) -> list[Hit]:
    vi = view.vi
    limit = LIMIT["bytes"]
    kinds = np.asarray([REQUEST, NOTIFICATION, RESULT], dtype=vi.kind.dtype)
    rows = np.flatnonzero(vi.size > limit)  # few: their kinds looked at after
    rows = rows[np.isin(vi.kind[rows], kinds)]
    out = []
    for seq in rows.tolist():
        what = "result" if vi.kind[seq] == RESULT else (view.method(seq) or "message")
        out.append(Hit(seq, None, f"{what} of {int(vi.size[seq]):,} bytes (notice above "
                       f"{limit:,})"))
    return out


CHECKS = {"large-payload": _large}

_encode = msgspec.json.encode


def _server_names(trace: Any) -> dict[Any, str | None]:
    """session -> serverInfo.name of its initialize result (or server/discover result)."""
    pairs = trace.pairs
    out: dict[Any, str | None] = {}
    rows = pairs[pairs["method"].isin(["initialize", "server/discover"])
                 & pairs["response_seq"].notna()]
    for session, resp in zip(rows["session"], rows["response_seq"], strict=True):
        msg = trace.message(int(resp))
        result = msg.get("result") if isinstance(msg, dict) else None
        info = result.get("serverInfo") if isinstance(result, dict) else None
        if session not in out and isinstance(info, dict):
            out[session] = info.get("name")
    return out


COLUMNS = ["session", "server", "tool", "bytes", "tokens", "seq"]


def context_cost(trace: Any, by: str = "tool") -> pd.DataFrame:
    """What the tool definitions of each ``tools/list`` answer cost, largest first.

    ``by="tool"``: one row per tool of the latest complete list of each session (``seq``
    is the answer it came from); ``by="session"`` or ``by="server"``: the sums.
    """
    if by not in ("tool", "session", "server"):
        raise ValueError(f"by must be 'tool', 'session' or 'server', not {by!r}")
    pairs = trace.pairs
    rows = pairs[(pairs["method"] == "tools/list") & pairs["response_seq"].notna()]
    names = _server_names(trace)
    latest: dict[Any, dict[str, tuple[int, int]]] = {}
    for session, req, resp in zip(rows["session"], rows["request_seq"], rows["response_seq"], strict=True):
        msg = trace.message(int(resp))
        result = msg.get("result") if isinstance(msg, dict) else None
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            continue
        request = trace.message(int(req)) if not pd.isna(req) else None
        params = request.get("params") if isinstance(request, dict) else None
        if not (isinstance(params, dict) and "cursor" in params):
            latest[session] = {}
        got = latest.setdefault(session, {})
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                got[tool["name"]] = (len(_encode(tool)), int(resp))
    table = pd.DataFrame(
        [(s, names.get(s), name, size, -(-size // BYTES_PER_TOKEN), seq)
         for s, tools in latest.items() for name, (size, seq) in tools.items()],
        columns=COLUMNS)
    table = table.astype({"bytes": "int64", "tokens": "int64", "seq": "int64"})
    if by != "tool":
        table = (table.groupby(by, dropna=False, observed=True)
                 .agg(tools=("tool", "size"), bytes=("bytes", "sum"), tokens=("tokens", "sum"))
                 .reset_index())
    return table.sort_values("bytes", ascending=False, kind="stable").reset_index(drop=True)
