"""Record held-out real traffic from official MCP peers into ``tests/fixtures/peers/``.

Run as ``.venv/bin/python scripts/record_peers.py [NAME ...]`` from anywhere (no names:
all). These captures are not the bundled ``data/`` traces: other clients, other
transports, other shapes, kept for ``tests/peers/``, which checks the library's pairing
against an independent count.

Peers (pinned in ``scripts/npm-peers/``, installed there by ``npm install``; its
``node_modules`` is git-ignored; apart from ``scripts/npm/`` because the Inspector's tree
names an optional package the registry does not have, which ``npm ci`` refuses):
the TypeScript SDK client (``scripts/peers_ts_client.cjs`` on npm
``@modelcontextprotocol/sdk``) against the Python SDK server (``scripts/demo_server.py``,
PyPI ``mcp``) and ``@modelcontextprotocol/server-everything``; the Inspector CLI
(``@modelcontextprotocol/inspector --cli``), one process per call; the conformance suite's
server scenarios (``@modelcontextprotocol/conformance``); and a 2026-07-28 stateless
Streamable HTTP exchange with the Python SDK (its ``Client`` probing ``server/discover``,
then hand-written POSTs that the server rejects with HTTP 400/404 and a JSON-RPC error).
stdio goes through ``mcp-notebook record`` (tap JSONL), HTTP through ``mcp-notebook proxy``
(HAR). The versions of every peer are written to ``tests/fixtures/peers/README.md``.

Afterwards the counts table of ``tests/fixtures/peers/README.md`` is rewritten from
``scripts/count_trace.py`` (``--counts`` does only that).
``record_peers.py --serve-stateless PORT`` is the 2026-07-28 server itself: the demo
server's tools on ``127.0.0.1:PORT/mcp`` with ``stateless_http=True``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28")
warnings.filterwarnings("ignore", message=".*removed as of 2026-07-28")

import _rec  # noqa: E402
from _rec import PY, ROOT, free_port, http_recording  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "peers"
EVERYTHING = "@modelcontextprotocol/server-everything"
DEMO = [PY, "scripts/demo_server.py"]
TS_CLIENT = ["node", "scripts/peers_ts_client.cjs"]
NPM = ROOT / "scripts" / "npm-peers"  # package.json + package-lock.json, node_modules beside
NODE_ENV = {"NODE_PATH": "scripts/npm-peers/node_modules"}
TIMEOUT = 120


def _run(cmd: list[str], env: dict[str, str] | None = None, check: bool = True,
         timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run a client to its end, bounded; its output is kept for the log only."""
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **NODE_ENV, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        raise SystemExit(f"record_peers: {' '.join(cmd[:4])} ... exited {proc.returncode}")
    return proc


def _tap(out: Path, session: str, server: list[str]) -> list[str]:
    """The tap around ``server``, appending to ``out`` (relative, so no machine path)."""
    return [PY, "-m", "mcp_notebook.capture.record", "--out", str(out.relative_to(ROOT)),
            "--session", session, "--grace", "5", "--", *server]


def ensure_npm() -> dict[str, str]:
    """Install the pinned peers into scripts/npm-peers; return ``{package: version}``."""
    marker = NPM / "node_modules" / ".package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < (NPM / "package-lock.json").stat().st_mtime:
        _rec.log("npm install (scripts/npm-peers)")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=NPM, check=True,
                       timeout=600, stdout=subprocess.DEVNULL)
    deps = json.loads((NPM / "package.json").read_text())["dependencies"]
    return {name: json.loads((NPM / "node_modules" / name / "package.json").read_text())["version"]
            for name in deps}


def npm_server(package: str, *args: str) -> list[str]:
    """The node command line of an installed npm server (relative to the project root)."""
    meta = json.loads((NPM / "node_modules" / package / "package.json").read_text())
    bin_ = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    script = (Path("scripts/npm-peers/node_modules") / package / bin_).as_posix()
    return ["node", "--require", f"./{_rec.LOOPBACK}", script.replace("/./", "/"), *args]


