"""The loader's call and list columns: what the conversation rules read of tools/call,
prompts/get, resources/read, the list requests and the list answers, kept by the scan so
that no frame text is read after the load. The C scanner and the Python scan keep the
same columns; the findings with the columns are the findings of reading the texts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

import mcp_notebook as mn
from helpers import INIT, load_rows, need_native, ok, req, tap
from mcp_notebook import conversation
from mcp_notebook.conversation._view import view_of
from mcp_notebook.engine import native
from mcp_notebook.engine.checks import run_vec
from mcp_notebook.fast.rows import CALL_METHODS, LISTED

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRACES = sorted(p for p in [*DATA.iterdir(), *FIXTURES.iterdir()] if p.name != "README.md")

TOOLS = [{"name": "add", "inputSchema": {"type": "object", "required": ["a"],
                                         "properties": {"a": {"type": "integer"}}}}]
# what the columns have to get right: escapes, a name that is no string, a member twice
# (the last counts, as for msgspec), absent params, task and cursor, arguments that are no
# object, a list answer with two listed members
EDGES: list[tuple[str, Any]] = [
    *INIT,
    ("c2s", req(1, "tools/list")),
    ("s2c", ok(1, {"tools": TOOLS, "nextCursor": "c"})),
    ("c2s", req(2, "tools/list", {"cursor": "c"})),
    ("s2c", ok(2, {"tools": [], "prompts": [{"name": "p"}]})),
    ("c2s", req(3, "tools/call", {"name": "add", "arguments": {"a": 1}})),
    ("c2s", '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a\\u0064d",'
            '"arguments":{"a":"\\u00e9\\n"}}}'),
    ("c2s", req(5, "tools/call", {"name": 7, "arguments": {}})),
    ("c2s", '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x",'
            '"arguments":[1],"name":"add","arguments":"s"}}'),
    ("c2s", req(7, "tools/call")),
    ("c2s", req(8, "tools/call", {"name": "add", "task": {"ttl": 1}})),
    ("c2s", req(9, "prompts/get", {"name": "p", "arguments": {"x": "1"}})),
    ("c2s", req(10, "resources/read", {"uri": "file:///a b"})),
    ("c2s", req(11, "tools/call", {"name": "add", "arguments": None})),
    ("c2s", '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add",'
            '"arguments": {"a" : [ 1 , 2 ] } }}'),
]


def columns(t: mn.Trace) -> tuple[list[Any], list[Any]]:
    s = t._store
    return ([[r, list(v)] for r, v in s.call.as_dict().items()],
            [[r, v] for r, v in zip(s.listed.rows.tolist(), s.listed.values, strict=True)])


def from_texts(t: mn.Trace) -> tuple[dict[int, Any], dict[int, Any]]:
    """What the columns should hold, from each frame's text (json.loads, last member wins)."""
    calls, lists = {}, {}
    f = t.frames
    for seq in f.index[f["kind"] == "request"]:
        msg = t.message(seq)
        if isinstance(msg, dict) and msg.get("method") in CALL_METHODS:
            p = msg.get("params") or {}
            calls[seq] = (p.get("name"), p.get("uri"), p.get("arguments"), "task" in p,
                          "cursor" in p)
    for seq in f.index[f["kind"] == "result"]:
        msg = t.message(seq)
        res = msg.get("result") if isinstance(msg, dict) else None
        got = {k: res[k] for k in LISTED if isinstance(res, dict) and k in res}
        if got:
            lists[seq] = got
    return calls, lists


def test_the_columns_hold_what_the_texts_say(tmp_path):
    t = load_rows(tmp_path, EDGES)
    calls, lists = columns(t)
    want_calls, want_lists = from_texts(t)
    # every request of those methods is there but the one whose name is no string
    assert [r for r, _ in calls] == [s for s, v in want_calls.items() if not isinstance(v[0], int)]
    for r, (name, uri, args, task, cursor) in calls:
        w = want_calls[r]
        assert (name, uri, task, cursor) == (w[0], w[1], w[3], w[4]), r
        assert (json.loads(args) if args else None) == w[2], r
    assert [r for r, _ in lists] == list(want_lists)
    for r, got in lists:
        assert {k: json.loads(v) for k, v in got.items()} == want_lists[r]
    by_row = dict(calls)
    assert by_row[len(INIT) + 5][0] == "add"  # \u0064 undone
    assert by_row[len(INIT) + 7][:3] == ["add", None, b'"s"']  # the last of each member
    assert by_row[len(INIT) + 8][:3] == [None, None, b""]  # no params
    assert by_row[len(INIT) + 12][2] == b"null"
    assert by_row[len(INIT) + 13][2] == b'{"a" : [ 1 , 2 ] }'  # the member's own text


