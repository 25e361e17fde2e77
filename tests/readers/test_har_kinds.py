"""``_har_kinds.meaning`` (the C ``frame_kinds``, the records it does not take read by
the table's part) against ``meaning_part`` (the table's part of every record, the
reference): the same kind and id key of every frame, byte for byte, and the same
records of no frame handed over. On hostile records one by one and mixed, on the
bundled and captured HARs, and on generated HTTP+SSE traffic (the benchmark's)."""

from __future__ import annotations

import json
import random
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import mcp_notebook as mn
from mcp_notebook.engine import native as _native
from mcp_notebook.readers import _har_kinds, _har_order
from mcp_notebook.readers._docspans import Columns
from mcp_notebook.readers._har_texts import _HandOver

needs_c = pytest.mark.skipif(_native.native is None, reason="the C extension is not built")

_BIG = "18446744073709551617"
#: one record each: every id shape, kind, batch and broken line the table meets
HOSTILE = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}',
    '{"jsonrpc":"2.0","id":-7,"method":"ping"}',
    '{"jsonrpc":"2.0","id":"abc","method":"ping"}',
    '{"jsonrpc":"2.0","id":"a\\"b","method":"ping"}',
    '{"jsonrpc":"2.0","id":"\\u0061","result":{}}',
    '{"jsonrpc":"2.0","id":"é","result":{}}',
    '{"jsonrpc":"2.0","id":"","result":{}}',
    '{"jsonrpc":"2.0","id":" x ","result":{}}',
    '{"jsonrpc":"2.0","id":0,"result":{}}',
    '{"jsonrpc":"2.0","id":-0,"result":{}}',
    '{"jsonrpc":"2.0","id":1.0,"result":{}}',
    '{"jsonrpc":"2.0","id":1e3,"result":{}}',
    '{"jsonrpc":"2.0","id":' + _BIG + ',"result":{}}',
    '{"jsonrpc":"2.0","id":-' + _BIG + ',"result":{}}',
    '{"jsonrpc":"2.0","id":' + "9" * 1200 + ',"result":{}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}',
    '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such"}}',
    '{"jsonrpc":"2.0","id":3,"error":{"code":' + _BIG + ',"message":"big"}}',
    '{"jsonrpc":"2.0","id":true,"result":{}}',
    '{"jsonrpc":"2.0","id":[1],"result":{}}',
    '{"jsonrpc":"2.0","result":{}}',
    '{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"both"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","method":"notifications/progress",'
    '"params":{"progressToken":"t","progress":0.123456789012345678}}',
    '{"jsonrpc":"2.0","method":"notifications/progress",'
    '"params":{"progressToken":"\\u0074","progress":1}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}',
    '{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","id":7,"method":"rpc.x"}',
    '{"jsonrpc":"1.0","id":8,"method":"ping"}',
    '{"id":9,"method":"ping"}',
    '{"jsonrpc":"2.0","id":10,"method":"ping","id":11}',
    '{"jsonrpc":"2.0","id":12,"method":"a\\u0062"}',
    '{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"\\ud83d\\ude00"}]}}',
    '{"jsonrpc":"2.0","id":14,"result":{"text":"\\ud800"}}',
    '{"jsonrpc":"2.0","id":15,"result":{"isError":true}}',
    '{"jsonrpc":"2.0","id":16,"result":{"tools":[{"name":"t"}]}}',
    '[{"jsonrpc":"2.0","id":17,"method":"a"},{"jsonrpc":"2.0","method":"b"}]',
    '[{"jsonrpc":"2.0","id":18,"result":{}},{"jsonrpc":"2.0","id":"18","error":'
    '{"code":1,"message":"x"}},{"jsonrpc":"2.0","id":19.5,"result":{}}]',
    '[]',
    '[1, "two"]',
    '{"jsonrpc":"2.0","id":20,"method":"ping"',
    '{"jsonrpc":"2.0","id":21,"method":"ping"} trailing',
    'not json at all',
    '"a string"',
    '42',
    'null',
    '{}',
    '   ',
    '  {"jsonrpc":"2.0","id":22,"method":"ping"}  ',
    '{"jsonrpc" : "2.0" , "id" : 23 , "method" : "ping"}',
    '{"jsonrpc":"2.0","id":24,"method":"ping","params":{"_meta":{"progressToken":25}}}',
    '{"jsonrpc":"2.0","id":26,"method":"ping","params":{"_meta":{"progressToken":1.5}}}',
]
BAD_BYTES = [b'{"jsonrpc":"2.0","id":27,"result":{"t":"\xff"}}',
             b'{"jsonrpc":"2.0","id":"\xc3\xa9","result":{}}',
             b'{"jsonrpc":"2.0","id":28,"result":{"t":"\xed\xa0\x80"}}']


