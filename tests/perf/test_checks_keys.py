"""The checks after the load decide what they can once per distinct input, and each such
shortcut equals the plain walk it replaces:

- ``prompt-arguments`` judges each distinct (prompt name, text of the prompt's
  ``arguments``, arguments of the call) once, not each prompt object (on a capture of many
  sessions every session lists its own prompts, mostly with the same arguments): held to
  the walk of every ``prompts/get`` against the list its scope's latest answer left.
- ``tool-output-schema`` tells whether a listed tool declares an ``outputSchema`` from the
  member's text (absent or ``null``: none) instead of decoding every listed schema: held
  to ``tool.get("outputSchema") is not None`` for every tool of every list.
- ``t.pairs`` makes its times from the store when the frames table was not built, as the
  frames table makes them: held equal to the pairs built after the frames table.

Inputs: the sessions and meta2026 payload profiles of the benchmark generator, a capture
of many sessions whose lists differ in their descriptions but not (or only sometimes) in
the members the rules read, and every bundled trace.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import _gen_capture

import mcp_notebook as mn
from mcp_notebook.conversation._contract_lists import _TYPED, _at, _latest, _walk
from mcp_notebook.conversation._contract_prompts import _prompt_finding, _prompts
from mcp_notebook.conversation._contract_tools import _declares_output
from mcp_notebook.conversation._view import Hit, View, view_of

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p for p in (ROOT / "data").iterdir() if p.name != "README.md")
_GEN = _gen_capture()


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("keys")
    files = {}
    for profile in ("sessions", "meta2026", "default"):
        path = out / f"{profile}.ndjson"
        _GEN.generate(path, 6000, "ndjson", seed=11, anomaly_scale=5.0, profile=profile)
        files[profile] = path
    files["lists"] = _many_lists(out / "lists.jsonl", 300)
    return files


def _many_lists(path: Path, sessions: int) -> Path:
    """Sessions that each list their own prompts and tools (descriptions differ; the
    arguments and output schemas are drawn from a few, spelled with and without spaces,
    some ``null``), then call them with arguments that break the list or keep to it."""
    rnd = random.Random(3)
    args = ['[{"name":"topic","required":true}]', '[ {"name" : "topic", "required" : true} ]',
            '[{"name":"topic"}]', "[]", "null", '[{"name":"a","required":true},"x"]']
    outs = ['{"type":"object"}', "null", "{}", "false", None]
    lines = []
    for s in range(sessions):
        sid = f"s{s}"
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}
        lines.append(("c2s", json.dumps(init), sid))
        lines.append(("s2c", json.dumps({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}, "prompts": {}},
            "serverInfo": {"name": "s", "version": "1"}}}), sid))
        prompts = ",".join(
            f'{{"name":"p{k}","description":"{rnd.random()}"'
            + ("" if rnd.random() < 0.1 else f',"arguments":{rnd.choice(args)}') + "}"
            for k in range(rnd.randint(1, 4)))
        tools = ",".join(
            f'{{"name":"t{k}","description":"{rnd.random()}","inputSchema":{{"type":"object"}}'
            + ("" if (o := rnd.choice(outs)) is None else f',"outputSchema":{o}') + "}"
            for k in range(rnd.randint(1, 4)))
        lines.append(("c2s", '{"jsonrpc":"2.0","id":1,"method":"prompts/list"}', sid))
        lines.append(("s2c", f'{{"jsonrpc":"2.0","id":1,"result":{{"prompts":[{prompts}]}}}}', sid))
        lines.append(("c2s", '{"jsonrpc":"2.0","id":2,"method":"tools/list"}', sid))
        lines.append(("s2c", f'{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{tools}]}}}}', sid))
        for i in range(rnd.randint(1, 5)):
            sent = rnd.choice([None, {}, {"topic": "x"}, {"other": "y"}, {"a": "1"}, [1]])
            params: dict[str, Any] = {"name": f"p{rnd.randint(0, 4)}"}
            if sent is not None:
                params["arguments"] = sent
            lines.append(("c2s", json.dumps({"jsonrpc": "2.0", "id": 10 + i,
                                             "method": "prompts/get", "params": params}), sid))
            tool = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                    "params": {"name": f"t{rnd.randint(0, 4)}", "arguments": {}}}
            lines.append(("c2s", json.dumps(tool), sid))
            result = rnd.choice([{"content": []}, {"content": [], "structuredContent": {}}])
            lines.append(("s2c", json.dumps({"jsonrpc": "2.0", "id": 100 + i,
                                             "result": result}), sid))
    with open(path, "w", encoding="utf-8") as f:
        for k, (d, raw, sid) in enumerate(lines):
            f.write(json.dumps({"ts": 1.0 + k, "dir": d, "session": sid, "raw": raw}) + "\n")
    return path


def _view(t: mn.Trace, columns: bool = True) -> View:
    vi = t._check_input(t.versions)
    if not columns:  # the lists decoded from the texts: dicts, not typed items
        vi.call = vi.listed = None
    return view_of(vi)


def reference_prompts(view: View) -> list[Hit]:
    """prompt-arguments the plain way: each get against the list its scope's latest
    answer left, judged on its own."""
    lists = _latest(view, "prompts/list", "prompts", "name")
    gets = view.row_array(["prompts/get"], (0,))
    codes, names, args = view.call_codes(gets)
    out = []
    for seq, scope, code, text in zip(gets.tolist(), view.scopes(gets.tolist()),
                                      codes.tolist(), args.tolist(), strict=True):
        listed = _at(lists, scope, seq)
        if listed is None or code < 0:
            continue
        prompt = listed.get(names[code])
        if prompt is None:
            continue
        got = _prompt_finding(names[code], prompt, text)
        if got is not None:
            out.append(Hit(seq, None, *got))
    return out


def _inputs(captures: dict[str, Path]) -> list[Path]:
    return [*captures.values(), *BUNDLED]


@pytest.mark.parametrize("columns", [True, False], ids=["typed", "texts"])
def test_prompt_arguments_equal_the_plain_walk(captures: dict[str, Path], columns: bool) -> None:
    found = 0
    for path in _inputs(captures):
        t = mn.load(path)
        got = _prompts(_view(t, columns))
        assert got == reference_prompts(_view(t, columns)), path.name
        found += len(got)
    assert found > 50  # the captures have findings to compare


def test_prompt_arguments_share_judgements_only_where_the_texts_are_equal(
        captures: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The many-lists capture has far more prompt objects than distinct argument texts,
    so the key is what saves the work; and a key that left the arguments text out would
    be caught by the comparison above (planted here)."""
    from mcp_notebook.conversation import _contract_prompts as cp

    t = mn.load(captures["lists"])
    calls: list[Any] = []
    judge = cp._prompt_finding
    monkeypatch.setattr(cp, "_prompt_finding", lambda *a: calls.append(a) or judge(*a))
    want = reference_prompts(_view(t))
    assert _prompts(_view(t)) == want
    keys = {(name, bytes(p.arguments), text) for name, p, text in calls}
    assert len(keys) == len(calls)  # once per distinct key
    view = _view(t)
    lists = _latest(view, "prompts/list", "prompts", "name")
    gets = view.row_array(["prompts/get"], (0,))
    codes, names, _ = view.call_codes(gets)
    objects = {id(p) for seq, scope, c in zip(gets.tolist(), view.scopes(gets.tolist()),
                                              codes.tolist(), strict=True)
               if (p := (_at(lists, scope, seq) or {}).get(names[c])) is not None}
    assert len(objects) > 2 * len(calls)  # the prompts judged, were it one by one
    monkeypatch.setattr(cp, "_prompt_key", lambda name, prompt: (name,))
    assert _prompts(_view(t)) != want


