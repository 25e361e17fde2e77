"""A small MCP server of ours that pages its lists, on the official Python SDK's low-level
``Server`` (PyPI ``mcp``): ``resources/list`` and ``tools/list`` return 10 items a page with
an opaque ``nextCursor`` (MCP ``server/utilities/pagination.mdx``: the cursor is opaque,
and a page without ``nextCursor`` is the last). A cursor it did not issue is answered with
-32602, as that page advises. ``resources/read`` serves each resource's short text. The
tool ``deploy`` (2026-07-28 clients) asks for a confirmation with an input-required round:
its first answer is an ``InputRequiredResult`` with an elicitation and a ``requestState``;
the client retries the call with the user's answer and the state, and gets the result.

Usage: ``python scripts/pages_server.py`` (stdio). It exists to record
``data/pages-stdio.jsonl`` (``scripts/record_workshop.py``).
"""

from __future__ import annotations

import base64

import anyio
import mcp.server.stdio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

PAGE = 10
RESOURCES = [types.Resource(uri=f"pages://item/{n}", name=f"item-{n}", mimeType="text/plain")
             for n in range(1, 26)]
TOOLS = [types.Tool(name=f"tool_{n:02d}", description=f"Tool number {n}",
                    inputSchema={"type": "object", "properties": {}})
         for n in range(1, 12)] + [types.Tool(
             name="deploy", description="Deploy after the user confirms",
             inputSchema={"type": "object", "properties": {"target": {"type": "string"}}})]


def _page(items: list, params: types.PaginatedRequestParams | None) -> tuple[list, str | None]:
    start = 0
    if params is not None and params.cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(params.cursor.encode()).decode().split(":")[1])
        except (ValueError, IndexError, UnicodeDecodeError):
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor") from None
    end = start + PAGE
    more = base64.urlsafe_b64encode(f"offset:{end}".encode()).decode() if end < len(items) \
        else None
    return items[start:end], more


async def list_resources(ctx, params):
    items, more = _page(RESOURCES, params)
    return types.ListResourcesResult(resources=items, nextCursor=more)


async def list_tools(ctx, params):
    items, more = _page(TOOLS, params)
    return types.ListToolsResult(tools=items, nextCursor=more)


async def call_tool(ctx, params):
    if params.name != "deploy":
        return types.CallToolResult(content=[types.TextContent(type="text", text=(
            f"{params.name} ran"))])
    answer = (params.input_responses or {}).get("confirm")
    if answer is None or params.request_state != "deploy:awaiting-confirm":
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(
            message=f"Deploy {(params.arguments or {}).get('target', 'it')}?",
            requestedSchema={"type": "object", "properties": {"confirm": {"type": "boolean"}},
                             "required": ["confirm"]}))
        return types.InputRequiredResult(input_requests={"confirm": ask},
                                         request_state="deploy:awaiting-confirm")
    ok = getattr(answer, "action", None) == "accept" and (answer.content or {}).get("confirm")
    return types.CallToolResult(content=[types.TextContent(
        type="text", text="deployed" if ok else "not deployed")], isError=not ok)


async def read_resource(ctx, params):
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=params.uri, mimeType="text/plain", text=f"This is {params.uri}.")])


server = Server("pages-demo", version="0.1.0", on_list_resources=list_resources,
                on_list_tools=list_tools, on_read_resource=read_resource,
                on_call_tool=call_tool)


async def main() -> None:
    async with mcp.server.stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