# -- the TypeScript SDK client ----------------------------------------------------------

def ts_stdio(scenario: str, server: list[str]) -> Callable[[Path], None]:
    def run(out: Path) -> None:
        _run([*TS_CLIENT, scenario, "stdio", *_tap(out, f"ts-{scenario}", server)])
    return run


def ts_http(scenario: str, server: Callable[[int], list[str]],
            env: Callable[[int], dict[str, str]] = lambda port: {},
            after: Callable[[str], None] = lambda url: None) -> Callable[[Path], None]:
    def run(out: Path) -> None:
        port = free_port()
        with http_recording(server(port), port, out, env(port)) as url:
            _run([*TS_CLIENT, scenario, "http", url + "/mcp"])
            after(url + "/mcp")
    return run


def stale_sessions(url: str) -> None:
    """POSTs the handshake-era server refuses: an unknown session id, and no session id."""
    _post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
          {"mcp-protocol-version": "2025-11-25", "mcp-session-id": "no-such-session"})
    _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
          {"mcp-protocol-version": "2025-11-25"})


# -- the Inspector CLI ------------------------------------------------------------------

INSPECTOR_CALLS: list[list[str]] = [
    ["--method", "tools/list"],
    ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=from the inspector"],
    ["--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "b=40"],
    ["--method", "tools/call", "--tool-name", "no-such-tool"],
    ["--method", "resources/read", "--uri", "demo://resource/no/such/thing"],
    ["--method", "prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Lyon",
     "state=AURA"],
    ["--method", "logging/setLevel", "--log-level", "debug"],
]


def _inspector() -> list[str]:
    meta = json.loads((NPM / "node_modules/@modelcontextprotocol/inspector/package.json")
                      .read_text())
    return ["node", "scripts/npm-peers/node_modules/@modelcontextprotocol/inspector/"
            + meta["bin"]["mcp-inspector"].removeprefix("./"), "--cli"]


INSPECTOR_2026_CALLS: list[tuple[str, list[str]]] = [
    ("modern", ["--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40"]),
    ("modern", ["--method", "resources/read", "--uri", "demo://notes/missing"]),
    ("modern", ["--method", "prompts/get", "--prompt-name", "review", "--prompt-args", "code=x"]),
    ("auto", ["--method", "tools/call", "--tool-name", "divide", "--tool-arg", "a=1", "b=0"]),
    ("auto", ["--method", "logging/setLevel", "--log-level", "debug"]),
]


def _inspector_env() -> dict[str, str]:
    """The Inspector keeps a catalog and storage under HOME: a scratch one, not the user's."""
    home = Path(tempfile.gettempdir()) / "mcp-notebook-inspector-home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home)}


def inspector_2026_http(out: Path) -> None:
    """The Inspector CLI on the 2026-07-28 stateless server, era pinned and negotiated."""
    port = free_port()
    server = [PY, "scripts/record_peers.py", "--serve-stateless", str(port)]
    with http_recording(server, port, out) as url:
        for era, call in INSPECTOR_2026_CALLS:
            _run([*_inspector(), url + "/mcp", "--transport", "http", "--protocol-era", era,
                  *call], env=_inspector_env(), check=False)


def inspector_stdio(out: Path) -> None:
    """One Inspector CLI process per call, each a session of its own in one tap file."""
    for n, call in enumerate(INSPECTOR_CALLS):
        server = _tap(out, f"inspector-{n}", npm_server(EVERYTHING, "stdio"))
        _run([*_inspector(), *server, *call], env=_inspector_env(), check=False)


def inspector_http(out: Path) -> None:
    port = free_port()
    with http_recording(npm_server(EVERYTHING, "streamableHttp"), port, out,
                        {"PORT": str(port)}) as url:
        for call in INSPECTOR_CALLS[2:5]:  # each session lists the tools (10 KB) first
            _run([*_inspector(), url + "/mcp", "--transport", "http", *call],
                 env=_inspector_env(), check=False)


# -- the conformance suite --------------------------------------------------------------

CONFORMANCE_SCENARIOS = ["server-initialize", "ping", "tools-call-simple-text",
                         "tools-call-error", "tools-call-with-progress", "resources-read-text",
                         "prompts-get-with-args", "completion-complete", "logging-set-level",
                         "server-sse-multiple-streams", "dns-rebinding-protection"]


def conformance_http(out: Path) -> None:
    """The suite's server scenarios against the Python SDK server (its checks may fail:
    the suite expects tools of its own; the traffic is what is kept)."""
    port = free_port()
    conformance = ["node", str(NPM / "node_modules/@modelcontextprotocol/conformance/"
                               "dist/index.js")]  # run in a scratch folder: it writes results/
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-conformance-") as results, \
            http_recording([*DEMO, "streamable-http", str(port)], port, out) as url:
        for scenario in CONFORMANCE_SCENARIOS:
            proc = subprocess.run([*conformance, "server", "--url", url + "/mcp", "--scenario",
                                   scenario], cwd=results, capture_output=True, text=True,
                                  timeout=TIMEOUT, check=False,
                                  env={**os.environ, "NODE_PATH": str(NPM / "node_modules")})
            _rec.log(f"  conformance {scenario}: exit {proc.returncode}")
            if proc.returncode:
                _rec.log(proc.stdout[-1500:] + proc.stderr[-1500:])


# -- 2026-07-28: stateless Streamable HTTP, the Python SDK on both sides ----------------

def serve_stateless(port: int) -> None:
    import demo_server

    demo_server.mcp.run("streamable-http", host="127.0.0.1", port=port, stateless_http=True)


def _post(url: str, body: Any, headers: dict[str, str]) -> None:
    import httpx

    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    httpx.post(url, content=text, timeout=30, headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        **headers})