OUTPUT_TEXTS = ['[{"name":"a"}]', '[{"name":"a","outputSchema":null}]',
                '[{"name":"a", "outputSchema" :  null }]', '[{"name":"a","outputSchema":{}}]',
                '[{"name":"a","outputSchema":false}]', '[{"name":"a","outputSchema":0}]',
                '[{"name":"a","outputSchema":""}]', '[{"name":"a","outputSchema":[]}]',
                '[{"name":"a","outputSchema":{"type":"object"},"outputSchema":null}]',
                '[{"name":"a","outputSchema":null,"outputSchema":{"type":"object"}}]',
                '[{"name":"a","outputSchema":{"type":"object"}}]', '[{}]']


@pytest.mark.parametrize("text", OUTPUT_TEXTS)
def test_declared_output_is_the_member_decoded(text: str) -> None:
    (item,) = _TYPED["tools", "name"].decode(text.encode())
    want = item.get("outputSchema") is not None
    (fresh,) = _TYPED["tools", "name"].decode(text.encode())
    assert _declares_output(fresh) == want  # before the member is decoded
    assert _declares_output(item) == want  # and after
    (plain,) = json.loads(text)
    assert _declares_output(plain) == (bool(plain) and plain.get("outputSchema") is not None)
    assert not _declares_output(None)


