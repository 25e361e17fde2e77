"""The C pass over the usual Inspector export and cassette (``_docscan``, ``csrc/docscan.h``)
compacts the document as msgspec does and gives the frames of the typed decoding's column
path; it hands every other document to that compaction and decoding."""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import numpy as np
import pandas.testing as pdt
import pytest

import mcp_notebook as mn
from helpers import need_native
from mcp_notebook.readers import _docscan, _jsondoc, inspector, recorder
from mcp_notebook.readers._docspans import DocLabels

from .test_jsondoc_places import _usual_cassette, _usual_export

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}
REPLY = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
NOTE = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1}}


def _entry(**over) -> dict:
    e = {"id": "e0", "timestamp": "2026-01-01T00:00:00.250Z", "direction": "request",
         "origin": "client", "message": CALL, "response": REPLY, "duration": 12}
    e.update(over)
    return {k: v for k, v in e.items() if v is not _GONE}


def _interaction(**over) -> dict:
    it = {"type": "jsonrpc_request", "request": CALL, "response": REPLY,
          "response_is_sse": False, "response_status": 200, "latency_ms": 3.25,
          "http_method": "POST", "http_path": "/mcp"}
    it.update(over)
    return {k: v for k, v in it.items() if v is not _GONE}


_GONE = object()  # a member left out


def _export(*entries: dict) -> bytes:
    plain = [_entry(id=f"e{i}", timestamp=f"2026-01-01T00:00:{i:02d}.000Z")
             for i in range(3)]
    return json.dumps([*plain, *entries], indent=2).encode()


def _cassette(*its: dict, **top) -> bytes:
    doc = {"version": "1.0", "metadata": {"recorded_at": "2026-01-01T00:00:00Z"},
           "interactions": [_interaction(), _interaction(response=None,
                                                         response_status=202), *its]}
    doc.update(top)
    return json.dumps(doc, indent=2).encode()


# (name, document, whether the C pass takes it)
EXPORTS = [
    ("usual", _export(_entry(), _entry(message=NOTE, response=_GONE, duration=_GONE)), True),
    ("no response, null response", _export(_entry(response=None), _entry(response=_GONE)),
     True),
    ("message a string", _export(_entry(message="not an object")), True),
    ("escapes and pairs in messages", _export(_entry(message={
        "jsonrpc": "2.0", "method": 'q"\\\u00e9\U0001f680\n', "id": 2})), True),
    ("odd stamps", _export(*(_entry(timestamp=t) for t in [
        "2026-02-30T00:00:00.000Z", "2024-02-29T23:59:60.999Z", "2023-02-29T00:00:00.000Z",
        "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2026-01-01T24:00:00.000Z",
        "2026-01-01T00:60:00.000Z", "2026-01-01T00:00:00.1Z", "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00.000+02:00", "soon", "", 7, 1.5, True, None, _GONE])), True),
    ("odd durations", _export(*(_entry(duration=d) for d in [
        1.5, -0.0, 0, 123456789012345, "12", True, False, None, _GONE, 0.1])), True),
    ("odd origins and kinds", _export(*(_entry(origin=o, direction=k) for o, k in [
        ("server", "response"), ("browser", ""), (5, 3), (None, None), (_GONE, _GONE),
        ("client", "notification"), ("server", True)])), True),
    ("a null client error", _export(_entry(clientError=None)), True),
    ("an unknown member twice", _export(_entry(extra=1) | {"id": "x"}), True),
    ("unknown members of any kind", _export(_entry(extra={"a": ["\u00e9", "@"]})).replace(
        b'"@"', b"1e400"), True),
    ("a client error", _export(_entry(clientError={"message": "timeout"})), False),
    ("no message", _export(_entry(message=None)), False),
    ("message left out", _export(_entry(message=_GONE)), False),
    ("a stamp with an escape", _export(_entry(timestamp="2026\\u002d01")), False),
    ("a stamp not ASCII", _export(_entry(timestamp="2026-01-01T00:00:00.000Z\u00e9")), False),
    ("a stamp that is an object", _export(_entry(timestamp={"t": 1})), False),
    ("a duration with an exponent", _export(_entry(duration=1e300)), False),
    ("a long duration", _export(_entry(duration=12345678901234567890)), False),
    ("a kind not ASCII", _export(_entry(direction="r\u00e9quest")), False),
    ("an origin list", _export(_entry(origin=["client"])), False),
    ("too many kinds", _export(*(_entry(direction=f"k{i}") for i in range(17))), False),
    ("an entry not an object", _export() [:-2] + b", 5]", False),
    ("empty", b"[]", False),
    ("not an array", b'{"message": {}}', False),
]

