"""The checks' per-finding and per-item Python steps taken as columns (checks round 2),
each held to the plain step it replaces:

- the violations table's messages (:func:`mcp_notebook.engine.messages.messages`): each
  finding worded alone by :func:`~mcp_notebook.engine.messages.message`;
- a list answer's items keyed in C (``_keyed_text``): the dict comprehension over the
  typed items, keys that are no string left out, the last of equal keys kept;
- each ``tools/call``'s tool (``_walk_calls``): the list its scope's latest answer left,
  looked up call by call; ``tool-not-listed``'s details worded call by call;
- the capability rules' hits: each row once, with the first detail found for it.

Inputs: the sessions, meta2026 and default payload profiles, a capture of many sessions
with lists of their own, the edge captures (tap and NDJSON, raised anomaly rates) and
every bundled trace.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from conftest import _gen_capture
from test_checks_keys import BUNDLED, _many_lists, _view

import mcp_notebook as mn
from mcp_notebook.conversation._contract_lists import _TYPED, _at, _keyed_text, _latest
from mcp_notebook.conversation._contract_tools import _not_listed, _walk_calls
from mcp_notebook.conversation._view import Hit
from mcp_notebook.engine.checks import run_vec_columns
from mcp_notebook.engine.messages import message, messages
from mcp_notebook.protocol.rules import RULES

_GEN = _gen_capture()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory,
           edge_captures: dict[str, Path]) -> list[Path]:
    out = tmp_path_factory.mktemp("columns")
    files = []
    for profile in ("sessions", "meta2026", "default"):
        path = out / f"{profile}.ndjson"
        _GEN.generate(path, 6000, "ndjson", seed=5, anomaly_scale=5.0, profile=profile)
        files.append(path)
    files.append(_many_lists(out / "lists.jsonl", 200))
    # a tap of many sessions (a group of frames per session and method)
    path = out / "sessions.tap.jsonl"
    _GEN.generate(path, 8000, "tap", seed=5, sessions=150, anomaly_scale=5.0,
                  profile="sessions")
    files.append(path)
    files.append(_conditioned(out / "conditions.jsonl", 40))
    return [*files, *edge_captures.values(), *BUNDLED]


def _conditioned(path: Path, sessions: int) -> Path:
    """Sessions of 2025-11-25 whose clients declare sampling and elicitation with or
    without ``tools`` and ``url``, and servers that ask with and without them (some
    members spelled with escapes: the text prefilter keeps those)."""
    rnd = random.Random(8)
    lines = []
    for s in range(sessions):
        sid = f"s{s}"
        caps: dict[str, Any] = {"sampling": rnd.choice([{}, {"tools": {}}]),
                                "elicitation": rnd.choice([{}, {"url": {}}, {"form": {}}])}
        version = rnd.choice(["2025-11-25"] * 3 + ["2024-11-05", "2025-03-26", "2025-06-18"])
        lines.append(("c2s", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                         "params": {"protocolVersion": version,
                                                    "capabilities": caps,
                                                    "clientInfo": {"name": "c", "version": "1"}}}),
                      sid))
        server = rnd.choice([{}, {"tools": {}}, {"prompts": {}, "tools": {"listChanged": True}}])
        lines.append(("s2c", json.dumps({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": version, "capabilities": server,
            "serverInfo": {"name": "s", "version": "1"}}}), sid))
        # methods the server's capabilities, the version or the direction judge
        for k, (d, method) in enumerate(rnd.sample([
                ("c2s", "tools/list"), ("c2s", "prompts/list"), ("c2s", "foo/bar"),
                ("s2c", "tools/call"), ("c2s", "sampling/createMessage"),
                ("c2s", "elicitation/create"), ("s2c", "ping"), ("c2s", "resources/read")],
                4)):
            lines.append((d, json.dumps({"jsonrpc": "2.0", "id": 100 + k, "method": method}),
                          sid))
        for k in range(rnd.randint(1, 6)):
            params = rnd.choice([
                '{"messages":[],"maxTokens":5}', '{"messages":[],"tools":[]}',
                '{"messages":[],"toolChoice":{"mode":"auto"}}', '{"messages":[],"\\u0074ools":[]}',
                '{"messages":[{"content":{"text":"\\"tools\\""}}]}'])
            method = "sampling/createMessage"
            if rnd.random() < 0.5:
                method = "elicitation/create"
                params = rnd.choice(['{"mode":"url","url":"https://x"}', '{"mode":"form"}',
                                     '{"message":"m"}', '{"\\u006dode":"url"}',
                                     '{"message":"\\"mode\\""}'])
            lines.append(("s2c", f'{{"jsonrpc":"2.0","id":{k + 1},"method":"{method}",'
                                 f'"params":{params}}}', sid))
    with open(path, "w", encoding="utf-8") as f:
        for k, (d, raw, sid) in enumerate(lines):
            json.loads(raw)
            f.write(json.dumps({"ts": 1.0 + k, "dir": d, "session": sid, "raw": raw}) + "\n")
    return path


# -- messages ---------------------------------------------------------------------------------

def _plain_messages(rules: list[Any], rule: np.ndarray, detail: list[str]) -> list[str]:
    return [message(rules[k], d) for k, d in zip(rule.tolist(), detail, strict=True)]


def test_messages_of_repeated_distinct_and_empty_details() -> None:
    rules = list(RULES)[:4]
    rule = np.asarray([0, 1, 0, 2, 2, 0, 3, 1, 0, 3], dtype=np.int32)
    detail = ["a", "", "a", "x", "y", "", "only", "", "b", "z"]
    got = messages(rules, rule, detail)
    assert got.dtype == object
    assert got.tolist() == _plain_messages(rules, rule, detail)
    assert got[0] is got[2]  # equal (rule, detail): one string
    assert got[1] == f"{rules[1].title}. {rules[1].advice}"  # no detail: no colon
    assert messages(rules, np.empty(0, dtype=np.int32), []).tolist() == []
    # a rule with no finding among others
    rule = np.asarray([3, 0, 3], dtype=np.int32)
    assert messages(rules, rule, ["p", "q", "p"]).tolist() == _plain_messages(
        rules, rule, ["p", "q", "p"])


def test_messages_of_every_finding_are_the_findings_worded_one_by_one(
        inputs: list[Path]) -> None:
    found = 0
    for path in inputs:
        t = mn.load(path)
        h = run_vec_columns(t._check_input(t.versions))
        got = messages(h.rules, h.rule, h.detail).tolist()
        assert got == _plain_messages(h.rules, h.rule, h.detail), path.name
        if len(h):
            assert t.violations["message"].tolist() == got, path.name
        found += len(h)
    assert found > 1000


# -- list items -------------------------------------------------------------------------------

ITEM_TEXTS = [
    '[{"name":"a"},{"name":"b","inputSchema":{"type":"object"}}]',
    '[{"name":"a","description":"1"},{"name":"a","description":"2"},{"name":"c"}]',
    '[{"name":1},{"name":"b"},{"name":null},{},{"name":"b","outputSchema":null}]',
    '[{"name":["x"]},{"name":{"y":1}}]', "[]", '[{"name":"\\u00e9t\\u00e9"}]',
]


def _plain_keyed(text: bytes, member: str, key: str) -> list[tuple[str, bytes]]:
    items = _TYPED[member, key].decode(text)
    kept = {k: item for item in items if (k := getattr(item, key)).__class__ is str}
    return [(k, msgspec.json.encode(v)) for k, v in kept.items()]


@pytest.mark.parametrize("text", ITEM_TEXTS)
def test_list_items_keyed_as_the_plain_comprehension(text: str, inputs: list[Path]) -> None:
    view = _view(mn.load(inputs[0]))
    got = _keyed_text(view, text.encode(), "tools", "name")
    assert got is not None
    assert [(k, msgspec.json.encode(v)) for k, v in got.items()] == \
        _plain_keyed(text.encode(), "tools", "name")


def test_list_items_of_every_list_answer(inputs: list[Path]) -> None:
    texts = 0
    for path in inputs:
        view = _view(mn.load(path))
        listed = view.vi.listed
        if listed is None or not len(listed):
            continue
        for member, key in _TYPED:
            for value in listed.values.tolist():
                text = value.get(member)
                if text.__class__ is not bytes:
                    continue
                got = _keyed_text(view, text, member, key)
                assert got is not None
                assert [(k, msgspec.json.encode(v)) for k, v in got.items()] == \
                    _plain_keyed(text, member, key), (path.name, member)
                texts += 1
    assert texts > 500


# -- tools/call look-ups ----------------------------------------------------------------------

def test_each_calls_tool_is_the_look_up_of_its_scopes_latest_list(inputs: list[Path]) -> None:
    calls_seen = unlisted = 0
    for path in inputs:
        for columns in (True, False):
            view = _view(mn.load(path), columns)
            calls = _walk_calls(view)
            lists = _latest(view, "tools/list", "tools", "name")
            names = calls.name.tolist()
            for k, (seq, scope) in enumerate(zip(calls.seq.tolist(),
                                                 view.scopes(calls.seq.tolist()), strict=True)):
                listed = _at(lists, scope, seq)
                assert listed is not None
                assert calls.tool[k] is listed.get(names[k]), (path.name, seq)
                assert calls.tools[calls.which[k]] is calls.tool[k]
            want = [Hit(int(s), None, f"{n!r} was not in the latest tools/list")
                    for s, n, tool in zip(calls.seq.tolist(), names, calls.tool.tolist(),
                                          strict=True) if tool is None]
            assert _not_listed(view) == want, path.name
            calls_seen += len(calls.seq)
            unlisted += len(want)
    assert calls_seen > 1000 and unlisted > 20


def test_capability_hits_are_each_row_once_with_its_first_detail(inputs: list[Path]) -> None:
    """The capability rules' hits in frame order, each row once; the lifecycle and
    capability fixtures among the bundled traces have findings of them."""
    from mcp_notebook.conversation.capabilities import _all

    found = 0
    for path in inputs:
        view = _view(mn.load(path))
        for code, hits in _all(view).items():
            seqs = [h.seq for h in hits if code != "capability-client-undeclared"
                    or h.related is None]
            assert seqs == sorted(set(seqs)), (path.name, code)
            assert all(isinstance(h, Hit) and isinstance(h.detail, str) and h.detail
                       for h in hits)
            found += len(hits)
    assert found > 50


def test_tool_calls_of_a_planted_list(tmp_path: Path) -> None:
    """Two lists in one session, a call before any list (left out), calls of listed and
    unlisted tools, and a name that is no string."""
    rows = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "a"}, {"name": 3}]}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "b"}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 3}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 6, "result": {"tools": [{"name": "b"}]}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "b"}},
    ]
    path = tmp_path / "calls.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    view = _view(mn.load(path))
    calls = _walk_calls(view)
    assert calls.seq.tolist() == [3, 4, 8, 9]
    assert [None if t is None else t.get("name") for t in calls.tool.tolist()] == \
        ["a", None, None, "b"]
    assert [h.seq for h in _not_listed(view)] == [4, 8]


# -- the collector's pause --------------------------------------------------------------------

@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
def test_checks_leave_the_collector_as_found_and_no_cycle_behind(
        inputs: list[Path], enabled: bool) -> None:
    """``t.pairs`` and ``t.violations`` pause the cyclic collector: they must leave it as
    they found it, and leave no cycle for it to free (their one cycle, the conversation
    view and its input, is broken before the pause ends)."""
    import gc

    for path in inputs:
        _ = mn.load(path).violations  # first use: the rule modules imported, caches filled
        t = mn.load(path)
        gc.collect()
        (gc.enable if enabled else gc.disable)()
        try:
            _ = t.pairs
            _ = t.violations
            assert gc.isenabled() == enabled
        finally:
            gc.enable()
        assert gc.collect() == 0, path.name


# -- initialize and the capability conditions, a pass over many sessions ------------------------

def _plain_initialize(view: Any) -> dict[int, Any]:
    """The first initialize request of each session and its answer, frame by frame."""
    out: dict[int, Any] = {}
    for seq in view.rows(["initialize"], (0,)):
        s = view.session(seq)
        if s in out:
            continue
        resp = view.response_of.get(seq)
        result = view.result(resp) if resp is not None else None
        out[s] = (view.params(seq), result, seq, resp if result is not None else None)
    return out


def test_initialize_of_each_session_is_the_frame_by_frame_walk(inputs: list[Path]) -> None:
    sessions = 0
    for path in inputs:
        t = mn.load(path)
        got = _view(t).initialize
        want = _plain_initialize(_view(t))
        assert list(got.items()) == list(want.items()), path.name  # the same order too
        sessions += len(got)
    assert sessions > 150


def test_capability_conditions_are_every_row_decoded(
        inputs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The capability rules with the rows that meet a condition found by the text
    prefilter, in one pass over every group, equal those rules with every row of the
    groups decoded and judged plainly."""
    from mcp_notebook.conversation import capabilities as cp

    met = 0
    for path in inputs:
        t = mn.load(path)
        got = cp._all(_view(t))

        def plain(view: Any, groups: Any, firing: Any) -> dict[str, set[int]]:
            nonlocal met
            out: dict[str, set[int]] = {}
            for values, group in groups:
                for n, _ in firing(values):
                    if n.when in ("tools", "url"):
                        rows = group.tolist()
                        view.prefetch(rows)
                        out.setdefault(n.when, set()).update(
                            r for r in rows if cp._WHEN[n.when](view.params(r)))
            met += sum(map(len, out.values()))
            return out
        monkeypatch.setattr(cp, "_conditions", plain)
        assert cp._all(_view(t)) == got, path.name
        monkeypatch.undo()
    assert met > 0  # some rows meet a condition


