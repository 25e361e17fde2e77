"""Write ``data/README.md``: per trace, its peers and versions, scenario and counts."""

from __future__ import annotations

import platform
import subprocess
from importlib.metadata import version
from pathlib import Path

from _rec import DATA
from count_trace import KEYS, count_file

EV, FS, MEM = ("@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem",
               "@modelcontextprotocol/server-memory")

#: name -> (server, transport and tool, scenario)
TRACES: dict[str, tuple[str, str, str]] = {
    "everything-stdio-basics.jsonl": (EV, "stdio, tap", (
        "initialize; tools/list; `echo` and `get-sum` succeed; an unknown tool and "
        "`get-sum` with a string argument come back as tool errors (`isError`, the TS SDK "
        "turns both into results); prompts/list and two prompts/get; resources/list, "
        "resources/templates/list, a resources/read and a read of a missing resource "
        "(error -32602); ping. The server also announces `notifications/tools/list_changed` "
        "right after initialization.")),
    "everything-stdio-progress-cancel.jsonl": (EV, "stdio, tap", (
        "A long call with a progressToken and four progress notifications; a second long "
        "call cancelled after its first progress (`notifications/cancelled`, no response; "
        "note that this server keeps sending progress for the cancelled call, even after "
        "the client closed stdin); then three calls and a ping in flight at once, answered "
        "out of order; the SDK client lists the tools again on its own before a call.")),
    "everything-stdio-server-requests.jsonl": (EV, "stdio, tap", (
        "Requests from server to client: `roots/list` (the client declares roots), "
        "`sampling/createMessage` (a canned answer: no model involved) and "
        "`elicitation/create` (declined); logging/setLevel debug and simulated logging "
        "switched on and off (`notifications/message`; its level is random). Server ids "
        "start at 0 while the client's start at 1: pairing must key on the sender.")),
    "everything-stdio-raw-frames.jsonl": (EV, "stdio, tap, frames written by hand", (
        "Frames the SDK client never sends, written over the real pipe: string ids "
        "(`\"init-1\"`, `\"list-tools\"`); ids `1` and `\"1\"` in flight together (two "
        "different requests); an unknown method (-32601); tools/call without a name and "
        "resources/read without a uri (answered -32603, the wrong code: a missing parameter is -32602); an unknown "
        "notification (ignored); an unparsable line (the server stays silent); ping.")),
    "everything-http.har": (EV, "Streamable HTTP, proxy (HAR)", (
        "initialize (session id in `mcp-session-id`), the standalone GET stream, tools/list, "
        "`echo`, a long call whose progress arrives on the POST's SSE stream, a sampling "
        "request from the server on that stream answered by a separate POST, a missing "
        "resource (-32602), ping, and the DELETE that ends the session. SSE events carry "
        "ids (the server keeps an event store).")),
    "filesystem-stdio.jsonl": (FS, "stdio, tap", (
        "list_allowed_directories, list_directory, read_text_file, write_file, "
        "get_file_info; three tool errors: a missing file (ENOENT), a path outside the "
        "sandbox (access denied) and write_file without `content` (input validation). "
        "The sandbox's absolute path was replaced by `/sandbox` after recording.")),
    "memory-stdio.jsonl": (MEM, "stdio, tap", (
        "A small knowledge graph: create_entities, create_relations, add_observations, "
        "search_nodes, open_nodes, read_graph; tool errors for an unknown entity and for "
        "`entities` that is not a list.")),
    "demo-stdio.jsonl": ("demo", "stdio, tap", (
        "Everything the notebooks teach on one pipe: a result, a tool error (`divide` by "
        "zero), an unknown tool (a tool error in the Python SDK), ping from the client and "
        "from the server (`ping_client`), sampling and elicitation from the server, "
        "logging/setLevel info then three log notifications (the debug one is filtered), a "
        "call with progress, a call cancelled after its first progress (no response), two "
        "calls in flight (`wait_gate` ends only after `open_gate`), resources (a missing "
        "note: -32602) and prompts.")),
    "demo-stdio-raw-frames.jsonl": ("demo", "stdio, tap, frames written by hand", (
        "String ids; `1` and `\"1\"` in flight together; an unknown method (-32601); "
        "`add` with a string argument and an unknown tool (both tool errors); "
        "resources/read with a number as uri (-32602); an unparsable line (no answer).")),
    "demo-http.har": ("demo", "Streamable HTTP, proxy (HAR)", (
        "The demo scenario over Streamable HTTP: progress, sampling and elicitation travel "
        "on the POST's SSE stream; the cancelled call is answered anyway with error -32800 "
        "`Request cancelled` (after reading the cancel, which the receiver SHOULD NOT answer; -32800 is not an MCP error code); a "
        "missing resource; ping; DELETE at the end.")),
    "demo-sse.har": ("demo", "HTTP+SSE (2024-11-05 transport), proxy (HAR)", (
        "The same scenario over the old transport: one long GET `/sse` stream whose first "
        "event is `endpoint` (the POST URL with the session id); every POST is answered "
        "`202 Accepted` and every response arrives on the GET stream. The cancelled call "
        "gets no response here.")),
    "broken-duplicate-response.jsonl": ("broken", "stdio, tap", (
        "**A deliberately broken server, for teaching** (`scripts/broken_server.py`, not a "
        "real product). After tools/list it answers id 9999, which nobody sent (an orphan); "
        "it answers `echo` twice (a duplicate response); it answers `lookup` (id 4) with "
        "the id `\"4\"` (a string, not the number it was sent as). The checker reports an "
        "id type mismatch and leaves request 4 unanswered; the Python SDK client itself "
        "accepts `\"4\"` for 4 on purpose (it coerces ids, as the TypeScript SDK does) and "
        "carries on with a ping.")),
}