@pytest.mark.parametrize("path", [*TRACES, "edges"], ids=lambda p: getattr(p, "name", p))
def test_the_c_scanner_and_the_python_scan_keep_the_same_columns(path, tmp_path, monkeypatch):
    need_native()
    if path == "edges":
        path = tap(tmp_path / "capture.jsonl", EDGES)
    c = columns(mn.load(path))
    monkeypatch.setattr(native, "native", None)
    assert columns(mn.load(path)) == c


def findings(t: mn.Trace, columns: bool = True, deep: bool = True) -> list[tuple]:
    """The conversation findings, read through the loader's columns or (``columns=False``)
    from the frames' texts, as the rules did before the columns."""
    vi = t._check_input(t.versions)
    if not columns:
        vi.call = vi.listed = None
    if deep:
        vi.__dict__["_conversation_deep"] = True
    return [(r.code, seq, rel, detail) for r, seq, rel, detail in run_vec(vi, conversation.RULES)]


def differences(a: list[tuple], b: list[tuple]) -> list[str]:
    """What one list of findings has and the other lacks (empty: the same findings)."""
    sa, sb = set(a), set(b)
    return [f"only in the first: {f}" for f in sorted(sa - sb, key=str)] + \
        [f"only in the second: {f}" for f in sorted(sb - sa, key=str)] + \
        ([] if len(a) == len(b) else [f"{len(a)} findings against {len(b)}"])


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_the_columns_give_the_findings_of_the_texts(path):
    """On every bundled trace: the findings with the columns are those of reading the
    texts, deep and as t.violations runs them; t.violations holds the deep findings but
    the schema validation of object arguments (and what is built on it)."""
    t = mn.load(path)
    deep, shallow = findings(t), findings(t, deep=False)
    assert differences(deep, findings(t, columns=False)) == []
    assert differences(shallow, findings(t, columns=False, deep=False)) == []
    lazy = {c for c in conversation.CODES if conversation.deferred(c, 10**9)}
    assert set(shallow) <= set(deep)
    assert {f[0] for f in set(deep) - set(shallow)} <= lazy


def test_the_comparison_fails_on_a_dropped_finding(monkeypatch):
    """The comparison above can fail: a rule that drops its first finding when it reads the
    columns is caught."""
    from mcp_notebook.engine import checks

    t = mn.load(DATA / "conversation-bad-arguments.jsonl")
    first = findings(t)[0]  # there is a finding to drop
    vec = conversation.VEC_CHECKS[first[0]]

    def dropping(vi: Any) -> Any:
        seq, rel, det = vec(vi)
        return (seq[1:], rel[1:], det[1:]) if vi.call is not None else (seq, rel, det)
    monkeypatch.setitem(checks.CHECKS, first[0], dropping)
    got = differences(findings(t), findings(t, columns=False))
    assert got[0] == f"only in the second: {first}" and len(got) == 2


def test_a_wrong_column_value_changes_the_findings(tmp_path):
    """The rules read the column, not the text: a name changed in the column is the name
    the rules judge (so the comparison of the two ways sees a column that is wrong)."""
    t = load_rows(tmp_path, [*INIT, ("c2s", req(1, "tools/list")),
                             ("s2c", ok(1, {"tools": TOOLS})),
                             ("c2s", req(2, "tools/call", {"name": "add", "arguments": {"a": 1}}))])
    assert findings(t) == findings(t, columns=False) == []
    s = t._store
    s.call = s.call.with_entry(-1, ("nope", *s.call.entries()[-1][1:]))
    assert [f[0] for f in findings(t)] == ["tool-not-listed"]


def test_the_rules_read_no_frame_text_where_the_columns_hold_the_rows(tmp_path, monkeypatch):
    """A capture of tool calls, prompts, reads and lists: t.violations reads the text of
    no frame of those (only the initialize exchange's, a few per session)."""
    rows = [*INIT, ("c2s", req(1, "tools/list")), ("s2c", ok(1, {"tools": TOOLS})),
            ("c2s", req(2, "prompts/list")), ("s2c", ok(2, {"prompts": [{"name": "p"}]})),
            ("c2s", req(3, "resources/list")), ("s2c", ok(3, {"resources": [{"uri": "a:b"}]}))]
    rows += [("c2s", req(10 + i, "tools/call", {"name": "add", "arguments": {"a": i}}))
             for i in range(20)]
    rows += [("c2s", req(40, "prompts/get", {"name": "p"})),
             ("c2s", req(41, "resources/read", {"uri": "a:c"}))]
    t = load_rows(tmp_path, rows)
    vi = t._check_input(t.versions)
    read: list[int] = []
    texts = vi.texts
    vi.texts = lambda r: (read.extend(int(x) for x in r), texts(r))[1]
    found = run_vec(vi, conversation.RULES)
    assert [(r.code, seq) for r, seq, _, _ in found] == [("resource-not-listed", len(rows) - 1)]
    assert set(read) <= {0, 1}, sorted(read)  # the initialize exchange only
    view = view_of(vi)
    assert view.request_params([len(INIT) + 1])[0].cursor is msgspec.UNSET


