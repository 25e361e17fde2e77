"""No false alarm, and the recorded faults are found on the right frames.

Every trace in ``data/`` and ``tests/fixtures/peers/`` comes from official peers (the
Python and TypeScript SDKs, the reference servers, the Inspector, the conformance suite);
some hold faults on purpose. Here are all the errors and warnings the conversation rules
give on them (``conversation.check``, the schema rules included), each checked by hand:
nothing else may be found. The traces recorded for this checker list their findings in
``data/README.md`` (``- finding:`` lines), read from there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PEERS = ROOT / "tests" / "fixtures" / "peers"
README = DATA / "README.md"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

_TOOL_ERROR = "answered as a tool error (isError), as 2025-11-25 asks"

#: trace -> [(rule, frame, why it is a real fault)]
EXPLAINED: dict[str, list[tuple[str, int, str]]] = {
    "demo-stdio.jsonl": [("tool-not-listed", 10, "the scenario calls no_such_tool on purpose")],
    "demo-stdio-raw-frames.jsonl": [
        ("schema-params", 14, "resources/read with uri 7, written by hand (uri is a string)")],
    "everything-stdio-basics.jsonl": [
        ("tool-not-listed", 12, "the scenario calls no-such-tool on purpose"),
        ("tool-arguments-schema", 14, f"get-sum a='two' (a number): {_TOOL_ERROR}")],
    "everything-stdio-raw-frames.jsonl": [
        ("schema-params", 14, "tools/call without name, written by hand"),
        ("invalid-params-code", 15, "the everything server answers it -32603, not -32602"),
        ("schema-params", 16, "resources/read without uri, written by hand"),
        ("invalid-params-code", 17, "answered -32603 again (its zod error as an internal one)")],
    "filesystem-stdio.jsonl": [
        ("tool-arguments-schema", 22, f"write_file without content: {_TOOL_ERROR}")],
    "memory-stdio.jsonl": [
        ("tool-arguments-schema", 19, f"create_entities with a string: {_TOOL_ERROR}")],
    "conformance-demo-http.har": [
        ("capability-server-undeclared", 43, "the suite's client sends completion/complete to "
         "a server that declares no completions (answered -32601)")],
    "python-2026-stateless-http.har": [
        ("tool-not-listed", 8, "the scenario calls no_such_tool on purpose"),
        ("http-header-mismatch", 25, "MCP-Protocol-Version 2026-01-01 by hand (400 -32022)"),
        ("http-header-mismatch", 29, "Mcp-Method tools/call on a tools/list, by hand (-32020)"),
        ("http-header-mismatch", 31, "Mcp-Name divide on a call of add, by hand (-32020)"),
        ("tool-arguments-schema", 35, f"add a='x' (an integer): {_TOOL_ERROR}"),
        ("schema-params", 37, "resources/read without uri, written by hand"),
        ("http-header-mismatch", 48, "a handshake-era ping sent by hand to the 2026 server, "
         "no Mcp-Method"),
        ("removed-method", 48, "the same ping: 2026-07-28 has no ping")],
    "ts-client-demo-http.har": [("tool-not-listed", 10, "no_such_tool on purpose")],
    # the workshop's traces (scripts/record_workshop.py), faults on purpose
    "everything-stdio-capabilities.jsonl": [
        ("tool-not-listed", 8, "the everything server hides its sampling tool from a client "
         "without the sampling capability; the scenario calls it anyway"),
        ("tool-not-listed", 10, "the same for get-roots-list and the roots capability")],
    "pages-stdio-undeclared.jsonl": [
        ("capability-server-undeclared", 4, "logging/setLevel to a server without logging, "
         "on purpose (answered -32601)"),
        ("capability-server-undeclared", 6, "prompts/list to a server without prompts, on "
         "purpose (answered -32601)")],
    "pages-stdio-2026.jsonl": [
        ("tool-not-listed", 3, "the workshop's paging server serves deploy but leaves it out "
         "of tools/list (its input-required demo tool)"),
        ("tool-not-listed", 5, "the retry of that call, the second round")],
    "pages-stdio-2026-raw.jsonl": [
        ("schema-params", 3, "tools/list without params._meta, written by hand (answered "
         "-32602: 2026-07-28 requires _meta on every request)")],
    "ts-client-demo-stdio.jsonl": [("tool-not-listed", 10, "no_such_tool on purpose")],
    "filesystem-stdio-large.jsonl.gz": [
        ("large-payload", 11, "read_text_file of the workshop's 3.9 MB log: a 7,987,308-byte "
         "result (the filesystem server sends the text twice), above the default 1 MiB")],
    "ts-client-everything-http.har": [
        ("tool-arguments-schema", 9, f"get-sum a='x', no b: {_TOOL_ERROR}")],
    "ts-client-everything-stdio.jsonl": [
        ("tool-arguments-schema", 15, f"get-sum a='x', no b: {_TOOL_ERROR}")],
}


def readme_findings() -> dict[str, list[tuple[str, int]]]:
    """``- finding:`` lines of the ``## Conversation traces`` section, by trace."""
    section = README.read_text("utf-8").split("## Conversation traces", 1)[1]
    out: dict[str, list[tuple[str, int]]] = {}
    for block in section.split("\n### `")[1:]:
        name = block.split("`", 1)[0]
        out[name] = [(m[1], int(m[2])) for m in
                     re.finditer(r"^- finding: `([a-z0-9-]+)` at frame (\d+)", block, re.M)]
    return out


