"""The hostile-input corpus, built at test time (nothing large is committed).

``LINES``: single hostile lines, put between valid frames of an NDJSON and a tap
capture. ``FILES``: whole hostile files, each read with every reader.
"""

from __future__ import annotations

import json
import random

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
                                                 "capabilities": {}}}
PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
DEPTH = 200_000


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:]


#: name -> one hostile line (no newline in it)
LINES: dict[str, bytes] = {
    "truncated": PING[:17],
    "byte-flip": _flip(PING, 9),
    "invalid-utf8": b'{"jsonrpc":"2.0","id":5,"method":"\xff\xfe\xc3\x28"}',
    "nul-bytes": b'{"jsonrpc":"2.0","id":5,"method":"a\x00b"}\x00\x00',
    "bom-mid-file": b"\xef\xbb\xbf" + PING,
    "crlf": PING + b"\r",
    "whitespace-only": b" \t  \t",
    "deep-array": b"[" * DEPTH,
    "deep-object": b'{"a":' * DEPTH,
    "deep-params": b'{"jsonrpc":"2.0","id":9,"method":"x","params":' + b"[" * DEPTH
                   + b"]" * DEPTH + b"}",
    "nan-infinity": b'{"jsonrpc":"2.0","id":NaN,"method":"x","params":{"v":Infinity,"w":-Infinity}}',
    "duplicate-keys": b'{"jsonrpc":"2.0","id":1,"id":"1","method":"a","method":"b","params":{},'
                      b'"params":[]}',
    "huge-int-id": b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"x"}',
    "big-int-id": b'{"jsonrpc":"2.0","id":18446744073709551617,"method":"x"}',
    "huge-float": b'{"jsonrpc":"2.0","id":1e999,"error":{"code":1e400,"message":"m"}}',
    "huge-code": b'{"jsonrpc":"2.0","id":0,"error":{"code":' + b"9" * 5000 + b',"message":"m"}}',
    "random-binary": bytes(b for b in random.Random(8).randbytes(3000) if b != 10),
    "u2028-nel": '{"jsonrpc":"2.0","id":4,"method":"a\u2028b\x85c\x1cd"}'.encode(),
    "html": b'{"jsonrpc":"2.0","id":3,"method":"<script>window.__pwned=1</script>"}',
    "lone-surrogate-escape": b'{"jsonrpc":"2.0","id":"\\ud800","method":"x"}',
}


def ndjson_with(line: bytes) -> bytes:
    """A valid NDJSON capture with ``line`` in the middle."""
    return b"\n".join([json.dumps(INIT).encode(), line, json.dumps(INIT_OK).encode(), PING]) + b"\n"


def tap_record(raw: str, direction: str = "c2s", ts: object = 1.7e9) -> bytes:
    return json.dumps({"ts": ts, "dir": direction, "raw": raw}, ensure_ascii=False).encode(
        "utf-8", "surrogateescape")


def tap_with(line: bytes) -> bytes:
    """A valid tap capture with ``line`` both as a damaged tap line and as a frame's raw."""
    as_text = line.decode("utf-8", "surrogateescape")
    escaped = json.dumps({"ts": 1.7e9, "dir": "s2c", "raw": as_text.encode(
        "utf-8", "surrogateescape").decode("utf-8", "replace")}).encode()
    return b"\n".join([tap_record(json.dumps(INIT)), line, escaped,
                       tap_record(json.dumps(INIT_OK), "s2c"),
                       tap_record("stderr: " + as_text[:200].encode(
                           "utf-8", "surrogateescape").decode("utf-8", "replace"), "stderr"),
                       b'{"ts":1e300,"dir":"c2s","raw":"{}"}',
                       b'{"ts":"0001-01-01T00:00:00+14:00","dir":"s2c","raw":"{}"}']) + b"\r\n"


def _deep(prefix: bytes, suffix: bytes = b"") -> bytes:
    return prefix + b"[" * DEPTH + suffix


#: name -> a whole hostile file (the name's suffix is what a sniffer sees)
FILES: dict[str, bytes] = {
    "empty.jsonl": b"",
    "whitespace.jsonl": b"  \n\t\n\r\n   ",
    "newlines.jsonl": b"\n\n\n",
    "bom-only.jsonl": b"\xef\xbb\xbf",
    "bom-tap.jsonl": b"\xef\xbb\xbf" + tap_record(json.dumps(INIT)) + b"\n",
    "bom-ndjson.jsonl": b"\xef\xbb\xbf" + PING + b"\r\n",
    "crlf-tap.jsonl": tap_record(json.dumps(INIT)) + b"\r\n" + tap_record(
        json.dumps(INIT_OK), "s2c") + b"\r\n",
    "binary.bin": random.Random(3).randbytes(65536),
    "nul.jsonl": b"\x00" * 4096,
    "deep.jsonl": _deep(b""),
    "deep.har": _deep(b'{"log":{"entries":['),
    "deep-body.har": b'{"log":{"entries":[{"request":{"method":"POST","url":"http://h/mcp",'
                     b'"postData":{"text":"' + b"[" * DEPTH + b'"}},"response":{"content":'
                     b'{"text":"x"}}}]}}',
    "inspector-deep.json": _deep(b'[{"direction":"request","timestamp":"2025-01-01T00:00:00Z",'
                                 b'"message":{"jsonrpc":"2.0"},"x":'),
    "recorder-deep.json": _deep(b'{"recorded_at":"x","interactions":[{"request":'),
    "mcp-server-deep.log": _deep(b"2025-01-01T00:00:00.000Z [s] [info] Message from client: ")
    + b"\n",
    "vscode-deep.log": _deep(b"2025-01-01 00:00:00.000 [info] [editor -> server] ") + b"\n",
    "curl-deep.txt": b"curl -d '" + b"[" * DEPTH + b"' -H 'x: \"jsonrpc\"' http://h/mcp\n",
    "gzip-cut.jsonl.gz": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\x00" * 40,
}