CASSETTES = [
    ("usual", _cassette(), True),
    ("members missing or null", _cassette(*(_interaction(**{k: v}) for k in (
        "response_status", "latency_ms", "response_is_sse") for v in (None, _GONE))), True),
    ("sse and numbers", _cassette(_interaction(response_is_sse=True, latency_ms=7),
                                  _interaction(latency_ms=-0.0, response_status=-1)), True),
    ("all three missing", _cassette(_interaction(response_status=_GONE, latency_ms=None,
                                                 response_is_sse=_GONE)), True),
    ("unknown members, metadata of any kind", _cassette(
        _interaction(extra={"x": "\u00e9"}), metadata={"a": ["\u00e9", "@"]}, other=[1]
    ).replace(b'"@"', b"1e400"), True),
    ("odd type, method and path", _cassette(_interaction(type=None, http_method=5,
                                                         http_path=True)), True),
    ("a status that is a text", _cassette(_interaction(response_status="200")), False),
    ("a status that is a float", _cassette(_interaction(response_status=200.0)), False),
    ("a latency with an exponent", _cassette(_interaction(latency_ms=1e300)), False),
    ("an sse flag that is a number", _cassette(_interaction(response_is_sse=1)), False),
    ("no request", _cassette(_interaction(request=None)), False),
    ("request left out", _cassette(_interaction(request=_GONE)), False),
    ("a path with an escape", _cassette(_interaction(http_path="/m\\u0063p")), False),
    ("a path not ASCII", _cassette(_interaction(http_path="/caf\u00e9")), False),
    ("a type that is an object", _cassette(_interaction(type={"a": 1})), False),
    ("no interactions", json.dumps({"version": "1.0", "metadata": {}}).encode(), False),
    ("empty interactions", json.dumps({"interactions": []}).encode(), False),
    ("not an object", b"[1]", False),
]


def _escaped_names(doc: bytes, name: bytes) -> bytes:
    """``doc`` with one member name spelled with an escape."""
    return doc.replace(b'"' + name + b'"', b'"' + name[:-1] + b"\\u00" +
                       f"{name[-1]:02x}".encode() + b'"', 1)


EXPORTS += [
    ("a member name with an escape", _escaped_names(_export(), b"timestamp"), False),
    ("a known member twice", _export()[:-2] + b',{"message":{},"origin":"client",'
                                             b'"origin":"server"}]', False),
    ("not UTF-8 outside what is decoded", _export(_entry(extra="@")).replace(
        b'"@"', b'"\xff"'), True),
]
_DEEP: object = 1
for _ in range(70):
    _DEEP = [_DEEP]
EXPORTS += [
    ("a message deeper than 64", _export(_entry(message={"d": _DEEP})), False),
    ("a byte order mark", b"\xef\xbb\xbf" + _export(), False),
    ("something after the array", _export() + b" x", False),
    ("cut inside an entry", _export()[:-40], False),
    ("blanks after the array", _export() + b" \r\n\t", True),
]
CASSETTES += [
    ("a member name with an escape", _escaped_names(_cassette(), b"latency_ms"), False),
    ("interactions twice", _cassette()[:-1] + b', "interactions": []}', False),
    ("a status twice", _cassette()[:-3] + b', "response_status": 1}]}', False),
    ("not UTF-8 in the metadata", _cassette(metadata="@").replace(b'"@"', b'"\xff"'), True),
]


def _load(path: Path, fmt: str, monkeypatch, fast: bool) -> mn.Trace:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(_docscan, "_scanner", lambda name: None)
        return mn.load(path, format=fmt, progress=False)


def _same(path: Path, fmt: str, monkeypatch) -> int:
    """The frames, pairs and findings with and without the C pass are equal; how many
    frames."""
    a = _load(path, fmt, monkeypatch, True)
    b = _load(path, fmt, monkeypatch, False)
    for x, y in ((a.frames, b.frames), (a.pairs, b.pairs), (a.violations, b.violations)):
        pdt.assert_frame_equal(x, y)
    return len(a.frames)


def _taken(path: Path, fmt: str) -> bool:
    scan = _docscan.inspector_columns if fmt == "inspector" else _docscan.recorder_columns
    return scan(path, "s", "n") is not None


