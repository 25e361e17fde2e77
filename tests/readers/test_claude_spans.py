"""Claude Desktop's usual one-line messages read a block at a time as spans of the
file's bytes (``readers._spans``), their connections decided by the same tracker in the
same order: the same rows, sessions, ambiguity notes, texts, labels and per-line errors
as the line by line records, on random logs of every kind of line (openings and closings
of several connections, other servers, Claude's cuts, stderr, blocks), at any block
size, with the text in memory or read from the file, plain or gzip."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from mcp_notebook import fast, readers
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.readers import _spans, base
from mcp_notebook.table import collect

from .stores import assert_same_store, assert_spans_give_the_records_rows


def _stamp(rng: random.Random) -> str:
    if rng.random() < 0.95:
        return f"2025-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
               f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
    return rng.choice(["2025-02-30T10:00:00.000Z", "2025-01-01T24:00:00.000Z",
                       "2025-01-01T10:00:60.500Z", "2025-01-01T10:00:61.000Z",
                       "2025-13-01T10:00:00.000Z"])


def _payload(rng: random.Random, k: int, who: str) -> str:
    pick = rng.random()
    ident = rng.randint(0, 5)
    if pick < 0.3:
        method = rng.choice(["tools/call", "initialize", "ping"])
        return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                           "params": {"t": "é 😀" * rng.randint(0, 2)}})
    if pick < 0.6:
        return json.dumps({"jsonrpc": "2.0", "id": ident, "result": {}})
    if pick < 0.75:
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if pick < 0.8:
        return json.dumps([{"jsonrpc": "2.0", "id": k, "method": "ping"}])
    if pick < 0.85:
        return '{"jsonrpc":"2.0","id":1,"result":{"t":"...[120 chars truncated]..."}}'
    if pick < 0.9:
        return '{"jsonrpc": "2.0", "id": 3, "method": "x"'  # cut short
    return '{"jsonrpc":"2.0","id":"\\ud800","result":{}}'


def _log(rng: random.Random, n: int) -> bytes:
    out: list[bytes] = []
    for k in range(n):
        pick = rng.random()
        server = rng.choice(["srv", "srv", "srv", "other"])
        ts = _stamp(rng)
        if pick < 0.7:
            who = rng.choice(["client", "server"])
            tail = rng.choice([" { metadata: undefined }"] * 4 + ["", " { metadata: {} }"])
            out.append(f"{ts} [{server}] [info] Message from {who}: "
                       f"{_payload(rng, k, who)}{tail}".encode())
        elif pick < 0.75:
            out.append(f"{ts} [{server}] [info] Initializing server...".encode())
        elif pick < 0.78:
            out.append(f"{ts} [{server}] [info] Server transport closed".encode())
        elif pick < 0.82:
            out.append(b"some stderr line of the server")
        elif pick < 0.84:
            out.append(b"  an indented stderr continuation")
        elif pick < 0.87:
            out.append(b"")
        elif pick < 0.89:
            out.append(f"{ts} [{server}] [error] failed {{".encode())
            out.append(b"  metadata: undefined")
            out.append(b"}")
        elif pick < 0.91:
            out.append(f"{ts} [{server}] [info] Message from client: {{\"jsonrpc\":\"2.0\","
                       f"\"id\":1,\"method\":\"\xff\"}} {{ metadata: undefined }}".encode(
                           "utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff"))
        elif pick < 0.93:
            out.append(f"{ts} [info] [{server}] Message from server: "
                       f"{_payload(rng, k, 'server')} {{ metadata: undefined }}".encode())
        else:
            out.append(f"{ts} [{server}] [info] Message from server: "
                       f"{_payload(rng, k, 'server')} {{ metadata: undefined }}".encode())
    return b"\n".join(out) + (b"\n" if rng.random() < 0.5 else b"")



@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [80, 1 << 22])
@pytest.mark.parametrize("lazy", [False, True])
def test_spans_give_the_records_rows(tmp_path, monkeypatch, seed, chunk, lazy):
    data = _log(random.Random(seed), 400)
    monkeypatch.setattr(base, "CHUNK", chunk)
    if lazy:
        monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    for name, blob in (("mcp-server-srv.log", data), ("mcp-server-srv.log.gz",
                                                      gzip.compress(data))):
        path = tmp_path / name
        path.write_bytes(blob)
        assert_spans_give_the_records_rows(path, "claude-desktop")


def test_usual_lines_come_as_spans(tmp_path):
    path = tmp_path / "mcp-server-srv.log"
    path.write_bytes(b"".join(
        f"2025-03-23T16:38:00.970Z [srv] [info] Message from client: "
        f'{{"jsonrpc":"2.0","id":{k},"method":"ping"}} {{ metadata: undefined }}\n'.encode()
        for k in range(50)))
    items = list(readers.read(path, format="claude-desktop").blocks())
    assert sum(len(x) for x in items if type(x) is _spans.Spans) == 50


def test_a_run_on_one_connection_keeps_the_guesses_before_it(tmp_path):
    """Two connections overlap (their ids entangled), one closes: the messages after it,
    read as one run of spans on the connection left, say their id was a guess."""
    t = "2025-03-23T16:38:00.{:03d}Z"
    msg = '{} [srv] [info] Message from {}: {} {{ metadata: undefined }}'
    lines = [f"{t.format(0)} [srv] [info] Initializing server...",
             f"{t.format(1)} [srv] [info] Initializing server..."]
    for k in range(2):
        lines.append(msg.format(t.format(2 + k), "client",
                                '{"jsonrpc":"2.0","id":0,"method":"initialize"}'))
    lines.append(msg.format(t.format(5), "client", '{"jsonrpc":"2.0","id":5,"method":"ping"}'))
    lines.append(f"{t.format(6)} [srv] [info] Server transport closed")
    for k in range(40):
        lines.append(msg.format(t.format(10 + k), "server" if k % 2 else "client",
                                '{"jsonrpc":"2.0","id":5,"result":{}}' if k % 2 else
                                '{"jsonrpc":"2.0","id":5,"method":"ping"}'))
    path = tmp_path / "mcp-server-srv.log"
    path.write_text("\n".join(lines) + "\n")
    fmt = "claude-desktop"
    ref = Store.from_columns(collect(readers.read(path, format=fmt)))
    new = Store.from_parts([part_of(readers.read(path, format=fmt))])
    assert_same_store(ref, new)
    assert sum("ambiguous" in e for e in new.extra.values()) > 40
    items = list(readers.read(path, format=fmt).blocks())
    assert sum(len(x) for x in items if type(x) is _spans.Spans) >= 40
