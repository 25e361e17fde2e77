"""The workshop's own traces (notebooks 02 to 04 and 08 to 12), recorded by ``make data`` after the others.

``make_data.py`` calls :func:`main` with the names asked for (none: all) and the npm
versions. Peers are real: the official MCP Python SDK client or hand-written frames over a
real pipe (``RawClient``), against the npm reference servers and our Python SDK demo
server. Each trace gets a row in the README's counts table (the large one, gzipped, a
section of its own) and a ``###`` entry in the section ``## Workshop traces``, which this
module owns: it rewrites only that section and its own table rows.

Run alone as ``.venv/bin/python scripts/record_workshop.py [NAME ...]`` (``--readme``: only
the README).
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rec  # noqa: E402
from _rec import DATA, PY, RawClient, free_port, http_recording, npm_server, sdk_stdio  # noqa: E402

EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
DEMO = [PY, "scripts/demo_server.py"]
PAGES = [PY, "scripts/pages_server.py"]
BIG = 2**53 + 1  # 9007199254740993: the first integer a double cannot hold
#: canned secrets, shaped like real ones (nothing here was ever a credential)
TOKEN = "Bearer mcpnb-demo-7f3a9c0e5b1d4e2f8a6c"
API_KEY = "sk-proj-DEMOonlyNOTaREALkey0123456789abcdef"
SECTION = "## Workshop traces"


def _big_ids(out: Path, session: str, server: list[str]) -> None:
    c = RawClient(out, session, server)
    c.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to(1)
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request(2**53 - 1, "ping")  # the largest safe integer: exact everywhere
    c.quiet(1.0)
    c.request(BIG, "ping")  # above 2^53: a double-reading peer rounds it to 2^53
    c.quiet(1.0)
    c.request(BIG + 2, "ping")
    c.quiet(1.0)
    c.request(str(BIG), "ping")  # the same digits as a string: exact in every parser
    c.quiet(1.0)
    c.request(3, "ping")
    c.reply_to(3)
    c.close()


def _capabilities(out: Path) -> None:
    c = RawClient(out, "capabilities", npm_server(EVERYTHING, "stdio"))
    c.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to(1)
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request("list", "tools/list")
    c.reply_to("list")
    c.request(2, "tools/call", {"name": "trigger-sampling-request",
                                "arguments": {"prompt": "six times seven?", "maxTokens": 20}})
    c.quiet(2.0)  # a server that asks anyway would send sampling/createMessage here
    for msg in list(c.seen):
        if msg.get("method") == "sampling/createMessage":
            c.send({"jsonrpc": "2.0", "id": msg["id"],
                    "error": {"code": -32601, "message": "Method not found"}})
    c.reply_to(2)
    c.request(3, "tools/call", {"name": "get-roots-list", "arguments": {}})
    c.quiet(1.0)
    c.reply_to(3, timeout=3)
    c.close()


def _envelopes(out: Path, server: list[str], session: str) -> None:
    """A client that answers the server's sampling requests with broken envelopes."""
    c = RawClient(out, session, server)
    c.request(1, "initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {"sampling": {}},
                                "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to(1)
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    replies: list[dict[str, Any]] = [
        {"result": {"role": "assistant", "model": "canned-model", "stopReason": "endTurn",
                    "content": {"type": "text", "text": "42"}},
         "error": {"code": -32603, "message": "model failed"}},  # both members
        {"result": "42"},  # a bare string as result
        {"id": None, "result": {"role": "assistant", "model": "canned-model",
                                "stopReason": "endTurn",
                                "content": {"type": "text", "text": "42"}}},  # a null id
        {"result": {"role": "assistant", "model": "canned-model", "stopReason": "endTurn",
                    "content": {"type": "text", "text": "42"}}},  # a good answer
    ]
    for n, reply in enumerate(replies, start=2):
        c.request(n, "tools/call", {"name": "trigger-sampling-request",
                                    "arguments": {"prompt": "six times seven?",
                                                  "maxTokens": 20}})
        ask = c.wait(lambda m: m.get("method") == "sampling/createMessage", timeout=5)
        if ask is not None:
            c.send({"jsonrpc": "2.0", "id": ask["id"], **reply})  # reply may null the id
        c.reply_to(n, timeout=5)
    c.request(9, "notifications/initialized")  # a notification sent with an id
    c.quiet(1.0)
    c.send('{"jsonrpc": "2.0", "method": 42}')  # parses, but is no valid request
    c.quiet(1.0)
    c.request(10, "ping")
    c.reply_to(10)
    c.close()


def _undeclared(out: Path) -> None:
    c = RawClient(out, "undeclared", PAGES)
    c.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to(1)
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request(2, "logging/setLevel", {"level": "debug"})  # the server declared no logging
    c.reply_to(2)
    c.request(3, "prompts/list")  # ... and no prompts
    c.reply_to(3)
    c.request(4, "tools/list")  # declared: fine
    c.reply_to(4)
    c.close()


async def _modern(out: Path) -> None:
    """The 2026-07-28 revision: no initialize, `_meta` on every request, an input round."""
    import os

    from mcp import Client, StdioServerParameters
    from mcp import types as mt

    async def confirm(ctx: Any, params: Any) -> Any:
        return mt.ElicitResult(action="accept", content={"confirm": True})

    server = StdioServerParameters(command=PY, args=_rec.tap_command(out, "pages-2026", PAGES),
                                   cwd=str(_rec.ROOT), env=dict(os.environ))
    async with Client(server, mode="2026-07-28", elicitation_callback=confirm) as c:
        await c.list_tools()
        await c.call_tool("deploy", {"target": "staging"})


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-frames", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _modern_raw(out: Path) -> None:
    c = RawClient(out, "pages-2026-raw", PAGES)
    c.request(1, "tools/list", {"_meta": META})
    c.reply_to(1)
    c.request(2, "tools/list")  # 2026-07-28: params._meta is required on every request
    c.reply_to(2)
    c.request(3, "tools/call", {"name": "tool_01", "arguments": {}, "_meta": META})
    c.reply_to(3)
    c.close()


async def _pages(out: Path) -> None:
    from mcp import types as mt

    async with sdk_stdio(out, "pages", PAGES) as s:
        await s.initialize()
        for lister in (s.list_resources, s.list_tools):  # every page, by its nextCursor
            cursor = None
            for _ in range(20):
                page = await lister(params=mt.PaginatedRequestParams(cursor=cursor)
                                    if cursor else None)
                cursor = page.next_cursor
                if not cursor:
                    break
        await s.read_resource("pages://item/12")
        await attempt(s.list_resources(params=mt.PaginatedRequestParams(cursor="page-2")))


async def attempt(aw: Any) -> Any:
    from mcp.shared.exceptions import MCPError

    try:
        return await aw
    except MCPError as exc:
        return exc


async def _large(out: Path, sandbox: Path) -> None:
    line = "".join(f"{n:06d} the quick brown fox jumps over the lazy dog\n" for n in range(64))
    (sandbox / "big.log").write_text(line * 1200)  # 3.9 MB of text
    (sandbox / "small.txt").write_text("one line\n")
    async with sdk_stdio(out, "filesystem-large", npm_server(FILESYSTEM, str(sandbox))) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("read_text_file", {"path": str(sandbox / "small.txt")})
        await s.call_tool("read_text_file", {"path": str(sandbox / "big.log")})
        await s.call_tool("read_text_file", {"path": str(sandbox / "big.log"), "head": 5})
        await s.call_tool("get_file_info", {"path": str(sandbox / "big.log")})


async def _secrets(url: str) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers={"Authorization": TOKEN})
    async with client, streamable_http_client(url, http_client=client) as streams, \
            ClientSession(streams[0], streams[1]) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("echo", {"message": f"deploy with api_key={API_KEY}"})
        await s.call_tool("get-sum", {"a": 2, "b": 40})
        await s.send_ping()


