"""The C extension's one pass over a HAR (``har_scan``, ``readers._har_parts``) gives
what msgspec's typed decoding into ``_har_structs`` and ``json_texts`` give, or hands the
document over to them (counted): on random documents, on the bundled and wild HARs, and
on hostile ones (cut short, bytes changed, escapes, bytes that are not UTF-8, duplicate
members, huge numbers, values of unexpected types)."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from pathlib import Path

import msgspec
import numpy as np
import pytest

from mcp_notebook.readers import _har_parts, _har_texts
from mcp_notebook.readers._har_structs import _decode_doc
from mcp_notebook.readers._har_texts import _HandOver

from . import harkit
from .test_har_columns import _sse_body, _usual_entry

pytestmark = pytest.mark.skipif(_har_texts._native_fn("har_scan") is None,
                                reason="the C extension is not built")

_FIELDS = ["methods", "urls", "status", "mimes", "hkeys", "incomplete"]
_ARRAYS = ["post_none", "stamped", "has_reply", "empty"]


def _texts_of(parts: _har_parts.Parts, post_at: np.ndarray, plain_at: np.ndarray,
              sse_at: np.ndarray) -> tuple[int, list[list[bytes]]] | str:
    try:
        buf, *spans = parts.texts(post_at, plain_at, sse_at)
    except _HandOver:
        return "handed over"
    return len(buf), [[bytes(buf[a:b]) for a, b in zip(s.tolist(), e.tolist(), strict=True)]
                      for s, e in spans]


def _reference(data: bytes) -> _har_parts.Parts | None:
    try:
        return _har_parts.of_structs(_decode_doc(data).log.entries)
    except (msgspec.DecodeError, RecursionError):
        return None


def _texts_at(got: tuple) -> list[bytes]:
    """The texts of a har_scan answer, each entry's two, by the places it gives."""
    buf, at = got[0], np.frombuffer(got[1], dtype=np.int64).reshape(-1, 4)
    return [bytes(buf[a:b]) if a >= 0 else b"" for row in at.tolist()
            for a, b in (row[:2], row[2:])]


def _halves_agree(data: bytes) -> None:
    """Assert the pass on two threads answers as on one (for a document not taken, the
    same offset): with the second half's texts moved down to follow the first's, byte for
    byte; with them left where the second thread wrote them (``gap_min`` 0: a buffer of
    64 MiB or more), the same texts at places past a gap of zeros, all else the same."""
    from mcp_notebook.engine import _native

    one = _native.har_scan(data, False)
    two, gapped = _native.har_scan(data, True, 1 << 62), _native.har_scan(data, True, 0)
    # every text of the first half longer than 16 bytes read on two threads where it can
    # be (a helper from near the middle of what is left before the second half's start):
    # byte for byte the answer of the pass that reads each text on one
    helped = _native.har_scan(data, True, 1 << 62, 16)
    assert type(helped) is type(two)
    assert helped == two if isinstance(two, int) else all(
        type(a) is type(b) and a == b for a, b in zip(helped, two, strict=True))
    assert type(one) is type(two) is type(gapped)
    if isinstance(one, int):
        assert one == two == gapped
        return
    assert len(one) == len(two) == len(gapped) == 12
    assert one[11] == two[11] == 0
    for k, (a, b) in enumerate(zip(one, two, strict=True)):
        assert type(a) is type(b) and a == b, k
    gap = gapped[11]
    assert _texts_at(gapped) == _texts_at(one)
    assert len(gapped[0]) == len(one[0]) + gap
    if gap:  # between the halves' texts: no text, and never written
        at = np.frombuffer(gapped[1], dtype=np.int64).reshape(-1, 4)
        spans = sorted((s, e) for row in at.tolist() for s, e in (row[:2], row[2:])
                       if s >= 0 and e > s)
        holes = [(e, s2) for (_, e), (s2, _) in pairwise(spans) if s2 != e]
        assert len(holes) == 1 and holes[0][1] - holes[0][0] == gap  # texts end to end
        if len(data) + 32 >= 64 << 20:  # a fresh map of its own: the gap reads as zeros
            hole = bytes(gapped[0][holes[0][0] + 16:holes[0][1]])  # (a copy writes 16 on)
            assert hole.count(0) == len(hole)
    for k in range(2, 11):  # every member but the texts and their places
        assert type(gapped[k]) is type(one[k]) and gapped[k] == one[k], k