RECORDED = readme_findings()
TRACES = sorted(p for folder in (DATA, PEERS, FIXTURES) for p in folder.iterdir()
                if p.suffix in (".jsonl", ".har") or p.name.endswith(".jsonl.gz"))


CLEAN_2026 = "conversation-2026-input-required.har"


def test_the_recorded_traces_are_in_the_readme():
    assert set(RECORDED) == {"conversation-bad-arguments.jsonl",
                             "conversation-undeclared-capability.jsonl",
                             "conversation-large-result.jsonl",
                             "conversation-large-result-mb.jsonl.gz",
                             "conversation-ts-client-faults.jsonl"}
    assert all(RECORDED.values())
    assert not set(RECORDED) & set(EXPLAINED)


def test_a_real_2026_input_required_round_trip_is_one_call_of_two_rounds():
    """The Python SDK on both sides: tools/call answered input_required, retried with a new
    id, the requestState echoed: nothing to find, and one logical call."""
    t = mn.load(FIXTURES / CLEAN_2026)
    assert t.protocol_version == "2026-07-28"
    assert conversation.check(t) == []
    calls = conversation.calls(t)
    tool = calls[calls["method"] == "tools/call"].sort_values("request_seq")
    first, retry = (t.message(int(s)) for s in tool["request_seq"])
    answer = t.message(int(tool["response_seq"].iloc[0]))["result"]
    assert answer["resultType"] == "input_required" and first["id"] != retry["id"]
    assert retry["params"]["requestState"] == answer["requestState"]
    assert list(tool["round"]) == [1, 2]
    assert tool["call"].nunique() == 1 and tool["call"].iloc[0] == tool["request_seq"].iloc[0]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_no_error_or_warning_that_is_not_a_real_fault(path, monkeypatch):
    if path.name == "conversation-large-result.jsonl":
        monkeypatch.setitem(conversation.payload.LIMIT, "bytes", 100_000)
    t = mn.load(path)
    found = [(f.rule, f.seq) for f in conversation.check(t)
             if f.severity != "info" or f.rule == "large-payload"]
    want = RECORDED.get(path.name) or [(r, s) for r, s, _ in EXPLAINED.get(path.name, [])]
    assert found == want