def test_declared_output_of_every_listed_tool(captures: dict[str, Path]) -> None:
    seen = set()
    for path in _inputs(captures):
        for columns in (True, False):
            states = _walk(_view(mn.load(path), columns), "tools/list", "tools", "name")[2]
            for tools in states:
                for tool in tools.values():
                    want = bool(tool) and tool.get("outputSchema") is not None
                    assert _declares_output(tool) == want, (path.name, tool)
                    seen.add(want)
    assert seen == {True, False}


@pytest.mark.parametrize("name", ["sessions", "meta2026", "default", "lists", *[
    p.name for p in BUNDLED]])
def test_pairs_without_the_frames_table_are_the_pairs_with_it(
        captures: dict[str, Path], name: str) -> None:
    path = captures.get(name) or ROOT / "data" / name
    alone = mn.load(path)
    pairs = alone.pairs
    assert "frames" not in alone.__dict__  # the pairs did not build the frames table
    after = mn.load(path)
    assert len(after.frames) >= len(pairs)  # the frames table first
    pd.testing.assert_frame_equal(pairs, after.pairs)


def test_hits_as_columns_are_the_hits_one_by_one() -> None:
    from mcp_notebook.conversation import _columns_of

    hits = [Hit(5, None, "a"), Hit(2, 9, "b", "/x"), Hit(7, 0, "c"), Hit(1, None, "")]
    seq, rel, det = _columns_of(hits)
    assert seq.dtype == rel.dtype == "int64"
    assert (seq.tolist(), rel.tolist(), det) == (
        [h.seq for h in hits], [-1 if h.related is None else h.related for h in hits],
        [h.detail for h in hits])
    seq, rel, det = _columns_of([])
    assert (len(seq), len(rel), det, rel.dtype) == (0, 0, [], "int64")


@pytest.mark.parametrize("ids", ["all-long", "mixed"])
def test_big_ids_are_the_reference_test_of_each_request(tmp_path: Path, ids: str) -> None:
    """big-id on a capture whose request ids are all long (the list of keys is read as
    it is) and on one where some are short: the requests whose key the reference test
    calls big, in frame order, with the key in the detail."""
    from mcp_notebook.engine.rules.envelope import _big_id, _is_big

    rnd = random.Random(4)
    lines = []
    for k in range(400):
        choice = rnd.randint(0, 3 if ids == "all-long" else 5)
        rid: Any = [2**53 + rnd.randint(1, 10**6), -(2**60), f"long-string-id-{k:08d}",
                    10**16 + k, k, f"s{k}"][choice]
        lines.append(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}))
    path = tmp_path / "ids.ndjson"
    path.write_text("\n".join(lines) + "\n")
    t = mn.load(path)
    vi = t._check_input(t.versions)
    seq, _, det = _big_id(vi)
    keys = t.frames["id_key"].tolist()
    want = [k for k, key in enumerate(keys) if len(key) > 15 and _is_big(key)]
    assert list(seq) == want and len(want) > 50
    assert det == [f"id {keys[k]} is above 2^53" for k in want]
