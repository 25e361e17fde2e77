"""VS Code's usual message lines read a block at a time as spans of the file's bytes
(``readers._spans``): the same rows, texts, labels and per-line errors as the line by
line records, on random channels of every kind of line, at any block size, with the
text in memory or read from the file, plain or gzip."""

from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest

from mcp_notebook import fast, readers
from mcp_notebook.readers import _logtext, _spans, base

from .stores import assert_spans_give_the_records_rows


def _message(rng: random.Random, k: int) -> str:
    pick = rng.random()
    if pick < 0.4:
        return json.dumps({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"t": "é ☃ 😀" * rng.randint(0, 3)}}})
    if pick < 0.7:
        return json.dumps({"jsonrpc": "2.0", "id": k, "result": {"content": []}},
                          ensure_ascii=rng.random() < 0.5)
    if pick < 0.8:
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": k, "progress": 0.5}})
    if pick < 0.85:
        return json.dumps([{"jsonrpc": "2.0", "id": k, "method": "ping"},
                           {"jsonrpc": "2.0", "method": "notifications/initialized"}])
    if pick < 0.9:
        return '{"jsonrpc": "2.0", "id": ' + str(k) + ', "method": "x"'  # cut short
    if pick < 0.95:
        return '{"jsonrpc":"2.0","id":"\\ud800","result":{}}'
    return "not json at all"


def _stamp(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.9:
        return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} " \
               f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}" \
               f".{rng.randint(0, 999):03d}"
    return rng.choice(["2025-02-30 10:00:00.000", "2025-13-01 10:00:00.000",
                       "2025-01-01 24:00:00.000", "2025-01-01 10:60:00.000",
                       "2025-01-01 10:00:60.500", "2025-01-01 10:00:61.000",
                       "2024-02-29 23:59:59.999", "\u0662025-01-01 10:00:00.000"])


def _channel(rng: random.Random, n: int) -> bytes:
    out: list[bytes] = []
    for k in range(n):
        pick = rng.random()
        level = rng.choice(["debug", "debug", "trace", "info"])
        head = f"{_stamp(rng)} [{level}] "
        if pick < 0.75:
            marker = rng.choice(["[editor -> server] ", "[server -> editor] ",
                                 "[Client Says] ", "[editor -> server]"])
            out.append((head + marker + _message(rng, k)).encode())
        elif pick < 0.8:
            out.append(f"{head}Starting server srv{rng.randint(0, 2)}".encode())
        elif pick < 0.84:
            out.append(b"  a continuation line of the entry above")
        elif pick < 0.88:
            out.append(b"")
        elif pick < 0.9:
            out.append(head.encode() + b"[editor -> server] {\"jsonrpc\":\"2.0\",\"id\":1,"
                       b"\"method\":\"\xff\xfe\"}")  # not UTF-8
        elif pick < 0.92:
            out.append(f'{head}Failed to parse message: "hello\\n"'.encode())
        elif pick < 0.94:
            out.append(f"{head}[server stderr] oops".encode())
        elif pick < 0.96:
            out.append(f"{head}[editor -> server] ".encode())  # nothing after the marker
        else:
            out.append(f"{head}Connection state: Running".encode())
    text = b"\n".join(out)
    return text + (b"\n" if rng.random() < 0.5 else b"")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [64, 1 << 22])
@pytest.mark.parametrize("lazy", [False, True])
def test_spans_give_the_records_rows(tmp_path, monkeypatch, seed, chunk, lazy):
    rng = random.Random(seed)
    data = _channel(rng, 400)
    monkeypatch.setattr(base, "CHUNK", chunk)
    if lazy:
        monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    for name, blob in (("out.log", data), ("out.log.gz", gzip.compress(data))):
        path = tmp_path / name
        path.write_bytes(blob)
        assert_spans_give_the_records_rows(path, "vscode")


def test_usual_lines_come_as_spans(tmp_path):
    rng = random.Random(3)
    path = tmp_path / "out.log"
    path.write_bytes(b"\n".join(
        f"2025-03-23 16:38:00.970 [debug] [editor -> server] {_message(rng, k)}".encode()
        for k in range(50)) + b"\n")
    items = list(readers.read(path, format="vscode").blocks())
    spans = [x for x in items if type(x) is _spans.Spans]
    assert sum(map(len, spans)) == 49  # the last line of a block is read as a line
    assert [r.raw for s in spans for r in s.records()] == \
        [r.raw for r in readers.read(path, format="vscode")][:49]


def test_stamps_equal_the_line_stamps():
    rng = random.Random(11)
    texts = [_stamp(rng) for _ in range(20000)]
    texts = [t for t in texts if t.isascii()]
    heads = np.frombuffer("".join(texts).encode(), dtype=np.uint8).reshape(len(texts), 23)
    ts, ok = _spans.stamps(heads, 0, 11)
    for t, got, good in zip(texts, ts.tolist(), ok.tolist(), strict=True):
        try:
            want = _logtext.local_stamp(t[:10], t[11:])
        except ValueError:
            assert not good, t
            continue
        assert good and got == want, t


@pytest.mark.parametrize("at", [0, 3, 5, 9, 11, 15, 18, 22])
@pytest.mark.parametrize("level", ["debug", "trace"])
def test_a_head_with_a_letter_for_a_digit_is_not_usual(tmp_path, at, level):
    """Among usual lines, one whose stamp has a letter where a digit goes (the rest of
    its head usual) is no entry of its own (the line by line code: a continuation of
    the entry above), not a span; the rows are the records' rows."""
    stamp = "2025-03-23 16:38:00.970"
    odd = stamp[:at] + "x" + stamp[at + 1:]
    lines = [f"{odd if k == 5 else stamp} [{level}] [server -> editor] "
             f'{{"jsonrpc":"2.0","id":{k},"result":{{}}}}' for k in range(12)]
    path = tmp_path / "out.log"
    path.write_text("\n".join(lines) + "\n")
    assert_spans_give_the_records_rows(path, "vscode")
    items = list(readers.read(path, format="vscode").blocks())
    # lines 0-3 and 6-10: line 4 and its continuation, line 5, are read as lines
    assert sum(len(x) for x in items if type(x) is _spans.Spans) == 9