def test_the_latest_list_of_many_frames_is_that_of_each_frame(tmp_path):
    """``_latest_at`` (numpy over the scopes, for many frames at once) gives each frame the
    list :func:`contracts._at` gives it alone: two sessions, lists answered in turn, calls
    before, between and after them."""
    from helpers import CLIENT_CAPS, SERVER_CAPS, note
    from mcp_notebook.conversation import contracts

    def init(s: str) -> list[tuple[str, Any, str]]:
        return [("c2s", req(0, "initialize", {"protocolVersion": "2025-06-18",
                                               "capabilities": CLIENT_CAPS,
                                               "clientInfo": {"name": "t", "version": "1"}}), s),
                ("s2c", ok(0, {"protocolVersion": "2025-06-18", "capabilities": SERVER_CAPS,
                               "serverInfo": {"name": "s", "version": "1"}}), s),
                ("c2s", note("notifications/initialized"), s)]
    rows = init("a") + init("b")
    for i in range(12):
        s = "ab"[i % 2]
        rows.append(("c2s", req(100 + i, "prompts/get", {"name": f"p{i % 3}"}), s))
        if i % 3 == 1:
            rows += [("c2s", req(200 + i, "prompts/list"), s),
                     ("s2c", ok(200 + i, {"prompts": [{"name": f"p{i % 3}"}]}), s)]
    path = tmp_path / "two.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for k, (d, m, s) in enumerate(rows):
            f.write(json.dumps({"ts": 1.0 + k, "dir": d, "session": s,
                                "raw": json.dumps(m)}) + "\n")
    t = mn.load(path)
    view = view_of(t._check_input(t.versions))
    lists = contracts._latest(view, "prompts/list", "prompts", "name")
    gets = view.row_array(["prompts/get"], (0,))
    alone = [contracts._at(lists, sc, seq) for sc, seq in
             zip(view.scopes(gets.tolist()), gets.tolist(), strict=True)]
    assert contracts._latest_at(view, lists, gets) == alone
    assert any(a is None for a in alone) and any(a for a in alone)


def _bare(path: Path, rows: list[tuple[str, Any]]) -> Path:
    """The messages of ``rows`` as a bare NDJSON capture, each line as written."""
    with open(path, "w", encoding="utf-8") as f:
        for _, m in rows:
            f.write((m if isinstance(m, str) else json.dumps(m)) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
def test_a_large_capture_keeps_the_arguments_in_the_file(fmt, tmp_path, monkeypatch):
    """A plain capture read lazily (its text stays in the file) keeps no copy of the
    requests' arguments: bare NDJSON keeps their places in the file, tap records (whose
    frames are escaped in the record) read them again from the frame when asked. The
    column says the same as the Python scan's copies, the findings are those of reading
    the texts, and a bare file changed on disk since the load is an error that says so."""
    need_native()
    import mcp_notebook.fast as fast

    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)  # this small file read lazily
    path = _bare(tmp_path / "bare.ndjson", EDGES) if fmt == "ndjson" else \
        tap(tmp_path / "capture.jsonl", EDGES)
    t = mn.load(path)
    col = t._store.call
    kept = col.src == (0 if fmt == "ndjson" else -2)  # the C scanner's lines
    assert kept.sum() >= 5  # (the Python path's lines, and absent arguments, in the blob)
    assert len(col.blob) == int((col.ends - col.starts)[col.src == -1].sum())
    if fmt == "ndjson":
        assert col.paths == [str(path.resolve())]
    got = columns(t)
    with monkeypatch.context() as m:
        m.setattr(native, "native", None)
        py = mn.load(path)
    assert (py._store.call.src == -1).all()  # the Python scan copies
    assert columns(py) == got
    assert findings(t) == findings(t, columns=False)
    if fmt == "ndjson":
        path.write_text("")
        with pytest.raises(OSError, match="changed on disk"):
            col.args(np.arange(len(col)))