@pytest.mark.parametrize("seed", range(6))
def test_state_index_is_the_latest_answer_of_each_frames_scope(seed: int) -> None:
    """Scopes with and without answers (-2: the capture's scope, 2026-07-28), frames
    before, between, on and after their scope's answers."""
    from mcp_notebook.conversation._contract_lists import _state_index

    rnd = random.Random(seed)
    lists: dict[int, tuple[list[int], list[dict[str, Any]]]] = {}
    for scope in rnd.sample([-2, *range(40)], rnd.randint(1, 25)):
        answers = sorted(rnd.sample(range(2000), rnd.randint(1, 30)))
        lists[scope] = (answers, [{"scope": scope, "at": a} for a in answers])
    flat = [s for _, states in lists.values() for s in states]
    scopes = np.asarray([rnd.choice([-2, -1, *range(45)]) for _ in range(3000)], dtype=np.int64)
    seqs = np.asarray([rnd.randrange(2100) for _ in range(3000)], dtype=np.int64)
    got = _state_index(lists, scopes, seqs)
    want = [_at(lists, s, q) for s, q in zip(scopes.tolist(), seqs.tolist(), strict=True)]
    assert [None if k < 0 else flat[k] for k in got.tolist()] == want
    assert sum(w is not None for w in want) > 100 and sum(w is None for w in want) > 100
    assert not len(_state_index({}, scopes, seqs)[_state_index({}, scopes, seqs) >= 0])


