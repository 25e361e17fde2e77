"""A package outside the engine adds a rule the way the engine's own rule modules do: a
:class:`Rule` and its check registered with ``@check(rule)``; the catalogue, the docs table
and every trace's violations then hold it."""

from __future__ import annotations

import numpy as np
import pytest

import mcp_notebook as mn
from helpers import INIT, load_rows, ok, req
from mcp_notebook.engine import checks
from mcp_notebook.protocol.rules import RULES, Rule, render_markdown


@pytest.fixture
def outside_rule():
    rule = Rule("test-tools-list-twice", "info", "tools/list is asked once",
                "A test rule.", "tests/engine/test_registry.py", "Ask once.", quoted=False)

    @checks.check(rule)
    def twice(vi: checks.VecInput) -> checks.Hits:
        codes = vi.method_codes(lambda m: m == "tools/list")
        rows = np.flatnonzero((vi.kind == checks.REQUEST) & vi.method_in(codes))
        return checks.hits(rows[1:], np.full(max(len(rows) - 1, 0), rows[0] if len(rows) else -1))

    yield rule
    RULES._rules.remove(rule)
    del RULES._by_code[rule.code]
    del checks.CHECKS[rule.code]


def test_an_outside_rule_joins_the_catalogue_and_the_findings(tmp_path, outside_rule):
    assert outside_rule in RULES and mn.rules()["code"].eq(outside_rule.code).any()
    assert f"`{outside_rule.code}`" in render_markdown()
    rows = INIT + [("c2s", req(1, "tools/list")), ("s2c", ok(1)),
                   ("c2s", req(2, "tools/list")), ("s2c", ok(2))]
    v = load_rows(tmp_path, rows).violations
    got = v[v["rule"] == outside_rule.code]
    assert got["seq"].tolist() == [5] and got["related_seq"].tolist() == [3]


def test_a_code_is_taken_once():
    with pytest.raises(ValueError, match="taken"):
        RULES.register(Rule("parse-error", "info", "x", "x", "x", "x"))


def test_a_rule_without_a_check_is_a_clear_error(tmp_path):
    rule = RULES.register(Rule("test-no-check", "info", "x", "x", "x", "x"))
    try:
        with pytest.raises(LookupError, match="has no check"):
            load_rows(tmp_path, INIT).violations  # noqa: B018
    finally:
        RULES._rules.remove(rule)
        del RULES._by_code[rule.code]
