"""``make data`` (after ``make_data.py``): the traces of the conversation checker.

Run as ``.venv/bin/python scripts/make_data_conversation.py [NAME ...]`` (no names: all;
``--readme``: only rewrite the README section). Peers: the official MCP Python SDK client
(PyPI ``mcp``) and its server ``scripts/demo_server.py`` (MCPServer), over stdio through
``mcp-notebook record``'s tap; for 2026-07-28, the SDK's ``Client`` and
``scripts/conversation_server.py`` over stateless Streamable HTTP through
``mcp-notebook proxy``. The faults are the client's, sent through the SDK's own
calls: arguments that break a tool's ``inputSchema`` (a model does this; the SDK client
does not check), methods that need a capability the server did not declare, and a large
result. Afterwards the ``## Conversation traces`` section of ``data/README.md`` is
written, and the traces' rows are put into its ``## Counts`` table
(``scripts/count_trace.py``, which shares no code with the library); the findings a
correct checker must give are listed there and held by ``tests/conversation/test_data.py``.
"""

from __future__ import annotations

import gzip
import shutil
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
from _rec import DATA, PY, sdk_stdio  # noqa: E402

DEMO = [PY, "scripts/demo_server.py"]
#: where a trace goes when it is not one of data/'s (the 2026 stateless capture has a session
#: per POST, which the collection views of data/ do not show well yet)
FIXTURES = _rec.ROOT / "tests" / "conversation" / "fixtures"
OUT = {"conversation-2026-input-required.har": FIXTURES}
SECTION = "## Conversation traces"


async def attempt(aw: Awaitable[Any]) -> Any:
    from mcp import MCPError

    try:
        return await aw
    except MCPError as exc:
        return exc


async def bad_arguments(out: Path) -> None:
    async with sdk_stdio(out, "conversation-bad-arguments", DEMO) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("add", {"a": 2, "b": 40})
        await attempt(s.call_tool("add", {"a": "two", "b": 40}))
        await attempt(s.call_tool("add", {"a": 2}))
        await attempt(s.call_tool("divide", {"a": [1], "b": 2}))
        await s.call_tool("divide", {"a": 1, "b": 4})


async def undeclared_capability(out: Path) -> None:
    from mcp import types as mt

    async with sdk_stdio(out, "conversation-undeclared-capability", DEMO) as s:
        await s.initialize()
        await s.list_resources()
        await attempt(s.subscribe_resource("demo://readme"))
        await attempt(s.complete(mt.PromptReference(type="ref/prompt", name="review"),
                                 {"name": "code", "value": "pri"}))
        await s.send_ping()


async def large_result(out: Path) -> None:
    async with sdk_stdio(out, "conversation-large-result", DEMO) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("big", {"kib": 80})
        await s.call_tool("add", {"a": 1, "b": 2})


async def large_result_mb(out: Path) -> None:
    async with sdk_stdio(out, "conversation-large-result-mb", DEMO) as s:
        await s.initialize()
        await s.list_tools()
        await s.call_tool("big", {"kib": 1024})
        await s.call_tool("add", {"a": 1, "b": 2})


TS_FAULTS = ["node", "scripts/ts_faults_client.cjs"]


def _node_path() -> str:
    """Where node finds the TypeScript SDK: NODE_PATH when it holds it, else the pinned
    peers of ``scripts/npm-peers`` (``npm install`` there, as ``record_peers.py`` does)."""
    import os

    for folder in filter(None, os.environ.get("NODE_PATH", "").split(os.pathsep)):
        if (Path(folder) / "@modelcontextprotocol" / "sdk" / "package.json").exists():
            return folder
    import record_peers

    record_peers.ensure_npm()
    return str(record_peers.NPM / "node_modules")


def ts_sdk_version() -> str:
    import json

    meta = Path(_node_path()) / "@modelcontextprotocol" / "sdk" / "package.json"
    return str(json.loads(meta.read_text("utf-8"))["version"])


