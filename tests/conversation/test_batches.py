"""tools/call arguments validated in batches: one compiled validator per tool schema, the
calls of a tool at once, a schema that accepts every object not run at all. The findings
are those of validating each call alone."""

from __future__ import annotations

from typing import Any

import pytest
from test_conversation_rules import ADD, call

from helpers import INIT, load_rows, ok, req
from mcp_notebook import conversation
from mcp_notebook.conversation import contracts

OPEN = {"name": "open", "inputSchema": {"type": "object"}}
REF = {"name": "ref", "inputSchema": {
    "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "integer"}}}}
LIST = [("c2s", req(1, "tools/list")), ("s2c", ok(1, {"tools": [ADD, OPEN, REF]}))]


def argument_findings(trace: Any, deep: bool = True) -> list[tuple[int, str, str | None]]:
    return [(f.seq, f.detail, f.pointer) for f in conversation.check(trace, deep=deep)
            if f.rule == "tool-arguments-schema"]


def tool_call(id: int, name: str, args: Any) -> tuple[str, Any]:
    return call(id, name, args) if args is not None else \
        ("c2s", req(id, "tools/call", {"name": name}))


def alone(tmp_path, name: str, args: Any) -> list[tuple[str, str | None]]:
    """The finding of one call validated in a capture of its own."""
    return [(d, p) for _, d, p in argument_findings(load_rows(tmp_path, INIT + LIST + [
        tool_call(2, name, args)]))]


# arguments: good ones, and bad ones at places the halving of a batch has to find
ARGS: list[Any] = [{"a": i} for i in range(40)]
for k, bad in ((0, {"a": "x"}), (7, [1]), (8, "s"), (21, {"a": 1.5}), (39, {"a": None})):
    ARGS[k] = bad
ARGS[12] = None  # absent arguments count as {}


@pytest.mark.parametrize("name", ["add", "ref", "open"])
def test_a_batch_finds_what_each_call_alone_finds(tmp_path, name):
    rows = INIT + LIST
    for i, args in enumerate(ARGS):
        rows.append(tool_call(10 + i, name, args))
    got = argument_findings(load_rows(tmp_path, rows))
    want = []
    for i, args in enumerate(ARGS):
        want += [(len(INIT) + len(LIST) + i, d, p) for d, p in alone(tmp_path, name, args)]
    assert got == want
    # "add" requires a (the absent arguments too); "open": the list and the string
    expected_bad = {"add": 6, "ref": 5, "open": 2}[name]
    assert len(got) == expected_bad


def test_the_batch_validator_is_made_only_where_it_means_the_same():
    text = contracts.json.dumps(ADD["inputSchema"], sort_keys=True)
    assert contracts._array_validator(text) is not None
    ref = contracts.json.dumps(REF["inputSchema"], sort_keys=True)
    assert contracts._array_validator(ref) is None  # "#/$defs/n" names the tool's own root


@pytest.mark.parametrize(("schema", "every"), [
    ({"type": "object"}, True),
    ({"type": "object", "properties": {}, "required": [], "title": "t"}, True),
    ({"type": "object", "additionalProperties": True}, True),
    ({"type": "object", "additionalProperties": 1}, False),
    ({"type": "object", "additionalProperties": False}, False),
    ({"type": "object", "required": ["a"]}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
    ({"type": "object", "minProperties": 1}, False),
    ({"properties": {}}, False),
    ({"type": ["object", "null"]}, False),
])
def test_a_schema_accepts_every_object_only_when_nothing_constrains_one(schema, every):
    assert contracts._accepts_all(schema) is every


def test_an_accept_all_schema_still_refuses_arguments_that_are_no_object(tmp_path):
    rows = INIT + LIST + [call(2, "open", {"any": [1, {"x": None}]}), call(3, "open", [1])]
    got = argument_findings(load_rows(tmp_path, rows))
    assert [s for s, _, _ in got] == [len(INIT) + len(LIST) + 1]


def test_arguments_nested_too_deep_for_the_validator_are_a_finding_not_a_traceback(tmp_path):
    """jsonschema-rs stops at its recursion limit on a deep instance: the call is reported
    (the schema refused it) and the other calls are judged as ever."""
    deep = '{"a":' * 300 + "1" + "}" * 300
    text = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":' \
        + deep + "}}"
    rows = INIT + LIST + [("c2s", text), call(3, "add", {"a": "x"}), call(4, "open", {"b": 1})]
    got = argument_findings(load_rows(tmp_path, rows))
    first = len(INIT) + len(LIST)
    assert [(s, p) for s, _, p in got] == [(first, "/params/arguments"),
                                           (first + 1, "/params/arguments/a")]
    assert "nested too deep to validate" in got[0][1]


@pytest.mark.parametrize("name", ["add", "ref", "open"])
def test_violations_keep_the_structural_part_of_the_argument_check(tmp_path, name):
    """``t.violations`` (deep=False) validates the calls whose arguments are no object, as
    the deep check does; the object arguments wait for ``conversation.check``/``deep()``."""
    rows = INIT + LIST + [tool_call(10 + i, name, args) for i, args in enumerate(ARGS)]
    t = load_rows(tmp_path, rows)
    deep, shallow = argument_findings(t), argument_findings(t, deep=False)
    first = len(INIT) + len(LIST)
    no_object = {first + k for k, args in enumerate(ARGS)
                 if args is not None and not isinstance(args, dict)}
    assert shallow == [f for f in deep if f[0] in no_object]
    assert {s for s, _, _ in shallow} == no_object  # [1] and "s" break every schema here
    v = t.violations
    assert set(v.loc[v["rule"] == "tool-arguments-schema", "seq"]) == no_object