def traces(tmp: Path) -> dict[str, Callable[[Path], None]]:
    (tmp / "sandbox").mkdir(exist_ok=True)

    def http(out: Path) -> None:
        port = free_port()
        with http_recording(npm_server(EVERYTHING, "streamableHttp"), port, out,
                            {"PORT": str(port)}) as url:
            anyio.run(_secrets, url + "/mcp")

    return {
        "everything-stdio-big-id.jsonl": lambda out: _big_ids(
            out, "everything-big-id", npm_server(EVERYTHING, "stdio")),
        "demo-stdio-big-id.jsonl": lambda out: _big_ids(out, "demo-big-id", DEMO),
        "pages-stdio.jsonl": lambda out: anyio.run(_pages, out),
        "everything-stdio-capabilities.jsonl": _capabilities,
        "pages-stdio-undeclared.jsonl": _undeclared,
        "pages-stdio-2026.jsonl": lambda out: anyio.run(_modern, out),
        "pages-stdio-2026-raw.jsonl": _modern_raw,
        "everything-stdio-envelopes.jsonl": lambda out: _envelopes(
            out, npm_server(EVERYTHING, "stdio"), "everything-envelopes"),
        "filesystem-stdio-large.jsonl.gz": lambda out: anyio.run(_large, out,
                                                                 tmp / "sandbox"),
        "everything-http-secrets.har": http,
    }