def _modern(mid: Any, method: str, params: dict[str, Any] | None = None,
            version: Any = "2026-07-28") -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-posts", "version": "1"}}
    return {"jsonrpc": "2.0", "id": mid, "method": method,
            "params": {**(params or {}), "_meta": meta}}


def _headers(method: str, name: str | None = None, version: str = "2026-07-28"
             ) -> dict[str, str]:
    h = {"mcp-protocol-version": version, "mcp-method": method}
    if name is not None:
        h["mcp-name"] = name
    return h


async def _sdk_2026(url: str) -> None:
    from mcp import Client, MCPError

    async with Client(url, mode="auto") as c:  # server/discover, then the 2026-07-28 wire
        await c.list_tools()
        await c.call_tool("add", {"a": 2, "b": 40})
        await c.call_tool("divide", {"a": 1, "b": 0})  # isError
        try:
            await c.call_tool("no_such_tool", {})
        except MCPError:
            pass
        await c.call_tool("slow", {"steps": 3, "delay": 0.05},
                          progress_callback=lambda *a: _noop())
        await c.read_resource("demo://readme")
        try:
            await c.read_resource("demo://notes/missing")
        except MCPError:
            pass
        await c.get_prompt("review", {"code": "print('hi')"})


async def _noop() -> None:
    pass