def _same(data: bytes) -> bool:
    """Assert the C pass gives the reference's parts and texts, or hands over, on one
    thread and on two; whether it took the document."""
    _halves_agree(data)
    before = dict(_har_parts.COUNTS)
    got = _har_parts.of_scan(data)
    counts = _har_parts.COUNTS
    if got is None:  # handed over, and counted
        assert counts["handed over"] == before.get("handed over", 0) + 1
        assert counts["c"] == before.get("c", 0)
        return False
    assert counts["c"] == before.get("c", 0) + 1
    ref = _reference(data)
    assert ref is not None, "the C pass took a document msgspec refuses"
    for name in _FIELDS:
        assert getattr(got, name) == getattr(ref, name), name
    # the start stamps' texts: those the pass did not read itself (the others None)
    read = ~np.isnan(got.stamps)  # type: ignore[attr-defined]
    assert [None if r else s for r, s in zip(read.tolist(), ref.started, strict=True)] \
        == got.started
    for name in _ARRAYS:
        assert np.array_equal(getattr(got, name), getattr(ref, name)), name
    assert np.array_equal(got.nums, ref.nums, equal_nan=True)
    # the start stamps the C pass reads, to the same doubles and problems as read_times
    got_ts, got_problems = got.start_times()
    ref_ts, ref_problems = ref.start_times()
    assert np.array_equal(got_ts, ref_ts, equal_nan=True) and got_problems == ref_problems
    # np.array_equal takes -0.0 for 0.0: the signs too
    assert np.array_equal(np.signbit(got.nums), np.signbit(ref.nums))
    n = len(ref.methods)
    texts = np.flatnonzero(~got.post_none & (got.at[:, 0] >= 0))  # type: ignore[attr-defined]
    replies = np.flatnonzero(ref.has_reply)
    for post_at, plain_at, sse_at in [(texts, replies[::2], replies[1::2]),
                                      (texts[1:], replies[:1], replies[2:]),
                                      (np.arange(n)[~ref.post_none], replies, replies[:0])]:
        got_again = _har_parts.of_scan(data)
        ref_again = _reference(data)
        assert got_again is not None and ref_again is not None
        assert _texts_of(got_again, post_at, plain_at, sse_at) == \
            _texts_of(ref_again, post_at, plain_at, sse_at)
    return True


def _entry(rng: random.Random, k: int) -> dict:
    """An entry of any kind the column path meets (and some it hands over)."""
    e = _usual_entry(rng, k)
    kind = rng.random()
    if kind < 0.15:
        e = harkit.entry("GET", harkit.URL, at=k, mime="text/event-stream",
                         reply=_sse_body(rng, k))
    elif kind < 0.2:
        e = harkit.entry(rng.choice(["DELETE", "OPTIONS"]), at=k, status=rng.choice([200, 404]))
    elif kind < 0.25:
        e["response"]["content"]["_sseEvents"] = rng.choice([[], [{"data": "x"}], None])
    elif kind < 0.3:
        e["unknown"] = {"deep": [1, 2.5e-3, "é", None, True]}
        e["request"]["postData"]["_truncated"] = None
        e["response"]["content"]["encoding"] = None
    elif kind < 0.35:
        e["response"]["content"] = None
        e["timings"] = None
    items = list(e.items())
    rng.shuffle(items)  # any order of the members
    return dict(items)