@pytest.mark.parametrize(("name", "doc", "taken"), EXPORTS, ids=[c[0] for c in EXPORTS])
def test_exports_give_the_frames_of_the_typed_decoding(name, doc, taken, tmp_path,
                                                       monkeypatch):
    need_native()
    path = tmp_path / "inspector-protocol-x.json"
    path.write_bytes(doc)
    assert _taken(path, "inspector") is taken
    assert _same(path, "inspector", monkeypatch) or name == "empty"


@pytest.mark.parametrize(("name", "doc", "taken"), CASSETTES, ids=[c[0] for c in CASSETTES])
def test_cassettes_give_the_frames_of_the_typed_decoding(name, doc, taken, tmp_path,
                                                         monkeypatch):
    need_native()
    path = tmp_path / "cassette.json"
    path.write_bytes(doc)
    assert _taken(path, "recorder") is taken
    assert _same(path, "recorder", monkeypatch) or name in ("empty interactions",
                                                            "interactions twice")


@pytest.mark.parametrize("seed", range(4))
def test_random_documents_give_the_frames_of_the_typed_decoding(seed, tmp_path,
                                                                monkeypatch):
    need_native()
    rng = random.Random(seed)
    a, b = tmp_path / "inspector-protocol-r.json", tmp_path / "cassette.json"
    a.write_text(json.dumps(_usual_export(rng, rng.randint(1, 300), seed % 2 == 1),
                            indent=2, ensure_ascii=seed < 2))
    b.write_text(json.dumps(_usual_cassette(rng, rng.randint(1, 300), seed % 2 == 1),
                            indent=2))
    for path, fmt in ((a, "inspector"), (b, "recorder")):
        # the odd exports hold lists as kinds: the typed decoding's; the others the C pass's
        assert _taken(path, fmt) is not (fmt == "inspector" and b'"request"\n' in
                                         path.read_bytes())
        assert _same(path, fmt, monkeypatch)


def test_the_columns_are_those_of_the_typed_column_path(tmp_path):
    """Beyond the frames: the very columns the two paths give the table."""
    need_native()
    rng = random.Random(11)
    path = tmp_path / "inspector-protocol-c.json"
    path.write_text(json.dumps(_usual_export(rng, 200, False), indent=2))
    usual, flat = _jsondoc.compacted(path, inspector._decode_usual)
    fast = _docscan.inspector_columns(path, "s", "n")
    typed = inspector._columns(usual, flat, "s", "n")
    assert fast is not None and typed is not None
    for key in ("starts", "ends", "ts", "direction", "session_of", "stream_of"):
        a, b = getattr(fast, key), getattr(typed, key)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), key
    assert (fast.labels, fast.extras, fast.sessions, fast.streams) == (
        typed.labels, typed.extras, typed.sessions, typed.streams)
    assert fast.buf == flat  # the places are in the compacted export itself

    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(_usual_cassette(rng, 200, True), indent=2))
    cassette, flat = _jsondoc.compacted(path, recorder._decode_usual)
    fast = _docscan.recorder_columns(path, "s", "n")
    typed = recorder._columns(cassette.interactions, flat, "s", "n")
    assert fast is not None
    for key in ("starts", "ends", "ts", "direction", "session_of", "stream_of"):
        a, b = getattr(fast, key), getattr(typed, key)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), key
    assert (fast.labels, fast.extras, fast.streams) == (typed.labels, typed.extras,
                                                        typed.streams)
    assert fast.buf == flat
    # the values keep their JSON types (an integer latency an int, a flag a bool)
    assert {type(v) for e in fast.extras.values() for v in e.values()} <= {int, float, bool}


def test_usual_stamps_are_read_as_read_times_reads_them(tmp_path):
    """The C pass's stamps are the doubles of ``_time.read_times`` (random instants)."""
    need_native()
    from mcp_notebook.readers._time import read_times

    rng = random.Random(2)
    stamps = [f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
              f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 60):02d}."
              f"{rng.randint(0, 999):03d}Z" for _ in range(2000)]
    flat = msgspec.json.encode([{"message": {}, "timestamp": t} for t in stamps])
    got = _docscan._scanner("inspector_doc")(flat, False)
    want, problems = read_times(stamps, numbers=False)
    assert not problems
    assert np.frombuffer(got[5], dtype=np.float64).tolist() == want.tolist()
    assert set(np.frombuffer(got[7], dtype=np.int8).tolist()) == {1}  # all read in C


