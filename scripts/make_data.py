"""``make data``: record the project's real traces into ``data/``.

Run as ``.venv/bin/python scripts/make_data.py [NAME ...]`` from anywhere (no names: all).
Peers: the official MCP Python SDK client (PyPI ``mcp``) against the npm reference servers
(``@modelcontextprotocol/server-everything``, ``-filesystem``, ``-memory``, pinned in
``scripts/npm/``, installed into the git-ignored ``scripts/.npm/``) and our Python SDK
server ``scripts/demo_server.py``; stdio through ``mcp-notebook record`` (tap JSONL),
HTTP through ``mcp-notebook proxy`` (HAR). Frames the SDK will not send (string ids,
unknown methods, bad params, an unparsable line) are written by hand over the same real
pipe. ``scripts/broken_server.py`` misbehaves on purpose, for teaching.

Afterwards ``data/README.md`` is rewritten with each trace's peers and versions, its
scenario, and its counts from ``scripts/count_trace.py`` (independent of the library).
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28")

import _rec  # noqa: E402
from _rec import DATA, PY, RawClient, free_port, http_recording, npm_server, sdk_stdio  # noqa: E402

EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
MEMORY = "@modelcontextprotocol/server-memory"
DEMO = [PY, "scripts/demo_server.py"]  # recorded as "python" (the tap keeps the basename)


# -- client callbacks (canned answers: no model, no user) --------------------------------

async def sampling(ctx: Any, params: Any) -> Any:
    from mcp import types as mt

    return mt.CreateMessageResult(role="assistant", model="canned-model", stop_reason="endTurn",
                                  content=mt.TextContent(type="text", text="42"))


async def elicitation(ctx: Any, params: Any) -> Any:
    from mcp import types as mt

    schema = (params.requested_schema or {}).get("properties", {})
    if "confirm" in schema:
        return mt.ElicitResult(action="accept", content={"confirm": True, "note": "recorded"})
    return mt.ElicitResult(action="decline")


async def roots(ctx: Any) -> Any:
    from mcp import types as mt

    return mt.ListRootsResult(roots=[mt.Root(uri="file:///sandbox", name="sandbox")])


async def quiet_log(params: Any) -> None:
    pass


CALLBACKS: dict[str, Any] = {"sampling_callback": sampling, "elicitation_callback": elicitation,
                             "logging_callback": quiet_log}


async def attempt(aw: Awaitable[Any]) -> Any:
    """Await a client call whose protocol error is part of the scenario."""
    from mcp import MCPError

    try:
        return await aw
    except MCPError as exc:
        return exc


async def cancel_after_progress(s: Any, name: str, args: dict[str, Any]) -> None:
    """Call a tool, and cancel the call once its first progress notification arrived."""
    got = anyio.Event()

    async def progress(p: float, total: float | None, message: str | None) -> None:
        got.set()

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            async def call() -> None:
                await s.call_tool(name, args, progress_callback=progress)

            tg.start_soon(call)
            await got.wait()
            scope.cancel()  # the SDK sends notifications/cancelled for the call


async def no_progress(p: float, total: float | None, message: str | None) -> None:
    pass


# -- traces -----------------------------------------------------------------------------

async def everything_stdio_basics(out: Path) -> None:
    async with sdk_stdio(out, "everything-basics", npm_server(EVERYTHING, "stdio")) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("echo", {"message": "hello from mcp-notebook"})
        await s.call_tool("get-sum", {"a": 2, "b": 40})
        await attempt(s.call_tool("no-such-tool", {}))
        await attempt(s.call_tool("get-sum", {"a": "two", "b": 40}))
        await s.list_prompts()
        await s.get_prompt("simple-prompt")
        await s.get_prompt("args-prompt", {"city": "Lyon", "state": "AURA"})
        await s.list_resources()
        await s.list_resource_templates()
        await s.read_resource("demo://resource/dynamic/text/1")
        await attempt(s.read_resource("demo://resource/no/such/thing"))
        await s.send_ping()


async def everything_stdio_progress(out: Path) -> None:
    async with sdk_stdio(out, "everything-progress", npm_server(EVERYTHING, "stdio")) as s:
        await s.initialize()
        await s.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 4},
                          progress_callback=no_progress)
        await cancel_after_progress(s, "trigger-long-running-operation",
                                    {"duration": 3, "steps": 6})
        async with anyio.create_task_group() as tg:  # several requests in flight at once
            tg.start_soon(s.call_tool, "trigger-long-running-operation",
                          {"duration": 0.6, "steps": 2})
            tg.start_soon(s.call_tool, "echo", {"message": "one"})
            tg.start_soon(s.call_tool, "get-sum", {"a": 1, "b": 2})
            tg.start_soon(s.send_ping)
        await s.send_ping()


async def everything_stdio_server_requests(out: Path) -> None:
    cbs = {**CALLBACKS, "list_roots_callback": roots}
    async with sdk_stdio(out, "everything-server-requests", npm_server(EVERYTHING, "stdio"),
                         **cbs) as s:
        await s.initialize()
        await anyio.sleep(0.8)  # the server asks for roots/list 350 ms after initialized
        await s.call_tool("trigger-sampling-request", {"prompt": "six times seven?",
                                                       "maxTokens": 20})
        await s.call_tool("trigger-elicitation-request", {})
        await s.set_logging_level("debug")
        await s.call_tool("toggle-simulated-logging", {})
        await anyio.sleep(0.5)
        await s.call_tool("toggle-simulated-logging", {})


def everything_stdio_raw(out: Path) -> None:
    c = RawClient(out, "everything-raw", npm_server(EVERYTHING, "stdio"))
    c.request("init-1", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to("init-1")
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request("list-tools", "tools/list")
    c.reply_to("list-tools")
    c.request(1, "tools/call", {"name": "echo", "arguments": {"message": "number id"}})
    c.request("1", "tools/call", {"name": "echo", "arguments": {"message": "string id"}})
    c.reply_to(1)
    c.reply_to("1")
    c.request(2, "no/such/method", {})
    c.reply_to(2)
    c.request(3, "tools/call", {"arguments": {}})  # no tool name: invalid params
    c.reply_to(3)
    c.request(4, "resources/read", {})  # no uri: invalid params
    c.reply_to(4)
    c.send({"jsonrpc": "2.0", "method": "notifications/no-such-notification"})
    c.send('{"jsonrpc": "2.0", "id": 5, "method": "ping"')  # an unparsable line
    c.quiet(0.5)
    c.request(6, "ping")
    c.reply_to(6)
    c.close()


def demo_stdio_raw(out: Path) -> None:
    c = RawClient(out, "demo-raw", DEMO)
    c.request("init-1", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to("init-1")
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    c.request("1", "tools/call", {"name": "add", "arguments": {"a": 3, "b": 4}})
    c.reply_to(1)
    c.reply_to("1")
    c.request(2, "no/such/method", {})
    c.reply_to(2)
    c.request(3, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})
    c.reply_to(3)
    c.request(4, "tools/call", {"name": "nope", "arguments": {}})
    c.reply_to(4)
    c.request(5, "resources/read", {"uri": 7})
    c.reply_to(5)
    c.send('{"jsonrpc": "2.0", "id": 6, "method": "ping"')  # an unparsable line
    c.quiet(0.5)
    c.request("ping-7", "ping")
    c.reply_to("ping-7")
    c.close()


async def demo_stdio(out: Path) -> None:
    async with sdk_stdio(out, "demo", DEMO, **CALLBACKS) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("add", {"a": 2, "b": 40})
        await s.call_tool("divide", {"a": 1, "b": 0})  # isError
        await attempt(s.call_tool("no_such_tool", {}))
        await s.send_ping()
        await s.call_tool("ping_client", {})  # ping from server to client
        await s.call_tool("ask_llm", {"question": "six times seven?"})
        await s.call_tool("ask_user", {"action": "deploy"})
        await s.set_logging_level("info")
        await s.call_tool("chatty", {"count": 4})
        await s.call_tool("slow", {"steps": 3, "delay": 0.1}, progress_callback=no_progress)
        await cancel_after_progress(s, "slow", {"steps": 20, "delay": 0.1})
        await gate(s)
        await s.list_resources()
        await s.read_resource("demo://readme")
        await s.read_resource("demo://notes/todo")
        await attempt(s.read_resource("demo://notes/missing"))
        await s.list_prompts()
        await s.get_prompt("review", {"code": "print('hi')"})


async def gate(s: Any) -> None:
    """Two requests in flight: ``wait_gate`` ends only after ``open_gate``."""
    seen = anyio.Event()

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: s.call_tool("wait_gate", {"name": "g"}, progress_callback=progress))
        await seen.wait()
        await s.call_tool("open_gate", {"name": "g"})


async def demo_http(url: str) -> None:
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    client = streamable_http_client(url) if url.endswith("/mcp") else sse_client(url)
    async with client as streams, ClientSession(streams[0], streams[1], **CALLBACKS) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("add", {"a": 2, "b": 40})
        await s.call_tool("divide", {"a": 1, "b": 0})
        await s.call_tool("slow", {"steps": 3, "delay": 0.1}, progress_callback=no_progress)
        await s.call_tool("ask_llm", {"question": "six times seven?"})
        await s.call_tool("ask_user", {"action": "deploy"})
        await gate(s)
        await cancel_after_progress(s, "slow", {"steps": 20, "delay": 0.1})
        await attempt(s.read_resource("demo://notes/missing"))
        await s.send_ping()


async def everything_http(url: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as streams, ClientSession(
            streams[0], streams[1], **CALLBACKS) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("echo", {"message": "hello over HTTP"})
        await s.call_tool("trigger-long-running-operation", {"duration": 0.8, "steps": 4},
                          progress_callback=no_progress)
        await s.call_tool("trigger-sampling-request", {"prompt": "six times seven?",
                                                       "maxTokens": 20})
        await attempt(s.read_resource("demo://resource/no/such/thing"))
        await s.send_ping()


async def filesystem_stdio(out: Path, sandbox: Path) -> None:
    (sandbox / "notes.txt").write_text("first line\nsecond line\n")
    server = npm_server(FILESYSTEM, str(sandbox))
    async with sdk_stdio(out, "filesystem", server) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("list_allowed_directories", {})
        await s.call_tool("list_directory", {"path": str(sandbox)})
        await s.call_tool("read_text_file", {"path": str(sandbox / "notes.txt"), "head": 1})
        await s.call_tool("write_file", {"path": str(sandbox / "todo.md"),
                                         "content": "- record traces\n"})
        await s.call_tool("get_file_info", {"path": str(sandbox / "todo.md")})
        await attempt(s.call_tool("read_text_file", {"path": str(sandbox / "missing.txt")}))
        await attempt(s.call_tool("read_text_file", {"path": "/etc/hostname"}))
        await attempt(s.call_tool("write_file", {"path": str(sandbox / "x.txt")}))


async def memory_stdio(out: Path, memfile: Path) -> None:
    import os

    os.environ["MEMORY_FILE_PATH"] = str(memfile)
    async with sdk_stdio(out, "memory", npm_server(MEMORY)) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("create_entities", {"entities": [
            {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]},
            {"name": "Analytical Engine", "entityType": "machine", "observations": []}]})
        await s.call_tool("create_relations", {"relations": [
            {"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}]})
        await s.call_tool("add_observations", {"observations": [
            {"entityName": "Ada", "contents": ["born 1815"]}]})
        await s.call_tool("search_nodes", {"query": "program"})
        await s.call_tool("open_nodes", {"names": ["Ada"]})
        await attempt(s.call_tool("add_observations", {"observations": [
            {"entityName": "Nobody", "contents": ["x"]}]}))
        await attempt(s.call_tool("create_entities", {"entities": "not a list"}))
        await s.call_tool("read_graph", {})
    os.environ.pop("MEMORY_FILE_PATH", None)


async def broken(out: Path) -> None:
    async with sdk_stdio(out, "broken", [PY, "scripts/broken_server.py"],
                         read_timeout_seconds=1.5) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("echo", {"text": "hello"})
        await attempt(s.call_tool("lookup", {"key": "answer"}))
        await s.send_ping()


# -- driver -----------------------------------------------------------------------------

async def _bounded(fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
    with anyio.fail_after(120):
        await fn(*args)


def _stdio(fn: Callable[..., Awaitable[Any]], *args: Any) -> Callable[[Path], None]:
    return lambda out: anyio.run(_bounded, fn, out, *args)


def _http(server: Callable[[int], list[str]], path: str, client: Callable[[str], Any],
          env: Callable[[int], dict[str, str]] = lambda port: {}) -> Callable[[Path], None]:
    def run(out: Path) -> None:
        port = free_port()
        with http_recording(server(port), port, out, env(port)) as url:
            anyio.run(_bounded, client, url + path)
    return run


def traces(tmp: Path) -> dict[str, Callable[[Path], None]]:
    (tmp / "sandbox").mkdir(exist_ok=True)
    return {
        "everything-stdio-basics.jsonl": _stdio(everything_stdio_basics),
        "everything-stdio-progress-cancel.jsonl": _stdio(everything_stdio_progress),
        "everything-stdio-server-requests.jsonl": _stdio(everything_stdio_server_requests),
        "everything-stdio-raw-frames.jsonl": everything_stdio_raw,
        "everything-http.har": _http(lambda p: npm_server(EVERYTHING, "streamableHttp"), "/mcp",
                                     everything_http, lambda p: {"PORT": str(p)}),
        "filesystem-stdio.jsonl": _stdio(filesystem_stdio, tmp / "sandbox"),
        "memory-stdio.jsonl": _stdio(memory_stdio, tmp / "memory.jsonl"),
        "demo-stdio.jsonl": _stdio(demo_stdio),
        "demo-stdio-raw-frames.jsonl": demo_stdio_raw,
        "demo-http.har": _http(lambda p: [PY, "scripts/demo_server.py", "streamable-http",
                                          str(p)], "/mcp", demo_http),
        "demo-sse.har": _http(lambda p: [PY, "scripts/demo_server.py", "sse", str(p)], "/sse",
                              demo_http),
        "broken-duplicate-response.jsonl": _stdio(broken),
    }


def main(argv: list[str]) -> int:
    """Record the named traces (all without names); ``--readme``: only rewrite the README."""
    versions = _rec.ensure_npm()
    DATA.mkdir(exist_ok=True)
    if argv == ["--readme"]:
        argv, only_readme = [], True
    else:
        only_readme = False
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-data-") as tmpdir:
        tmp = Path(tmpdir).resolve()
        todo = traces(tmp)
        names = [] if only_readme else argv or list(todo)
        unknown = set(names) - set(todo)
        if unknown:
            raise SystemExit(f"make_data: unknown trace(s) {sorted(unknown)}; known: {list(todo)}")
        for name in names:
            out = DATA / name
            _rec.log(f"recording {name}")
            todo[name](out)
            n = _rec.redact(out, {str(tmp / "sandbox"): "/sandbox", str(tmp): "/scratch",
                                  str(_rec.ROOT): "."})
            _rec.log(f"  {out.stat().st_size} bytes" + (f", {n} machine paths redacted" if n
                                                       else ""))
    import _readme

    _readme.write(versions)
    __import__("record_workshop").main(["--readme"] if only_readme else argv, versions)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
