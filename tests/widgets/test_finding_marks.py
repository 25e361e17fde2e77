"""A schema finding's member marked in the inspector's JSON tree: the pointer of each
conversation finding (``conversation.pointers``) opens the tree to its member and marks it,
with the finding as its tooltip; the finding picked in the violations list is marked most."""

from __future__ import annotations

import re

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.widgets.render import Mark, json_tree_html, parse_pointer

BAD_ARGUMENTS = mn.sample_path("broken-duplicate-response").parent / \
    "conversation-bad-arguments.jsonl"


@pytest.fixture
def trace(monkeypatch):
    # the sample's findings are the schema validation of object arguments, which
    # t.violations defers (conversation.PARTIAL): run whole here, as under deep()
    for code in conversation.PARTIAL:
        monkeypatch.setitem(conversation.DEEP, code, None)
    return mn.load(BAD_ARGUMENTS)


def _marked(html):
    """``[(pointer, classes, title)]`` of every marked node of a tree."""
    return [(p, c, t) for c, t, p in re.findall(
        r'class="([^"]*mnw-mark[^"]*)" title="([^"]*)" data-pointer="([^"]*)"', html)]


@pytest.mark.parametrize("pointer, parts", [
    ("", ()), ("/params/arguments/a", ("params", "arguments", "a")),
    ("/a~1b/m~0n", ("a/b", "m~n")), ("/items/0", ("items", "0")), ("/", ("",))])
def test_parse_pointer(pointer, parts):
    assert parse_pointer(pointer) == parts


def test_a_mark_opens_the_tree_to_its_member():
    value = {"params": {"arguments": {"a": "two", "deep": {"x": [1, {"y": 2}]}}}}
    html = json_tree_html(value, open_depth=0, marks=[
        Mark("/params/arguments/deep/x/1/y", "error", "y <b>bad</b>")])
    assert _marked(html) == [("/params/arguments/deep/x/1/y",
                              "mnw-row mnw-mark mnw-mark-error", "y &lt;b&gt;bad&lt;/b&gt;")]
    # every container on the way is open, the others (and the root's siblings) are not
    assert html.count("<details open>") == 6 and "<details>" not in html
    plain = json_tree_html(value, open_depth=0)
    assert "mnw-mark" not in plain and plain.count("<details open>") == 0


def test_a_pointer_to_a_missing_member_marks_the_deepest_one_there():
    html = json_tree_html({"params": {"arguments": {"a": 1}}},
                          marks=[Mark("/params/arguments/b", "warning", "b is required")])
    [(pointer, cls, title)] = _marked(html)
    assert pointer == "/params/arguments/b" and cls.startswith("mnw-mark")  # on the summary
    assert title == "b is required (no member b here)"
    assert re.search(r'<summary class="mnw-mark[^>]*>.*arguments', html)


def test_pointers_are_the_checks_pointers(trace):
    got = conversation.pointers(trace)
    want = {(f.rule, f.seq): [(f.detail, f.pointer)] for f in conversation.check(trace, deep=False)
            if f.pointer is not None}
    assert got == want
    assert [(r, s) for r, s in got] == [("tool-arguments-schema", 8),
                                       ("tool-arguments-schema", 10),
                                       ("tool-arguments-schema", 12)]


def test_the_inspector_marks_the_failing_member(trace):
    ins = mn.inspect(trace)
    ins.selected_seq = 8  # add with a="two"
    [(pointer, cls, title)] = _marked(ins._frame.value)
    assert pointer == "/params/arguments/a" and "mnw-mark-warning" in cls
    assert "tool-arguments-schema" in title and "is not of type" in title
    assert "mnw-mark-picked" not in cls
    assert 'class="mnw-marks"' in ins._frame.value  # named above the tree too
    ins.selected_seq = 9  # its response: no finding names a member of it
    assert _marked(ins._frame.value) == [] and "mnw-marks" not in ins._frame.value


def test_a_finding_picked_in_the_list_is_marked_most(trace):
    ex = mn.explore(trace)
    items = ex.violations.items
    i = next(k for k, it in enumerate(items) if it["seq"] == 10)
    ex.violations.picked = i
    assert ex.inspector.selected_seq == 10
    [(pointer, cls, title)] = _marked(ex.inspector._frame.value)
    assert pointer == "/params/arguments" and "mnw-mark-picked" in cls
    assert "required property" in title


def test_a_trace_without_conversation_findings_is_not_checked_again(monkeypatch):
    t = mn.load(mn.sample_path("broken-duplicate-response"))
    ins = mn.inspect(t)
    monkeypatch.setattr(conversation, "pointers", lambda _t: pytest.fail("ran the checks"))
    for seq in t.violations["seq"].dropna().astype(int).tolist():
        ins.selected_seq = seq
        assert "mnw-mark" not in ins._frame.value
