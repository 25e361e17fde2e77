"""curl transcripts' usual exchanges (a one-line ``curl ... -d '<json>'`` and its
``event: message`` / ``data:`` events) read a block at a time as spans of the file's
bytes (``readers._spans``): the same rows, sessions, times, statuses, texts, labels and
blank lines as the line by line records, on random transcripts of every kind of line,
at any block size, with the text in memory or read from the file, plain or gzip."""

from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest

from mcp_notebook import fast, readers
from mcp_notebook.readers import _spans, base

from .stores import assert_spans_give_the_records_rows

HEAD = ("curl -sN http://127.0.0.1:3001/mcp -H 'content-type: application/json' "
        "-H 'mcp-session-id: s-1' -d '")


def _body(rng: random.Random, k: int) -> str:
    pick = rng.random()
    if pick < 0.6:
        return json.dumps({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                           "params": {"t": "é 😀" * rng.randint(0, 2)}})
    if pick < 0.8:
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if pick < 0.9:
        return json.dumps([{"jsonrpc": "2.0", "id": k, "method": "ping"}])
    return '{"jsonrpc": "2.0", "id": 1, "method": "x"'  # cut short


def _transcript(rng: random.Random, n: int) -> bytes:
    out: list[str] = []
    for k in range(n):
        pick = rng.random()
        if pick < 0.45:
            out.append(HEAD + _body(rng, k) + "'")
        elif pick < 0.5:
            out.append(HEAD.replace("s-1", "s-2") + _body(rng, k) + "'")
        elif pick < 0.52:
            out.append("curl -sN http://127.0.0.1:3001/mcp \\")
            out.append("  -d '" + _body(rng, k) + "'")
        elif pick < 0.54:
            out.append(HEAD + '{"jsonrpc":"2.0","id":1,"params":{"q":"it'"'\\''"'s"}}' + "'")
        elif pick < 0.56:
            out.append(HEAD + _body(rng, k) + "' -H 'x-other: 1'")
        elif pick < 0.8:
            out += ["event: message", "data: " + _body(rng, k).replace("method", "x"), ""]
        elif pick < 0.83:
            out += ["data: " + json.dumps({"jsonrpc": "2.0", "id": k, "result": {}}), ""]
        elif pick < 0.85:
            out += ["id: 7", "event: message", "data: {\"jsonrpc\":\"2.0\",\"id\":3,"
                    "\"result\":{}}", ""]
        elif pick < 0.87:
            out.append("HTTP/1.1 200 OK")
        elif pick < 0.89:
            out.append("Date: Tue, 01 Dec 2026 20:00:00 GMT")
        elif pick < 0.9:
            out.append("Mcp-Session-Id: from-header")
        elif pick < 0.92:
            out.append('{"jsonrpc": "2.0", "id": 1, "result": {}}')
        elif pick < 0.94:
            out.append(": ping")
        elif pick < 0.96:
            out.append("")
        elif pick < 0.98:
            out.append("Some prose about the call above.")
        else:
            out.append("event: message")
            out.append("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}  ")
            out.append("")
    text = "\n".join(out) + ("\n" if rng.random() < 0.5 else "")
    return text.encode()



@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [100, 1 << 22])
@pytest.mark.parametrize("lazy", [False, True])
def test_spans_give_the_records_rows(tmp_path, monkeypatch, seed, chunk, lazy):
    data = _transcript(random.Random(seed), 400)
    monkeypatch.setattr(base, "CHUNK", chunk)
    if lazy:
        monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    for name, blob in (("t.txt", data), ("t.txt.gz", gzip.compress(data))):
        path = tmp_path / name
        path.write_bytes(blob)
        assert_spans_give_the_records_rows(path, "curl")


def test_usual_exchanges_come_as_spans(tmp_path):
    path = tmp_path / "t.txt"
    lines = []
    for k in range(30):
        lines.append(HEAD + json.dumps({"jsonrpc": "2.0", "id": k, "method": "ping"}) + "'")
        lines += ["event: message", "data: " + json.dumps({"jsonrpc": "2.0", "id": k,
                                                           "result": {}}), ""]
    path.write_text("\n".join(lines) + "\n")
    items = list(readers.read(path, format="curl").blocks())
    # every exchange but the last (the next command closes an exchange)
    assert sum(len(x) for x in items if type(x) is _spans.Spans) == 58