def _node() -> str:
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except OSError:
        return "?"


def _peers(versions: dict[str, str]) -> dict[str, str]:
    sdk = versions.get("@modelcontextprotocol/sdk", "?")
    py = f"official MCP Python SDK client (PyPI `mcp` {version('mcp')})"
    npm = f"(npm, TypeScript SDK {sdk}, node {_node()})"
    return {
        EV: f"{py} / `{EV}` {versions.get(EV, '?')} {npm}",
        FS: f"{py} / `{FS}` {versions.get(FS, '?')} {npm}",
        MEM: f"{py} / `{MEM}` {versions.get(MEM, '?')} {npm}",
        "demo": f"{py} / `scripts/demo_server.py` (mcp-notebook-demo 0.1.0 on the Python SDK "
                f"`mcp` {version('mcp')}, Python {platform.python_version()})",
        "broken": f"{py} / `scripts/broken_server.py` (broken-demo 0.0.1, hand-written, no SDK)",
    }


HEAD = """# Traces recorded by mcp-notebook

Real MCP sessions recorded by `make data` (`scripts/make_data.py`) with the project's own
capture tools: stdio through `mcp-notebook record` (tap JSONL: one `{ts, dir, session, raw}`
object per line, `meta` lines are the tap's own events) and HTTP through `mcp-notebook proxy`
(HAR 1.2; each SSE event's arrival time is in `response.content._sseEvents[].t`). The client
is always the official MCP Python SDK; its sampling and elicitation answers are canned (no
model, no user). Every file is exactly as recorded, except that machine paths were replaced
(`/sandbox` for the filesystem server's folder).

The counts below were taken from the files by `scripts/count_trace.py`, which shares no code
with the library, and checked by eye; `tests/capture/test_data_readme.py` checks them against
`mn.load(trace).summary()`. `frames` counts every row (messages, unparsable lines, stderr
lines, log lines: the tap's `meta` records, the HTTP requests that carried no message and SSE
events that are not messages); `pairs` counts answered requests; `unanswered` the requests
with no response; `cancelled` the requests cancelled while in flight (answered or not);
`orphans` responses to no request; `duplicates` second responses to one request;
`tool_errors` results with `isError: true` (also counted in `results`).

Regenerate with `make data` (needs node and npm; the npm servers are pinned in
`scripts/npm/package.json` and `package-lock.json` and installed into `scripts/.npm/`).
Timestamps, session ids and ports change on every run, and so may a few counts (the
everything server's simulated log level is random, and late progress after a cancel
depends on timing).

## Counts
"""


def write(versions: dict[str, str]) -> Path:
    peers = _peers(versions)
    lines = [HEAD, "| trace | " + " | ".join(KEYS) + " |",
             "|---|" + "---:|" * len(KEYS)]
    present = [n for n in TRACES if (DATA / n).exists()]
    for name in present:
        c = count_file(DATA / name)
        lines.append(f"| `{name}` | " + " | ".join(str(c[k]) for k in KEYS) + " |")
    lines += ["", "## Traces", ""]
    for name in present:
        server, transport, scenario = TRACES[name]
        size = (DATA / name).stat().st_size
        lines += [f"### `{name}`", "", f"- peers: {peers[server]}",
                  f"- transport: {transport}; {size:,} bytes", f"- scenario: {scenario}", ""]
    out = DATA / "README.md"
    out.write_text("\n".join(lines).rstrip() + "\n", "utf-8")
    return out