def _doc(rng: random.Random, n: int) -> bytes:
    doc = {"log": {"version": "1.2", "entries": [_entry(rng, k) for k in range(n)]}}
    if rng.random() < 0.3:
        doc = {"extra": [1, {"log": 2}], **doc}
    how = rng.random()
    if how < 0.3:
        text = json.dumps(doc, ensure_ascii=True)  # every non-ASCII character escaped
    elif how < 0.6:
        text = json.dumps(doc, ensure_ascii=False, indent=rng.choice([1, "\t", " \r\n "]))
    else:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return (rng.choice(["", " \n"]) + text + rng.choice(["", "\n", " \t\r\n"])).encode()


@pytest.mark.parametrize("seed", range(12))
def test_random_hars_read_as_msgspec_reads_them(seed):
    rng = random.Random(seed)
    data = _doc(rng, rng.randint(0, 30))
    assert _same(data)


@pytest.mark.parametrize("seed", range(6))
def test_changed_bytes_are_read_as_msgspec_reads_them_or_handed_over(seed):
    """A byte changed, removed or doubled anywhere: either both readings give the same
    parts, or the C pass hands the document over (never a document msgspec refuses)."""
    rng = random.Random(seed)
    data = _doc(rng, 6)
    taken = 0
    for _ in range(150):
        at = rng.randrange(len(data))
        how = rng.random()
        if how < 0.4:
            bad = data[:at] + bytes([rng.choice(b'{}[]",:0-.e\\ \xff\x80\x01ntf')]) + data[at + 1:]
        elif how < 0.7:
            bad = data[:at] + data[at + 1:]
        else:
            bad = data[:at] + data[at:at + rng.randint(1, 8)] + data[at:]
        taken += _same(bad)
    assert taken < 150  # some of the changes were refused


def test_documents_cut_short_are_handed_over():
    data = _doc(random.Random(1), 4)
    for cut in range(0, len(data), 7):
        if data[:cut].strip() != data.strip():
            assert not _same(data[:cut])


def _one(entry_text: str) -> bytes:
    return ('{"log": {"entries": [' + entry_text + "]}}").encode()


_GOOD = ('{"startedDateTime": "2025-06-18T12:00:00.000Z", "time": 6, '
         '"request": {"method": "POST", "url": "http://h/mcp", "headers": [], '
         '"postData": {"mimeType": "application/json", "text": "{\\"id\\": 1}"}}, '
         '"response": {"status": 200, "headers": [], '
         '"content": {"mimeType": "application/json", "text": "{}"}}, '
         '"timings": {"send": 0, "wait": 5, "receive": 1}}')

