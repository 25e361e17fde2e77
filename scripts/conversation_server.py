"""A 2026-07-28 server for ``make_data_conversation.py``: one tool that asks the client for
input with an ``InputRequiredResult`` (multi round-trip requests) before it answers.

Run as ``python scripts/conversation_server.py PORT`` (stateless Streamable HTTP on
127.0.0.1). Built on the official MCP Python SDK (``MCPServer``); the SDK seals the
``requestState`` it returns and checks the client's echo.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

mcp = MCPServer("mcp-notebook-mrtr")


@mcp.tool()
async def confirm(action: str, ctx: Context) -> str | InputRequiredResult:
    """Do ``action`` once the user confirmed it (asked through the client)."""
    if not ctx.input_responses:
        ask = ElicitRequest(params=ElicitRequestFormParams(
            message=f"Really {action}?",
            requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}}))
        return InputRequiredResult(input_requests={"confirm": ask}, request_state="round-1")
    answer = ctx.input_responses.get("confirm")
    return f"{action}: {getattr(answer, 'action', 'no answer')}"


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), stateless_http=True)
