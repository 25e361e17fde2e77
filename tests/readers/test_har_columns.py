"""A usual Streamable HTTP HAR is read a column at a time (``readers._har_columns``): the
table's rows must be those of the entry-by-entry path (the records of ``run``, one by one)
in every column, on random usual HARs that take the column path, and every HAR the
column path does not take (each way of not being usual) must be handed to the entry-by-
entry path whole, with the same rows."""

from __future__ import annotations

import gzip
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas.testing as pdt
import pytest
from oracle.pipeline import materialised

import mcp_notebook as mn
import mcp_notebook.fast as fast
from mcp_notebook import readers
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.readers import _har_columns, _har_reader, _har_texts, _sse, har
from mcp_notebook.readers._spans import Spans
from mcp_notebook.table import collect

from . import harkit
from .stores import assert_same_store


@pytest.fixture(params=["memory", "buffer"])
def kept(request, monkeypatch):
    """The texts decoded into the table (a small document) or kept in the buffer."""
    if request.param == "buffer":
        monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    return request.param


@pytest.fixture(params=["C pass", "C", "Python"])
def texts(request, monkeypatch):
    """The document read by the C extension's one pass (``har_scan``), or decoded by
    msgspec with the bodies unescaped and the reply streams split by the C extension, or
    decoded to strings by msgspec and split with numpy."""
    if request.param == "Python":
        monkeypatch.setattr(_har_texts, "_native_fn", lambda name: None)
    else:  # the extension is built here
        assert _har_texts._native_fn("json_texts") is not None
        assert _har_texts._native_fn("sse_events") is not None
        assert _har_texts._native_fn("har_scan") is not None
        if request.param == "C":
            native_fn = _har_texts._native_fn
            monkeypatch.setattr(_har_texts, "_native_fn",
                                lambda name: None if name == "har_scan" else native_fn(name))
    return request.param


def _took_columns(path: Path, session: str | None = None) -> bool:
    """Whether the column path takes the HAR, with the reader reading the entries it does
    not read as columns (as ``blocks()`` calls it)."""
    data = path.read_bytes()
    return _har_columns.columns(data, path.name, session or path.name, har._stateless,
                                har._escaped, har._session_from_url,
                                har._Reader(path, session)) is not None


def _same_rows(path: Path, session: str | None = None) -> int:
    """Assert the rows of ``blocks()`` (the table's way) equal those of the records of
    the entry-by-entry path, and the records of ``read()`` equal those of that path with
    the column path refused; returns how many records came as spans."""
    got = readers.read(path, format="har", session=session)
    items = list(got.blocks())
    new = Store.from_parts([part_of(items)])
    ref = Store.from_columns(collect(readers.read(path, format="har", session=session)))
    assert_same_store(new, ref)
    with pytest.MonkeyPatch.context() as mp:  # the blocks of the entry-by-entry path
        mp.setattr(_har_reader, "_columns", lambda *a: None)
        old = Store.from_parts([part_of(list(readers.read(path, format="har",
                                                          session=session).blocks()))])
    assert_same_store(new, old)
    return sum(len(x) for x in items if type(x) is Spans)


_TEXTS = ["plain", "é\u2028x", "tab\there", 'quote " and \\ back', "😀 pair", "line\nbreak",
          "/slash", "\u0001\u001f control", "中文", "\b\f\r"]