# -- per-session verdicts decided once per alike sessions ---------------------------------------

def _plain_methods(vi: Any, want: str) -> tuple[list[int], list[str]]:
    """unknown-method / wrong-direction judged per (session, method, direction) seen."""
    from mcp_notebook.engine.checks import DIRS
    from mcp_notebook.protocol import versions as V

    out = []
    kinds, methods = vi.kind.tolist(), vi.method.tolist()
    notif = {i for i, m in enumerate(vi.method_cats) if m.startswith("notifications/")}
    for r, (k, m) in enumerate(zip(kinds, methods, strict=True)):
        if m < 0 or not (k == 0 and m not in notif or k == 1):
            continue
        version, name = vi.version_of(int(vi.session[r])), vi.method_cats[m]
        d = int(vi.direction[r])
        entry = V.methods(version).get(name)
        if entry is None:
            if want == "unknown" and V.removed_in(name, version) is None:
                out.append((r, f"{name} is not a {version} method"))
        elif want == "direction" and d >= 0 and entry[1] not in ("both", DIRS[d + 1]):
            side = "client" if entry[1] == "c2s" else "server"
            out.append((r, f"{name} is sent by the {side} in {version}"))
    return [r for r, _ in out], [d for _, d in out]


def test_method_rules_are_each_frame_judged_by_its_sessions_version(inputs: list[Path]) -> None:
    from mcp_notebook.engine.checks import CHECKS, load_rule_modules

    load_rule_modules()
    found = 0
    for path in inputs:
        t = mn.load(path)
        for code, want in (("unknown-method", "unknown"), ("wrong-direction", "direction")):
            vi = t._check_input(t.versions)
            seq, _, det = CHECKS[code](vi)
            assert (seq.tolist(), list(det)) == _plain_methods(vi, want), (path.name, code)
            found += len(seq)
    assert found > 50


