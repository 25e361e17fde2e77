"""A deliberately BROKEN MCP stdio server, for teaching. Do not copy it.

It is a tiny hand-written JSON-RPC loop (no SDK) that answers like a server with bugs
seen in the wild:

- ``tools/call`` of ``echo`` is answered **twice** (a duplicate response: the second one
  must be ignored by the client and is a protocol violation);
- ``tools/call`` of ``lookup`` is answered with the id as a **string** (``"3"`` for
  ``3``): the id no longer mirrors the request, so the client never sees its answer
  (an orphan response and an unanswered request);
- after ``tools/list`` it sends a response to an id the client **never used** (an orphan).

Everything else (``initialize``, ``ping``) is answered correctly, so an SDK client can
connect. ``scripts/make_data.py`` records it as ``data/broken-duplicate-response.jsonl``.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "echo", "description": "Echo a text (answered twice: a bug)",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "lookup", "description": "Look a key up (answered with a string id: a bug)",
     "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}},
                     "required": ["key"]}},
]


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def result(mid: object, res: dict) -> None:
    send({"jsonrpc": "2.0", "id": mid, "result": res})


def text(t: str) -> dict:
    return {"content": [{"type": "text", "text": t}], "isError": False}


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None,
                  "error": {"code": -32700, "message": "Parse error"}})
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method is None or mid is None:
            continue  # a notification or a response: nothing to answer
        if method == "initialize":
            result(mid, {"protocolVersion": msg["params"]["protocolVersion"],
                         "capabilities": {"tools": {}},
                         "serverInfo": {"name": "broken-demo", "version": "0.0.1"}})
        elif method == "ping":
            result(mid, {})
        elif method == "tools/list":
            result(mid, {"tools": TOOLS})
            result(9999, {})  # BUG: an answer to a request nobody sent
        elif method == "tools/call":
            args = msg["params"].get("arguments") or {}
            if msg["params"]["name"] == "echo":
                result(mid, text(args.get("text", "")))
                result(mid, text(args.get("text", "")))  # BUG: answered twice
            else:
                result(str(mid), text(f"value of {args.get('key')}"))  # BUG: id as a string
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