def stateless_2026(out: Path) -> None:
    import anyio

    port = free_port()
    server = [PY, "scripts/record_peers.py", "--serve-stateless", str(port)]
    with http_recording(server, port, out) as url:
        url += "/mcp"
        anyio.run(_sdk_2026, url)
        # hand-written POSTs: each answered alone, most with HTTP 400/404 and a JSON-RPC error
        _post(url, _modern(101, "tools/list"), _headers("tools/list"))  # 200
        _post(url, _modern(102, "no/such/method"), _headers("no/such/method"))  # 404 -32601
        _post(url, _modern(103, "tools/list"), _headers("tools/list", version="2026-01-01"))
        _post(url, _modern(104, "tools/list", version="2099-01-01"),
              _headers("tools/list", version="2099-01-01"))  # 400 -32022
        _post(url, _modern(105, "tools/list"), _headers("tools/call"))  # 400 -32020 method
        _post(url, _modern(106, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
              _headers("tools/call", "divide"))  # 400 -32020 name
        _post(url, {"jsonrpc": "2.0", "id": 107, "method": "tools/list"},
              _headers("tools/list"))  # 400 -32602: no _meta envelope
        _post(url, _modern(108, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}}),
              _headers("tools/call", "add"))  # invalid arguments
        _post(url, _modern("s-109", "resources/read", {}), _headers("resources/read"))
        _post(url, '{"jsonrpc": "2.0", "id": 110, "method": "tools/list"',
              _headers("tools/list"))  # 400 -32700, id null
        _post(url, [_modern(111, "tools/list")], _headers("tools/list"))  # a batch: id null
        _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
              _headers("notifications/initialized"))  # 202
        _post(url, _modern(101, "tools/list"), _headers("tools/list"))  # id 101 again, later
        # the handshake era on the same server: an unknown session id (404), no session (400)
        _post(url, {"jsonrpc": "2.0", "id": 112, "method": "tools/list"},
              {"mcp-protocol-version": "2025-11-25", "mcp-session-id": "no-such-session"})
        _post(url, {"jsonrpc": "2.0", "id": 113, "method": "ping"},
              {"mcp-protocol-version": "2025-11-25"})


async def _two_clients(url: str) -> None:
    """Two clients at once, each numbering its ids from 1: no session tells them apart."""
    import anyio
    from mcp import Client

    async def one(name: str, slow: bool) -> None:
        async with Client(url, mode="2026-07-28") as c:
            if slow:
                await c.call_tool("slow", {"steps": 4, "delay": 0.1})
            else:
                await anyio.sleep(0.1)
                await c.call_tool("add", {"a": 1, "b": 2})
            await c.call_tool("add", {"a": 20, "b": 22})

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "a", True)
        tg.start_soon(one, "b", False)


def stateless_two_clients(out: Path) -> None:
    import anyio

    port = free_port()
    server = [PY, "scripts/record_peers.py", "--serve-stateless", str(port)]
    with http_recording(server, port, out) as url:
        anyio.run(_two_clients, url + "/mcp")


# -- dual era: the Python SDK client probes server/discover, then falls back -------------

async def _auto(target: Any) -> None:
    import anyio
    from mcp import Client, MCPError

    async with Client(target, mode="auto") as c:
        await c.list_tools()
        await c.call_tool("echo", {"message": "after the probe"})
        try:
            await c.read_resource("demo://resource/no/such/thing")
        except MCPError:
            pass
        async with anyio.create_task_group() as tg:  # in flight together
            tg.start_soon(c.call_tool, "get-sum", {"a": 1, "b": 2})
            tg.start_soon(c.call_tool, "echo", {"message": "concurrent"})


def auto_everything_stdio(out: Path) -> None:
    import anyio
    from mcp import StdioServerParameters

    tap = _tap(out, "auto-everything", npm_server(EVERYTHING, "stdio"))
    anyio.run(_auto, StdioServerParameters(command=tap[0], args=tap[1:], cwd=str(ROOT),
                                           env=dict(os.environ)))


def auto_everything_http(out: Path) -> None:
    import anyio

    port = free_port()
    with http_recording(npm_server(EVERYTHING, "streamableHttp"), port, out,
                        {"PORT": str(port)}) as url:
        anyio.run(_auto, url + "/mcp")


# -- a reused id while the first request is in flight (stdio, hand-written) -------------