#: name -> (server, transport, scenario)
ABOUT: dict[str, tuple[str, str, str]] = {
    "everything-stdio-big-id.jsonl": (EVERYTHING, "stdio, tap, frames written by hand", (
        "Pings with ids 2^53-1, 2^53+1, 2^53+3, the string \"9007199254740993\" and 3. "
        "The server answers 2^53-1, the string and 3 exactly, and never answers 2^53+1 or "
        "2^53+3: its SDK reads the line with `JSON.parse` (the ids become the doubles "
        "2^53 and 2^53+4) and then checks it against `RequestIdSchema`, "
        "`z.union([z.string(), z.number().int()])`, whose `int()` (zod 4) accepts only safe "
        "integers; the message is dropped before any handler sees it, and nothing is sent "
        "back. The client waits forever.")),
    "demo-stdio-big-id.jsonl": ("demo", "stdio, tap, frames written by hand", (
        "The same pings to the Python SDK demo server, which reads integers exactly: every "
        "id comes back as it was sent.")),
    "pages-stdio.jsonl": ("pages", "stdio, tap", (
        "A server of ours that pages its lists (`scripts/pages_server.py`, the Python SDK's "
        "low-level `Server`, 10 items a page): the SDK client reads resources/list (25 "
        "resources: 3 pages) and tools/list (12 tools: 2 pages), each request sending the "
        "previous page's opaque `nextCursor` until a page has none; a resources/read; "
        "then a cursor the server never issued (`\"page-2\"`), answered -32602.")),
    "everything-stdio-capabilities.jsonl": (EVERYTHING, "stdio, tap, frames written by hand", (
        "A client that declares no capabilities (`{}`): the server lists fewer tools than "
        "for the SDK client, which declares sampling, elicitation and roots, and answers "
        "calls to `trigger-sampling-request` and `get-roots-list` with tool errors (\"not "
        "found\"): it registers those tools only for a client that can serve them.")),
    "pages-stdio-undeclared.jsonl": ("pages", "stdio, tap, frames written by hand", (
        "A client that calls methods the server did not declare in its capabilities "
        "(`logging/setLevel`, `prompts/list`; the server declared only tools and "
        "resources): both answered -32601; then tools/list, which it declared.")),
    "everything-stdio-envelopes.jsonl": (EVERYTHING, "stdio, tap, frames written by hand", (
        "A client (declaring `sampling`) that answers the server's `sampling/createMessage` "
        "requests with broken envelopes: both `result` and `error`, a bare string as "
        "`result`, and `\"id\": null`; the server drops each (its schema refuses them) and "
        "the tool calls that asked never return; a fourth, good answer completes its call. "
        "Then `notifications/initialized` sent with an id (the server answers it -32601), "
        "a message whose method is a number (no answer), and a ping.")),
    "pages-stdio-2026.jsonl": ("pages", "stdio, tap", (
        "The 2026-07-28 revision, stateless: the Python SDK client (`mode=\"2026-07-28\"`) "
        "sends no initialize; every request carries the protocol version, client info "
        "and capabilities in `params._meta`, and every result a `resultType`. A call to "
        "`deploy` is answered `input_required` (an elicitation and a `requestState`); the "
        "client retries it under a new id with `inputResponses` and the state, and gets "
        "the result.")),
    "pages-stdio-2026-raw.jsonl": ("pages", "stdio, tap, frames written by hand", (
        "2026-07-28 requests written by hand: tools/list with its `_meta`, tools/list "
        "without (answered -32602: `_meta` is required on every request), and a tools/call "
        "with it.")),
    "filesystem-stdio-large.jsonl.gz": (FILESYSTEM, "stdio, tap; gzipped", (
        "read_text_file of a small file, of a 3.9 MB log (an 8 MB result on one stdio "
        "line: the server sends the text twice, in `content` and in `structuredContent`), "
        "of its first 5 lines (`head`), and get_file_info. The sandbox's path was replaced "
        "by `/sandbox`.")),
    "everything-http-secrets.har": (EVERYTHING, "Streamable HTTP, proxy (HAR)", (
        "A client that sends a canned bearer token in `Authorization` on every POST and "
        "an API-key-shaped string (canned, never a credential) in an `echo` argument, which "
        "the server echoes back: what `t.redact()` must find before the capture is shared.")),
}


