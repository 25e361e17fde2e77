"""Every rule in the catalogue breaks on one case and passes on its twin."""

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from helpers import INIT, err, load_rows, note, ok, req
from mcp_notebook import conversation
from mcp_notebook.protocol.rules import RULES, render_markdown
from mcp_notebook.readers.base import Record
from mcp_notebook.table import collect
from mcp_notebook.trace import Trace

REQ1 = ("c2s", req(1, "tools/list"))
INIT_0326 = [
    ("c2s", req(0, "initialize", {"protocolVersion": "2025-03-26"})),
    ("s2c", ok(0, {"protocolVersion": "2025-03-26"})),
    ("c2s", note("notifications/initialized")),
]
STDIN_EOF = "client closed stdin; closing the server's stdin"
META26 = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}

# code -> (rows that break it, rows that keep it, load options)
CASES = {
    "parse-error": ([("s2c", "Server listening on stdio")], [REQ1], {}),
    "not-an-object": ([("c2s", "[1]")], [REQ1], {"version": "2025-03-26"}),
    "not-a-message": ([("c2s", '{"foo":"boo"}')], [REQ1], {}),
    "jsonrpc-version": ([("c2s", '{"id":1,"method":"tools/list"}')], [REQ1], {}),
    "method-not-string": ([("c2s", '{"jsonrpc":"2.0","id":1,"method":3}')], [REQ1], {}),
    "reserved-method": ([("c2s", req(1, "rpc.discover"))], [REQ1], {}),
    "params-not-object": ([("c2s", req(1, "tools/list", [1]))], [("c2s", req(1, "tools/list", {}))], {}),
    "mixed-request-response": ([("c2s", '{"jsonrpc":"2.0","id":1,"method":"x","result":{}}')], [REQ1], {}),
    "response-neither": ([REQ1, ("s2c", '{"jsonrpc":"2.0","id":1}')], [REQ1, ("s2c", ok(1))], {}),
    "result-and-error": ([REQ1, ("s2c", '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-1,"message":"x"}}')],
                         [REQ1, ("s2c", ok(1))], {}),
    "result-not-object": ([REQ1, ("s2c", '{"jsonrpc":"2.0","id":1,"result":"done"}')], [REQ1, ("s2c", ok(1))], {}),
    "error-not-object": ([REQ1, ("s2c", '{"jsonrpc":"2.0","id":1,"error":"bad"}')], [REQ1, ("s2c", err(1))], {}),
    "error-code-not-integer": ([REQ1, ("s2c", err(1, code=-32601.5))], [REQ1, ("s2c", err(1))], {}),
    "error-message-not-string": ([REQ1, ("s2c", '{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}')],
                                 [REQ1, ("s2c", err(1))], {}),
    "unknown-error-code": ([REQ1, ("s2c", err(1, code=-32050, message="odd"))],
                           [REQ1, ("s2c", err(1, code=-32602, message="Invalid params"))], {}),
    "reserved-error-code-2026": ([("c2s", req(1, "tools/list", META26)), ("s2c", err(1, code=-32050))],
                                 [("c2s", req(1, "tools/list", META26)), ("s2c", err(1, code=-32022))], {}),
    "request-id-type": ([("c2s", '{"jsonrpc":"2.0","id":null,"method":"tools/list"}')], [REQ1], {}),
    "result-id-null": ([("s2c", '{"jsonrpc":"2.0","id":null,"result":{}}')], [REQ1, ("s2c", ok(1))], {}),
    "error-id-null": ([("s2c", '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')],
                      [REQ1, ("s2c", err(1))], {}),
    "error-id-absent": ([("s2c", '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}')],
                        [("s2c", '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')],
                        {"version": "2025-06-18"}),
    "initialize-in-batch": ([("c2s", '[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}},'
                                     '{"jsonrpc":"2.0","id":1,"method":"ping"}]')],
                            [("c2s", req(0, "initialize", {})), ("s2c", ok(0)),
                             ("c2s", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]')],
                            {"version": "2025-03-26"}),
    "big-id": ([("c2s", req(2**53 + 1, "ping"))], [("c2s", req(2**53, "ping"))], {}),
    "id-type-mismatch": ([REQ1, ("s2c", ok("1"))], [REQ1, ("s2c", ok(1))], {}),
    "request-id-reused": ([REQ1, ("s2c", ok(1)), REQ1], [REQ1, ("s2c", ok(1)), ("c2s", req(2, "tools/list"))], {}),
    "request-id-in-flight": ([REQ1, REQ1], [REQ1, ("c2s", req(2, "tools/list"))], {}),
    "duplicate-response": ([REQ1, ("s2c", ok(1)), ("s2c", ok(1))], [REQ1, ("s2c", ok(1))], {}),
    "orphan-response": ([("s2c", ok(5))], [("c2s", req(5, "ping")), ("s2c", ok(5))], {}),
    "unanswered-request": ([REQ1], [REQ1, ("s2c", ok(1))], {}),
    # the tap's record of the client closing the server's input, before or after the
    # server's request
    "unanswered-after-close": ([("meta", STDIN_EOF), ("s2c", req(1, "roots/list"))],
                               [("s2c", req(1, "roots/list")), ("meta", STDIN_EOF)], {}),
    "notification-with-id": ([("c2s", req(3, "notifications/initialized"))],
                             [("c2s", note("notifications/initialized"))], {}),
    "notification-answered": ([("c2s", req(3, "notifications/message")), ("s2c", ok(3))],
                              [("c2s", req(3, "ping")), ("s2c", ok(3))], {}),
    "batch-not-allowed": ([("c2s", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]')],
                          [("c2s", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]')], "batch"),
    "batch-empty": ([("c2s", "[]")], [REQ1], {}),
    "response-after-cancel": ([REQ1, ("c2s", note("notifications/cancelled", {"requestId": 1})), ("s2c", ok(1))],
                              [REQ1, ("c2s", note("notifications/cancelled", {"requestId": 1}))], {}),
    "cancel-after-response": ([REQ1, ("s2c", ok(1)), ("c2s", note("notifications/cancelled", {"requestId": 1}))],
                              [REQ1, ("c2s", note("notifications/cancelled", {"requestId": 1})), ("s2c", ok(1))], {}),
    "cancel-unknown-request": ([("c2s", note("notifications/cancelled", {"requestId": 9}))],
                               [("c2s", req(9, "ping")), ("c2s", note("notifications/cancelled", {"requestId": 9}))], {}),
    "cancel-initialize": ([("c2s", req(0, "initialize", {})), ("c2s", note("notifications/cancelled", {"requestId": 0}))],
                          [("c2s", req(0, "initialize", {})), ("s2c", ok(0))], {}),
    "progress-unknown-token": ([("s2c", note("notifications/progress", {"progressToken": "x", "progress": 1}))],
                               [("c2s", req(1, "tools/call", {"_meta": {"progressToken": "x"}})),
                                ("s2c", note("notifications/progress", {"progressToken": "x", "progress": 1}))], {}),
    "progress-after-response": ([("c2s", req(1, "tools/call", {"_meta": {"progressToken": "x"}})), ("s2c", ok(1)),
                                 ("s2c", note("notifications/progress", {"progressToken": "x", "progress": 1}))],
                                [("c2s", req(1, "tools/call", {"_meta": {"progressToken": "x"}})),
                                 ("s2c", note("notifications/progress", {"progressToken": "x", "progress": 1})),
                                 ("s2c", ok(1))], {}),
    "progress-not-increasing": ([("c2s", req(1, "tools/call", {"_meta": {"progressToken": 7}})),
                                 ("s2c", note("notifications/progress", {"progressToken": 7, "progress": 2})),
                                 ("s2c", note("notifications/progress", {"progressToken": 7, "progress": 2}))],
                                [("c2s", req(1, "tools/call", {"_meta": {"progressToken": 7}})),
                                 ("s2c", note("notifications/progress", {"progressToken": 7, "progress": 1})),
                                 ("s2c", note("notifications/progress", {"progressToken": 7, "progress": 2}))], {}),
    "unknown-method": ([("c2s", req(1, "tools/cal"))], [("c2s", req(1, "tools/call", {}))], {}),
    "wrong-direction": ([("c2s", req(1, "sampling/createMessage", {}))], [("s2c", req(1, "sampling/createMessage", {}))], {}),
    "lifecycle-order": ([REQ1] + INIT, INIT + [REQ1], {}),
    "ping-result-not-empty": ([("c2s", req(1, "ping")), ("s2c", ok(1, {"pong": True}))],
                              [("c2s", req(1, "ping")), ("s2c", ok(1, {}))], {}),
    "result-type-missing": ([("c2s", req(1, "tools/list", META26)), ("s2c", ok(1, {"tools": []}))],
                            [("c2s", req(1, "tools/list", META26)), ("s2c", ok(1, {"tools": [], "resultType": "complete"}))], {}),
    "request-meta-missing": ([("c2s", req(1, "tools/list", {})), ("c2s", req(2, "tools/list", META26))],
                             [("c2s", req(2, "tools/list", META26))], {"version": "2026-07-28"}),
    "server-request-2026": ([("s2c", req(1, "roots/list", {}))], [("c2s", req(1, "tools/list", META26))],
                            {"version": "2026-07-28"}),
}

# rules whose findings come from what a reader saw, not from the JSON-RPC text
READER_CASES = {
    "stdout-noise": ({"rule": "stdout-noise", "detail": "Failed to parse message"}, {}),
    "ambiguous-pairing": ({"ambiguous": "two connections overlap"}, {}),
    "sse-non-message-event": ({"sse_event": "heartbeat"}, {}),
}


# rules about the capture file itself: (lines of a tap file that break it, lines that keep it)
_TAP_LINE = '{"ts": 1.0, "dir": "c2s", "raw": "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"ping\\"}"}'
FILE_CASES = {
    "unreadable-record": (["garbage", '{"foo": 1}', "[1, 2]", '{"ts": 1, "dir": "up", "raw": "{}"}',
                           _TAP_LINE[:30]],
                          [_TAP_LINE, "", '{"ts": 1.0, "dir": "stderr", "raw": "starting"}']),
}


def rules_of(t):
    return set(t.violations["rule"])


def test_every_rule_has_cases():
    # the conversation rules' cases are in tests/conversation/test_rules.py
    envelope = {r.code for r in RULES} - conversation.CODES
    assert envelope == set(CASES) | set(READER_CASES) | set(FILE_CASES)


@pytest.mark.parametrize("code", sorted(FILE_CASES))
def test_file_rules_report_every_bad_line(code, tmp_path):
    bad, good = FILE_CASES[code]
    for n, line in enumerate(bad):
        path = tmp_path / f"bad{n}.jsonl"
        path.write_text(_TAP_LINE + "\n" + line + "\n")
        v = mn.load(path, format="tap").violations
        assert list(v.loc[v["rule"] == code, "seq"]) == [1], (line, v)
        assert (v["severity"] == "error").any()  # so `check --fail-on error` fails
    path = tmp_path / "all.jsonl"
    path.write_text("\n".join(bad) + "\n")
    assert (mn.load(path, format="tap").violations["rule"] == code).sum() == len(bad)
    path.write_text("\n".join(good) + "\n")
    assert code not in rules_of(mn.load(path, format="tap"))


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_breaks_and_passes(code, tmp_path):
    bad, good, opts = CASES[code]
    if opts == "batch":  # the same batch is legal in 2025-03-26 only
        assert code in rules_of(load_rows(tmp_path, INIT + bad))
        assert code not in rules_of(load_rows(tmp_path, INIT_0326 + good))
        return
    assert code in rules_of(load_rows(tmp_path, bad, **opts)), f"{code} not found on its bad case"
    assert code not in rules_of(load_rows(tmp_path, good, **opts)), f"{code} fired on its good case"


@pytest.mark.parametrize("code", sorted(READER_CASES))
def test_reader_reported_rules(code):
    extra, _ = READER_CASES[code]
    line = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    bad = Trace(collect([Record(raw=line, direction="c2s", session="s", extra=extra)]))
    good = Trace(collect([Record(raw=line, direction="c2s", session="s")]))
    assert code in rules_of(bad) and code not in rules_of(good)


def test_findings_say_what_and_cite_the_spec(tmp_path):
    t = load_rows(tmp_path, [REQ1, ("s2c", ok(1)), ("s2c", ok(1))])
    row = t.violations.iloc[0]
    assert row["rule"] == "duplicate-response" and row["severity"] == "error"
    assert "second response" in row["message"] and "JSON-RPC 2.0" in row["spec"]
    assert row["seq"] == 2 and row["related_seq"] == 1


def test_version_override_changes_the_rule_set(tmp_path):
    batch = [("c2s", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]')]
    assert "batch-not-allowed" in rules_of(load_rows(tmp_path, batch, version="2025-06-18"))
    assert "batch-not-allowed" not in rules_of(load_rows(tmp_path, batch, version="2025-03-26"))


def test_docs_rules_md_is_current():
    docs = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert docs.read_text(encoding="utf-8") == render_markdown(), "run `make docs`"


def test_rules_table():
    df = mn.rules()
    assert len(df) == len(RULES) and df["code"].is_unique
    assert set(df["severity"]) <= {"error", "warning", "info"}


def test_an_http_error_body_with_a_null_id_is_an_orphan_as_on_stdio():
    err_body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Session not found"}}'
    ok_line = '{"jsonrpc":"2.0","id":1,"result":{}}'
    recs = [Record(raw='{"jsonrpc":"2.0","id":1,"method":"ping"}', direction="c2s", session="s"),
            Record(raw=err_body, direction="s2c", session="s", extra={"transport_error": 404}),
            Record(raw=ok_line, direction="s2c", session="s")]
    t = Trace(collect(recs))
    assert t.pairs["outcome"].astype(str).tolist() == ["result", "orphan"]
    assert t.pairs["response_seq"].tolist() == [2, 1]
    assert "duplicate-response" not in set(t.violations["rule"])


# The 2026 members, as JSON reads them: a name spelled with escapes is the same name, and a
# name mentioned somewhere else in the message is not the member.
ESCAPED_META = ('{"jsonrpc":"2.0","id":1,"method":"tools\\/list","params":{"_meta":'
                '{"io.modelcontextprotocol\\/protocolVersion":"2026-07-28",'
                '"io.modelcontextprotocol\\u002fclientCapabilities":{}}}}')
MENTIONED_META = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",'
                  '"arguments":{"text":"\\"io.modelcontextprotocol/protocolVersion\\" and '
                  '\\"io.modelcontextprotocol/clientCapabilities\\""}}}')
ESCAPED_TYPE = '{"jsonrpc":"2.0","id":1,"result":{"tools":[],"result\\u0054ype":"complete"}}'
NESTED_TYPE = ('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text",'
               '"text":"x"}],"structuredContent":{"resultType":"complete"}}}')


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
def test_the_2026_members_are_read_as_json_reads_them(tmp_path, fmt):
    lines = [ESCAPED_META, ESCAPED_TYPE, MENTIONED_META, NESTED_TYPE]
    if fmt == "tap":
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps({"ts": 1.0 + i, "dir": ("c2s", "s2c")[i % 2],
                                            "raw": ln}) + "\n" for i, ln in enumerate(lines)))
    else:
        path = tmp_path / "t.ndjson"
        path.write_text("\n".join(lines) + "\n")
    t = mn.load(path, format=fmt)
    # the session's version comes from the escaped _meta, so the 2026 rules apply to it
    found = t.violations[t.violations["rule"].isin(["request-meta-missing",
                                                    "result-type-missing"])]
    assert sorted(zip(found["rule"], found["seq"].tolist(), strict=True)) == [
        ("request-meta-missing", 2), ("result-type-missing", 3)]
