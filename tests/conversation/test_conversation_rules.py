"""Every conversation rule breaks on one case and passes on its twin (the rule table test)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import INIT, err, load_rows, note, ok, req
from mcp_notebook import conversation
from mcp_notebook.protocol.rules import RULES, rule
from mcp_notebook.readers.base import Record
from mcp_notebook.table import collect
from mcp_notebook.trace import Trace


def init(version: str = "2025-06-18", client: Any = None, server: Any = None) -> list:
    client = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}} \
        if client is None else client
    server = {"tools": {"listChanged": True}, "prompts": {}, "resources": {}, "logging": {}} \
        if server is None else server
    return [("c2s", req(0, "initialize", {"protocolVersion": version, "capabilities": client,
                                          "clientInfo": {"name": "t", "version": "1"}})),
            ("s2c", ok(0, {"protocolVersion": version, "capabilities": server,
                           "serverInfo": {"name": "s", "version": "1"}})),
            ("c2s", note("notifications/initialized"))]


BARE = init(client={}, server={})
ADD = {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}},
                                      "required": ["a"]},
       "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}},
                        "required": ["sum"]}}
TOOLS = [("c2s", req(1, "tools/list")), ("s2c", ok(1, {"tools": [ADD]}))]


def call(id: int, name: str, args: Any) -> tuple[str, Any]:
    return ("c2s", req(id, "tools/call", {"name": name, "arguments": args}))


def result(id: int, structured: Any = None, is_error: bool = False, **more: Any) -> tuple:
    body: dict[str, Any] = {"content": [{"type": "text", "text": "ok"}], **more}
    if structured is not None:
        body["structuredContent"] = structured
    if is_error:
        body["isError"] = True
    return ("s2c", ok(id, body))


PROMPTS = [("c2s", req(1, "prompts/list")),
           ("s2c", ok(1, {"prompts": [{"name": "greet",
                                       "arguments": [{"name": "who", "required": True}]}]}))]
RESOURCES = [("c2s", req(1, "resources/list")),
             ("s2c", ok(1, {"resources": [{"uri": "file:///a", "name": "a"}]})),
             ("c2s", req(2, "resources/templates/list")),
             ("s2c", ok(2, {"resourceTemplates": [{"uriTemplate": "notes://{id}", "name": "n"}]}))]

M26 = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
       "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
V26 = {"version": "2026-07-28"}
SUB = "io.modelcontextprotocol/subscriptionId"


def r26(id: int, method: str, params: dict | None = None) -> tuple[str, Any]:
    return ("c2s", req(id, method, {**(params or {}), "_meta": M26}))


def ok26(id: int, body: dict) -> tuple[str, Any]:
    return ("s2c", ok(id, {"resultType": "complete", **body}))


def ir(id: int, **body: Any) -> tuple[str, Any]:
    return ("s2c", ok(id, {"resultType": "input_required", **body}))


ASK = {"a": {"method": "elicitation/create",
             "params": {"mode": "form", "message": "x", "requestedSchema": {
                 "type": "object", "properties": {}}}}}
LISTEN = r26(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})


def n26(method: str, sub: Any = 1) -> tuple[str, Any]:
    meta = {} if sub is None else {"_meta": {SUB: sub}}
    return ("s2c", note(method, meta))


ACK = n26("notifications/subscriptions/acknowledged")
CHANGED = n26("notifications/tools/list_changed")
BIG = "x" * (1 << 20)

# code -> (rows that break it, rows that keep it, load options)
CASES: dict[str, tuple[list, list, dict]] = {
    "schema-params": (INIT + [("c2s", req(2, "resources/read", {"uri": 7}))],
                      INIT + [("c2s", req(2, "resources/read", {"uri": "file:///a"}))], {}),
    "schema-result": (INIT + [("c2s", req(2, "tools/list")), ("s2c", ok(2, {}))],
                      INIT + [("c2s", req(2, "tools/list")), ("s2c", ok(2, {"tools": []}))], {}),
    "capability-server-undeclared": (BARE + TOOLS, INIT + TOOLS, {}),
    "capability-client-undeclared": (BARE + [("s2c", req(5, "roots/list"))],
                                     INIT + [("s2c", req(5, "roots/list"))], {}),
    "capability-notification-undeclared": (
        BARE + [("s2c", note("notifications/tools/list_changed"))],
        INIT + [("s2c", note("notifications/tools/list_changed"))], {}),
    "tool-arguments-schema": (INIT + TOOLS + [call(2, "add", {"a": "x"}), result(2, is_error=True)],
                              INIT + TOOLS + [call(2, "add", {"a": 1}), result(2, {"sum": 1})], {}),
    "tool-not-listed": (INIT + TOOLS + [call(2, "sub", {"a": 1})],
                        INIT + TOOLS + [call(2, "add", {"a": 1})], {}),
    "tool-output-schema": (INIT + TOOLS + [call(2, "add", {"a": 1}), result(2, {"sum": "x"})],
                           INIT + TOOLS + [call(2, "add", {"a": 1}), result(2, {"sum": 2})], {}),
    "prompt-arguments": (INIT + PROMPTS + [("c2s", req(2, "prompts/get", {"name": "greet"}))],
                         INIT + PROMPTS + [("c2s", req(2, "prompts/get", {
                             "name": "greet", "arguments": {"who": "you"}}))], {}),
    "resource-not-listed": (INIT + RESOURCES + [("c2s", req(3, "resources/read", {"uri": "file:///b"}))],
                            INIT + RESOURCES + [("c2s", req(3, "resources/read", {"uri": "notes://7"}))],
                            {}),
    "invalid-params-code": (INIT + [("c2s", req(2, "resources/read", {"uri": 7})),
                                    ("s2c", err(2, -32603, "Internal error"))],
                            INIT + [("c2s", req(2, "resources/read", {"uri": 7})),
                                    ("s2c", err(2, -32602, "Invalid params"))], {}),
    "unknown-method-code": (INIT + [("c2s", req(2, "foo/bar")), ("s2c", err(2, -32603, "x"))],
                            INIT + [("c2s", req(2, "foo/bar")), ("s2c", err(2, -32601))], {}),
    "tool-input-error-as-protocol-error": (
        init("2025-11-25") + TOOLS + [call(2, "add", {"a": "x"}), ("s2c", err(2, -32602, "bad a"))],
        init("2025-11-25") + TOOLS + [call(2, "add", {"a": "x"}), result(2, is_error=True)], {}),
    "large-payload": (INIT + TOOLS + [call(2, "add", {"a": 1}),
                                      ("s2c", ok(2, {"content": [{"type": "text", "text": BIG}],
                                                     "structuredContent": {"sum": 1}}))],
                      INIT + TOOLS + [call(2, "add", {"a": 1}), result(2, {"sum": 1})], {}),
    "result-type-value": ([r26(1, "tools/list"), ("s2c", ok(1, {"resultType": "done", "tools": []}))],
                          [r26(1, "tools/list"), ok26(1, {"tools": []})], V26),
    "input-required-method": ([r26(1, "tools/list"), ir(1, requestState="s")],
                              [r26(1, "tools/call", {"name": "t"}), ir(1, requestState="s")], V26),
    "input-required-shape": ([r26(1, "tools/call", {"name": "t"}), ir(1)],
                             [r26(1, "tools/call", {"name": "t"}), ir(1, inputRequests=ASK)], V26),
    "retry-request-state": (
        [r26(1, "tools/call", {"name": "t"}), ir(1, requestState="abc"),
         r26(2, "tools/call", {"name": "t", "requestState": "abd", "inputResponses": {}})],
        [r26(1, "tools/call", {"name": "t"}), ir(1, requestState="abc"),
         r26(2, "tools/call", {"name": "t", "requestState": "abc", "inputResponses": {}})], V26),
    "listen-ack-first": ([LISTEN, CHANGED, ACK], [LISTEN, ACK, CHANGED], V26),
    "listen-subscription-id": ([LISTEN, ACK, n26("notifications/tools/list_changed", None)],
                               [LISTEN, ACK, CHANGED], V26),
    "removed-method": ([r26(1, "ping")], [r26(1, "server/discover")], V26),
    "retired-error-code": ([r26(1, "resources/read", {"uri": "a://b"}), ("s2c", err(1, -32002, "nf"))],
                           [r26(1, "resources/read", {"uri": "a://b"}), ("s2c", err(1, -32602, "nf"))],
                           V26),
}


def codes(t: Any) -> set[str]:
    return {f.rule for f in conversation.check(t)}


def http_post(params: dict, headers: dict) -> Trace:
    """A 2026 POST as the HAR reader gives it: its MCP headers in ``extra``."""
    body = json.dumps(req(1, "tools/call", {"name": "add", **params, "_meta": M26}))
    return Trace(collect([Record(raw=body, direction="c2s", session="s", stream="http",
                                 extra={"http": "POST", "mcp_headers": headers})]),
                 version="2026-07-28")


_H = {"mcp-method": "tools/call", "mcp-protocol-version": "2026-07-28"}
# rules about what a reader saw beside the message: (trace that breaks it, its twin)
READER_CASES = {
    "http-header-mismatch": (lambda: http_post({}, {**_H, "mcp-name": "sub"}),
                             lambda: http_post({}, {**_H, "mcp-name": "=?base64?YWRk?="})),
}


@pytest.mark.parametrize("code", sorted(READER_CASES))
def test_reader_reported_rules(code):
    bad, good = READER_CASES[code]
    assert code in codes(bad()) and code not in codes(good())


def test_every_header_is_checked():
    assert "no mcp-method header" in next(
        f.detail for f in conversation.check(http_post({}, {})))
    t = http_post({}, {**_H, "mcp-name": "add", "mcp-protocol-version": "2025-11-25"})
    assert [f.detail for f in conversation.check(t)] == [
        "mcp-protocol-version: '2025-11-25', the body says '2026-07-28'"]


def test_every_conversation_rule_has_cases():
    assert set(CASES) | set(READER_CASES) == conversation.CODES
    assert all(rule(code) for code in conversation.CODES)  # in the catalogue
    assert [r for r in RULES if r.code in conversation.CODES] == list(conversation.RULES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_breaks_and_passes(code, tmp_path):
    bad, good, opts = CASES[code]
    assert code in codes(load_rows(tmp_path, bad, **opts)), f"{code} not found on its bad case"
    assert code not in codes(load_rows(tmp_path, good, **opts)), f"{code} fired on its good case"


@pytest.mark.parametrize("code", sorted(CASES))
def test_violations_carry_the_rule_unless_deferred(code, tmp_path):
    """``t.violations`` holds each finding with its spec and source; the deep rules only
    where the capture is small enough (``DEEP``: the schema rules never by default)."""
    bad, _, opts = CASES[code]
    t = load_rows(tmp_path, bad, **opts)
    v = t.violations
    if conversation.deferred(code, int(t.frames["kind"].isin(
            ["request", "notification", "result", "error"]).sum())):
        # a rule of PARTIAL keeps its structural part: these cases' arguments are objects
        assert code not in set(v["rule"])
        with conversation.deep():
            v = load_rows(tmp_path, bad, **opts).violations
        assert code in set(v["rule"])
        return
    row = v[v["rule"] == code].iloc[0]
    r = rule(code)
    assert row["severity"] == r.severity and r.source in row["spec"] and r.advice in row["message"]


def test_deep_rules_run_in_violations_below_their_limit(tmp_path, monkeypatch):
    bad, _, _ = CASES["tool-arguments-schema"]
    assert "tool-arguments-schema" not in set(load_rows(tmp_path, bad).violations["rule"])
    monkeypatch.setitem(conversation.DEEP, "tool-arguments-schema", 100)
    assert "tool-arguments-schema" in set(load_rows(tmp_path, bad).violations["rule"])
    monkeypatch.setitem(conversation.DEEP, "tool-arguments-schema", 5)
    assert "tool-arguments-schema" not in set(load_rows(tmp_path, bad).violations["rule"])
    with conversation.deep():
        assert "tool-arguments-schema" in set(load_rows(tmp_path, bad).violations["rule"])
    assert conversation.DEEP["tool-arguments-schema"] == 5
    monkeypatch.setitem(conversation.DEEP, "schema-params", None)
    bad, _, _ = CASES["schema-params"]
    assert "schema-params" in set(load_rows(tmp_path, bad).violations["rule"])


def test_a_schema_finding_names_the_pointer_and_the_expectation(tmp_path):
    bad, _, _ = CASES["schema-params"]
    f = next(f for f in conversation.check(load_rows(tmp_path, bad)) if f.rule == "schema-params")
    assert f.seq == 3 and f.pointer == "/params/uri"
    assert "ReadResourceRequest (2025-06-18) at /params/uri" in f.detail
    assert 'is not of type "string"' in f.detail


def test_tool_arguments_finding_points_into_the_arguments(tmp_path):
    bad, _, _ = CASES["tool-arguments-schema"]
    f = next(f for f in conversation.check(load_rows(tmp_path, bad))
             if f.rule == "tool-arguments-schema")
    assert (f.seq, f.related_seq, f.pointer) == (5, 6, "/params/arguments/a")


def test_input_validation_as_a_protocol_error_is_fine_before_2025_11_25(tmp_path):
    rows = INIT + TOOLS + [call(2, "add", {"a": "x"}), ("s2c", err(2, -32602, "bad a"))]
    assert "tool-input-error-as-protocol-error" not in codes(load_rows(tmp_path, rows))


def test_a_later_tools_list_is_the_contract(tmp_path):
    """The tool removed by a later list is no longer callable; one added is."""
    later = [("c2s", req(7, "tools/list")), ("s2c", ok(7, {"tools": [{**ADD, "name": "sub"}]}))]
    rows = INIT + TOOLS + later + [call(8, "add", {"a": 1}), call(9, "sub", {"a": 1})]
    found = [(f.rule, f.seq) for f in conversation.check(load_rows(tmp_path, rows))]
    assert found == [("tool-not-listed", 7)]


def test_no_list_no_judgement(tmp_path):
    """A capture that starts after tools/list says nothing about the tools."""
    rows = INIT + [call(2, "anything", {"a": "x"})]
    assert codes(load_rows(tmp_path, rows)) == set()


def test_the_large_payload_threshold_is_configurable(tmp_path, monkeypatch):
    _, good, _ = CASES["large-payload"]
    t = load_rows(tmp_path, good)
    assert "large-payload" not in codes(t)
    monkeypatch.setitem(conversation.payload.LIMIT, "bytes", 200)
    t = load_rows(tmp_path, good)
    f = t.frames
    big = f[(f["size"] > 200) & f["kind"].isin(["request", "notification", "result"])]
    assert 4 in set(big["seq"])  # the tools/list answer with the tool definition
    found = [f.seq for f in conversation.check(t) if f.rule == "large-payload"]
    assert found == list(big["seq"])


def test_2026_inputrequests_need_the_requests_own_client_capabilities(tmp_path):
    meta = {**M26, "io.modelcontextprotocol/clientCapabilities": {}}
    rows = [("c2s", req(1, "tools/call", {"name": "t", "_meta": meta})), ir(1, inputRequests=ASK)]
    found = [f for f in conversation.check(load_rows(tmp_path, rows, **V26))
             if f.rule == "capability-client-undeclared"]
    assert [(f.seq, f.pointer) for f in found] == [(1, "/result/inputRequests/a")]
    good = [r26(1, "tools/call", {"name": "t"}), ir(1, inputRequests=ASK)]
    assert "capability-client-undeclared" not in codes(load_rows(tmp_path, good, **V26))


# a method the negotiated version removed: reported once, as removed (names the revision),
# not also as unknown; (rows, rules it gives, rules it must not give)
REMOVED_TWINS = {
    "removed": ([r26(1, "ping")], {"removed-method"}, {"unknown-method"}),
    "unknown": ([r26(1, "no/such/method")], {"unknown-method"}, {"removed-method"}),
    "removed-notification": ([r26(1, "tools/list"), ok26(1, {"tools": []}),
                              ("c2s", note("notifications/roots/list_changed"))],
                             {"removed-method"}, {"unknown-method"}),
}


@pytest.mark.parametrize("case", sorted(REMOVED_TWINS))
def test_a_removed_method_is_not_also_unknown(case, tmp_path):
    rows, given, not_given = REMOVED_TWINS[case]
    v = load_rows(tmp_path, rows, **V26).violations
    last = len(rows) - 1
    at = set(v.loc[v["seq"] == last, "rule"])
    assert given <= at and not at & not_given, at
    if "removed-method" in given:
        detail = v.loc[(v["seq"] == last) & (v["rule"] == "removed-method"), "message"].iloc[0]
        assert "removed in 2026-07-28" in detail


def test_only_the_schema_rules_wait_to_be_asked():
    """No size switch: t.violations runs every other conversation rule at any size (a user
    may still opt out of one through DEEP); the schema rules are computed when asked, and
    so is the schema validation of object arguments (the rest of those rules stays)."""
    lazy = {"schema-params", "schema-result", "invalid-params-code", "tool-arguments-schema",
            "tool-input-error-as-protocol-error"}
    assert {c for c in conversation.CODES if conversation.deferred(c, 10**9)} == lazy
    assert conversation.PARTIAL == {"tool-arguments-schema",
                                    "tool-input-error-as-protocol-error"}
    assert not any(conversation.deferred(c, 10**9) for c in ("capability-conditions",))


def test_mcp_notebook_check_validates_the_object_arguments_t_violations_defers(capsys):
    """``mcp-notebook check`` runs everything: the object arguments that break their
    tool's schema, which ``t.violations`` leaves to be asked for, are among its findings."""
    from pathlib import Path

    import mcp_notebook as mn
    from mcp_notebook.cli import main

    path = Path(__file__).resolve().parents[2] / "data" / "conversation-bad-arguments.jsonl"
    assert "tool-arguments-schema" not in set(mn.load(path).violations["rule"])
    main(["check", "--all", str(path)])
    out = capsys.readouterr().out
    assert [line.split(":")[1] for line in out.splitlines()
            if "[tool-arguments-schema]" in line] == ["9", "11", "13"]


