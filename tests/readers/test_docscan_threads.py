"""The C passes over the Inspector export and the cassette read on two threads
(``csrc/docsplit.h``) give the one-thread pass's answer byte for byte, wherever the second
thread (B) starts: on an entry, inside a nested object that looks like one, inside a
string, before, at or after the place where the document fails.

``_native.doc_split_last()`` says how each pass went (B's start, and whether B's part was
taken, B was stopped, or B's part or the join refused the document), so each case checks
that it ran the path it is about."""

from __future__ import annotations

import json
import mmap
import random
from collections import Counter
from pathlib import Path

import pandas.testing as pdt
import pytest

import mcp_notebook as mn
from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.fast import cores
from mcp_notebook.readers import _docscan

from .test_docscan import CASSETTES as MADE_CASSETTES
from .test_docscan import EXPORTS as MADE_EXPORTS
from .test_docscan import _entry, _interaction
from .test_jsondoc_places import CASSETTES as SAMPLE_CASSETTES
from .test_jsondoc_places import EXPORTS as SAMPLE_EXPORTS
from .test_jsondoc_places import _usual_cassette, _usual_export

ONE, LANDED, STOPPED, B_REFUSED, JOIN_REFUSED = range(5)  # doc_split_last's outcomes
PASSES = {"inspector": "inspector_doc", "recorder": "recorder_doc"}


def _pass(fmt: str):
    need_native()
    if not native.native.THREADS:
        pytest.skip("the extension is built without threads (MN_NO_THREADS): every pass "
                    "runs on one thread, which test_docscan.py covers")
    return getattr(native.native, PASSES[fmt])


def _same(one, two) -> None:
    """Two answers of a pass are the same: None both, or every array, byte and value."""
    assert (one is None) == (two is None)
    if one is not None:
        assert len(one) == len(two)
        for k, (x, y) in enumerate(zip(one, two, strict=True)):
            assert type(x) is type(y) and x == y, k


def _two(fmt: str, data: bytes, at: int = -1) -> tuple[int, int]:
    """The pass on two threads (B at ``at``, or at its guess) against the pass on one;
    B's start and the outcome."""
    scan = _pass(fmt)
    one = scan(data, False)
    two = scan(data, False, 0, at)
    how = native.native.doc_split_last()
    _same(one, two)
    return how


def _sweep(fmt: str, data: bytes) -> tuple[object, Counter]:
    """B started at every `{` of the document (where an entry may start) and at one in
    eight of its other bytes: the answer is the one-thread pass's. That answer, and how
    often each outcome came."""
    scan = _pass(fmt)
    one = scan(data, False)
    rng = random.Random(len(data))
    seen: Counter = Counter()
    for at in range(len(data)):
        if data[at] == ord("{") or rng.random() < 1 / 8:
            _same(one, scan(data, False, 0, at))
            seen[native.native.doc_split_last()[1]] += 1
    return one, seen


def test_b_started_across_the_made_documents():
    """Every document of the one-thread tests (taken or not: failing before, at or after
    B's start, in an entry or after the array), B started at each `{` of it."""
    seen: Counter = Counter()
    for fmt, docs in (("inspector", MADE_EXPORTS), ("recorder", MADE_CASSETTES)):
        for _, doc, _ in docs:
            seen += _sweep(fmt, doc)[1]
    # every way a split can go happened (the join refuses only more than 16 kinds: below)
    assert seen[ONE] and seen[LANDED] and seen[STOPPED] and seen[B_REFUSED], seen


@pytest.mark.parametrize("path", SAMPLE_EXPORTS + SAMPLE_CASSETTES,
                         ids=lambda p: Path(p).name)
def test_b_started_across_the_samples(path):
    """The bundled export and the cassettes of the wild, as the made documents."""
    fmt = "inspector" if path in SAMPLE_EXPORTS else "recorder"
    one, seen = _sweep(fmt, Path(path).read_bytes())
    assert seen[STOPPED] and seen[LANDED if one is not None else B_REFUSED], seen


def _export(rng: random.Random, n: int, minified: bool, odd: bool = False) -> bytes:
    doc = _usual_export(rng, n, odd)
    return json.dumps(doc, indent=None if minified else 2,
                      separators=(",", ":") if minified else None).encode()