def ts_faults(out: Path) -> None:
    """The TypeScript SDK client (``scripts/ts_faults_client.cjs``) against the demo server
    over stdio, through the tap."""
    import os
    import subprocess

    cmd = [*TS_FAULTS, PY, *_rec.tap_command(out, "ts-faults", DEMO)]
    done = subprocess.run(cmd, cwd=_rec.ROOT, env={**os.environ, "NODE_PATH": _node_path()},
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        raise SystemExit(f"make_data_conversation: ts_faults_client exited {done.returncode}")


async def input_required(url: str) -> None:
    from mcp import Client
    from mcp import types as mt

    async def elicit(ctx: Any, params: Any) -> Any:  # a canned user: no one is asked
        return mt.ElicitResult(action="accept", content={"ok": True})

    async with Client(url, mode="auto", elicitation_callback=elicit) as c:
        await c.list_tools()
        await c.call_tool("confirm", {"action": "delete the draft"})


def _http_2026(client: Callable[[str], Awaitable[None]]) -> Callable[[Path], None]:
    def run(out: Path) -> None:
        port = _rec.free_port()
        with _rec.http_recording([PY, "scripts/conversation_server.py", str(port)], port,
                                 out) as url:
            anyio.run(client, url + "/mcp")
    return run


def _run(fn: Callable[[Path], Awaitable[None]]) -> Callable[[Path], None]:
    async def bounded(out: Path) -> None:
        with anyio.fail_after(120):
            await fn(out)
    return lambda out: anyio.run(bounded, out)


#: name -> (recorder, scenario, findings a correct checker gives: (rule, seq) with why)
TRACES: dict[str, tuple[Callable[[Path], None], str]] = {
    "conversation-bad-arguments.jsonl": (_run(bad_arguments), (
        "initialize; tools/list; `add` with good arguments; `add` with a string for an "
        "integer, `add` without `b`, `divide` with an array for a number (each answered by "
        "the server as a tool error, `isError`); a good `divide`.")),
    "conversation-undeclared-capability.jsonl": (_run(undeclared_capability), (
        "initialize (the demo server declares `resources.subscribe: false` and no "
        "`completions`); resources/list; the client calls resources/subscribe and "
        "completion/complete anyway (the SDK client does not check the server's "
        "capabilities); ping.")),
    "conversation-large-result.jsonl": (_run(large_result), (
        "initialize; tools/list; `big` returns 80 KiB of text in one result (as text "
        "content and again as structuredContent); `add`.")),
    "conversation-large-result-mb.jsonl.gz": (_run(large_result_mb), (
        "initialize; tools/list; `big` returns 1 MiB of text in one result (as text content "
        "and again as structuredContent: a result of about 2 MiB on one stdio line); `add`. "
        "Gzipped: the data tests cap a bundled file at 200 KB on disk, which the gzipped "
        "bytes keep (the text repeats; `mn.load` reads `.gz`).")),
    "conversation-ts-client-faults.jsonl": (ts_faults, (
        "the TypeScript SDK client (`scripts/ts_faults_client.cjs`, declaring no "
        "capabilities) against the Python SDK demo server: initialize; tools/list; `add` with "
        "good arguments, `add` with a=\"two\" (a string for an integer) and `divide` without "
        "b, both sent with the low-level `client.request` (the SDK checks no tool arguments; "
        "the server answers each as a tool error, `isError`); resources/list; "
        "resources/subscribe and completion/complete, which the server did not declare "
        "(`resources.subscribe: false`, no `completions`; the client's "
        "`enforceStrictCapabilities` is off by default, so the SDK sends them; the server "
        "answers each with an error); ping.")),
    "conversation-2026-input-required.har": (_http_2026(input_required), (
        "2026-07-28, stateless Streamable HTTP through `mcp-notebook proxy`, the Python SDK "
        "`Client` against `scripts/conversation_server.py`: server/discover; tools/list; "
        "`confirm` answered `input_required` (an `elicitation/create` in inputRequests and "
        "a sealed requestState); the client's retry with a new id, the inputResponses and "
        "the requestState echoed; the complete result. A correct checker finds nothing, "
        "and `conversation.calls(t)` makes the two tools/call one call of two rounds "
        "(kept in tests/conversation/fixtures/, held by tests/conversation/test_data.py).")),
}


#: name -> the findings a correct checker gives (``conversation.check(t)``, errors and
#: warnings; the large-payload notice with ``payload.LIMIT["bytes"] = 100_000``), checked
#: by hand against the frames: (rule, frame, why)
FINDINGS: dict[str, list[tuple[str, int, str]]] = {
    "conversation-bad-arguments.jsonl": [
        ("tool-arguments-schema", 8, "`add` a=\"two\": the listed inputSchema types a as integer"),
        ("tool-arguments-schema", 10, "`add` without b: b is required"),
        ("tool-arguments-schema", 12, "`divide` a=[1]: a is a number"),
    ],
    "conversation-undeclared-capability.jsonl": [
        ("capability-server-undeclared", 6, "resources/subscribe: the server declared "
         "`resources.subscribe: false`"),
        ("capability-server-undeclared", 8, "completion/complete: the server declared no "
         "`completions`"),
    ],
    "conversation-large-result.jsonl": [
        ("large-payload", 7, "the `big` result is 163,963 bytes (with `payload.LIMIT[\"bytes\"] = 100_000`; "
         "the default 1 MiB would keep quiet: see the gzipped trace below for the default)"),
    ],
    "conversation-ts-client-faults.jsonl": [
        ("tool-arguments-schema", 8, "`add` a=\"two\" sent by the TypeScript client's "
         "`client.request`: the listed inputSchema types a as integer (answered as a tool "
         "error)"),
        ("tool-arguments-schema", 10, "`divide` without b: b is required (answered as a tool "
         "error)"),
        ("capability-server-undeclared", 14, "resources/subscribe: the server declared "
         "`resources.subscribe: false` (answered -32601)"),
        ("capability-server-undeclared", 16, "completion/complete: the server declared no "
         "`completions` (answered -32601)"),
    ],
    "conversation-large-result-mb.jsonl.gz": [
        ("large-payload", 7, "the `big` result is {size} bytes, above the default notice "
         "threshold of 1 MiB (`payload.LIMIT`); the tools/list answer and the `add` call stay "
         "below it"),
    ],
}

#: the tool calls of the bundled traces whose arguments break the tool's listed
#: inputSchema, checked by hand: (trace, call frame, tool, what breaks, how it was answered)
BUNDLED: list[tuple[str, int, str, str, str]] = [
    ("everything-stdio-basics.jsonl", 14, "get-sum", "a=\"two\", a number is asked",
     "tool error (`isError`, -32602 in its text)"),
    ("filesystem-stdio.jsonl", 22, "write_file", "no `content` (required)",
     "tool error (`isError`)"),
    ("memory-stdio.jsonl", 19, "create_entities", "entities=\"not a list\", an array is asked",
     "tool error (`isError`)"),
    ("../tests/fixtures/peers/ts-client-everything-stdio.jsonl", 15, "get-sum",
     "a=\"x\" and no b (both numbers, required)", "tool error (`isError`)"),
    ("../tests/fixtures/peers/ts-client-everything-http.har", 9, "get-sum",
     "a=\"x\" and no b", "tool error (`isError`)"),
    ("../tests/fixtures/peers/python-2026-stateless-http.har", 35, "add",
     "a=\"x\", an integer is asked", "tool error (`isError`)"),
]


def _plain(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def _counted(path: Path, count_file: Callable[[Path], dict[str, int]]) -> dict[str, int]:
    """The independent counter's counts (it reads plain files: a gzipped trace is
    decompressed into a scratch folder first)."""
    if path.suffix != ".gz":
        return count_file(path)
    with tempfile.TemporaryDirectory() as d:
        plain = Path(d) / path.stem
        plain.write_bytes(_plain(path))
        return count_file(plain)


def _largest(path: Path) -> int:
    """The bytes of the largest message of a tap trace (its ``raw`` text, UTF-8)."""
    import json

    sizes = [len(json.loads(line).get("raw", "").encode("utf-8", "surrogateescape"))
             for line in _plain(path).splitlines() if line.strip()]
    return max(sizes, default=0)


def write_readme() -> Path:
    """Put this script's traces into the README: rows of ``## Counts`` and the section."""
    import _readme  # noqa: F401 - the versions helpers
    from count_trace import KEYS, count_file

    path = DATA / "README.md"
    text = path.read_text("utf-8")
    if SECTION in text:
        text = text.split("\n" + SECTION, 1)[0].rstrip() + "\n"
    head, rest = text.split("## Counts", 1)
    table, tail = (rest.split("\n## ", 1) + [""])[:2]
    rows = [ln for ln in table.strip().splitlines() if not any(f"`{n}`" in ln for n in TRACES)]
    present = [n for n in TRACES if n not in OUT and (DATA / n).exists()]
    counts = {n: _counted(DATA / n, count_file) for n in present}
    row = {n: f"| `{n}` | " + " | ".join(str(c[k]) for k in KEYS) + " |"
           for n, c in counts.items()}
    rows += [row[n] for n in present if not n.endswith(".gz")]
    text = head + "## Counts\n\n" + "\n".join(rows) + "\n" + ("\n## " + tail if tail else "")
    from importlib.metadata import version

    lines = ["", SECTION, "",
             "Recorded by `scripts/make_data_conversation.py` for the conversation checker "
             "(`mcp_notebook.conversation`). Each `finding:` line is what "
             "`conversation.check(t)` (the schema rules included) must give as an error or "
             "warning, and nothing else; `tests/conversation/test_data.py` holds it, and the "
             "findings of every other trace here and in `tests/fixtures/peers/`, each "
             "explained.",
             ""]
    gz = [n for n in present if n.endswith(".gz")]
    if gz:
        lines += ["Gzipped traces (the table of counts above lists the plain files) have their "
                  "counts here:", "", "| trace | " + " | ".join(KEYS) + " |",
                  "|---|" + "---:|" * len(KEYS), *[row[n] for n in gz], ""]
    for name in present:
        har = name.endswith(".har")
        server = "scripts/conversation_server.py" if har else "scripts/demo_server.py"
        transport = "Streamable HTTP, proxy (HAR)" if har else "stdio, tap" + (
            "; gzipped" if name.endswith(".gz") else "")
        # "client / server": mn.datasets() reads the server from after the slash
        peers = (f"MCP Python SDK client (PyPI `mcp` {version('mcp')}) / `{server}` (the "
                 f"Python SDK's server, PyPI `mcp` {version('mcp')})")
        if TRACES[name][0] is ts_faults:
            peers = (f"MCP TypeScript SDK client (npm `@modelcontextprotocol/sdk` "
                     f"{ts_sdk_version()}, `scripts/ts_faults_client.cjs`) / `{server}` (the "
                     f"Python SDK's server, PyPI `mcp` {version('mcp')})")
        lines += [f"### `{name}`", "", f"- peers: {peers}",
                  f"- transport: {transport}; {(DATA / name).stat().st_size:,} bytes",
                  f"- scenario: {TRACES[name][1]}"]
        size = f"{_largest(DATA / name):,}"
        lines += [f"- finding: `{rule}` at frame {seq}: {why.format(size=size)}"
                  for rule, seq, why in FINDINGS.get(name, [])]
        lines.append("")
    lines += ["### Tool calls of the other traces whose arguments break the tool's schema", "",
              "Found by `tool-arguments-schema` and checked by hand against the `tools/list` "
              "answer before each call; every one was answered as a tool error, as "
              "2025-11-25 asks (`server/tools.mdx` §Error Handling).", ""]
    lines += [f"- `{t}`, frame {seq}: `{tool}` with {what}; answered as a {answer}"
              for t, seq, tool, what, answer in BUNDLED]
    path.write_text(text.rstrip() + "\n" + "\n".join(lines).rstrip() + "\n", "utf-8")
    return path


def main(argv: list[str]) -> int:
    names = [] if argv == ["--readme"] else argv or list(TRACES)
    unknown = set(names) - set(TRACES)
    if unknown:
        raise SystemExit(f"make_data_conversation: unknown trace(s) {sorted(unknown)}; "
                         f"known: {list(TRACES)}")
    for name in names:
        out = OUT.get(name, DATA) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        raw = out.with_suffix("") if out.suffix == ".gz" else out
        _rec.log(f"recording {name}")
        TRACES[name][0](raw)
        _rec.redact(raw, {str(_rec.ROOT): "."})
        if raw != out:  # only the gzipped copy is kept (mtime 0: the same bytes each time)
            with open(raw, "rb") as src, gzip.GzipFile(out, "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            raw.unlink()
        _rec.log(f"  {out.stat().st_size} bytes")
    write_readme()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