def reused_id_stdio(out: Path) -> None:
    """The Python SDK server gets id 7 twice before answering either (issue 13, defect 6)."""
    c = _rec.RawClient(out, "reused-id", DEMO)
    c.request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw-frames", "version": "1"}})
    c.reply_to(0)
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.request(7, "tools/call", {"name": "slow", "arguments": {"steps": 2, "delay": 0.2}})
    c.request(7, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    c.quiet(1.0)
    c.request(8, "ping")
    c.request(8, "ping")
    c.quiet(0.5)
    c.request(9, "tools/call", {"name": "add", "arguments": {"a": 3, "b": 4}})
    c.reply_to(9)
    c.close()


# -- driver -----------------------------------------------------------------------------

def captures() -> dict[str, Callable[[Path], None]]:
    return {
        "ts-client-demo-stdio.jsonl": ts_stdio("demo", DEMO),
        "ts-client-everything-stdio.jsonl": ts_stdio("everything",
                                                     npm_server(EVERYTHING, "stdio")),
        "ts-client-demo-http.har": ts_http("demo", lambda p: [
            PY, "scripts/demo_server.py", "streamable-http", str(p)], after=stale_sessions),
        "ts-client-everything-http.har": ts_http(
            "everything", lambda p: npm_server(EVERYTHING, "streamableHttp"),
            lambda p: {"PORT": str(p)}, after=stale_sessions),
        "inspector-cli-stdio.jsonl": inspector_stdio,
        "inspector-cli-http.har": inspector_http,
        "inspector-cli-2026-http.har": inspector_2026_http,
        "conformance-demo-http.har": conformance_http,
        "python-2026-stateless-http.har": stateless_2026,
        "python-reused-id-stdio.jsonl": reused_id_stdio,
        "python-2026-two-clients-http.har": stateless_two_clients,
        "python-auto-everything-stdio.jsonl": auto_everything_stdio,
        "python-auto-everything-http.har": auto_everything_http,
    }


def versions() -> dict[str, str]:
    got = ensure_npm()
    got["mcp (PyPI)"] = metadata.version("mcp")
    got["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    got["python"] = platform.python_version()
    return got


COLUMNS = ["frames", "messages", "requests", "notifications", "results", "errors", "invalid",
           "pairs", "unanswered", "cancelled", "orphans", "duplicates"]


def write_counts() -> None:
    """Rewrite the counts table of the fixtures' README from ``scripts/count_trace.py``."""
    import count_trace

    lines = ["| capture | " + " | ".join(COLUMNS) + " | null id |",
             "|---|" + "---:|" * (len(COLUMNS) + 1)]
    for path in sorted(OUT.iterdir()):
        if path.suffix not in (".jsonl", ".har"):
            continue
        c = count_trace.count_file(path)
        null_id = len(count_trace.pair_file(path)["null_id"])
        c["orphans"] -= null_id  # the table shows them apart
        lines.append(f"| `{path.name}` | " + " | ".join(str(c[k]) for k in COLUMNS)
                     + f" | {null_id} |")
    readme = OUT / "README.md"
    head, rest = readme.read_text("utf-8").split("| capture |", 1)
    readme.write_text(head + "\n".join(lines) + "\n\n" + rest.split("\n\n", 1)[1], "utf-8")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--serve-stateless"]:
        serve_stateless(int(argv[1]))
        return 0
    if argv == ["--counts"]:
        write_counts()
        return 0
    vers = versions()
    OUT.mkdir(parents=True, exist_ok=True)
    todo = captures()
    names = argv or list(todo)
    unknown = set(names) - set(todo)
    if unknown:
        raise SystemExit(f"record_peers: unknown capture(s) {sorted(unknown)}; known: {list(todo)}")
    for name in names:
        out = OUT / name
        if out.exists():
            out.unlink()  # the tap appends
        _rec.log(f"recording {name}")
        todo[name](out)
        n = _rec.redact(out, {str(ROOT): "."})
        _rec.log(f"  {out.stat().st_size} bytes" + (f", {n} machine paths redacted" if n else ""))
    (OUT / "versions.json").write_text(json.dumps(vers, indent=2, sort_keys=True) + "\n")
    write_counts()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