#: a change of the usual entry: whether the C pass takes it
HOSTILE = {
    "as is": ('"time": 6', '"time": 6', True),
    "a duplicate member": ('"time": 6', '"time": 6, "time": 7', False),
    "a duplicate method": ('"method": "POST"', '"method": "POST", "method": "GET"', False),
    "a duplicate unknown member": ('"time": 6', '"time": 6, "x": 1, "x": 2', True),
    "a huge status": ('"status": 200', '"status": 200000000000000000000000', False),
    "a status of 15 digits": ('"status": 200', '"status": -123456789012345', True),
    "a status of 16 digits": ('"status": 200', '"status": 1234567890123456', False),
    "a status as a float": ('"status": 200', '"status": 200.0', False),
    "a status as text": ('"status": 200', '"status": "200"', False),
    "a huge time": ('"time": 6', '"time": 1e400', False),
    "a long integer time": ('"time": 6', '"time": 12345678901234567890', False),
    "a time of many digits": ('"time": 6', '"time": 0.1000000000000000055511151231257827', True),
    "an exponent time": ('"time": 6', '"time": 25E-1', True),
    "minus zero": ('"time": 6', '"time": -0', True),
    "minus zero point zero": ('"time": 6', '"time": -0.0', True),
    "a time as text": ('"time": 6', '"time": "6"', False),
    "a timing as a literal": ('"wait": 5', '"wait": true', False),
    "an escaped member name": ('"method"', '"met\\u0068od"', False),
    "an escaped url": ('"url": "http://h/mcp"', '"url": "http:\\/\\/h\\/mcp\\u00e9"', True),
    "a url of a lone surrogate": ('"url": "http://h/mcp"', '"url": "\\ud800"', False),
    "a mimeType of a number": ('"mimeType": "application/json", "text": "{}"',
                               '"mimeType": 5, "text": "{}"', False),
    "a postData of a mimeType of null": ('"mimeType": "application/json", "text": "{\\"',
                                         '"mimeType": null, "text": "{\\"', True),
    "a text of a number": ('"text": "{}"', '"text": 5', False),
    "a text of null": ('"text": "{}"', '"text": null', True),
    "a body of a lone surrogate": ('"text": "{}"', '"text": "\\udc00"', False),
    "a body of a pair": ('"text": "{}"', '"text": "\\ud83d\\ude00 \\u00e9\\n"', True),
    "an encoding": ('"text": "{}"', '"text": "{}", "encoding": "base64"', False),
    "an encoding of null": ('"text": "{}"', '"text": "{}", "encoding": null', True),
    "a proxy error": ('"time": 6', '"time": 6, "_proxyError": "refused"', False),
    "incomplete": ('"time": 6', '"time": 6, "_incomplete": true', True),
    "incomplete as a number": ('"time": 6', '"time": 6, "_incomplete": 1', False),
    "no url": ('"url": "http://h/mcp", ', '', False),
    "no startedDateTime": ('"startedDateTime": "2025-06-18T12:00:00.000Z", ', '', False),
    "a request of null": ('"request": {', '"request": null, "r": {', False),
    "headers of anything": ('"headers": [], "postData"', '"headers": {"a": [1]} , "postData"',
                            True),
    "a trailing comma": ('"receive": 1}', '"receive": 1,}', False),
    "a deep unknown member": ('"time": 6', '"time": 6, "x": ' + "[" * 70 + "]" * 70, False),
}


#: a start stamp, and whether the C pass reads it itself (the usual shape, a real date)
STAMPS = {"2025-06-18T12:00:00.000Z": True, "2024-02-29T23:59:60.999Z": True,
          "0001-01-01T00:00:00.000Z": True, "9999-12-31T23:59:59.999Z": True,
          "1969-12-31T23:59:59.999Z": True, "2000-02-29T00:00:00.000Z": True,
          "2023-02-29T00:00:00.000Z": False, "0000-01-01T00:00:00.000Z": False,
          "2025-13-01T00:00:00.000Z": False, "2025-06-18T24:00:00.000Z": False,
          "2025-06-18T12:60:00.000Z": False, "2025-06-18T12:00:61.000Z": False,
          "2025-06-31T12:00:00.000Z": False, "2025-06-18 12:00:00.000Z": False,
          "2025-06-18T12:00:00.000+00:00": False, "2025-06-18T12:00:00Z": False,
          "2025-06-18T12:00:00.1234Z": False, "\\u0032025-06-18T12:00:00.000Z": False,
          "2025-06-18T12:00:00.000z": False, "２025-06-18T12:00:00.000Z": False,
          "2100-02-29T00:00:00.000Z": False}


@pytest.mark.parametrize("stamp", STAMPS)
def test_start_stamps_read_as_read_times_reads_them(stamp):
    """The usual stamps the C pass reads itself, any other (or a date that is not one)
    Python: the times and problems are read_times' either way."""
    data = _one(_GOOD.replace("2025-06-18T12:00:00.000Z", stamp, 1))
    assert _same(data)
    got = _har_parts.of_scan(data)
    assert got is not None
    from mcp_notebook.readers._time import read_times

    ts, problems = got.start_times()
    ref = _reference(data)
    assert ref is not None
    ref_ts, ref_problems = read_times(ref.started, numbers=False)
    assert np.array_equal(ts, ref_ts, equal_nan=True) and problems == ref_problems
    # which the C pass read itself: the usual stamps written without escapes
    assert bool(got.stamps[0] == got.stamps[0]) is STAMPS[stamp]  # type: ignore[attr-defined]