def test_without_the_extension_the_readers_take_the_typed_path(tmp_path, monkeypatch):
    from mcp_notebook.engine import native

    path = tmp_path / "cassette.json"
    path.write_bytes(_cassette())
    monkeypatch.setattr(native, "native", None)
    assert _docscan.recorder_columns(path, "s", "n") is None
    assert len(mn.load(path, format="recorder", progress=False).frames) == 3


def _blanks(rng: random.Random, text: str) -> str:
    """``text`` (JSON) with random blanks (space, tab, CR, LF) between its tokens."""
    out, inside, escaped = [], False, False
    for ch in text:
        if not inside and ch in "[]{},:" and rng.random() < 0.5:
            out.append(rng.choice([" ", "\t", "\r\n", "\n  "]))
        out.append(ch)
        if inside:
            inside = escaped or ch != '"'
            escaped = not escaped and ch == "\\"
        elif ch == '"':
            inside = True
        if not inside and ch in "[]{},:" and rng.random() < 0.5:
            out.append(rng.choice([" ", "\t", "\r\n", "\n  "]))
    return "".join(out)


@pytest.mark.parametrize("seed", range(6))
def test_the_pass_compacts_as_msgspec_does(seed):
    """The compacted document is msgspec.json.format's, byte for byte (strings and numbers
    as written: escapes, pairs, exponents, not UTF-8 inside unknown members)."""
    need_native()
    rng = random.Random(seed)
    words = ["a", 'q"q', "b\\s", "caf\u00e9", "\U0001f680", "1.50", "", "\\/", "\x7f", "@@"]

    def value(depth: int) -> object:
        r = rng.random()
        if depth > 4 or r < 0.3:
            return rng.choice([rng.choice(words), rng.randint(-10**20, 10**20),
                               rng.random() * 10 ** rng.randint(-30, 30), True, None])
        if r < 0.6:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(words): value(depth + 1) for _ in range(rng.randint(0, 4))}

    entries = [_entry(id=value(0), message={"m": value(1)},
                      response=value(1) or None)
               for _ in range(30)]
    its = [_interaction(request=[value(1)], response=value(1), extra=value(0))
           for _ in range(30)]
    for doc, name in ((entries, "inspector_doc"), ({"metadata": value(0), "interactions": its,
                                                    "more": value(0)}, "recorder_doc")):
        text = _blanks(rng, json.dumps(doc, ensure_ascii=rng.random() < 0.5))
        data = text.encode()
        data = data.replace(b'"@@"', b'"\xff"')  # not UTF-8: copied as it is
        got = _docscan._scanner(name)(data, False)
        assert got is not None, name
        assert got[0] == msgspec.json.format(data, indent=-1)


def test_a_mapped_file_and_a_compressed_one_give_the_same(tmp_path, monkeypatch):
    """Through a map of the file (its pages let go behind the pass) or read whole from a
    compressed file: the same frames, those of the typed decoding."""
    import gzip

    need_native()
    rng = random.Random(4)
    data = json.dumps(_usual_export(rng, 3000, False), indent=2).encode()
    plain, packed = tmp_path / "inspector-protocol-a.json", tmp_path / "inspector-protocol-b.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    assert _taken(plain, "inspector") and _taken(packed, "inspector")
    assert _same(plain, "inspector", monkeypatch) == _same(packed, "inspector", monkeypatch)
    a = _load(plain, "inspector", monkeypatch, True).frames
    b = _load(packed, "inspector", monkeypatch, True).frames
    assert a["raw"].astype(str).tolist() == b["raw"].astype(str).tolist()
    # the pass lets the map's pages go 64 MB at a time: a file larger than that
    big = tmp_path / "inspector-protocol-big.json"
    entry = _entry(message={**CALL, "params": {"pad": "x" * 4000}})
    big.write_bytes(json.dumps([entry] * 20000, indent=1).encode())
    assert big.stat().st_size > 70 << 20
    assert _same(big, "inspector", monkeypatch) == 40000


def test_labels_are_those_of_the_f_strings():
    # the labels the C pass's records take (DocLabels.of_pairs, made when asked)
    answered = np.array([True, False, False, True, True], dtype=bool)
    for prefix in ("x.json#entry", "caf\u00e9 \U0001f680.json#interaction", ""):
        want = []
        for i, a in enumerate(answered.tolist()):
            want += [f"{prefix}{i}"] + ([f"{prefix}{i}/response"] if a else [])
        assert DocLabels.of_pairs(prefix, answered).tolist() == want
    assert DocLabels.of_pairs("p", np.zeros(0, dtype=bool)).tolist() == []