def _columns(texts: list[bytes], directions: list[int] | None = None) -> Columns:
    buf = b"".join(texts)
    ends = np.cumsum([len(t) for t in texts]).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    n = len(texts)
    direction = np.asarray(directions if directions is not None else
                           [k % 2 for k in range(n)], dtype=np.int8)
    return Columns(buf, starts, ends, np.full(n, np.nan), direction,
                   np.zeros(n, dtype=np.int64), ("s",), np.zeros(n, dtype=np.int64),
                   ("sse",), [""] * n, {})


def _same(cols: Columns, which: np.ndarray | None = None,
          early: _har_kinds.Early | None = None) -> tuple:
    """meaning and meaning_part of the records ``which`` (all): equal, or both hand over."""
    if which is None:
        which = np.arange(len(cols.starts), dtype=np.int64)
    try:
        want = _har_kinds.meaning_part(cols, which, "t.har")
    except _HandOver:
        with pytest.raises(_HandOver):
            _har_kinds.meaning(cols, which, "t.har", early)
        return ()
    got = _har_kinds.meaning(cols, which, "t.har", early)
    assert got[0].dtype == np.int64 and got[3].dtype == np.int64
    assert got[0].tolist() == want[0].tolist()
    for k in (1, 2):  # the id keys, the progress tokens
        assert got[k] == want[k]
        assert all(type(a) is type(b) for a, b in zip(got[k], want[k], strict=True))
    assert got[3].tolist() == want[3].tolist()
    _codes_name_the_keys(got)
    if got[4] is not None:  # asked for the codes alone: the same codes, no lists
        alone = _har_kinds.meaning(cols, which, "t.har", lists=False)
        assert alone[1] is None and alone[2] is None
        assert np.array_equal(alone[4][0], got[4][0]) and alone[4][1] == got[4][1]
    return got


def _codes_name_the_keys(got: tuple) -> None:
    """Where ``meaning`` gives the keys as codes: each code's key is that of every frame
    with that code (-1: None), each key one code (equal keys, equal codes)."""
    if got[4] is None:
        return
    codes, texts = got[4]
    assert codes.shape == (2, len(got[0])) and len(set(texts)) == len(texts)
    named = [*texts, None]
    assert [named[c] for c in codes[0].tolist()] == got[1]
    assert [named[c] for c in codes[1].tolist()] == got[2]


@needs_c
@pytest.mark.parametrize("text", [t.encode() for t in HOSTILE] + BAD_BYTES)
def test_each_hostile_record(text):
    usual = b'{"jsonrpc":"2.0","id":"u","method":"ping"}'
    _same(_columns([text]))
    _same(_columns([usual, text, usual]))  # among records the C reading takes


@needs_c
def test_hostile_records_mixed():
    """All of them in one call (records left to the part among the others, batches of
    several frames and of none shifting the frames after them), several orders."""
    rng = random.Random(5)
    texts = [t.encode() for t in HOSTILE] + BAD_BYTES
    for _ in range(20):
        rng.shuffle(texts)
        got = _same(_columns(texts))
        assert got and len(got[0]) > len(texts)  # batches: more frames than records
    before = dict(_har_kinds.COUNTS)
    _same(_columns(texts))
    assert _har_kinds.COUNTS["part"] > before.get("part", 0)  # some were left
    assert _har_kinds.COUNTS["c"] > before.get("c", 0)  # ... and most taken


@needs_c
def test_a_record_of_no_frame_hands_over():
    usual = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    cols = _columns([usual, b"", usual])  # an empty text: no row at all
    with pytest.raises(_HandOver):
        _har_kinds.meaning_part(cols, np.arange(3), "t.har")
    with pytest.raises(_HandOver):
        _har_kinds.meaning(cols, np.arange(3), "t.har")