def _cassette(rng: random.Random, n: int, minified: bool) -> bytes:
    doc = _usual_cassette(rng, n, True)
    return json.dumps(doc, indent=None if minified else 2,
                      separators=(",", ":") if minified else None).encode()


@pytest.mark.parametrize("minified", [False, True], ids=["indented", "minified"])
@pytest.mark.parametrize("seed", range(3))
def test_the_guess_lands_on_an_entry(seed, minified):
    """B's guess (the first entry's opening bytes after 15/32 of the document) is an entry
    start: A lands on it and B's part is taken."""
    rng = random.Random(seed)
    for fmt, data in (("inspector", _export(rng, 400, minified)),
                      ("recorder", _cassette(rng, 400, minified))):
        at, how = _two(fmt, data)
        assert how == LANDED and data[at:at + 1] == b"{", (fmt, how)
        assert len(data) // 32 * 15 <= at < len(data) // 32 * 15 + len(data) // 8


def _entry_text(i: int, **over) -> dict:
    return _entry(id=f"e{i}", timestamp=f"2026-01-01T00:00:{i % 60:02d}.000Z", **over)


def test_a_nested_object_that_looks_like_an_entry():
    """Minified, the messages holding arrays of objects whose first member is the entries'
    first (`,{"id":` at depth 3): B's guess is one of them, A passes it and reads on
    alone."""
    nested = {"jsonrpc": "2.0", "id": 1, "result": {"items": [{"id": k} for k in range(300)]}}
    entries = [_entry_text(i) for i in range(10)]
    entries.insert(5, _entry_text(99, response=nested))
    data = json.dumps(entries, separators=(",", ":")).encode()
    at, how = _two("inspector", data)
    assert how == STOPPED and data[at - 1:at + 6] == b',{"id":', how
    # the interactions open with "type": objects in a response that open with it too
    nested = {"result": {"items": [{"type": k} for k in range(300)]}}
    its = [_interaction(response=nested if i == 2 else None) for i in range(5)]
    data = json.dumps({"interactions": its}, separators=(",", ":")).encode()
    at, how = _two("recorder", data)
    assert how == STOPPED and data[at - 1:at + 8] == b',{"type":', how


def test_indented_a_nested_object_when_the_entries_start_differently():
    """Indented, the entries not all opening with the same member: B's guess is any
    `,{"` after the middle, here an object at depth 4 in a message; A passes it."""
    nested = {"jsonrpc": "2.0", "id": 1, "result": {"items": [{"k": k} for k in range(300)]}}
    entries = [{"message": {"a": i}, "id": str(i)} for i in range(10)]
    entries.insert(5, {"id": "x", "message": nested})
    data = json.dumps(entries, indent=2).encode()
    at, how = _two("inspector", data)
    assert how == STOPPED and data[at:at + 1] == b"{", how


def test_a_guess_inside_a_string():
    """`,{` ending a string, then its closing quote, looks like `,{"`: B's guess is inside
    the string (where no entry starts), and A passes it."""
    # the string just after the middle: the pads around it of about the same length
    pad = {"jsonrpc": "2.0", "method": "m", "params": {"t": "x" * 4000, "s": "a,{",
                                                        "u": "y" * 3600}}
    entries = [{"message": {"a": i}, "id": str(i)} for i in range(4)]
    entries.insert(2, {"id": "y", "message": pad})
    data = json.dumps(entries, separators=(",", ":")).encode()
    at, how = _two("inspector", data)
    assert how == STOPPED and data[at - 2:at + 2] == b'a,{"', (how, data[at - 8:at + 8])