def test_the_bundled_schema_breaking_calls_were_answered_as_tool_errors():
    """The README's hand-checked list: each call breaks its inputSchema, each answer is a
    result with isError (not a protocol error), so no error-semantics finding."""
    for path in TRACES:
        t = mn.load(path)
        found = conversation.check(t)
        calls = [f for f in found if f.rule == "tool-arguments-schema"]
        answers = t.pairs.set_index("request_seq")["outcome"].astype(str)
        for f in calls:
            assert answers[f.seq] == "tool_error", (path.name, f)
        assert not [f for f in found if f.rule == "tool-input-error-as-protocol-error"]


def test_context_cost_of_the_recorded_server():
    t = mn.load(DATA / "conversation-large-result.jsonl")
    cost = t.context_cost()
    listed = t.message(5)["result"]["tools"]
    assert sorted(cost["tool"]) == sorted(tool["name"] for tool in listed)
    assert list(cost["bytes"]) == sorted(cost["bytes"], reverse=True)
    assert (cost["tokens"] == -(-cost["bytes"] // 4)).all()
    by_server = t.context_cost(by="server")
    assert by_server.loc[0, "server"] == "mcp-notebook-demo"
    assert by_server.loc[0, "bytes"] == cost["bytes"].sum()
    with pytest.raises(ValueError, match="by must be"):
        t.context_cost(by="nope")


def test_a_result_in_the_megabyte_range_gets_the_notice_at_the_default_threshold():
    """The recorded 2 MiB result (gzipped in data/): the large-payload notice with the
    default limit, on the result frame only, in t.violations as in conversation.check."""
    assert conversation.payload.LIMIT["bytes"] == 1 << 20
    t = mn.load(DATA / "conversation-large-result-mb.jsonl.gz")
    f = t.frames
    big = f[(f["size"] > 1 << 20)]
    assert list(big["seq"]) == [7] and big["kind"].iloc[0] == "result"
    assert t.message(6)["params"]["name"] == "big"
    assert [(x.rule, x.seq) for x in conversation.check(t)] == [("large-payload", 7)]
    v = t.violations
    assert list(v.loc[v["rule"] == "large-payload", "seq"]) == [7]


def test_the_typescript_sdk_client_faults_are_found_on_their_frames():
    """The TS SDK client (npm @modelcontextprotocol/sdk) sends two calls that break the
    listed inputSchema (low-level client.request) and two methods the server did not
    declare: each finding on the request, its answer related, with the failing member."""
    t = mn.load(DATA / "conversation-ts-client-faults.jsonl")
    assert t.message(1)["params"]["clientInfo"]["name"] == "ts-faults-client"
    found = {(f.rule, f.seq): f for f in conversation.check(t)}
    assert sorted(found) == sorted(RECORDED["conversation-ts-client-faults.jsonl"])
    args = found[("tool-arguments-schema", 8)]
    assert (args.related_seq, args.pointer) == (9, "/params/arguments/a")
    assert t.message(8)["params"] == {"name": "add", "arguments": {"a": "two", "b": 40}}
    assert found[("tool-arguments-schema", 10)].pointer == "/params/arguments"
    assert t.message(14)["method"] == "resources/subscribe"
    assert "resources.subscribe" in found[("capability-server-undeclared", 14)].detail
    assert t.message(16)["method"] == "completion/complete"
    assert "completions" in found[("capability-server-undeclared", 16)].detail
    outcome = t.pairs.set_index("request_seq")["outcome"].astype(str)
    assert list(outcome[[8, 10, 14, 16]]) == ["tool_error", "tool_error", "error", "error"]
    v = t.violations  # the same findings in t.violations but the object arguments' (deferred)
    assert sorted(zip(v["rule"], v["seq"], strict=True)) == sorted(
        k for k in found if k not in {("tool-arguments-schema", 8), ("tool-arguments-schema", 10)})
    with conversation.deep():
        v = mn.load(DATA / "conversation-ts-client-faults.jsonl").violations
    assert sorted(zip(v["rule"], v["seq"], strict=True)) == sorted(found)