def _random_message(rng: random.Random, k: int) -> object:
    ident = rng.choice([k, -k - 1, f"r{k}", str(k), f"é{k}", f"a\"{k}", int(_BIG) + k,
                        k + 0.5, None, f" {k}"])
    return rng.choice([
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
         "params": {"name": "n", "arguments": {"x": rng.random()}}},
        {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text",
                                                                "text": "é\u2028"}]}},
        {"jsonrpc": "2.0", "id": ident, "error": {"code": -1, "message": "m"}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": ident, "progress": rng.random()}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
        [{"jsonrpc": "2.0", "id": ident, "method": "ping"}] * rng.randint(1, 3),
        # a request's progress token and a cancel's request: a token, then not one
        {"jsonrpc": "2.0", "id": k, "method": "tools/call",
         "params": {"name": "n", "_meta": {"progressToken": ident}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled",
         "params": {"requestId": ident}},
    ])


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_random_records(seed):
    """Random messages (ids of every type, escaped or not, batches), with and without
    ``ensure_ascii``, a subset of them asked for, as ``_Found.of`` asks."""
    rng = random.Random(seed)
    texts = [json.dumps(_random_message(rng, k), ensure_ascii=rng.random() < 0.5,
                        separators=rng.choice([(",", ":"), (", ", ": ")])).encode()
             for k in range(400)]
    cols = _columns(texts)
    _same(cols)
    which = np.flatnonzero(np.asarray([rng.random() < 0.6 for _ in texts]))
    _same(cols, which)


@needs_c
def test_early_reading_used_only_for_the_same_records():
    texts = [t.encode() for t in HOSTILE] * 3
    cols = _columns(texts)
    which = np.arange(len(texts), dtype=np.int64)
    early = _har_kinds.Early(cols.buf, cols.starts, cols.ends, which)
    unused = _har_kinds.COUNTS["early unused"]
    _same(cols, which, early)
    assert _har_kinds.COUNTS["early unused"] == unused
    other = _har_kinds.Early(cols.buf, cols.starts, cols.ends, which[1:])
    _same(cols, which, other)  # read for other records: read again, the same
    assert _har_kinds.COUNTS["early unused"] == unused + 1


def test_without_the_extension_the_part_reads_every_record(monkeypatch):
    texts = [t.encode() for t in HOSTILE]
    cols = _columns(texts)
    which = np.arange(len(texts), dtype=np.int64)
    want = _har_kinds.meaning_part(cols, which, "t.har")
    monkeypatch.setattr(_har_kinds, "_native_fn", lambda name: None)
    before = _har_kinds.COUNTS["part"]
    got = _har_kinds.meaning(cols, which, "t.har")
    assert _har_kinds.COUNTS["part"] == before + len(texts)
    assert got[0].tolist() == want[0].tolist() and got[1] == want[1]
    assert got[4] is not None  # the keys numbered here, as the order matches them
    _codes_name_the_keys(got)


@needs_c
def test_frame_kinds_refuses_bad_bounds():
    fk = _native.native.frame_kinds
    with pytest.raises(ValueError):
        fk(b"{}", np.zeros(2, dtype=np.int64), np.zeros(1, dtype=np.int64))
    kinds, keys, refs = fk(b'{"jsonrpc":"2.0","id":1,"result":{}}',
                           np.array([-1, 0, 5, 0], dtype=np.int64),
                           np.array([3, 99, 2, 36], dtype=np.int64))
    assert list(np.frombuffer(kinds, dtype=np.int8)) == [-1, -1, -1, 2] and \
        keys == [None, None, None, "1"] and refs == [None] * 4


def test_frame_kinds_gives_progress_tokens_not_cancelled_ids():
    """The third list: a progress notification's token and a request's _meta token, as
    the table's ref column keys them; a cancel's request id is no token."""
    texts = [b'{"jsonrpc":"2.0","method":"notifications/progress",'
             b'"params":{"progressToken":"p1","progress":1}}',
             b'{"jsonrpc":"2.0","id":3,"method":"tools/call",'
             b'"params":{"name":"t","_meta":{"progressToken":7}}}',
             b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}',
             b'{"jsonrpc":"2.0","id":4,"method":"ping"}']
    buf = b"".join(texts)
    ends = np.cumsum([len(t) for t in texts]).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    _, keys, refs = _native.native.frame_kinds(buf, starts, ends)
    assert keys == [None, "3", None, "4"] and refs == ['"p1"', "7", None, None]