def _message(rng: random.Random, k: int) -> dict | list:
    t = rng.choice(_TEXTS)
    return rng.choice([
        {"jsonrpc": "2.0", "id": k, "method": "tools/call",
         "params": {"name": t, "arguments": {"n": 1.50, "big": 18446744073709551617}}},
        {"jsonrpc": "2.0", "id": f"s{k}", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": k, "progress": 0.5, "message": t}},
        [{"jsonrpc": "2.0", "id": k, "method": "a"}, {"jsonrpc": "2.0", "method": "b"}],
        {"jsonrpc": "2.0", "id": k, "result": {"content": [{"type": "text", "text": t}]}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": t}},
        {"not": "json-rpc"},
    ])


def _body(rng: random.Random, k: int) -> str:
    text = json.dumps(_message(rng, k), ensure_ascii=rng.random() < 0.3)
    return rng.choice([text, text, text, " \n" + text, text + "\n"])


def _sse_body(rng: random.Random, k: int) -> str:
    blocks = []
    for j in range(rng.randint(1, 4)):
        data = json.dumps(_message(rng, k * 10 + j), ensure_ascii=False)
        blocks.append(rng.choice([f"data: {data}", f"event: message\ndata: {data}",
                                  f"event: note\ndata:{data}", "data: ", "data:  \u3000",
                                  f"data: {data}", "event:\ndata: []", "data: x y"]))
    return harkit.sse(*blocks)


def _usual_entry(rng: random.Random, k: int) -> dict:
    """A POST of a JSON body, as the column path reads it."""
    headers = rng.choice([{"Mcp-Session-Id": "a"}, {"mcp-session-id": "b"},
                          {"Mcp-Session-Id": "\u00e9", "MCP-Protocol-Version": "2025-06-18"},
                          {}, {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                               "Mcp-Name": "x"},
                          {"Mcp-Session-Id": "", "Mcp-Method": "ping"}])
    url = rng.choice([harkit.URL, harkit.URL + "?sessionId=q1", "http://[::1"])
    reply_headers = rng.choice([{}, {"Mcp-Session-Id": "r"}])
    at = k + rng.choice([0, 0.5, 0.0004])
    kind = rng.random()
    if kind < 0.4:
        e = harkit.entry("POST", url, at=at, body=_body(rng, k), headers=headers,
                         mime="text/event-stream", reply=_sse_body(rng, k),
                         reply_headers=reply_headers)
    elif kind < 0.75:
        e = harkit.entry("POST", url, at=at, body=_body(rng, k), headers=headers,
                         mime=rng.choice(["application/json", ""]),
                         reply=json.dumps(_message(rng, k)), reply_headers=reply_headers,
                         status=rng.choice([200, 200, 201, 399]))
    else:
        e = harkit.entry("POST", url, at=at, body=_body(rng, k), headers=headers,
                         status=rng.choice([202, 200]),
                         reply=rng.choice(["", "Accepted", "  ", "ok" * 150, None]))
    t = e["timings"]
    choice = rng.random()
    if choice < 0.3:  # several timings: summed in order
        t.update(blocked=rng.choice([-1, 0.25, 3]), dns=rng.choice([-1, 0.1]),
                 connect=rng.choice([0, 1.7]), send=rng.choice([0, 0.3333]),
                 wait=rng.choice([12, 0.1, 0]))
    elif choice < 0.4:
        del e["timings"]
    elif choice < 0.5:
        e["time"] = rng.choice([0, None, -1, 7])
        if e["time"] is None:
            del e["time"]
    if rng.random() < 0.05:
        e["_incomplete"] = rng.choice([True, False, None])
    if rng.random() < 0.05:
        e["_proxyError"] = None
    return e


@pytest.mark.parametrize("seed", range(8))
def test_random_usual_hars_take_the_column_path(tmp_path, kept, texts, seed):
    rng = random.Random(seed)
    entries = [_usual_entry(rng, k) for k in range(150)]
    rng.shuffle(entries)  # not in time order in the file
    path = harkit.write(tmp_path / "usual.har", entries)
    assert _took_columns(path)
    assert _same_rows(path) > 0


@pytest.mark.parametrize("seed", range(3))
def test_every_session_named_by_a_header(tmp_path, texts, seed):
    """Every entry names its session by a header (the sessions coded once per distinct
    header lists): several sessions, interleaved, one named by the reply only."""
    rng = random.Random(seed)
    entries = []
    for k in range(60):
        e = _usual_entry(rng, k)
        session = rng.choice(["s1", "s2", "\u00e9", "s1"])
        if rng.random() < 0.2:
            e["response"]["headers"].append({"name": "Mcp-Session-Id", "value": "r" + session})
            e["request"]["headers"] = [h for h in e["request"]["headers"]
                                       if h["name"].lower() != "mcp-session-id"]
        else:
            e["request"]["headers"] = [h for h in e["request"]["headers"]
                                       if h["name"].lower() != "mcp-session-id"]
            e["request"]["headers"].append({"name": "Mcp-Session-Id", "value": session})
        entries.append(e)
    path = harkit.write(tmp_path / "named.har", entries)
    assert _took_columns(path)
    assert _same_rows(path) > 0


def test_a_session_named_by_the_caller(tmp_path, kept):
    entries = [harkit.entry("POST", at=k, body=harkit.js(harkit.msg(id=k, method="ping")),
                            mime="application/json",
                            reply=harkit.js(harkit.msg(id=k, result={})))
               for k in range(5)]
    path = harkit.write(tmp_path / "plain.har", entries)
    for session in (None, "mine", "bad \udc80 name"):
        assert _took_columns(path, session)
        assert _same_rows(path, session) > 0


def test_bodies_decoded_in_several_runs(tmp_path, kept, texts, monkeypatch):
    monkeypatch.setattr(_har_texts, "RUN", 7)
    rng = random.Random(99)
    path = harkit.write(tmp_path / "runs.har", [_usual_entry(rng, k) for k in range(60)])
    assert _took_columns(path)
    assert _same_rows(path) > 0


# -- what the column path hands over -----------------------------------------------------

def _base(k: int = 0) -> dict:
    return harkit.entry("POST", at=k, body=harkit.js(harkit.msg(id=k, method="ping")),
                        mime="application/json", reply=harkit.js(harkit.msg(id=k, result={})),
                        reply_headers=harkit.SID)


def _set(path: str, value: object):
    def change(e: dict) -> None:
        *keys, last = path.split(".")
        for key in keys:
            e = e[key]
        if value is _DROP:
            del e[last]
        else:
            e[last] = value
    return change


_DROP = object()


def _stream(e: dict, body: str | None) -> None:
    e["response"]["headers"] = [{"name": "Content-Type", "value": "text/event-stream"}]
    e["response"]["content"] = {"mimeType": "text/event-stream"}
    if body is not None:
        e["response"]["content"]["text"] = body


_SSE = harkit.sse("data: " + harkit.js(harkit.msg(id=0, result={})))
HANDED_OVER = {
    # an event stream the HAR does not hold: the reader marks the requests it may have
    # answered (test_har.py), entry by entry
    "a GET stream not captured": lambda e: _get_of(e, 200, "", "text/event-stream"),
    "a GET stream of no body": lambda e: _get_of(e, 200, None, "text/event-stream"),
    "no SSE body": lambda e: _stream(e, None),
    "an empty SSE body": lambda e: _stream(e, ""),
    "a body that is not JSON": _set("request.postData.text", "hello"),
    "a blank body": _set("request.postData.text", "  "),
    "a body that is null": _set("request.postData.text", None),
    "a base64 body": _set("request.postData.encoding", "base64"),
    "a truncated body": _set("request.postData._truncated", 900),
    "a proxy's note": _set("_proxyError", "connection refused"),
    "a proxy's note that is not text": _set("_proxyError", 5),
    "a status that is text": _set("response.status", "200"),
    "a status that is true": _set("response.status", True),
    "a cut exchange said otherwise": _set("_incomplete", "yes"),
    "an encoding named": _set("request.postData.encoding", "utf-8"),
    "a reply's encoding named": _set("response.content._encoding", "base64"),
    "a base64 reply": _set("response.content.encoding", "base64"),
    "a truncated reply": _set("response.content._truncated", 900),
    "a reply that is a number": _set("response.content.text", 5),
    "a time that is not a time": _set("startedDateTime", "yesterday"),
    "a time that is a number": _set("startedDateTime", 1750248000),
    "no time": _set("startedDateTime", _DROP),
    "a timing that is text": _set("timings.wait", "5"),
    "a timing that is true": _set("timings.send", True),
    "headers that are not a list": _set("request.headers", {"a": "b"}),
    "a header that is not an object": _set("request.headers", ["x"]),
    "no response": _set("response", _DROP),
    "an endpoint event": lambda e: _stream(e, "event: endpoint\ndata: /m\n\n"),
    "an SSE body with an id": lambda e: _stream(e, "id: 1\n" + _SSE),
    "an SSE body with CRLF": lambda e: _stream(e, _SSE.replace("\n", "\r\n")),
    "a blank SSE body": lambda e: _stream(e, " \n"),
    "an SSE body that is JSON": lambda e: _stream(e, "{}"),
    "a stamped event of no time": lambda e: (_stream(e, _SSE), _set(
        "response.content._sseEvents", [{"event": "message", "data": _SSE[6:-2]}])(e)),
    "an entry that is not MCP": lambda e: (_set("request.method", "GET")(e), _set(
        "request.url", "http://127.0.0.1:3001/favicon.ico")(e),
        _set("request.postData", _DROP)(e), _set("request.headers", [])(e),
        _set("response.headers", [])(e)),
}


def _stamped(e: dict, *events: dict) -> None:
    _stream(e, "".join(f"data: {x['data']}\n\n" for x in events))
    e["response"]["content"]["_sseEvents"] = list(events)


def _event(k: int, at: float | None = 2.5, **more: object) -> dict:
    x: dict[str, object] = {"event": "message", "data": harkit.js(harkit.msg(id=k, result={}))}
    if at is not None:
        x["t"] = harkit.iso(at)
    x.update(more)
    return x


def _get_of(e: dict, status: int, reply: str | None, mime: str = "") -> None:
    e["request"]["method"] = "GET"
    del e["request"]["postData"]
    e["response"]["status"] = status
    e["response"]["headers"] = [{"name": "Content-Type", "value": mime}] if mime else []
    e["response"]["content"] = {"mimeType": mime, **({} if reply is None else
                                                     {"text": reply})}


#: entries the column path leaves to the reader, one by one, among the others' columns
ONE_BY_ONE = {
    "a GET with a body": _set("request.method", "GET"),
    "a lower-case post": _set("request.method", "post"),
    "no body": _set("request.postData", _DROP),
    "an HTTP error": _set("response.status", 404),
    "a 500 with a JSON error": lambda e: (_set("response.status", 500)(e), _set(
        "response.content.text", harkit.js(harkit.msg(id=2, error={"code": -32603,
                                                                    "message": "x"})))(e)),
    "a 400 of text": lambda e: (_set("response.status", 400)(e),
                                _set("response.content.text", "Bad Request")(e)),
    "a DELETE": lambda e: (_set("request.method", "DELETE")(e),
                           _set("request.postData", _DROP)(e),
                           _set("response.content", {"mimeType": "", "text": ""})(e)),
    "a GET answered 405": lambda e: _get_of(e, 405, "Method Not Allowed", "text/plain"),
    "a GET of JSON": lambda e: _get_of(e, 200, harkit.js(harkit.msg(id=9, result={})),
                                       "application/json"),
    "stamped events, none": _set("response.content._sseEvents", []),
    "stamped events": lambda e: _stamped(e, _event(2), _event(7, 2.75, id="e1")),
    "stamped events, odd": lambda e: _stamped(
        e, _event(2, event="note"), _event(3, data=" "), _event(4, _unterminated=True)),
}


def _third_changed(path, change):
    """Four usual entries, the third changed by ``change``, written as a HAR at ``path``."""
    entries = [_base(k) for k in range(4)]
    change(entries[2])
    return harkit.write(path, entries)


@pytest.mark.parametrize("what", list(HANDED_OVER))
def test_other_hars_are_handed_over(tmp_path, texts, what):
    path = _third_changed(tmp_path / "other.har", HANDED_OVER[what])
    assert not _took_columns(path)
    _same_rows(path)


@pytest.mark.parametrize("what", list(ONE_BY_ONE))
def test_entries_read_one_by_one_among_the_columns(tmp_path, texts, kept, what):
    """A DELETE, an HTTP error, a GET of no stream, stamped events, ...: the reader reads
    that entry, the column path the others, the rows those of the entry-by-entry path."""
    path = _third_changed(tmp_path / "one.har", ONE_BY_ONE[what])
    assert _took_columns(path)
    assert _same_rows(path) >= 6


def test_a_hand_over_after_entries_read_one_by_one(tmp_path):
    """A document handed over after the reader read some of its entries (an untimed
    event) is read afresh by the entry-by-entry path: the same rows."""
    entries = [_base(k) for k in range(4)]
    _stamped(entries[1], _event(1))
    _stamped(entries[2], _event(2, None))
    path = harkit.write(tmp_path / "late.har", entries)
    assert not _took_columns(path)
    _same_rows(path)


def test_the_bundled_hars_take_the_column_path():
    """Each bundled HAR (a DELETE, stamped streams, a GET of no stream, ``Accepted``
    replies) is read a column at a time, its other entries one by one."""
    from mcp_notebook import bundled

    names = sorted(p.name for p in bundled.data_dir().glob("*.har"))
    assert names == ["demo-http.har", "demo-sse.har", "everything-http-secrets.har",
                     "everything-http.har"]
    for name in names:
        path = bundled.data_dir() / name
        assert _took_columns(path), name
        assert _same_rows(path) > 0, name


TAKEN = {
    "as made": lambda e: None,
    "an empty 202": lambda e: (_set("response.status", 202)(e),
                               _set("response.content.text", "")(e)),
    "no status": _set("response.status", _DROP),
    "a reply that is null": _set("response.content.text", None),
    "no content": _set("response.content", _DROP),
    "a cut exchange": _set("_incomplete", True),
    "a body opening with blanks": _set("request.postData.text", '\n\t [1]'),
    "no timings": _set("timings", _DROP),
    "timings of null": _set("timings.wait", None),
    "a time of whole numbers": _set("time", 3),
    "no headers": _set("request.headers", None),
    # a mimeType msgspec reads as any value (the C pass hands these over): a list is
    # looked at one by one, a number among the others
    "a mimeType of a list": lambda e: (_set("response.headers", [])(e), _set(
        "response.content.mimeType", ["application/json"])(e)),
    "a mimeType of a number": lambda e: (_set("response.headers", [])(e), _set(
        "response.content.mimeType", 5)(e)),
    "no mimeType": lambda e: (_set("response.headers", [])(e), _set(
        "response.content.mimeType", _DROP)(e)),
}


@pytest.mark.parametrize("what", list(TAKEN))
def test_the_usual_entries_take_the_column_path(tmp_path, texts, what):
    path = _third_changed(tmp_path / "base.har", TAKEN[what])
    assert _took_columns(path)
    assert _same_rows(path) >= 7


def test_documents_that_are_not_usual_hars(tmp_path):
    for i, text in enumerate(['{"log": {"entries": []}}', "[]", '{"log": 1}', "{",
                              '{"log": {"entries": [{"startedDateTime": "\xff"}]}}']):
        path = tmp_path / f"odd{i}.har"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        assert not _took_columns(path)
        _same_rows(path)


@pytest.mark.parametrize("bad", [b"p\xe9ng", b"p\\ud800ng", b"p\\udc00ng",
                                 b"\\ud83d\\ude00"])
def test_bodies_that_are_not_unicode_are_handed_over(tmp_path, texts, bad):
    """Bytes that are not UTF-8, an escaped lone surrogate (a pair is Unicode)."""
    doc = harkit.write(tmp_path / "x.har", [_base(k) for k in range(3)]).read_bytes()
    assert doc.count(b"ping") == 3
    path = tmp_path / "odd.har"
    path.write_bytes(doc.replace(b"ping", bad, 1))
    assert _took_columns(path) is (bad == b"\\ud83d\\ude00")
    _same_rows(path)


# -- the C extension's unescaping --------------------------------------------------------

def _literal(rng: random.Random) -> bytes:
    """A JSON string literal, valid or not: text, escapes of every kind, pairs, lone
    surrogates, bad escapes, control bytes, bytes that are not UTF-8."""
    parts = [b'"']
    for _ in range(rng.randint(0, 12)):
        parts.append(rng.choice([
            b"plain text ", "é中😀".encode(), b'\\"', b"\\\\", b"\\/", b"\\b\\f\\n\\r\\t",
            b"\\u00e9", b"\\u00E9", b"\\u0000", b"\\ud83d\\ude00", b"\\uD83D\\uDE00",
            b"12345678abcdefgh", b"x" * rng.randint(0, 20),
            *([b"\\ud800", b"\\udc00", b"\\ud83dx", b"\\x", b"\\u12", b"\x01", b'"', b"\xff",
               b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe4\xb8"]
              if rng.random() < 0.1 else [])]))
    parts.append(rng.choice([b'"', b'"', b'"', b'"', b"", b"\\"]))
    return b"".join(parts)


def test_json_texts_are_msgspecs_texts():
    fn = _har_texts._native_fn("json_texts")
    assert fn is not None
    rng = random.Random(5)
    bad_seen = 0
    for _ in range(300):
        items = [msgspec.Raw(_literal(rng)) for _ in range(rng.randint(0, 8))]
        want = []
        bad = None
        for k, item in enumerate(items):
            try:
                want.append(msgspec.json.decode(bytes(item), type=str).encode())
            except msgspec.DecodeError:
                bad = k
                break
        out = bytearray(b"kept")
        got = fn(items, out)
        if bad is not None:
            bad_seen += 1
            assert got == bad
            assert out == b"kept"
        else:
            ends = np.frombuffer(got, dtype=np.int64).tolist()
            assert ends == list(itertools.accumulate(map(len, want), initial=4))[1:]
            assert bytes(out) == b"kept" + b"".join(want)
    assert bad_seen > 20


_PIECES = ["event: message\n", "event:\n", "event: a:b\n", "event: note\n", "event:note\n",
           "data: {}\n", "data:x\n", "data:  two\n", "data: a:b\n", "data:\n", "\n", "\n\n",
           ": ping\n", "id: 7\n", "\r\n", "data: \r\n", "x: y\n", "data: {\"id\":1}\n\n",
           "event: message\ndata: [1]\n\n", "event: endpoint\ndata: /m\n\n", "data", "event",
           # long lines (the scan reads 16 bytes at a time): a CR or a second line at
           # any place in them
           *[f"data: {'y' * k}\r{'z' * (33 - k)}\n\n" for k in (0, 9, 15, 16, 17, 31)],
           *[f"event: {'n' * k}\r\ndata: {{}}\n\n" for k in (0, 14, 15, 16, 30)],
           *[f"data: {'y' * k}\n{'z' * (33 - k)}\n\n" for k in (0, 9, 15, 16, 17, 31)],
           "event: " + "m" * 40 + "\ndata: " + "{}" * 30 + "\n\n"]


_BLOCKS = ["data: {}\n\n", "data:[1]\n\n", "event: message\ndata: {}\n\n",
           "event:\ndata: x\n\n", "event: note\ndata:  {}\n\n", "event:n\ndata:\n\n",
           "data: é😀\n\n", "data: " + "{\"a\":1}" * 9 + "\n\n",
           "event: message\ndata: " + "[1, 2]" * 11 + "\n\n"]


def test_sse_events_are_simple_spans():
    fn = _har_texts._native_fn("sse_events")
    assert fn is not None
    rng = random.Random(11)
    taken = 0
    for _ in range(3000):
        bodies = ["".join(rng.choice(_PIECES if rng.random() < 0.15 else _BLOCKS)
                          for _ in range(rng.randint(1, 6))).encode()
                  for _ in range(rng.randint(1, 3))]
        buf = b"pad" + b"".join(bodies)
        ends = np.cumsum([3, *map(len, bodies)])
        got = fn(buf, ends[:-1].astype(np.int64), ends[1:].astype(np.int64))
        want = [_sse.simple_spans(b) for b in bodies]
        bad = next((k for k, w in enumerate(want) if w is None), None)
        if bad is not None:
            assert got == bad
            continue
        taken += 1
        rows = np.frombuffer(got[0], dtype=np.int64).reshape(-1, 6).tolist()
        assert np.frombuffer(got[1], dtype=np.int64).tolist() == [len(w) for w in want]
        expect = [(k, q, int(ends[k]) + x, int(ends[k]) + y, None if t in (None, b"message")
                   else t) for k, w in enumerate(want) for q, (x, y, t) in enumerate(w)]
        assert [(k, q, x, y, None if t0 < 0 else buf[t0:t0 + tl])
                for k, q, x, y, t0, tl in rows] == expect
    assert taken > 100


@pytest.mark.parametrize("how", ["plain", "bom", "gzip", "gzip+bom"])
def test_the_file_read_mapped_or_decompressed(tmp_path, monkeypatch, how):
    """A plain file is mapped (a byte order mark skipped), a gzip one decompressed: the
    column path reads both, with the rows of the entry-by-entry path."""
    doc = harkit.write(tmp_path / "x.har", [_base(k) for k in range(5)]).read_bytes()
    if "bom" in how:
        doc = b"\xef\xbb\xbf" + doc
    path = tmp_path / ("c.har.gz" if "gzip" in how else "c.har")
    path.write_bytes(gzip.compress(doc) if "gzip" in how else doc)
    took = []
    real = _har_reader._columns

    def spy(*args):
        took.append(real(*args) is not None)
        return real(*args)

    monkeypatch.setattr(_har_reader, "_columns", spy)
    assert _same_rows(path) == 10
    assert took[0] is True


# -- the 2024-11-05 HTTP+SSE transport: a GET stream of untimed events -------------------

def _old_transport(rng: random.Random, n: int) -> list[dict]:
    """POSTs to the endpoint a GET stream names, their answers on that stream (placed
    right after the request they answer), and server requests and notifications (placed
    in their stream's order between the answers around them)."""
    sid = rng.choice(["s1", "é2", "x y"])
    endpoint = rng.choice([f"/messages?sessionId={sid}", f"/messages/?session_id={sid}",
                           f"http://127.0.0.1:3001/messages?sessionId={sid}", "/messages"])
    post_url = "http://127.0.0.1:3001" + endpoint if endpoint.startswith("/") else endpoint
    blocks = [f"event: endpoint\ndata: {endpoint}"] if rng.random() < 0.9 else []
    entries = []
    for k in range(n):
        ident = rng.choice([k, k, str(k), k % 5])
        body = rng.choice([{"jsonrpc": "2.0", "id": ident, "method": "tools/call"},
                           {"jsonrpc": "2.0", "method": "notifications/initialized"},
                           [{"jsonrpc": "2.0", "id": ident, "method": "a"},
                            {"jsonrpc": "2.0", "id": f"b{k}", "method": "b"}],
                           _message(rng, k)])
        entries.append(harkit.entry("POST", post_url, at=1 + k + rng.random() / 2,
                                    body=json.dumps(body), status=202,
                                    reply=rng.choice(["Accepted", "", None])))
        for _ in range(rng.randint(0, 2)):
            answer = rng.choice([{"jsonrpc": "2.0", "id": ident, "result": {}},
                                 {"jsonrpc": "2.0", "id": f"b{k}", "error": {"code": 1,
                                                                            "message": "x"}},
                                 {"jsonrpc": "2.0", "method": "notifications/message"},
                                 {"jsonrpc": "2.0", "id": 900 + k, "method": "ping"},
                                 {"jsonrpc": "2.0", "id": 12345, "result": {}},
                                 _message(rng, k)])
            text = json.dumps(answer, ensure_ascii=rng.random() < 0.5)
            blocks.append(rng.choice([f"event: message\ndata: {text}", f"data: {text}",
                                      f"event: note\ndata: {text}", "data: ", "data:  "]))
    stream = harkit.entry("GET", "http://127.0.0.1:3001/sse", at=rng.choice([0, 0.5, 3]),
                          mime="text/event-stream", reply=harkit.sse(*blocks),
                          wait_ms=rng.choice([0, 2.5]))
    entries.insert(rng.choice([0, 0, 0, 1]), stream)
    return entries


_SSE_POST = "http://127.0.0.1:3001/messages?sessionId=s1"


def _post(at: float, msg: dict) -> dict:
    """A POST of the HTTP+SSE transport, answered 202 (its answer comes on the stream)."""
    return harkit.entry("POST", _SSE_POST, at=at, body=json.dumps(msg), status=202,
                        reply="Accepted")


def _ev(msg: dict) -> str:
    return f"event: message\ndata: {json.dumps(msg)}"


def _both_paths(path: Path, monkeypatch) -> Iterator[Any]:
    """The trace of ``path`` by the column path, then by the entry-by-entry path."""
    for columns in (True, False):
        with monkeypatch.context() as mp:
            if not columns:
                mp.setattr(_har_reader, "_columns", lambda *a: None)
            yield mn.load(path, format="har")


@pytest.mark.parametrize("opening", [0.5, 0.5 + 9.0])  # first byte at once, or at the end
def test_untimed_events_keep_their_stream_order(tmp_path, monkeypatch, opening):
    """A GET stream's events have no time: an answer goes right after its POST, any other
    event just before the next answer of its stream (after the last where none follows),
    a server request before the POST that answers it. The progress of a call so lands
    between the call and its result, wherever the HAR puts the stream's first byte (a
    browser: at once; a recorder that waits for the whole body: at its end), and the
    pairing finds nothing wrong. Both paths place them so."""
    post, ev = _post, _ev
    prog = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p2", "progress": 1}}
    note = {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x"}}
    call = {"name": "t", "arguments": {}}
    entries = [
        harkit.entry("GET", "http://127.0.0.1:3001/sse", at=0.5, mime="text/event-stream",
                     wait_ms=(opening - 0.5) * 1000, reply=harkit.sse(
                         "event: endpoint\ndata: /messages?sessionId=s1",
                         ev({"jsonrpc": "2.0", "id": 1, "result": {}}),
                         ev(prog), ev({**prog, "params": {"progressToken": "p2",
                                                          "progress": 2}}),
                         ev({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
                         ev({"jsonrpc": "2.0", "id": 900, "method": "ping"}),
                         ev(note),
                         ev({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}),
                         ev(note))),
        post(1, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
        post(2, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {**call, "_meta": {"progressToken": "p2"}}}),
        post(3, {"jsonrpc": "2.0", "id": 900, "result": {}}),
        post(4, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}),
    ]
    path = harkit.write(tmp_path / "sse.har", entries)
    want = [("request", "initialize", "1"), ("result", None, "1"),
            ("request", "tools/call", "2"), ("notification", "notifications/progress", None),
            ("notification", "notifications/progress", None), ("result", None, "2"),
            ("request", "ping", "900"), ("result", None, "900"),
            ("request", "tools/call", "3"), ("notification", "notifications/message", None),
            ("result", None, "3"), ("notification", "notifications/message", None)]
    for t in _both_paths(path, monkeypatch):
        f = t.frames[t.frames["kind"] != "log"]
        got = [(k, m if isinstance(m, str) else None, None if i is None else str(i))
               for k, m, i in zip(f["kind"], f["method"], f["id"], strict=True)]
        assert got == want
        assert not set(t.violations["rule"]) & {
            "progress-unknown-token", "progress-after-response", "orphan-response",
            "unanswered-request"}
    assert _took_columns(path)
    _same_rows(path)


def test_untimed_progress_goes_with_the_call_that_gave_its_token(tmp_path, monkeypatch):
    """Two calls in flight on an untimed GET stream: each progress notification goes
    after the POST that gave its token (not before the next answer, which is another
    call's), and an answer after one placed later in its stream goes after it. Both
    paths; no finding."""
    post, ev = _post, _ev

    def prog(token, n):
        return ev({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": n}})

    def call(ident, token):
        return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                "params": {"name": "t", "arguments": {}, "_meta": {"progressToken": token}}}

    done = {"content": []}
    entries = [
        harkit.entry("GET", "http://127.0.0.1:3001/sse", at=0.5, mime="text/event-stream",
                     reply=harkit.sse("event: endpoint\ndata: /messages?sessionId=s1",
                                      prog("pa", 1), prog("pb", 1),
                                      ev({"jsonrpc": "2.0", "id": 1, "result": done}),
                                      prog("pb", 2),
                                      ev({"jsonrpc": "2.0", "id": 2, "result": done}))),
        post(1, call(1, "pa")), post(2, call(2, "pb"))]
    path = harkit.write(tmp_path / "sse.har", entries)
    want = [("request", "1"), ("notification", '"pa"'), ("request", "2"),
            ("notification", '"pb"'), ("result", "1"), ("notification", '"pb"'),
            ("result", "2")]
    for t in _both_paths(path, monkeypatch):
        f = t.frames[t.frames["kind"] != "log"]
        got = [(k, i if k != "notification" else json.dumps(
            json.loads(raw)["params"]["progressToken"]))
            for k, i, raw in zip(f["kind"], f["id"].map(
                lambda x: None if x is None else str(x)), f["raw"], strict=True)]
        assert got == want
        assert t.violations.empty, t.violations["rule"].tolist()
    _same_rows(path)


@pytest.mark.parametrize("seed", range(8))
def test_random_old_transport_hars_take_the_column_path(tmp_path, kept, texts, seed):
    rng = random.Random(seed)
    entries = _old_transport(rng, 40)
    if seed % 3 == 2:  # two clients, two streams
        entries += _old_transport(rng, 20)
    path = harkit.write(tmp_path / "sse.har", entries)
    assert _took_columns(path)
    _same_rows(path)


@pytest.mark.parametrize("seed", range(3))
def test_old_transport_raw_column(tmp_path, kept, monkeypatch, seed):
    """An HTTP+SSE HAR's records reach the table as spans: a large document's ``raw`` is
    ``lazytext`` (a small one's plain objects, as before), every value that of the
    entry-by-entry path (which gives records: objects whatever the size)."""
    path = harkit.write(tmp_path / "sse.har", _old_transport(random.Random(seed), 60))
    got = mn.load(path, format="har")
    assert str(got.frames["raw"].dtype) == ("lazytext" if kept == "buffer" else "object")
    with monkeypatch.context() as mp:
        mp.setattr(_har_reader, "_columns", lambda *a: None)
        ref = mn.load(path, format="har")
    assert str(ref.frames["raw"].dtype) == "object"
    assert len(ref.frames) > 60
    pdt.assert_frame_equal(materialised(got.frames), materialised(ref.frames))
    pdt.assert_frame_equal(got.pairs, ref.pairs)
    pdt.assert_frame_equal(got.violations, ref.violations)


def test_a_stream_of_no_event_but_its_endpoint(tmp_path, texts):
    entries = [harkit.entry("GET", "http://127.0.0.1:3001/sse", mime="text/event-stream",
                            reply=harkit.sse("event: endpoint\ndata: /m?sessionId=a")),
               _base(1), _base(2)]
    path = harkit.write(tmp_path / "sse.har", entries)
    assert _took_columns(path)
    _same_rows(path)


@pytest.mark.parametrize("seed", range(4))
def test_a_stream_naming_endpoints_again(tmp_path, kept, texts, seed):
    """A GET stream whose ``endpoint`` events name other sessions part way (a server
    that moved the client): each event after one is in the session it names, the last
    one named before it winning, as the entry-by-entry path reads the stream."""
    rng = random.Random(seed)
    entries = _old_transport(rng, 30)
    get = next(e for e in entries if e["request"]["method"] == "GET")
    text = get["response"]["content"]["text"]
    blocks = [b for b in text.split("\n\n") if b]
    for sid in ("moved", "again", "last")[:rng.randint(2, 3)]:
        blocks.insert(rng.randint(1, len(blocks)), f"event: endpoint\ndata: /m?sessionId={sid}")
    get["response"]["content"]["text"] = harkit.sse(*blocks)
    path = harkit.write(tmp_path / "sse.har", entries)
    assert _took_columns(path)
    assert _same_rows(path)
    sessions = set(mn.load(path, format="har").frames["session"].astype(str))
    assert {"moved", "again"} & sessions


@pytest.mark.parametrize("what", ["a GET of JSON", "a GET with a body", "an id line",
                                  "an endpoint in a POST's stream"])
def test_other_streams_are_handed_over(tmp_path, texts, what):
    entries = _old_transport(random.Random(1), 10)
    get = next(e for e in entries if e["request"]["method"] == "GET")
    if what == "a GET of JSON":
        get["response"]["headers"] = []
        get["response"]["content"] = {"mimeType": "application/json", "text": "{}"}
    elif what == "a GET with a body":
        get["request"]["postData"] = {"mimeType": "application/json", "text": "{}"}
    elif what == "an id line":
        get["response"]["content"]["text"] = "id: 1\n" + get["response"]["content"]["text"]
    else:
        post = next(e for e in entries if e["request"]["method"] == "POST")
        _stream(post, "event: endpoint\ndata: /m\n\n")
    path = harkit.write(tmp_path / "sse.har", entries)
    assert not _took_columns(path)
    _same_rows(path)


def test_old_transport_answers_of_no_id(tmp_path, texts):
    """Requests and an untimed answer whose id is null (twice: the first request sent
    places it), beside an id of a number: placed as the reference places them."""
    base = "http://127.0.0.1:3001"
    post = f"{base}/messages?sessionId=n1"
    null_ask = {"jsonrpc": "2.0", "id": None, "method": "tools/call"}
    stream = harkit.sse("event: endpoint\ndata: /messages?sessionId=n1",
                        "data: " + harkit.js({"jsonrpc": "2.0", "id": None, "result": {}}),
                        "data: " + harkit.js({"jsonrpc": "2.0", "id": 7, "result": {}}))
    entries = [harkit.entry("GET", f"{base}/sse", at=0.0, mime="text/event-stream",
                            receive_ms=9000, reply=stream)]
    entries += [harkit.entry("POST", post, at=1 + k, body=json.dumps(body), status=202,
                             reply="Accepted")
                for k, body in enumerate([null_ask, {**null_ask, "id": 7}, null_ask])]
    path = harkit.write(tmp_path / "null.har", entries)
    assert _took_columns(path)
    _same_rows(path)
