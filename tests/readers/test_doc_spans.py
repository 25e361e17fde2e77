"""The document readers (HAR, Inspector, recorder) give the table their usual messages as
spans of one buffer (``readers._docspans``), made a column at a time: the rows must be
those of the reference (``table.collect`` of the records of the per-entry decoding, one
by one) in every column, on every bundled capture and wild fixture and on random
documents of every kind of entry, with the texts decoded in memory and kept in the
buffer (a large document's)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import mcp_notebook.fast as fast
from mcp_notebook import readers
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.readers import _har_load, inspector, recorder
from mcp_notebook.readers._spans import Spans
from mcp_notebook.readers._time import read_time, read_times
from mcp_notebook.table import collect
from mcp_notebook.textsources import BufferSource

from . import harkit
from .stores import assert_same_store

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("har", "inspector", "recorder")
FILES = sorted(p for p in [*(ROOT / "data").glob("*"), *(ROOT / "tests/readers/data").glob("*"),
                           *(ROOT / "../shared/fixtures/wild").glob("*/*")]
               if p.is_file() and not p.name.endswith((".md", ".source.txt"))
               and readers.sniff(p) in DOCS)


@pytest.fixture(params=["memory", "buffer"])
def kept(request, monkeypatch):
    """The texts decoded into the table (a small document) or kept in the buffer."""
    if request.param == "buffer":
        monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    return request.param


def _refuse(data: bytes):
    raise inspector.msgspec.DecodeError("refused for the test")


def _same_rows(path: Path, fmt: str) -> int:
    """Assert the table's rows (of the spans) equal the reference's: the records of the
    per-entry decoding (the typed whole-document decoding refused), one by one; returns
    how many records came as spans."""
    got = readers.read(path, format=fmt)
    items = list(got.blocks())
    new = Store.from_parts([part_of(items)])
    with pytest.MonkeyPatch.context() as mp:
        if fmt == "har":
            mp.setattr(_har_load, "decode_usual", lambda data: None)
        else:
            mp.setattr(inspector if fmt == "inspector" else recorder, "_decode_usual",
                       _refuse)
        ref = Store.from_columns(collect(readers.read(path, format=fmt)))
    assert_same_store(new, ref)
    return sum(len(x) for x in items if type(x) is Spans)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_bundled_documents(path, kept):
    _same_rows(path, readers.sniff(path))


def test_there_are_documents_of_every_kind():
    assert {readers.sniff(p) for p in FILES} == set(DOCS)


# -- random documents ------------------------------------------------------------------

def _message(rng: random.Random, k: int) -> dict:
    return rng.choice([
        {"jsonrpc": "2.0", "id": k, "method": "tools/call",
         "params": {"name": "é\u2028x", "arguments": {"n": 1.50, "big": 18446744073709551617}}},
        {"jsonrpc": "2.0", "id": f"s{k}", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": k, "progress": 0.5}},
        [{"jsonrpc": "2.0", "id": k, "method": "a"}, {"jsonrpc": "2.0", "method": "b"}],
        {"jsonrpc": "2.0", "id": k, "result": {"content": [{"type": "text", "text": "😀"}]}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad"}},
        {"not": "json-rpc"}, 7, "text",
    ])


def _stamp(rng: random.Random, k: int) -> object:
    return rng.choice([harkit.iso(k), harkit.iso(k), harkit.iso(k), None, 1750248000,
                       "2025-02-30T00:00:00.000Z", "2025-06-18T12:00:00.1Z",
                       "2025-06-18 12:00:00", "later", True, {"t": 1}])


def _inspector(rng: random.Random, n: int, unusual: bool) -> list:
    out = []
    for k in range(n):
        e: dict = {"id": str(k), "timestamp": _stamp(rng, k),
                   "direction": rng.choice(["request", "notification", "response", "", 3]),
                   "message": _message(rng, k)}
        if rng.random() < 0.7:
            e["origin"] = rng.choice(["client", "server", "server", "other", None])
        if rng.random() < 0.5:
            e["response"] = rng.choice([_message(rng, k), None])
        if rng.random() < 0.5:
            e["duration"] = rng.choice([12, 0.5, None, "3", True])
        if unusual and rng.random() < 0.1:
            e["clientError"] = rng.choice(["timeout", {"code": 1}, None])
        if unusual and rng.random() < 0.05:
            e["message"] = None
        out.append(e)
    return out


def _cassette(rng: random.Random, n: int, unusual: bool) -> dict:
    inter = []
    for k in range(n):
        it: dict = {"type": rng.choice(["jsonrpc_request", "notification", 5]),
                    "request": _message(rng, k)}
        if rng.random() < 0.7:
            it["response"] = rng.choice([_message(rng, k), None])
        for key, values in (("response_status", [200, 202, "200", None]),
                            ("latency_ms", [1.5, 0, None, [1]]),
                            ("response_is_sse", [True, False, None, 1])):
            if rng.random() < 0.6:
                it[key] = rng.choice(values)
        if unusual and rng.random() < 0.1:
            it["request"] = None
            it["http_method"] = "GET"
        inter.append(it)
    return {"version": 1, "metadata": {"recorded_at": harkit.iso(0)}, "interactions": inter}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["inspector", "recorder"])
def test_random_exports(tmp_path, kept, fmt, seed):
    rng = random.Random(seed)
    unusual = seed % 2 == 1
    doc = _inspector(rng, 300, unusual) if fmt == "inspector" else _cassette(rng, 300, unusual)
    path = tmp_path / ("export.json" if fmt == "inspector" else "cassette.json")
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=rng.random() < 0.5))
    spans = _same_rows(path, fmt)
    assert spans > 0  # the usual messages did come as spans


def _sse_body(rng: random.Random, k: int) -> str:
    blocks = []
    for j in range(rng.randint(0, 4)):
        data = json.dumps(_message(rng, k * 10 + j))
        blocks.append(rng.choice([f"data: {data}", f"event: message\ndata: {data}",
                                  f"event: note\ndata:{data}", "data: ", "data:  \u3000",
                                  f"data: {data}"]))
    body = harkit.sse(*blocks)
    return rng.choice([body, body, body, body + ": ping\n\n", "id: 1\n" + body,
                       body.replace("\n", "\r\n")])


@pytest.mark.parametrize("seed", range(6))
def test_random_streamable_hars(tmp_path, kept, seed):
    rng = random.Random(seed)
    entries = []
    for k in range(200):
        body = _message(rng, k)
        kind = rng.random()
        if kind < 0.5:
            entries.append(harkit.entry("POST", at=k, body=body, mime="text/event-stream",
                                        reply=_sse_body(rng, k), status=rng.choice(
                                            [200, 200, 400]),
                                        reply_headers={"Mcp-Session-Id": rng.choice(
                                            ["a", "b", "\u00e9"])}))
        elif kind < 0.8:
            entries.append(harkit.entry("POST", at=k + rng.random(), body=body,
                                        mime="application/json",
                                        reply=json.dumps(_message(rng, k))))
        else:
            entries.append(harkit.entry("POST", at=k, body=body, status=202,
                                        reply=rng.choice(["", "Accepted"])))
    path = harkit.write(tmp_path / "streamable.har", entries)
    assert _same_rows(path, "har") > 0


def test_read_times_equal_read_time():
    rng = random.Random(3)
    values: list[object] = []
    for _ in range(20000):
        y = rng.choice([1970, 2000, 2024, 2026, 2100])
        values.append(f"{y:04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}T"
                      f"{rng.randint(0, 25):02d}:{rng.randint(0, 60):02d}:"
                      f"{rng.randint(0, 61):02d}.{rng.randint(0, 999):03d}Z")
    values += [None, 5, 1.5, True, "x" * 24, "２025-06-18T12:00:00.100Z",
               "2025-06-18T12:00:00.1Z", "2025-06-18t12:00:00.100Z"]
    for numbers in (True, False):
        ts, problems = read_times(values, numbers)
        for k, v in enumerate(values):
            t, problem = read_time(v, numbers)
            assert (t is None and ts[k] != ts[k]) or t == ts[k], v
            assert problems.get(k) == problem, v


def test_buffer_source():
    src = BufferSource(b"ab\xc3\xa9cd\xff", np.array([0, 2, 4, 0]), np.array([2, 2, 3, 0]),
                       overrides={3: "kept"})
    assert src.texts(np.array([1, 0, 3, 2])) == ["é", "ab", "kept", "cd\udcff"]
    assert [src.text(k) for k in range(4)] == ["ab", "é", "cd\udcff", "kept"]


@pytest.mark.parametrize("seed", range(12))
def test_read_times_of_texts_of_24_characters(seed):
    """Values all str of 24 characters (the rows of their bytes joined: every stamp of a
    HAR, say), usual or not, one not ASCII or of another length among them or not."""
    rng = random.Random(seed)
    values: list[object] = []
    for _ in range(3000):
        y = rng.choice([1, 1970, 2000, 2024, 2026, 2100, 9999])
        values.append(f"{y:04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}T"
                      f"{rng.randint(0, 25):02d}:{rng.randint(0, 60):02d}:"
                      f"{rng.randint(0, 61):02d}.{rng.randint(0, 999):03d}Z")
    values += ["x" * 24, "2025-06-18T12:00:00.100+", "2025-06-18 12:00:00.100Z",
               "0000-01-01T00:00:00.000Z", "2025-0a-18T12:00:00.100Z"]
    odd = rng.choice([(), ("２025-06-18T12:00:00.100Z",), ("2025-06-18T12:00:00.1000Z",),
                      ("2025-06-18T12:00:00Z",),  # lengths that sum to 24 a value:
                      ("2025-06-18T12:00:00.1000Z", "2025-06-18T12:00:00.10Z"),
                      ("2025-06-18T12:00:00.100Z" * 2, "")])
    for v in odd:
        values.insert(rng.randrange(len(values)), v)
    ts, problems = read_times(values, False)
    for k, v in enumerate(values):
        t, problem = read_time(v, False)
        assert (t is None and ts[k] != ts[k]) or t == ts[k], v
        assert problems.get(k) == problem, v


@pytest.mark.parametrize("seed", range(8))
def test_columns_extras_as_a_list_as_by_record(seed, monkeypatch):
    """Every record's extra as a list (some empty) gives the runs the extras of the same
    records by number, in any order, with other records among them."""
    from mcp_notebook.readers import _docspans
    from mcp_notebook.readers._docspans import Columns
    from mcp_notebook.readers.base import Record

    monkeypatch.setattr(_docspans, "RUN", 7)  # several runs
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    extras = [rng.choice([{}, {"http": "POST"}, {"http": "GET", "status": 200}])
              for _ in range(n)]
    ends = np.arange(1, n + 1, dtype=np.int64) * 2
    z = np.zeros(n, dtype=np.int64)

    def cols(ex):
        return Columns(b"{}" * n, ends - 2, ends, np.zeros(n), z.astype(np.int8), z, ("s",),
                       z, ("http",), [f"l{k}" for k in range(n)], ex)

    at = np.arange(n, dtype=np.int64)
    others = {}
    for k in rng.sample(range(n), rng.randint(0, n // 3)):
        at[k] = -1
        others[k] = Record(raw="x", kind="log")
    order = np.array(rng.sample(range(n), n), dtype=np.int64)
    by_list = list(cols(extras).blocks("f", at, others or None, order))
    by_record = list(cols({k: e for k, e in enumerate(extras) if e}).blocks(
        "f", at, others or None, order))
    assert len(by_list) == len(by_record)
    for a, b in zip(by_list, by_record, strict=True):
        assert type(a) is type(b)
        if isinstance(a, Spans):
            assert a.extras == b.extras and a.labels == b.labels
            assert a.starts.tolist() == b.starts.tolist()
        else:
            assert a is b