def test_many_distinct_lists_and_names_keep_the_same_columns(tmp_path, monkeypatch):
    """More distinct list texts and names than the C scanner remembers per call (its
    caches then make room): the columns are still the Python scan's, text for text."""
    need_native()
    rows: list[tuple[str, Any]] = [*INIT]
    for i in range(60):
        rows += [("c2s", req(100 + i, "tools/list")),
                 ("s2c", ok(100 + i, {"tools": [{"name": f"t{i}", "inputSchema": {}}]}))]
        if i % 3 == 0:  # an earlier text met again after the cache moved on
            rows += [("c2s", req(300 + i, "tools/list")), ("s2c", ok(300 + i, {"tools": TOOLS}))]
    rows += [("c2s", req(500 + i, "tools/call", {"name": f"n{i % 90}", "arguments": {"a": i}}))
             for i in range(200)]
    rows += [("c2s", req(800 + i, "resources/read", {"uri": f"file:///{'x' * (i % 80)}"}))
             for i in range(120)]
    for path in (tap(tmp_path / "many.jsonl", rows), _bare(tmp_path / "many.ndjson", rows)):
        c = columns(mn.load(path))
        assert len(c[0]) == 200 + 120 + 60 + 20 and len(c[1]) == 80
        with monkeypatch.context() as m:
            m.setattr(native, "native", None)
            assert columns(mn.load(path)) == c


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_rows_of_methods_by_slices_or_by_mask_are_the_same_rows(path):
    """``View.row_array`` takes the rows of one or a few methods from the rows sorted by
    method, and those of many methods by one mask: the same rows either way, in frame
    order, as a plain test of every frame's kind and method gives them."""
    t = mn.load(path)
    view = view_of(t._check_input(t.versions))
    vi = view.vi
    methods = sorted({m for m in vi.method_cats if m is not None})
    counts = np.bincount(np.asarray(vi.method, dtype=np.int64) + 1,
                         minlength=len(vi.method_cats) + 1)[1:]
    by_size = [vi.method_cats[c] for c in np.argsort(-counts, kind="stable").tolist()]
    for names in ([], methods[:1], by_size[-2:], methods[::2], methods, ["no/such"]):
        for kinds in ((0, 1), (0,), (2, 3)):
            want = np.flatnonzero(np.isin(vi.kind, kinds) & np.isin(
                vi.method, [i for i, m in enumerate(vi.method_cats) if m in names]))
            got = view.row_array(names, kinds)
            assert got.dtype == np.int64 and got.tolist() == want.tolist(), (names, kinds)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_methods_present_are_the_methods_some_frame_has(path):
    """``View.methods_present`` from the rows sorted by method, or (too many methods for
    that sort) from a count of every frame's method: the codes of the names some frame has."""
    t = mn.load(path)
    view = view_of(t._check_input(t.versions))
    vi = view.vi
    names = [*sorted({m for m in vi.method_cats if m is not None})[::2], "no/such"]
    want = [i for i, m in enumerate(vi.method_cats)
            if m in names and (np.asarray(vi.method) == i).any()]
    assert view.methods_present(names).tolist() == want
    view.__dict__["_by_method"] = None
    assert view.methods_present(names).tolist() == want


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_capability_findings_by_the_methods_that_can_break_or_by_every_group(path,
                                                                             monkeypatch):
    """The capability rules read only the rows of the methods that can break a row of the
    table when the (session, method) pairs are few, and group every row otherwise: the
    same findings either way."""
    from mcp_notebook.conversation import capabilities

    def found() -> dict:
        t = mn.load(path)
        got = capabilities._all(view_of(t._check_input(t.versions)))
        return {code: [tuple(h) for h in hits] for code, hits in got.items()}

    few = found()
    monkeypatch.setattr(capabilities, "_FEW_GROUPS", -1)
    assert found() == few


def test_unique_inverse_is_numpy_unique():
    """``unique_inverse`` gives ``np.unique(key, return_inverse=True)`` (the inverse
    flat) by a table over a small range of keys, and by numpy's sort over a large one."""
    from mcp_notebook.conversation._view import unique_inverse

    rng = np.random.default_rng(16)
    cases = [np.empty(0, dtype=np.int64), np.array([7]), np.array([-3, -3, 5, -3]),
             rng.integers(0, 50, 1000), rng.integers(-10**12, 10**12, 500),
             rng.integers(0, 2**31 - 1, 3000).astype(np.int32),
             np.array([2**62, -2**62, 0], dtype=np.int64)]
    for key in cases:
        uniq, inverse = unique_inverse(key)
        want_u, want_i = np.unique(key, return_inverse=True)
        assert uniq.dtype == key.dtype and uniq.tolist() == want_u.tolist()
        assert inverse.tolist() == want_i.ravel().tolist()
        assert (uniq[inverse] == key).all()


