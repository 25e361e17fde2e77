"""Record FastMCP traffic (its client and its server, 2026-07-28) into ``tests/fixtures/fastmcp/``.

Run as ``.venv/bin/python scripts/record_fastmcp.py``. FastMCP is not a dependency of the
project: the script makes a virtual environment of its own (``scripts/.fastmcp-venv``,
git-ignored) with the pinned ``fastmcp`` (:data:`FASTMCP`) and runs there the FastMCP
client against a FastMCP server, once over stdio through ``mcp-notebook record`` (tap
JSONL) and once over Streamable HTTP through ``mcp-notebook proxy`` (HAR). FastMCP 4 speaks
2026-07-28 (``server/discover``, no ``initialize``, each request stateless), so these are
2026 captures from a second implementation. The scenario: tools (a sum, progress with log
messages, an elicitation the 2026 wire refuses, a tool that raises, a call with a bad
argument), a resource and a missing one, a prompt, a ``ping`` (removed in 2026-07-28: the
server answers -32601), two calls in flight together. Then the official TypeScript SDK
client (``scripts/peers_ts_client.cjs fastmcp``, pinned in ``scripts/npm-peers/``) against the
same server, over both transports: the handshake era (``initialize``, 2025-11-25), where
the server's elicitation reaches the client.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _rec  # noqa: E402
from _rec import PY, ROOT, free_port  # noqa: E402
from record_peers import NODE_ENV, ensure_npm  # noqa: E402

FASTMCP = "fastmcp==4.2.3"
VENV = ROOT / "scripts" / ".fastmcp-venv"
OUT = ROOT / "tests" / "fixtures" / "fastmcp"

SERVER = textwrap.dedent('''
    import asyncio, sys
    from fastmcp import Context, FastMCP

    mcp = FastMCP("fastmcp-demo")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool
    async def slow(steps: int, ctx: Context) -> str:
        """Report progress, and a log message at each step."""
        for i in range(steps):
            await ctx.report_progress(i + 1, steps)
            await ctx.info(f"step {i + 1}")
            await asyncio.sleep(0.05)
        return "done"

    @mcp.tool
    async def ask(ctx: Context) -> str:
        """Elicit a name (a server request: refused on the 2026 wire)."""
        return f"got {await ctx.elicit('Your name?', response_type=str)}"

    @mcp.tool
    def fail() -> str:
        """Always fails."""
        raise ValueError("nope")

    @mcp.resource("demo://readme")
    def readme() -> str:
        return "hello"

    @mcp.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    if __name__ == "__main__":
        if sys.argv[1:2] == ["http"]:
            mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]),
                    show_banner=False)
        else:
            mcp.run(show_banner=False)
''')

CLIENT = textwrap.dedent('''
    import asyncio, sys
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def elicit(message, response_type, params, context):
        return "Ada"

    async def main(target):
        transport = (StdioTransport(command=sys.argv[2], args=sys.argv[3:])
                     if target == "stdio" else target)
        async with Client(transport, elicitation_handler=elicit,
                          progress_handler=lambda p, t, m: None) as c:
            await c.list_tools()
            await c.call_tool("add", {"a": 2, "b": 40})
            await c.call_tool("slow", {"steps": 3})
            for name, args in (("ask", {}), ("fail", {}), ("add", {"a": "x", "b": 1})):
                try:
                    await c.call_tool(name, args)
                except Exception as exc:
                    print(name, exc, file=sys.stderr)
            await c.read_resource("demo://readme")
            try:
                await c.read_resource("demo://missing")
            except Exception as exc:
                print("missing", exc, file=sys.stderr)
            await c.get_prompt("greet", {"name": "Bo"})
            try:
                await c.ping()
            except Exception as exc:
                print("ping", exc, file=sys.stderr)
            await asyncio.gather(c.call_tool("add", {"a": 1, "b": 2}),
                                 c.call_tool("slow", {"steps": 2}))

    asyncio.run(main(sys.argv[1]))
''')


def ensure_venv() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        _rec.log(f"venv for {FASTMCP} (scripts/.fastmcp-venv)")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", FASTMCP], check=True,
                       timeout=600)
    return python


def main() -> int:
    python = ensure_venv()
    OUT.mkdir(parents=True, exist_ok=True)
    (VENV / "server.py").write_text(SERVER, "utf-8")
    (VENV / "client.py").write_text(CLIENT, "utf-8")
    server, client = str(VENV / "server.py"), str(VENV / "client.py")
    env = {**os.environ, "FASTMCP_LOG_LEVEL": "WARNING"}
    stdio = OUT / "fastmcp-2026-stdio.jsonl"
    stdio.unlink(missing_ok=True)
    subprocess.run([str(python), client, "stdio", PY, "-m", "mcp_notebook", "record",
                    "--out", str(stdio), "--", str(python), server],
                   cwd=ROOT, env=env, check=True, timeout=120, capture_output=True)
    port = free_port()
    with _rec.http_recording([str(python), server, "http", str(port)], port,
                             OUT / "fastmcp-2026-http.har", env=env) as url:
        subprocess.run([str(python), client, url + "/mcp"], cwd=ROOT, env=env, check=True,
                       timeout=120, capture_output=True)
    ensure_npm()
    ts = ["node", str(ROOT / "scripts" / "peers_ts_client.cjs"), "fastmcp"]
    ts_env = {**env, **NODE_ENV}
    ts_stdio = OUT / "fastmcp-ts-client-stdio.jsonl"
    ts_stdio.unlink(missing_ok=True)
    subprocess.run([*ts, "stdio", PY, "-m", "mcp_notebook", "record", "--out", str(ts_stdio),
                    "--", str(python), server],
                   cwd=ROOT, env=ts_env, check=True, timeout=120, capture_output=True)
    port = free_port()
    with _rec.http_recording([str(python), server, "http", str(port)], port,
                             OUT / "fastmcp-ts-client-http.har", env=env) as url:
        subprocess.run([*ts, "http", url + "/mcp"], cwd=ROOT, env=ts_env, check=True,
                       timeout=120, capture_output=True)
    for path in sorted(OUT.iterdir()):
        n = _rec.redact(path, {str(VENV): "fastmcp-venv", str(ROOT): ".",
                               sys.base_prefix: "python"})
        _rec.log(f"  {path.relative_to(ROOT)}: {path.stat().st_size} bytes"
                 + (f", {n} paths replaced" if n else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