@pytest.mark.parametrize("odd", [
    '{"jsonrpc":"2.0","id":1,"params":{"q":"it' + "'\\''" + 's"}}' + "'",  # a quote inside
    '{"jsonrpc":"2.0","id":1,"method":"ping"}' + "' -H 'x-other: 1'",  # a word after it
    '{"jsonrpc":"2.0","id":1,"method":"ping"}' + "''",  # an empty word after it
    "'",  # an empty body
])
def test_a_command_with_other_quotes_is_not_usual(tmp_path, odd):
    """Among usual exchanges, a command with the usual head whose line holds quotes other
    than the body's two: read by shell rules (the line by line code), not as a span, and
    the rows are the records' rows."""
    lines = []
    for k in range(12):
        body = json.dumps({"jsonrpc": "2.0", "id": k, "method": "ping"}) + "'"
        lines.append(HEAD + (odd if k == 6 else body))
        lines += ["event: message", "data: " + json.dumps({"jsonrpc": "2.0", "id": k,
                                                           "result": {}}), ""]
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines) + "\n")
    assert_spans_give_the_records_rows(path, "curl")
    items = list(readers.read(path, format="curl").blocks())
    spans = [x for x in items if type(x) is _spans.Spans]
    # the usual exchanges before and after the odd one (whose exchange is read by lines)
    assert [len(x) for x in spans] == [10, 8]
    assert all(HEAD.encode() + odd.encode() not in x.buf[a:b]
               for x in spans for a, b in zip(x.starts, x.ends, strict=True))


def _runs_one_by_one(is_cmd: list[bool], triple: list[bool]) -> list[tuple[int, int]]:
    """The reference: each pair of consecutive commands checked line by line."""
    cmds = [k for k, c in enumerate(is_cmd) if c]
    runs: list[tuple[int, int]] = []
    for c0, c1 in zip(cmds, cmds[1:], strict=False):
        if (c1 - c0 - 1) % 3 == 0 and all(triple[c0 + 1:c1:3]):
            if runs and runs[-1][1] == c0:
                runs[-1] = (runs[-1][0], c1)
            else:
                runs.append((c0, c1))
    return runs


@pytest.mark.parametrize("seed", range(300))
def test_exchange_runs_equal_the_pairwise_check(seed):
    """The runs of usual exchanges found at once are those found pair by pair, on random
    blocks of commands, triples (never overlapping: a triple's lines are event, data,
    blank) and other lines."""
    from mcp_notebook.readers.curl import _exchange_runs

    rng = random.Random(seed)
    kinds: list[str] = []
    while len(kinds) < rng.randint(0, 60):
        pick = rng.random()
        if pick < 0.35:
            kinds.append("cmd")
        elif pick < 0.8:
            kinds += ["ev", "data", "blank"]
        else:
            kinds.append(rng.choice(["ev", "data", "blank", "other"]))
    n = len(kinds)
    is_cmd = [k == "cmd" for k in kinds]
    triple = [k + 2 < n and kinds[k:k + 3] == ["ev", "data", "blank"] for k in range(n)]
    got = _exchange_runs(np.array(is_cmd, dtype=bool), np.array(triple, dtype=bool))
    assert got == _runs_one_by_one(is_cmd, triple)


def test_a_shared_extra_is_given_out_as_copies(tmp_path):
    """The usual commands of a run share one ``extra`` dict in the table (the store's
    extras are read only); what a user is given is a copy: changing it changes no row."""
    import mcp_notebook as mn

    path = tmp_path / "t.txt"
    lines = []
    for k in range(20):
        lines.append(HEAD.replace("http://127.0.0.1:3001/mcp", "http://h/mcp") + json.dumps(
            {"jsonrpc": "2.0", "id": k, "method": "ping"}) + "'")
        lines += ["event: message", "data: " + json.dumps({"jsonrpc": "2.0", "id": k,
                                                           "result": {}}), ""]
    path.write_text("\n".join(lines) + "\n")
    trace = mn.load(path, format="curl", progress=False)
    cmds = [s for s, e in trace.contexts().items() if e.get("url")]
    assert len(cmds) == 20
    trace.extra(cmds[0])["url"] = "changed"
    trace.contexts()[cmds[1]]["url"] = "changed"
    assert {trace.extra(s)["url"] for s in cmds} == {"http://h/mcp"}