def test_list_items_by_type_are_the_items_the_texts_give(tmp_path):
    """The list column's answers are decoded by type (the key and the members the rules
    read, the rest left as text); a list with an item that is no object goes the general
    way. Either way the findings are those of reading the texts: a name that is no string
    is no item, a member twice counts the last, an outputSchema of null is none."""
    tools = [{"name": "add", "inputSchema": {"type": "object", "required": ["a"]},
              "outputSchema": None, "description": "x" * 50},
             {"name": 3, "inputSchema": {"type": "object"}},
             {"name": "out", "inputSchema": {"type": "object"},
              "outputSchema": {"type": "object", "required": ["n"]}}]
    twice = ('{"jsonrpc":"2.0","id":5,"result":{"prompts":[{"name":"p","arguments":[],'
             '"arguments":[{"name":"topic","required":true}]}]}}')
    rows = [*INIT, ("c2s", req(1, "tools/list")), ("s2c", ok(1, {"tools": tools})),
            ("c2s", req(2, "tools/call", {"name": "add", "arguments": {}})),
            ("c2s", req(3, "tools/call", {"name": "out", "arguments": {}})),
            ("s2c", ok(3, {"content": [], "structuredContent": {}})),
            ("c2s", req(4, "tools/call", {"name": 3})),
            ("c2s", req(5, "prompts/list")), ("s2c", twice),
            ("c2s", req(6, "prompts/get", {"name": "p", "arguments": {}})),
            ("c2s", req(7, "resources/list")),
            ("s2c", ok(7, {"resources": [{"uri": "a:b"}, "a:c"]})),  # an item no object
            ("c2s", req(8, "resources/read", {"uri": "a:c"})),
            ("c2s", req(9, "resources/read", {"uri": "a:b"}))]
    t = load_rows(tmp_path, rows)
    got = findings(t)
    assert differences(got, findings(t, columns=False)) == []
    # the schemas refuse a name 3 (of the list and of the call) and a resource no object
    at = {r[1]["id"]: len(INIT) + k for k, r in enumerate(rows[len(INIT):])
          if r[0] == "c2s"}
    assert sorted((f[0], f[1]) for f in got) == sorted([
        ("tool-arguments-schema", at[2]), ("tool-output-schema", at[3] + 1),
        ("schema-params", at[4]), ("schema-result", at[1] + 1),
        ("prompt-arguments", at[6]), ("schema-result", at[7] + 1),
        ("resource-not-listed", at[8])])

    from mcp_notebook.conversation._contract_lists import _TYPED, Item, _walk
    view = view_of(t._check_input(t.versions))
    (tool_list,) = _walk(view, "tools/list", "tools", "name")[2]
    assert list(tool_list) == ["add", "out"] and all(isinstance(i, Item)
                                                     for i in tool_list.values())
    (resource_list,) = _walk(view, "resources/list", "resources", "uri")[2]
    assert resource_list == {"a:b": {"uri": "a:b"}}  # the general way: dicts
    items = _TYPED["tools", "name"].decode(json.dumps(tools).encode())
    assert [i.name for i in items] == ["add", 3, "out"]
    assert items[0].get("name") == "add" and items[1].get("name") == 3  # the key as it is
    assert items[0].get("outputSchema", "absent") is None  # null: None, not the default
    assert items[1].get("outputSchema", "absent") == "absent"
    assert items[2].get("outputSchema") is items[2].get("outputSchema")  # decoded once
    with pytest.raises(AttributeError):
        items[0].get("description")  # a member no rule reads is not kept


def test_arguments_kept_in_a_readers_bytearray_read_as_bytes():
    """A document reader's call column keeps every call's arguments in one bytearray (71
    MB at a million messages): the texts asked for come out as bytes, the same as from a
    bytes blob, and the blob is not copied whole (it stays the reader's bytearray)."""
    from mcp_notebook.fast.columns import CallColumn

    texts = [b'{"a":1}', b"", b'{"a":"\\u00e9"}', b"[1,2]", b'{"b":{"c":[]}}']
    col = CallColumn.from_entries(range(len(texts)),
                                  [("t", None, t, False, False) for t in texts])
    want = col.args(np.arange(len(texts)))
    assert want == texts and all(type(t) is bytes for t in want)
    col.blob = bytearray(col.blob)
    got = col.args(np.array([4, 0, 2, 1, 3]))
    assert got == [texts[k] for k in (4, 0, 2, 1, 3)]
    assert all(type(t) is bytes for t in got) and type(col.blob) is bytearray