def test_capability_verdicts_shared_by_alike_sessions_are_each_sessions_own(
        inputs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions of one version with equal capabilities share their groups' verdicts: equal
    to every session judged on its own (each session's capabilities a key of its own)."""
    from mcp_notebook.conversation import capabilities as cp

    found = 0
    for path in inputs:
        t = mn.load(path)
        got = cp._all(_view(t))
        monkeypatch.setattr(cp, "_text", lambda caps: object())
        assert cp._all(_view(t)) == got, path.name
        monkeypatch.undo()
        found += sum(map(len, got.values()))
    assert found > 100


@pytest.mark.parametrize("caps", [{"a": float("inf")}, {"a": None}, {"a": 1}, {"a": True},
                                  {"a": "True"}, {"a": [1]}, {"a": {}}])
def test_capability_keys_tell_values_apart(caps: dict[str, Any]) -> None:
    from mcp_notebook.conversation.capabilities import _text

    others = [{"a": float("inf")}, {"a": None}, {"a": 1}, {"a": True}, {"a": "True"},
              {"a": [1]}, {"a": {}}]
    same = [o for o in others if _text(o) == _text(caps)]
    assert same == [caps] and type(same[0]["a"]) is type(caps["a"])  # itself only


def _plain_removed(view: Any) -> list[Hit]:
    """removed-method judged per (session, method) group, every group made."""
    from mcp_notebook.protocol import versions as V

    vi, out = view.vi, []
    rows = view.row_array([m for m in vi.method_cats if isinstance(m, str)])
    for (s_code, m_code), group in view.groups(rows, vi.session, vi.method):
        m, version = vi.method_cats[m_code], V.normalise(vi.version_of(s_code))
        removed = V.removed_in(m, version)
        if removed is not None:
            out += [Hit(int(seq), None, f"{m} was removed in {removed[0]} (last in "
                        f"{removed[1]}; this session is {version})") for seq in group.tolist()]
    return sorted(out)


def test_removed_methods_are_each_group_judged(inputs: list[Path], tmp_path: Path) -> None:
    from mcp_notebook.conversation.rev2026 import _removed

    lines = []
    for s in range(30):
        version = ["2025-06-18", "2025-11-25", "2026-07-28"][s % 3]
        for k, method in enumerate(["initialize", "ping", "tools/list", "initialize"]):
            raw = {"jsonrpc": "2.0", "id": k, "method": method,
                   "params": {"protocolVersion": version, "capabilities": {},
                              "clientInfo": {"name": "c", "version": "1"}}}
            lines.append(json.dumps({"ts": 1.0 + len(lines), "dir": "c2s", "session": f"s{s}",
                                     "raw": json.dumps(raw)}))
            if k == 0:
                lines.append(json.dumps({"ts": 1.0 + len(lines), "dir": "s2c",
                                         "session": f"s{s}", "raw": json.dumps({
                                             "jsonrpc": "2.0", "id": 0, "result": {
                                                 "protocolVersion": version,
                                                 "capabilities": {}}})}))
    path = tmp_path / "removed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found = 0
    for p in [path, *inputs]:
        view = _view(mn.load(p))
        got = _removed(view)
        assert got == _plain_removed(_view(mn.load(p))), p.name
        found += len(got)
    assert found >= 20