def test_failing_before_at_and_after_b():
    """A document the pass refuses, the bad entry before B's start (A fails while B reads:
    B stopped), at it (B's first entry) and after it (B refuses); and one with more than
    16 kinds, 10 before B's start and 10 others after it (the join refuses): None as on
    one thread."""
    rng = random.Random(7)
    good = _usual_export(rng, 400, False)
    text = json.dumps(good, indent=2).encode()
    _, ok = _two("inspector", text)
    at, _ = native.native.doc_split_last()
    assert ok == LANDED
    # which entry B starts at
    k = text[:at].count(b'\n  {\n') + text[:at].count(b'[\n  {\n')
    for bad, want in ((3, STOPPED), (k, B_REFUSED), (len(good) - 3, B_REFUSED)):
        doc = [dict(e) for e in good]
        doc[bad]["clientError"] = {"message": "timeout"}
        data = json.dumps(doc, indent=2).encode()
        assert _pass("inspector")(data, False) is None
        got_at, how = _two("inspector", data)
        assert how == want, (bad, how)
        if bad == k:
            assert got_at == at
    doc = [dict(e, direction=f"k{i % 10}" if i < k else f"j{i % 10}")
           for i, e in enumerate(good)]
    data = json.dumps(doc, indent=2).encode()
    assert _pass("inspector")(data, False) is None
    assert _two("inspector", data)[1] == JOIN_REFUSED
    # 14 kinds in all, some in both halves: B's codes renumbered in order of first sight
    doc = [dict(e, direction=f"k{i % 10}" if i < k else f"k{4 + i % 10}")
           for i, e in enumerate(good)]
    data = json.dumps(doc, indent=2).encode()
    assert _pass("inspector")(data, False) is not None
    assert _two("inspector", data)[1] == LANDED


def test_a_cassette_failing_after_its_interactions():
    """B reads the rest of the cassette with every check: a second interactions member,
    something after the object, the metadata after the interactions."""
    rng = random.Random(3)
    text = _cassette(rng, 300, False)
    for tail, taken in ((b', "interactions": []}', False), (b', "more": {"a": [1]}}', True),
                        (b"} x", False)):
        data = text[:text.rindex(b"}")] + tail
        assert (_pass("recorder")(data, False) is not None) is taken
        assert _two("recorder", data)[1] == (LANDED if taken else B_REFUSED)


def test_small_documents_stay_on_one_thread(monkeypatch):
    """Under MIN_SECOND_THREAD (auto), with MCP_NOTEBOOK_SPLIT=none, one usable core, or in
    a read already split in two: one thread; MCP_NOTEBOOK_SPLIT=threads: two on any
    size."""
    data = _export(random.Random(1), 300, False)
    scan = _pass("inspector")
    scan(data, False, cores.MIN_SECOND_THREAD)
    assert native.native.doc_split_last() == (-1, ONE)
    for split, n_cores, want in (("auto", 2, cores.MIN_SECOND_THREAD), ("none", 2, -1),
                               ("threads", 2, 0), ("auto", 1, -1), ("fork", 2,
                                                                    cores.MIN_SECOND_THREAD)):
        monkeypatch.setattr(cores, "SPLIT", split)
        monkeypatch.setattr(cores, "workers", lambda n=n_cores: n)
        assert _docscan.min_split() == want, split
        with cores.split():
            assert _docscan.min_split() == -1


def _load(path: Path, fmt: str, split: str, monkeypatch) -> mn.Trace:
    with monkeypatch.context() as m:
        m.setattr(cores, "SPLIT", split)
        return mn.load(path, format=fmt, progress=False)


def test_the_load_on_two_threads_is_the_load_on_one(tmp_path, monkeypatch):
    """Through the readers (a mapped file): frames, pairs and findings equal."""
    _pass("inspector")
    rng = random.Random(9)
    for fmt, data, name in (("inspector", _export(rng, 500, False),
                             "inspector-protocol-t.json"),
                            ("recorder", _cassette(rng, 500, True), "cassette.json")):
        path = tmp_path / name
        path.write_bytes(data)
        a = _load(path, fmt, "threads", monkeypatch)
        assert native.native.doc_split_last()[1] == LANDED
        b = _load(path, fmt, "none", monkeypatch)
        assert native.native.doc_split_last()[1] == ONE
        for x, y in ((a.frames, b.frames), (a.pairs, b.pairs), (a.violations, b.violations)):
            pdt.assert_frame_equal(x, y)


def test_a_large_mapped_document_lets_its_pages_go_on_both_threads(tmp_path):
    """Larger than two of the 64 MB steps in which each thread lets the input's pages go
    (and makes the output's ahead): the same answer from a map of the file."""
    entry = _entry(message={"jsonrpc": "2.0", "method": "m", "params": {"pad": "x" * 4000}})
    path = tmp_path / "inspector-protocol-big.json"
    path.write_bytes(json.dumps([entry] * 36000, indent=1).encode())
    assert path.stat().st_size > 140 << 20
    scan = _pass("inspector")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        one = scan(m, True)
        two = scan(m, True, 0)
        assert native.native.doc_split_last()[1] == LANDED
        _same(one, two)