@pytest.mark.parametrize("what", list(HOSTILE))
def test_hostile_entries(what):
    old, new, taken = HOSTILE[what]
    assert old in _GOOD
    assert _same(_one(_GOOD.replace(old, new, 1))) is taken


@pytest.mark.parametrize("bad", [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
@pytest.mark.parametrize("where", ["url", "body", "unknown member", "header"])
def test_bytes_that_are_not_utf8_are_handed_over(bad, where):
    old = {"url": b"h/mcp", "body": b"{}", "unknown member": b'"time": 6',
           "header": b'"headers": []'}[where]
    new = {"url": b"h/mcp" + bad, "body": b"{" + bad + b"}",
           "unknown member": b'"time": 6, "x": "' + bad + b'"',
           "header": b'"headers": ["' + bad + b'"]'}[where]
    data = _one(_GOOD).replace(old, new, 1)
    assert not _same(data)


def test_no_document_but_an_object():
    for text in [b"", b"[]", b"null", b'{"log": {}}', b'{"log": {"entries": {}}}',
                 b'{"log": {"entries": []}} x', b'{"log": {"entries": [1]}}',
                 b'\xef\xbb\xbf{"log": {"entries": []}}']:
        assert not _same(text), text
    assert _same(b'{"log": {"entries": []}}')
    assert _same(b'{"log": {"entries": [], "entries2": 1}, "log2": null}')


def test_the_bundled_and_captured_hars():
    from mcp_notebook import bundled

    paths = sorted(bundled.data_dir().glob("*.har"))
    # the HARs captured from real clients and servers (peers) and found in the wild
    paths += sorted((Path(__file__).parent.parent / "fixtures").rglob("*.har"))
    assert len(paths) >= 12
    for path in paths:
        assert _same(path.read_bytes()), path


def test_texts_of_entries_read_one_by_one_are_left_out(tmp_path, monkeypatch):
    """The texts of the entries the reader reads one by one (an HTTP error's large reply)
    are not in the buffer of the records' texts: its bytes (whose size decides whether
    the table keeps them as a lazy column) are those of the msgspec path."""
    from mcp_notebook.readers import _har_columns, har

    big = harkit.js({"jsonrpc": "2.0", "id": 9, "error": {"code": 1, "message": "x" * 5000}})
    entries = [harkit.entry("POST", at=k, body=harkit.js(harkit.msg(id=k, method="ping")),
                            mime="application/json",
                            reply=harkit.js(harkit.msg(id=k, result={})))
               for k in range(3)]
    entries.insert(1, harkit.entry("POST", at=0.5, body=big, status=500,
                                   mime="application/json", reply=big))
    path = harkit.write(tmp_path / "err.har", entries)
    data = path.read_bytes()

    def buf() -> bytes:
        found = _har_columns.columns(data, path.name, path.name, har._stateless,
                                     har._escaped, har._session_from_url,
                                     har._Reader(path, None))
        assert found is not None
        return bytes(found.cols.buf)

    before = _har_parts.COUNTS["c"]
    got = buf()
    assert _har_parts.COUNTS["c"] == before + 1  # the C pass read it
    native_fn = _har_texts._native_fn
    monkeypatch.setattr(_har_texts, "_native_fn",
                        lambda name: None if name == "har_scan" else native_fn(name))
    assert got == buf()
    assert b"xxxxx" not in got and b"ping" in got


# ---- the pass on two threads ----

def _counts() -> tuple[int, int, int, int]:
    from mcp_notebook.engine import _native

    return _native.har_scan_counts()


def _split(data: bytes) -> tuple[int, int, int]:
    """How the two halves went on ``data`` (started, met, dropped), their answers equal."""
    from mcp_notebook.engine import _native

    _halves_agree(data)
    before = _counts()
    _native.har_scan(data, True)
    after = _counts()
    return after[0] - before[0], after[1] - before[1], after[2] - before[2]


def _entries_doc(entries: list[dict], indent: int | None = None, **log: object) -> bytes:
    return json.dumps({"log": {"version": "1.2", "entries": entries, **log}},
                      indent=indent, ensure_ascii=False).encode()


def _many(rng: random.Random, n: int) -> list[dict]:
    return [_usual_entry(rng, k) for k in range(n)]


@pytest.mark.parametrize("indent", [None, 1, 2])
def test_two_halves_meet_between_two_entries(indent):
    """On a document of many entries the second half starts on one near the middle and
    the first lands on it: its work is used, the answer the one-thread pass's."""
    data = _entries_doc(_many(random.Random(indent or 0), 80), indent)
    assert _split(data) == (1, 1, 0)
    assert _same(data)


def test_a_lookalike_inside_an_entry_is_not_a_start():
    """The middle falls inside an entry holding objects that open as an entry does (the
    same first member, after a comma): the second half starts there, the first passes
    it inside that entry, stops it and reads the entry again, then the rest alone."""
    rng = random.Random(3)
    entries = _many(rng, 6)
    lookalike = {"startedDateTime": "x", "request": 1}
    entries[3] = {"startedDateTime": entries[3]["startedDateTime"], **entries[3],
                  "_x": [lookalike] * 2000}
    data = _entries_doc(entries)
    assert data.find(b'{"startedDateTime": "x"', len(data) // 2) > 0
    assert _split(data) == (1, 0, 1)
    assert _same(data)


def test_a_lookalike_after_the_entries_is_not_a_start():
    """Objects that open as an entry, in another array after the entries: the first half
    ends the entries before the place, stops the second and reads on alone."""
    rng = random.Random(4)
    pages = [{"startedDateTime": "p", "id": k} for k in range(3000)]
    data = _entries_doc(_many(rng, 10), None, pages=pages)
    assert _split(data) == (1, 0, 1)
    assert _same(data)


@pytest.mark.parametrize("what", ["a broken last entry", "a second entries member",
                                  "a second log", "bytes after the document",
                                  "a duplicate member in the second half",
                                  "an unknown member's deep value"])
def test_a_document_refused_in_the_second_half(what):
    """Whatever the one-thread pass refuses after the middle, the two refuse at the same
    place (the second half's own answer)."""
    rng = random.Random(5)
    entries = _many(rng, 60)
    if what == "a duplicate member in the second half":
        text = _entries_doc(entries).decode()
        at = text.rindex('"time": ')
        data = (text[:at] + '"time": 1, ' + text[at:]).encode()
    elif what == "an unknown member's deep value":
        entries[-2]["x"] = json.loads("[" * 70 + "]" * 70)
        data = _entries_doc(entries)
    else:
        data = _entries_doc(entries)
        if what == "a broken last entry":
            data = data[:data.rindex(b"}", 0, len(data) - 3)] + b",}]}}"
        elif what == "a second entries member":
            data = data[:-2] + b', "entries": []}}'
        elif what == "a second log":
            data = data[:-1] + b', "log": {}}'
        else:
            data += b" x"
    assert _split(data)[:2] == (1, 1)
    assert not _same(data)


def test_a_document_refused_in_the_first_half():
    rng = random.Random(6)
    entries = _many(rng, 60)
    entries[2]["time"] = "6"  # a time of text: refused
    data = _entries_doc(entries)
    started, met, dropped = _split(data)
    assert started == 1 and met == 0 and dropped == 1
    assert not _same(data)


def test_numbers_only_python_reads_in_both_halves():
    """A time only Python's conversion reads correctly rounded, in each half: the GIL is
    taken for it from either thread."""
    rng = random.Random(7)
    entries = _many(rng, 60)
    for k in (1, 58):
        entries[k]["time"] = 0.1000000000000000055511151231257827  # placeholder
    text = _entries_doc(entries).decode().replace(
        "0.1", "0.1000000000000000055511151231257827")
    data = text.encode()
    assert data.count(b"0.1000000000000000055511151231257827") >= 2
    assert _split(data) == (1, 1, 0)
    assert _same(data)


def test_a_large_document_keeps_the_gap_between_its_halves_texts():
    """A document of 64 MiB or more read on two threads: the second half's texts stay
    where its thread wrote them, past a gap that was never written (zeros); each text
    is where the places say, as on one thread, and the column path reads the same."""
    from mcp_notebook.engine import _native

    rng = random.Random(12)
    entries = _many(rng, 400)
    for e in entries:  # large bodies: 400 entries of about 170 KB
        e["request"]["postData"]["text"] = json.dumps(
            {"jsonrpc": "2.0", "id": rng.randrange(10**6), "method": "tools/call",
             "params": {"name": "t", "arguments": {"x": "\\\"q\" " * 24_000}}})
    data = _entries_doc(entries)
    assert len(data) >= 64 << 20
    started, met, _ = _split(data)  # (_halves_agree: the texts, the zeros of the gap)
    assert started == met == 1
    assert _native.har_scan(data, True)[11] > 0
    ref = _reference(data)
    got = _har_parts.of_scan(data, two=True)
    assert ref is not None and got is not None and got.gap > 0
    everything = np.arange(len(entries))
    none = np.zeros(0, dtype=np.int64)
    assert _texts_of(got, everything, none, none)[1] == _texts_of(ref, everything, none,
                                                                 none)[1]


def test_one_thread_where_there_is_no_place_to_split():
    for data in [_entries_doc(_many(random.Random(8), 1)),  # one entry: no second
                 _entries_doc([{}] + _many(random.Random(8), 30))]:  # an empty first entry
        assert _split(data) == (0, 0, 0)
        _same(data)


def test_the_pass_on_two_threads_for_a_large_document(monkeypatch):
    """of_scan asks for two threads on a large document only (any under
    MCP_NOTEBOOK_SPLIT=threads), and never when the split is turned off, on one core, or
    in a read already split over two processes or threads."""
    from mcp_notebook.fast import cores

    calls = []
    native_fn = _har_texts._native_fn

    def spy(name):
        fn = native_fn(name)
        return (lambda data, two: calls.append(two) or fn(data, two)) if name == "har_scan" \
            else fn

    monkeypatch.setattr(_har_texts, "_native_fn", spy)
    data = _entries_doc(_many(random.Random(9), 20))
    _har_parts.of_scan(data)
    monkeypatch.setattr(cores, "MIN_SECOND_THREAD", 1)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    _har_parts.of_scan(data)
    monkeypatch.setattr(cores, "SPLIT", "none")
    _har_parts.of_scan(data)
    monkeypatch.setattr(cores, "SPLIT", "auto")
    with cores.split():
        _har_parts.of_scan(data)
    monkeypatch.setattr(cores, "workers", lambda: 1)
    _har_parts.of_scan(data)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "MIN_SECOND_THREAD", 1 << 30)
    monkeypatch.setattr(cores, "SPLIT", "threads")
    _har_parts.of_scan(data)
    assert calls == [False, True, False, False, False, True]


#: one character of each class the texts' copy tells apart: plain, the quote, the backslash
#: and the solidus (escaped), control characters, two-, three- and four-byte UTF-8
_CLASSES = ["a", "Z", " ", '"', "\\", "/", "\n", "\t", "\x01", "\x1f", "\x7f", "é", "中",
            "😀", "\u2028"]


@pytest.mark.parametrize("seed", range(8))
def test_texts_of_every_byte_class_at_every_length(seed):
    """Bodies of every length up to 48 (the copy moves 16 bytes at a time, so every place
    of an escape in and across its blocks), made of every class of character, written
    with and without ``\\u`` escapes: read as msgspec reads them."""
    rng = random.Random(seed)
    entries = []
    for k in range(49):
        text = "".join(rng.choice(_CLASSES) for _ in range(k))
        entries.append(harkit.entry("POST", at=k, body=text, mime="application/json",
                                    reply=text[::-1]))
    doc = {"log": {"version": "1.2", "entries": entries}}
    for ascii_only in (True, False):
        data = json.dumps(doc, ensure_ascii=ascii_only).encode()
        assert _same(data)
        assert _har_parts.of_scan(data) is not None  # the C pass took it


# ---- a long text read on two threads ----

#: the characters of the long texts: every class the copy tells apart, and runs of plain
#: bytes long enough for a place with no backslash in the 12 bytes before it
_LONG = _CLASSES + ["abcdefghijklmnopqrstuvwxyz", "\\\\", '\\"', "😀😀"]


def _long_first(rng: random.Random, length: int, ascii_only: bool, after: int = 30) -> bytes:
    """A document whose first entry's reply is a long text (an event stream's body, say)
    of every class of character, then ``after`` usual entries: the middle falls in the
    text, so the second half starts after it and a helper reads the text's second half."""
    text = "".join(rng.choice(_LONG) for _ in range(length))
    first = harkit.entry("GET", at=0, mime="text/event-stream", reply=text)
    entries = [first] + [_usual_entry(rng, k + 1) for k in range(after)]
    return json.dumps({"log": {"version": "1.2", "entries": entries}},
                      ensure_ascii=ascii_only).encode()


@pytest.mark.parametrize("ascii_only", [True, False], ids=["u-escapes", "utf8"])
def test_a_long_text_read_by_two_threads_is_the_one_threads(ascii_only):
    """Long texts whose helper starts at every kind of place (before an escape, a
    character of any length, a plain run; a pair's escapes, backslash runs): the texts
    and every member are the one-thread pass's, byte for byte, and the helper's work was
    used in most documents (where the place falls in the text)."""

    rng = random.Random(20 + ascii_only)
    used = 0
    for k in range(120):
        data = _long_first(rng, 1500 + 37 * k, ascii_only)
        before = _counts()[3]
        _halves_agree(data)  # (long_min 16: the helper where it can)
        used += _counts()[3] > before
        if k % 20 == 0:
            assert _same(data)
    assert used >= 100, used


@pytest.mark.parametrize("what", ["a lone surrogate", "a control byte", "bad UTF-8",
                                  "no closing quote"])
def test_a_long_text_refused_after_its_middle(what):
    """A text the one-thread pass refuses in its second half (the helper's part): the
    two-thread pass refuses the document at the same place."""
    from mcp_notebook.engine import _native

    rng = random.Random(30)
    data = _long_first(rng, 3000, True)
    start = end = data.index(b'"text": "') + 9  # the long text's (the first entry's)
    at = -1
    while data[end] != ord('"'):  # its closing quote; ``at``: an escape's start, 3/4 in
        if end - start > 2250 and at < 0 and data[end] == ord("\\"):
            at = end
        end += 2 if data[end] == ord("\\") else 1
    assert end - start > 3000 and at > 0
    bad = {"a lone surrogate": b"\\ud800x", "a control byte": b"\x01",
           "bad UTF-8": b"\xc3(", "no closing quote": None}[what]
    if bad is None:  # the text runs into the entries after it
        data = data[:end] + data[end + 1:]
    else:
        data = data[:at] + bad + data[at:]
    one = _native.har_scan(data, False)
    assert isinstance(one, int)
    assert _native.har_scan(data, True, 1 << 62, 16) == one
    _halves_agree(data)


def test_a_long_text_on_one_thread_or_without_a_second_half():
    """No helper where the pass runs on one thread, nor in a document that has no second
    half (one entry), nor for a text shorter than ``long_min``."""
    from mcp_notebook.engine import _native

    data = _long_first(random.Random(31), 4000, False)
    before = _counts()[3]
    _native.har_scan(data, False, -1, 16)
    _native.har_scan(data, True)  # the least long text: 8 MiB
    _native.har_scan(_long_first(random.Random(31), 4000, False, after=0), True, -1, 16)
    assert _counts()[3] == before
    _native.har_scan(data, True, -1, 16)
    assert _counts()[3] > before