def _sse_har(tmp_path: Path, n: int, seed: int) -> Path:
    """The benchmark's HTTP+SSE HAR (``gen_formats``) of ``n`` messages."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        import gen_formats
    finally:
        sys.path.pop(0)
    path = tmp_path / "sse.har"
    gen_formats.write_har_sse(gen_formats.messages(n, seed=seed), path)
    return path


def _compared(monkeypatch) -> list[int]:
    """Every call of ``meaning`` while loading also compared with ``meaning_part``."""
    calls: list[int] = []
    real = _har_order.meaning

    def both(cols, which, name, early=None, lists=True):
        got = real(cols, which, name, early)  # (the lists too, to compare)
        want = _har_kinds.meaning_part(cols, which, name)
        assert got[0].tolist() == want[0].tolist()
        assert got[1] == want[1] and got[2] == want[2]
        assert got[3].tolist() == want[3].tolist()
        _codes_name_the_keys(got)
        calls.append(len(which))
        return got

    monkeypatch.setattr(_har_order, "meaning", both)
    return calls


@needs_c
def test_the_bundled_and_captured_hars(monkeypatch):
    """Every record of each HAR the column path reads, and the records each load asks
    about (few of these HARs have untimed events the column path places)."""
    from mcp_notebook import bundled
    from mcp_notebook.readers import _har_columns, har

    _compared(monkeypatch)
    paths = sorted(bundled.data_dir().glob("*.har"))
    paths += sorted((Path(__file__).parent.parent / "fixtures").rglob("*.har"))
    assert len(paths) >= 12
    read = 0
    for path in paths:
        mn.load(path, format="har", progress=False)
        found = _har_columns.columns(path.read_bytes(), path.name, path.name,
                                     har._stateless, har._escaped, har._session_from_url,
                                     har._Reader(path, None))
        if found is not None:
            read += 1
            assert _same(found.cols)  # not handed over: compared
    assert read >= 10, read


@needs_c
@pytest.mark.parametrize("seed", [7, 8])
def test_generated_http_sse_traffic(tmp_path, monkeypatch, seed):
    """The benchmark's HTTP+SSE HAR (``gen_formats``), at 3,000 messages."""
    path = _sse_har(tmp_path, 3000, seed)
    calls = _compared(monkeypatch)
    joined: list[int] = []
    real_result = _har_kinds.Joined.result
    monkeypatch.setattr(_har_kinds.Joined, "result",
                        lambda self: joined.append(len(self.which)) or real_result(self))
    from mcp_notebook.fast import cores

    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "auto")
    before = dict(_har_kinds.COUNTS)
    trace = mn.load(path, format="har", progress=False)
    assert len(trace.frames) >= 3000 and calls and sum(calls) > 2900
    assert _har_kinds.COUNTS["c"] - before.get("c", 0) > 2900
    # the readings begun ahead (the POSTs' bodies, the stream's events) were the ones used
    assert joined == calls
    assert _har_kinds.COUNTS["early unused"] == before.get("early unused", 0)


def test_the_early_readings_failure_is_raised(monkeypatch):
    """A failure of the thread's reading is the caller's, not a silent other path."""
    def broken(buf, starts, ends):
        raise MemoryError("no room")

    monkeypatch.setattr(_har_kinds, "_native_fn", lambda name: broken)
    cols = _columns([b'{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    early = _har_kinds.Early(cols.buf, cols.starts, cols.ends, np.arange(1))
    with pytest.raises(MemoryError):
        _har_kinds.meaning(cols, np.arange(1), "t.har", early)


@needs_c
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 500])
def test_early_pieces_join_as_one_reading(n):
    """The thread's pieces and the caller's, however they meet, give one reading's."""
    rng = random.Random(n)
    texts = [json.dumps(_random_message(rng, k)).encode() for k in range(n)]
    cols = _columns(texts) if n else _columns([b"{}"])
    which = np.arange(n, dtype=np.int64)
    want = _native.native.frame_spans(cols.buf, cols.starts[which], cols.ends[which])
    for _ in range(3):
        early = _har_kinds.Early(cols.buf, cols.starts, cols.ends, which)
        kinds, pieces, order = early.result()
        assert order is None and bytes(kinds) == bytes(want[0])
        assert _keys_at(pieces) == _keys_at([(want[2], want[1])])  # (the pieces in order)


def _keys_at(pieces: list) -> list[bytes | None]:
    """The texts of each record's keys in the pieces of a reading, the records of the
    pieces end to end (None: none)."""
    out: list[bytes | None] = []
    for texts, spans in pieces:
        places = np.frombuffer(spans, dtype=np.int64).reshape(-1, 2).tolist()
        out += [bytes(texts[a:b]) if a >= 0 else None for a, b in places]
    return out