def _peers(name: str, versions: dict[str, str]) -> str:
    import platform
    from importlib.metadata import version

    client = f"official MCP Python SDK client (PyPI `mcp` {version('mcp')})"
    if ABOUT[name][1].endswith("frames written by hand"):
        client = "hand-written JSON-RPC frames over the real pipe"
    server, _, _ = ABOUT[name]
    if server in ("demo", "pages"):
        return (f"{client} / `scripts/{server}_server.py` (Python SDK `mcp` {version('mcp')}, "
                f"Python {platform.python_version()})")
    import subprocess

    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{client} / `{server}` {versions.get(server, '?')} (npm, TypeScript SDK "
            f"{versions.get('@modelcontextprotocol/sdk', '?')}, node {node})")


def write_readme(versions: dict[str, str]) -> None:
    """Put this module's rows into the counts table and rewrite its own section."""
    from count_trace import KEYS, count_file

    readme = DATA / "README.md"
    text = readme.read_text("utf-8").split(f"\n{SECTION}\n", 1)[0].rstrip("\n") + "\n"
    lines = [ln for ln in text.splitlines() if not any(f"| `{n}` |" in ln for n in ABOUT)]
    def counted(path: Path) -> dict[str, int]:
        if path.suffix != ".gz":
            return count_file(path)
        with tempfile.TemporaryDirectory() as d:  # the counter reads plain files
            plain = Path(d) / path.stem
            plain.write_bytes(gzip.decompress(path.read_bytes()))
            return count_file(plain)

    counts = {n: counted(DATA / n) for n in ABOUT if (DATA / n).exists()}
    row = {n: f"| `{n}` | " + " | ".join(str(c[k]) for k in KEYS) + " |" for n, c in
           counts.items()}
    head = lines.index("## Counts")
    last = max(i for i, ln in enumerate(lines) if ln.startswith("|") and i > head)
    plain = [row[n] for n in counts if not n.endswith(".gz")]
    lines[last + 1:last + 1] = plain
    out = ["", SECTION, "", "Recorded by `scripts/record_workshop.py` (the second half of "
           "`make data`) for notebooks 02 to 04 and 08 to 12. Gzipped traces (too large for the table "
           "above, which lists the plain files) have their counts here:", ""]
    gz = [n for n in counts if n.endswith(".gz")]
    if gz:
        out += ["| trace | " + " | ".join(KEYS) + " |",
                "|---|" + "---:|" * len(KEYS), *[row[n] for n in gz], ""]
    for n in ABOUT:
        if n not in counts:
            continue
        server, transport, scenario = ABOUT[n]
        size = (DATA / n).stat().st_size
        out += [f"### `{n}`", "", f"- peers: {_peers(n, versions)}",
                f"- transport: {transport}; {size:,} bytes", f"- scenario: {scenario}", ""]
    readme.write_text("\n".join(lines) + "\n" + "\n".join(out), "utf-8")


def main(names: list[str], versions: dict[str, str] | None = None) -> int:
    """Record the named traces of this module (all without names) and its README section."""
    versions = versions or _rec.ensure_npm()
    if names == ["--readme"]:
        write_readme(versions)
        return 0
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-workshop-") as tmpdir:
        tmp = Path(tmpdir).resolve()
        todo = traces(tmp)
        for name in [n for n in names if n in todo] if names else list(todo):
            out = DATA / name
            raw = DATA / name.removesuffix(".gz") if name.endswith(".gz") else out
            _rec.log(f"recording {name}")
            todo[name](raw)
            n = _rec.redact(raw, {str(tmp / "sandbox"): "/sandbox", str(tmp): "/scratch",
                                  str(_rec.ROOT): "."})
            if raw != out:
                with open(raw, "rb") as src, gzip.GzipFile(out, "wb", mtime=0) as dst:
                    shutil.copyfileobj(src, dst)
                raw.unlink()  # only the gzipped copy is kept
            _rec.log(f"  {out.stat().st_size} bytes" + (f", {n} machine paths redacted"
                                                       if n else ""))
    write_readme(versions)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
