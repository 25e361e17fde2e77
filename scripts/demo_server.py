"""A small MCP server of ours, built on the official Python SDK (PyPI ``mcp``).

It exists to record real traces (``scripts/make_data.py``) and to test the capture tools:
every scenario the notebooks teach has a tool here.

Usage::

    python scripts/demo_server.py                         # stdio
    python scripts/demo_server.py streamable-http PORT    # Streamable HTTP on 127.0.0.1:PORT/mcp
    python scripts/demo_server.py sse PORT                # old HTTP+SSE on 127.0.0.1:PORT/sse

Tools: ``add`` (succeeds), ``divide`` (``isError`` on division by zero), ``slow`` (reports
progress, long enough to be cancelled), ``ask_llm`` (sampling: a request from server to
client), ``ask_user`` (elicitation), ``chatty`` (log notifications), ``ping_client``
(a ping from server to client), ``wait_gate`` / ``open_gate`` (a call held open until
another call releases it), ``big`` (a large result). Resources: ``demo://readme``
and the template ``demo://notes/{name}``. Prompt: ``review``.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import anyio
from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import EmptyResult, SamplingMessage, SetLevelRequestParams, TextContent
from pydantic import BaseModel

# sampling, elicitation and logging are deprecated from 2026-07-28 on; this server speaks
# the 2025 handshake versions where they are current, so the warnings are noise on stderr
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

NOTES = {"groceries": "eggs, flour, milk", "todo": "write the capture tests"}

mcp = MCPServer("mcp-notebook-demo", version="0.1.0",
                instructions="A demo server for recording MCP traces.", log_level="WARNING")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b; dividing by zero is a tool error (isError), not a protocol error."""
    if b == 0:
        raise ToolError("division by zero")
    return a / b


@mcp.tool()
async def slow(steps: int, ctx: Context, delay: float = 0.2) -> str:
    """Take ``steps`` x ``delay`` seconds, reporting progress after each step."""
    for i in range(steps):
        await anyio.sleep(delay)
        await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
    return f"done after {steps} steps"


@mcp.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling/createMessage, server to client)."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=50, related_request_id=ctx.request_id)
    content = result.content
    return content.text if isinstance(content, TextContent) else str(content)


class Confirm(BaseModel):
    """What ``ask_user`` asks for."""

    confirm: bool
    note: str = ""


@mcp.tool()
async def ask_user(action: str, ctx: Context) -> str:
    """Ask the user to confirm an action (elicitation/create, server to client)."""
    answer = await ctx.elicit(f"Really {action}?", Confirm)
    if answer.action == "accept" and answer.data is not None and answer.data.confirm:
        return f"{action}: confirmed ({answer.data.note})"
    return f"{action}: {answer.action}"


LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
log_level = {"level": "info"}


async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
    """``logging/setLevel``: the least severe level ``chatty`` sends from now on."""
    log_level["level"] = params.level
    return EmptyResult()


mcp._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


@mcp.tool()
async def chatty(count: int, ctx: Context) -> str:
    """Send up to ``count`` log notifications (notifications/message) before the result."""
    floor = LEVELS.index(log_level["level"])
    for i in range(count):
        level = ["debug", "info", "warning", "error"][i % 4]
        if LEVELS.index(level) >= floor:
            await ctx.session.send_log_message(level=level, data=f"log line {i + 1}",  # type: ignore[arg-type]
                                               logger="demo", related_request_id=ctx.request_id)
    return f"sent {count} log messages"


@mcp.tool()
async def ping_client(ctx: Context) -> str:
    """Ping the client (a ping request from server to client)."""
    await ctx.session.send_ping()
    return "the client answered the ping"


GATES: dict[str, anyio.Event] = {}


def _gate(name: str) -> anyio.Event:
    if name not in GATES:
        GATES[name] = anyio.Event()
    return GATES[name]


@mcp.tool()
async def wait_gate(name: str, ctx: Context) -> str:
    """Report progress, then wait until ``open_gate`` opens the gate ``name``.

    The client can only open the gate after it has seen the progress: the call shows
    two requests in flight at once, and over HTTP it proves the SSE stream is live.
    """
    await ctx.report_progress(0, 1, f"waiting at gate {name}")
    with anyio.fail_after(60):
        await _gate(name).wait()
    GATES.pop(name, None)
    return f"gate {name} passed"


@mcp.tool()
def open_gate(name: str) -> str:
    """Open the gate ``name`` that ``wait_gate`` waits at."""
    _gate(name).set()
    return f"gate {name} opened"


@mcp.tool()
def big(kib: int) -> str:
    """Return a text of ``kib`` KiB."""
    return ("0123456789abcdef" * 64) * kib


@mcp.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    """What this server is."""
    return "mcp-notebook demo server: tools, resources and prompts for recording traces."


@mcp.resource("demo://notes/{name}", mime_type="text/plain")
def note(name: str) -> str:
    """One note by name."""
    if name not in NOTES:
        raise ResourceNotFoundError(f"no note named {name!r}")
    return NOTES[name]


@mcp.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review this code:\n\n{code}"


def main(argv: list[str]) -> None:
    transport = argv[0] if argv else "stdio"
    if transport == "stdio":
        mcp.run()
    elif transport in ("streamable-http", "sse"):
        port = int(argv[1]) if len(argv) > 1 else 8000
        mcp.run(transport, host="127.0.0.1", port=port)  # type: ignore[call-overload]
    else:
        raise SystemExit(f"unknown transport {transport!r}: stdio, streamable-http or sse")


if __name__ == "__main__":
    main(sys.argv[1:])
