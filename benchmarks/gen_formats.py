"""The same generated MCP traffic written in every capture format the readers know.

Usage::

    python benchmarks/gen_formats.py --messages 100000 --out out/formats

The messages come from the capture generator (:mod:`gen_capture`, one session, clean:
no malformed line, so every format can carry every message); they are then written as:

- ``ndjson``: bare stdio NDJSON, one message per line (the reference of the readers'
  benchmark: the NDJSON fast path);
- ``claude-desktop``: a per-server ``mcp-server-bench.log`` (``<ts> [bench] [info]
  Message from client: <json> { metadata: undefined }``), as Claude Desktop writes it;
- ``vscode``: VS Code's MCP output channel at Debug level (``<local time> [debug]
  [editor -> server] <json>``);
- ``har-streamable``: HAR 1.2 of Streamable HTTP: each client message is a POST; the
  server messages that follow it, up to the next client message, are its response (none:
  ``202 Accepted``; one: an ``application/json`` body; more: a ``text/event-stream``
  body);
- ``har-sse``: HAR 1.2 of the 2024-11-05 HTTP+SSE transport: one GET stream whose body
  holds the ``endpoint`` event then every server message as an event with no time of
  its own, and each client message a POST answered ``202 Accepted``;
- ``inspector``: an MCP Inspector v2 protocol export (``JSON.stringify(entries, null,
  2)``): a request and its response in one entry;
- ``recorder``: an mcp-recorder cassette: each client request with its response, each
  client notification; server requests and notifications are not in a cassette (it
  records the client's HTTP calls), so this format carries fewer messages;
- ``curl``: a pasted curl transcript: a ``curl ... -d '<json>'`` command per client
  message, the server messages after it as SSE ``event:``/``data:`` lines.

The counts differ between formats (a cassette has no server requests, an Inspector
entry holds two messages): the benchmark compares the cost *per frame*. The same seed
gives the same files. This module only reads the generator's output; it does not change
the generator's traffic or profiles.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_capture import generate  # noqa: E402

__all__ = ["FORMATS", "messages", "write_all", "main"]

SERVER = "bench"
URL = "http://127.0.0.1:3001/mcp"
SESSION = "5f130863-32e2-420a-a747-9fa654e774ef"

Message = tuple[float, str, str]  # (unix time, "c2s" | "s2c", compact JSON text)


def messages(n: int, seed: int = 7) -> list[Message]:
    """``n`` messages of one generated session, in capture order."""
    out: list[Message] = []
    lines = int(n * 1.1) + 100  # the tap capture also holds stderr and meta lines
    while len(out) < n:
        with tempfile.TemporaryDirectory() as tmp:
            tap = Path(tmp) / "t.jsonl"
            generate(tap, lines, "tap", clean=True, seed=seed, sessions=1)
            out = []
            with open(tap, encoding="utf-8", errors="surrogateescape") as f:
                for line in f:
                    rec = json.loads(line)
                    if rec.get("dir") in ("c2s", "s2c") and "\n" not in rec["raw"]:
                        out.append((rec["ts"], rec["dir"], rec["raw"]))
                        if len(out) == n:
                            break
        lines *= 2
    return out


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def _local(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def write_ndjson(msgs: list[Message], path: Path) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        f.writelines(raw + "\n" for _, _, raw in msgs)


def write_claude(msgs: list[Message], path: Path) -> None:
    t0 = msgs[0][0] if msgs else 0.0
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        f.write(f"{_iso(t0)} [{SERVER}] [info] Initializing server... "
                "{ metadata: undefined }\n")
        f.write(f"{_iso(t0)} [{SERVER}] [info] Server started and connected successfully "
                "{ metadata: undefined }\n")
        for t, d, raw in msgs:
            who = "client" if d == "c2s" else "server"
            f.write(f"{_iso(t)} [{SERVER}] [info] Message from {who}: {raw} "
                    "{ metadata: undefined }\n")


def write_vscode(msgs: list[Message], path: Path) -> None:
    t0 = msgs[0][0] if msgs else 0.0
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        f.write(f"{_local(t0)} [info] Starting server {SERVER}\n")
        f.write(f"{_local(t0)} [info] Connection state: Running\n")
        for t, d, raw in msgs:
            arrow = "[editor -> server]" if d == "c2s" else "[server -> editor]"
            f.write(f"{_local(t)} [debug] {arrow} {raw}\n")


def _headers(d: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in d.items()]


def _entry(method: str, url: str, at: float, body: str | None, status: int, mime: str,
           reply: str | None, ms: float, req_headers: dict[str, str]) -> dict[str, Any]:
    req: dict[str, Any] = {"method": method, "url": url, "httpVersion": "HTTP/1.1",
                           "cookies": [], "headers": _headers(req_headers),
                           "queryString": [], "headersSize": -1, "bodySize": -1}
    if body is not None:
        req["postData"] = {"mimeType": "application/json", "text": body}
    content: dict[str, Any] = {"size": len(reply or ""), "mimeType": mime}
    if reply is not None:
        content["text"] = reply
    return {"startedDateTime": _iso(at), "time": ms, "request": req,
            "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                         "cookies": [], "headers": _headers({"Content-Type": mime} if mime
                                                            else {}),
                         "content": content, "redirectURL": "", "headersSize": -1,
                         "bodySize": -1},
            "cache": {}, "timings": {"send": 0, "wait": ms, "receive": 0}}


def _sse(datas: list[str]) -> str:
    return "".join(f"event: message\ndata: {d}\n\n" for d in datas)


def _groups(msgs: list[Message]) -> list[tuple[Message | None, list[Message]]]:
    """Each client message with the server messages after it (up to the next client one);
    server messages before the first client message come first, with no client message."""
    out: list[tuple[Message | None, list[Message]]] = [(None, [])]
    for m in msgs:
        if m[1] == "c2s":
            out.append((m, []))
        else:
            out[-1][1].append(m)
    return out if out[0][1] else out[1:]


def _write_har(entries: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write('{"log":{"version":"1.2","creator":{"name":"gen_formats","version":"1"},'
                '"entries":[\n')
        for i, e in enumerate(entries):
            f.write(("," if i else "") + json.dumps(e, ensure_ascii=False) + "\n")
        f.write("]}}\n")


def write_har_streamable(msgs: list[Message], path: Path) -> None:
    hdr = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-session-id": SESSION, "mcp-protocol-version": "2025-06-18"}
    entries = []
    for c, replies in _groups(msgs):
        if c is None:  # server messages before any client message: a GET stream
            entries.append(_entry("GET", URL, replies[0][0], None, 200, "text/event-stream",
                                  _sse([r for _, _, r in replies]), 1.0, hdr))
            continue
        t, _, raw = c
        ms = max(1.0, (replies[-1][0] - t) * 1000) if replies else 1.0
        if not replies:
            entries.append(_entry("POST", URL, t, raw, 202, "", None, ms, hdr))
        elif len(replies) == 1:
            entries.append(_entry("POST", URL, t, raw, 200, "application/json",
                                  replies[0][2], ms, hdr))
        else:
            entries.append(_entry("POST", URL, t, raw, 200, "text/event-stream",
                                  _sse([r for _, _, r in replies]), ms, hdr))
    _write_har(entries, path)


def write_har_sse(msgs: list[Message], path: Path) -> None:
    base = "http://127.0.0.1:3001"
    post = f"{base}/messages?sessionId={SESSION}"
    t0 = msgs[0][0] if msgs else 0.0
    t1 = msgs[-1][0] if msgs else 0.0
    body = f"event: endpoint\ndata: /messages?sessionId={SESSION}\n\n" + _sse(
        [raw for _, d, raw in msgs if d == "s2c"])
    entries = [_entry("GET", f"{base}/sse", t0, None, 200, "text/event-stream", body,
                      max(1.0, (t1 - t0) * 1000), {"accept": "text/event-stream"})]
    hdr = {"content-type": "application/json"}
    entries += [_entry("POST", post, t, raw, 202, "", "Accepted", 1.0, hdr)
                for t, d, raw in msgs if d == "c2s"]
    _write_har(entries, path)


def _pairs(msgs: list[Message]) -> list[tuple[Message, dict[str, Any], Message | None,
                                              dict[str, Any] | None]]:
    """Each message that is not a response, with its response (matched by direction and
    id) when there is one; responses with no request are entries of their own."""
    out: list[list[Any]] = []
    open_: dict[tuple[str, str], list[Any]] = {}
    for m in msgs:
        obj = json.loads(m[2])
        if "method" in obj:
            item = [m, obj, None, None]
            out.append(item)
            if "id" in obj:
                open_[(m[1], json.dumps(obj["id"]))] = item
        else:
            asker = "s2c" if m[1] == "c2s" else "c2s"
            item = open_.pop((asker, json.dumps(obj.get("id"))), None)
            if item is not None and item[2] is None:
                item[2], item[3] = m, obj
            else:
                out.append([m, obj, None, None])
    return [tuple(x) for x in out]  # type: ignore[misc]


def write_inspector(msgs: list[Message], path: Path) -> None:
    entries = []
    for i, (m, obj, r, robj) in enumerate(_pairs(msgs)):
        kind = ("request" if "id" in obj else "notification") if "method" in obj else "response"
        e: dict[str, Any] = {"id": f"e{i}", "timestamp": _iso(m[0]), "direction": kind,
                             "origin": "client" if m[1] == "c2s" else "server",
                             "message": obj}
        if r is not None:
            e["response"] = robj
            e["duration"] = max(0, round((r[0] - m[0]) * 1000))
        entries.append(e)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(json.dumps(entries, indent=2, ensure_ascii=False))


def write_recorder(msgs: list[Message], path: Path) -> None:
    inter = []
    for m, obj, r, robj in _pairs(msgs):
        if m[1] != "c2s" or "method" not in obj:
            continue  # a cassette records the client's calls only
        if "id" in obj:
            inter.append({"type": "jsonrpc_request", "request": obj, "response": robj,
                          "response_is_sse": False, "response_status": 200,
                          "latency_ms": round((r[0] - m[0]) * 1000, 3) if r else None,
                          "http_method": "POST", "http_path": "/mcp"})
        else:
            inter.append({"type": "notification", "request": obj, "response": None,
                          "response_is_sse": False, "response_status": 202,
                          "latency_ms": 0.5, "http_method": "POST", "http_path": "/mcp"})
    doc = {"version": "1.0", "metadata": {"recorded_at": _iso(msgs[0][0]) if msgs else "",
                                          "server_url": URL, "protocol_version": "2025-06-18",
                                          "server_info": {"name": SERVER, "version": "1"}},
           "interactions": inter}
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(json.dumps(doc, indent=2, ensure_ascii=False))


def write_curl(msgs: list[Message], path: Path) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for c, replies in _groups(msgs):
            if c is not None:
                body = c[2].replace("'", "'\\''")
                f.write(f"curl -sN {URL} -H 'content-type: application/json' "
                        f"-H 'mcp-session-id: {SESSION}' -d '{body}'\n")
            for _, _, raw in replies:
                f.write(f"event: message\ndata: {raw}\n\n")


#: format name -> (file name, writer, reader format name)
FORMATS: dict[str, tuple[str, Callable[[list[Message], Path], None], str]] = {
    "ndjson": ("capture.jsonl", write_ndjson, "ndjson"),
    "claude-desktop": ("mcp-server-bench.log", write_claude, "claude-desktop"),
    "vscode": ("vscode-output.log", write_vscode, "vscode"),
    "har-streamable": ("streamable.har", write_har_streamable, "har"),
    "har-sse": ("sse.har", write_har_sse, "har"),
    "inspector": ("inspector-protocol-bench.json", write_inspector, "inspector"),
    "recorder": ("cassette.json", write_recorder, "recorder"),
    "curl": ("transcript.txt", write_curl, "curl"),
}


def write_all(n: int, out: Path, seed: int = 7,
              only: list[str] | None = None) -> dict[str, Path]:
    """Write ``n`` generated messages in every format (or ``only`` those) under ``out``
    (``out/<n>/<file>``); files already there are kept. Returns format -> path."""
    folder = out / str(n)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / spec[0] for name, spec in FORMATS.items()
             if only is None or name in only}
    todo = [name for name, p in paths.items() if not p.exists()]
    if todo:
        msgs = messages(n, seed)
        for name in todo:
            tmp = paths[name].with_suffix(paths[name].suffix + ".part")
            FORMATS[name][1](msgs, tmp)
            tmp.replace(paths[name])
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", nargs="*", choices=list(FORMATS))
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    for name, p in write_all(a.messages, a.out, a.seed, a.only).items():
        print(f"{name:15} {p.stat().st_size / 1e6:9.1f} MB  {p}")
    print(f"{time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