def test_schema_rules_read_the_texts_in_batches(tmp_path, monkeypatch):
    """The schema rules decode their frames a batch at a time, not one by one (frame by frame,
    reading the texts of a 100k capture took ten times its validation), and a batch's edge
    changes no finding: a bad params and a bad result on each side of every edge."""
    from mcp_notebook.conversation import _frames, schemas

    monkeypatch.setattr(schemas, "BATCH", 7)
    rows = list(INIT)
    for k in range(1, 40):
        bad = k % 5 == 0
        rows.append(("c2s", req(k, "resources/read", {"uri": 7 if bad else "file:///a"})))
        rows.append(("s2c", ok(k, {} if k % 6 == 0 else {"contents": []})))
    reads: list[int] = []
    real = _frames.Frames.prefetch

    def counted(self, seqs):
        todo = [s for s in seqs if s not in self._bodies]
        if todo:
            reads.append(len(todo))
        real(self, seqs)

    monkeypatch.setattr(_frames.Frames, "prefetch", counted)
    with conversation.deep():
        v = load_rows(tmp_path, rows).violations
    got = v[v["rule"].isin(["schema-params", "schema-result"])]
    bad_params = [3 + 2 * (k - 1) for k in range(1, 40) if k % 5 == 0]
    bad_results = [4 + 2 * (k - 1) for k in range(1, 40) if k % 6 == 0]
    assert sorted(got.loc[got["rule"] == "schema-params", "seq"]) == bad_params
    assert sorted(got.loc[got["rule"] == "schema-result", "seq"]) == bad_results
    # 82 frames in batches of 7 messages (and 7 pairs): no read of a single frame
    assert reads and max(reads) > 1 and len(reads) <= 2 * (82 // 7 + 2)


@pytest.mark.parametrize("text", ['{"a":"é"}', '{"a":"\\ud83d\\ude00"}', '{"a":"\udce9"}',
                                  '{"a":"\\udce9"}', "\ufeff{}", '{"a":1}\n', "{bad", "[" * 5000,
                                  b'{"b":[1,2]}', b'{"b":"\xff"}'])
def test_a_frame_decodes_from_its_str_as_from_its_bytes(text):
    """The rules decode a frame's str as it is; the value is what its UTF-8 bytes (with
    the surrogate escapes of undecodable bytes put back) decode to, None where those fail."""
    import msgspec

    from mcp_notebook.conversation._frames import _body

    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    try:
        want = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        want = None
    assert _body(text) == want


def _spelled(row: tuple[str, Any]) -> tuple[str, str]:
    """The row with the 2026 names and values spelled with \\u escapes."""
    text = json.dumps(row[1], separators=(",", ":"))
    for plain, spelled in (("resultType", "result\\u0054ype"),
                           ("input_required", "input\\u005frequired"),
                           ("inputRequests", "input\\u0052equests")):
        text = text.replace(plain, spelled)
    return row[0], text


def test_the_2026_results_spelled_with_escapes_give_the_same_findings(tmp_path):
    meta = {**M26, "io.modelcontextprotocol/clientCapabilities": {}}
    rows = [("c2s", req(1, "tools/call", {"name": "t", "_meta": meta})),
            ir(1, inputRequests=ASK),
            r26(2, "tools/list"), ir(2, inputRequests=ASK),  # not a method that may ask
            r26(3, "tools/list"), ("s2c", ok(3, {"resultType": "bogus", "tools": []}))]
    wanted = {"capability-client-undeclared", "input-required-method", "result-type-value"}

    def found(rs: list) -> list[tuple[str, int, str]]:
        return sorted((f.rule, f.seq, f.pointer) for f in
                      conversation.check(load_rows(tmp_path, rs, **V26)) if f.rule in wanted)

    plain = found(rows)
    assert {r for r, _, _ in plain} == wanted
    assert found([rows[0]] + [_spelled(r) if r[0] == "s2c" else r for r in rows[1:]]) == plain