@needs_c
@pytest.mark.parametrize("seed", range(3))
def test_frame_spans_and_their_codes_are_frame_kinds(seed):
    """``frame_spans`` gives ``frame_kinds``'s kinds, its keys as places in the buffer,
    and ``span_codes`` numbers them by their texts: equal texts one code (the ids' and
    the tokens' alike), each text made as ``frame_kinds`` makes a key."""
    rng = random.Random(seed)
    texts = [json.dumps(_random_message(rng, k % 40)).encode() for k in range(600)]
    texts += [t.encode() for t in HOSTILE]
    rng.shuffle(texts)
    cols = _columns(texts)
    kinds, keys, refs = _native.native.frame_kinds(cols.buf, cols.starts, cols.ends)
    kinds2, spans, key_texts = _native.native.frame_spans(cols.buf, cols.starts, cols.ends)
    assert bytes(kinds) == bytes(kinds2) and len(spans) == 32 * len(texts)
    raw, named = _native.native.span_codes([(key_texts, spans)])
    codes = np.frombuffer(raw, dtype=np.int64).reshape(2, -1)
    # the same records read in three parts (three readings' pieces): the same codes
    cut = [0, len(texts) // 3, len(texts) // 2, len(texts)]
    parts = [_native.native.frame_spans(cols.buf, cols.starts[a:b], cols.ends[a:b])
             for a, b in pairwise(cut)]
    assert _native.native.span_codes([(t, sp) for _, sp, t in parts]) == (raw, named)
    _codes_name_the_keys((np.frombuffer(kinds, dtype=np.int8), keys, refs, None,
                          (codes, named)))
    seen = [c for c in codes.reshape(-1).tolist() if c >= 0]  # in the order first come
    assert list(dict.fromkeys(seen)) == list(range(len(named)))
    assert len(named) < len(texts)  # keys met again: the same code
    with pytest.raises(ValueError):  # a place outside the buffer
        _native.native.span_codes([(b"12", np.array([0, 3, -1, -1], dtype=np.int64))])
    assert _native.native.span_codes([]) == (b"", [])


@needs_c
def test_the_early_reading_only_where_a_core_is_free(tmp_path, monkeypatch):
    """The thread reads the kinds ahead only where a second core is free: under
    MCP_NOTEBOOK_SPLIT=none (or on one core) they are read when asked, to the same
    frames."""
    from mcp_notebook.fast import cores

    path = _sse_har(tmp_path, 600, 3)
    made: list[int] = []
    real = _har_kinds.Early

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kw):
            made.append(1)
            super().__init__(*args, **kw)

    from mcp_notebook.readers import _har_columns

    monkeypatch.setattr(_har_columns, "Early", Spy)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    frames = {}
    for split in ("auto", "none"):
        monkeypatch.setattr(cores, "SPLIT", split)
        made.clear()
        frames[split] = mn.load(path, format="har", progress=False).frames
        # ahead: the POSTs' bodies, then the streams' events (two readings)
        assert len(made) == (2 if split == "auto" else 0), split
    assert frames["auto"].equals(frames["none"])


@pytest.mark.parametrize("many", [False, True], ids=["few", "many"])
def test_the_keys_of_the_records_left_join_the_codes(many):
    """The keys of records ``frame_spans`` did not take get the code of an equal text the
    C reading numbered, or a new one after the texts (a few looked for one by one, many
    by one dict: the same codes)."""
    texts = [str(k) for k in range(200)] + ['"a"', '"b"']
    n = 100 if many else 5
    keys = [str(3 * k) if k % 2 else f'"x{k}"' for k in range(n)] + [None, '"a"']
    refs = [None] * (n - 1) + ['"b"', str(7), '"new"']
    got_texts = list(texts)
    codes = _har_kinds._coded(got_texts, keys, refs)
    named = [*got_texts, None]
    assert [named[c] for c in codes[0].tolist()] == keys
    assert [named[c] for c in codes[1].tolist()] == refs
    assert got_texts[:len(texts)] == texts and len(set(got_texts)) == len(got_texts)
    assert codes[0][1] == 3 and codes[1][-2] == 7  # a text the C reading numbered


@needs_c
def test_the_order_without_the_c_reading_is_the_same(tmp_path, monkeypatch):
    """Without ``frame_spans`` (an extension built before it), the table's part reads the
    records the order asks about and ``meaning`` numbers their keys itself: the HTTP+SSE
    HAR's frames, pairs and findings are those of the C reading."""
    path = _sse_har(tmp_path, 800, 5)
    want = mn.load(path, format="har", progress=False)
    from mcp_notebook.readers import _har_columns

    real = _har_kinds._native_fn
    for module in (_har_kinds, _har_columns):  # (each asks for the functions)
        monkeypatch.setattr(module, "_native_fn",
                            lambda name: None if name in ("frame_spans", "span_codes")
                            else real(name))
    before = _har_kinds.COUNTS["part"]
    got = mn.load(path, format="har", progress=False)
    assert _har_kinds.COUNTS["part"] - before >= 800  # the part read them
    assert got.frames.equals(want.frames)
    assert got.pairs.equals(want.pairs) and got.violations.equals(want.violations)
