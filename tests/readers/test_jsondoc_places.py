"""The compacted document of an export or a cassette, read through a map of the file, and
its messages' texts as places in it (``_jsondoc.compacted``, ``_jsondoc.joined``)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import msgspec
import numpy as np
import pytest

import mcp_notebook as mn
from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.readers import _jsondoc, inspector, recorder

from .test_typed_docs import _generic, _records

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = sorted(ROOT.glob("tests/readers/data/inspector-protocol-*.json"))
CASSETTES = sorted(p for p in [*ROOT.glob("data/*.json"), *ROOT.glob("tests/readers/data/*"),
                               *ROOT.glob("../shared/fixtures/wild/*/*")]
                   if p.is_file() and p.suffix == ".json"
                   and b'"interactions"' in p.read_bytes()[:65536])


def _doc(rng: random.Random, n: int) -> bytes:
    """A pretty-printed JSON array of ``n`` random values (strings with escapes, numbers
    as written, nested objects)."""
    words = ["a", 'q"q', "b\\s", "caf\u00e9", "\U0001f680", "1.50", ""]
    out = []
    for _ in range(n):
        v = {"w": rng.choice(words), "n": rng.randint(-10**20, 10**20),
             "x": [rng.random(), {"k": rng.choice(words)}][:rng.randint(0, 2)]}
        out.append(v if rng.random() < 0.8 else rng.choice(words))
    return json.dumps(out, indent=2, ensure_ascii=rng.random() < 0.5).encode()


def test_offsets_are_the_places_of_raw_values_in_their_document():
    need_native()
    flat = msgspec.json.format(_doc(random.Random(3), 50), indent=-1)
    raws = msgspec.json.decode(flat, type=list[msgspec.Raw])
    got = np.frombuffer(native.native.offsets(flat, raws), dtype=np.int64).tolist()
    assert [flat[a:a + len(r)] for a, r in zip(got, raws, strict=True)] == \
        [bytes(r) for r in raws]
    assert got == sorted(got) and got[0] == 1  # after the array's "["
    # a buffer that is not a slice of the document: -1
    assert np.frombuffer(native.native.offsets(flat, [b"[1]", bytes(raws[0])]),
                         dtype=np.int64).tolist() == [-1, -1]
    with pytest.raises(TypeError):
        native.native.offsets(flat, [1])


@pytest.mark.parametrize("seed", range(5))
def test_joined_gives_the_texts_with_and_without_the_extension(seed, monkeypatch):
    rng = random.Random(seed)
    flat = msgspec.json.format(_doc(rng, rng.randint(0, 40)), indent=-1)
    raws = msgspec.json.decode(flat, type=list[msgspec.Raw])
    rng.shuffle(raws)  # any order, as the Inspector's time order
    want = [bytes(r) for r in raws]

    def texts() -> list[bytes]:
        buf, starts, ends = _jsondoc.joined(flat, raws)
        assert starts.dtype == ends.dtype == np.int64
        return [bytes(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]

    if native.native is not None:
        buf, _, _ = _jsondoc.joined(flat, raws)
        assert buf is flat  # no copy
        assert texts() == want
    monkeypatch.setattr(native, "native", None)
    assert texts() == want


def test_compacted_reads_a_plain_a_compressed_and_an_empty_file_alike(tmp_path):
    data = _doc(random.Random(9), 30)
    plain, packed, empty = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    empty.write_bytes(b"")
    decode = msgspec.json.Decoder(list[msgspec.Raw]).decode
    want = msgspec.json.format(data, indent=-1)
    for path in (plain, packed):
        value, flat = _jsondoc.compacted(path, decode)
        assert flat == want and [bytes(r) for r in value] == [bytes(r) for r in decode(want)]
    assert _jsondoc.compacted(empty, decode) == (None, b"")  # refused: the file's bytes
    plain.write_bytes(data[:-5])  # cut: refused, the file's bytes for the per-item path
    assert _jsondoc.compacted(plain, decode) == (None, data[:-5])


def _usual_export(rng: random.Random, n: int, odd: bool) -> list[dict]:
    """An export whose every entry has a message and no client error (read a column at a
    time): requests with and without a response and a duration, notifications (``odd``:
    some times that cannot be read, some kinds that are not texts)."""
    out = []
    for i in range(n):
        call = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": rng.choice(["a", 'q"q', "caf\u00e9"]), "n": 1.50}}
        e = {"id": str(i), "timestamp": f"2026-01-01T00:00:{i % 60:02d}.{i % 1000:03d}Z",
             "direction": "request", "origin": rng.choice(["client", "server"]),
             "message": call}
        if rng.random() < 0.7:
            e["response"] = {"jsonrpc": "2.0", "id": i, "result": {"x": [i, "\U0001f680"]}}
            if rng.random() < 0.8:
                e["duration"] = rng.randint(0, 900)
        if rng.random() < 0.2:
            e = {**e, "direction": "notification",
                 "message": {"jsonrpc": "2.0", "method": "notifications/progress"}}
            e.pop("response", None)
        if odd and rng.random() < 0.2:
            e[rng.choice(["timestamp", "direction"])] = rng.choice(
                ["2026-02-30T00:00:00.000Z", "soon", 7, None, "", ["request"], True])
        out.append(e)
    return out


def _usual_cassette(rng: random.Random, n: int, some_missing: bool) -> dict:
    """A cassette whose every interaction has a request (``some_missing``: some without
    a status, a latency or the SSE flag)."""
    its = []
    for i in range(n):
        it = {"type": "jsonrpc_request", "request": {"jsonrpc": "2.0", "id": i,
                                                     "method": "tools/list"},
              "response_status": 200, "latency_ms": i, "response_is_sse": rng.random() < 0.5}
        if some_missing and rng.random() < 0.3:  # a member not there (or null)
            key = rng.choice(["response_status", "latency_ms", "response_is_sse"])
            if rng.random() < 0.5:
                it[key] = None
            else:
                del it[key]
        if rng.random() < 0.8:
            it["response"] = {"jsonrpc": "2.0", "id": i, "result": {"tools": []}}
        its.append(it)
    return {"version": 1, "metadata": {"recorded_at": "2026-01-01T00:00:00Z"},
            "interactions": its}


def _made(tmp_path: Path) -> list[tuple[Path, str]]:
    rng = random.Random(5)
    out = []
    for k in range(3):
        a, b = tmp_path / f"inspector-protocol-{k}.json", tmp_path / f"cassette-{k}.json"
        a.write_text(json.dumps(_usual_export(rng, 40 * k + 3, k == 2), indent=2))
        b.write_text(json.dumps(_usual_cassette(rng, 30 * k + 2, k == 2), indent=2))
        out += [(a, "inspector"), (b, "recorder")]
    return out


@pytest.mark.parametrize("which", [*EXPORTS, *CASSETTES, *range(6)],
                         ids=lambda p: p.name if isinstance(p, Path) else f"made{p}")
def test_frames_are_the_same_with_the_places_and_the_joined_texts(which, tmp_path,
                                                                   monkeypatch):
    if isinstance(which, int):
        path, fmt = _made(tmp_path)[which]
    else:
        path, fmt = which, "recorder" if which in CASSETTES else "inspector"
    first = mn.load(path, format=fmt, progress=False)

    # as without the C extension: no places, the texts joined in record order
    monkeypatch.setattr(_jsondoc, "places", lambda flat, raws: None)
    monkeypatch.setattr(recorder, "places", lambda flat, raws: None)
    again = mn.load(path, format=fmt, progress=False)
    assert first.frames["raw"].astype(str).tolist() == again.frames["raw"].astype(str).tolist()
    for a, b in ((first.frames, again.frames), (first.pairs, again.pairs),
                 (first.violations, again.violations)):
        assert a.drop(columns=["raw"], errors="ignore").equals(
            b.drop(columns=["raw"], errors="ignore"))
    assert len(first.frames)


def test_bundled_documents_are_there():
    assert EXPORTS and CASSETTES


@pytest.mark.parametrize("which", range(6), ids=lambda k: f"made{k}")
def test_made_documents_give_the_records_of_the_per_entry_path(which, tmp_path, monkeypatch):
    """The column-at-a-time records (every interaction or entry usual) are those of the
    reference, the per-item decoding."""
    path, fmt = _made(tmp_path)[which]
    module = recorder if fmt == "recorder" else inspector
    typed = _records(path, module)
    _generic(monkeypatch, module)
    assert typed == _records(path, module)
    assert typed
