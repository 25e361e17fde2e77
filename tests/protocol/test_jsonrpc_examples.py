"""The JSON-RPC 2.0 specification's §7 examples, classified and paired as the spec says.

Each exchange is a client frame (-->) and the server's reply (<--), as in the spec.
"""

import pytest

from helpers import load_rows

EXAMPLES = {
    "positional params": (
        '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
        '{"jsonrpc": "2.0", "result": 19, "id": 1}',
        ["request", "result"], [("1", "result")]),
    "named params": (
        '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
        '{"jsonrpc": "2.0", "result": 19, "id": 3}',
        ["request", "result"], [("3", "result")]),
    "notification": (
        '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}', None,
        ["notification"], []),
    "notification without params": (
        '{"jsonrpc": "2.0", "method": "foobar"}', None, ["notification"], []),
    "non-existent method": (
        '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
        '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}',
        ["request", "error"], [('"1"', "error")]),
    "invalid JSON": (
        '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
        '{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}',
        ["invalid", "error"], [("null", "orphan")]),
    "invalid Request object": (
        '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
        '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}',
        ["invalid", "error"], [("null", "orphan")]),
    "batch, invalid JSON": (
        '[ {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
        '{"jsonrpc": "2.0", "method" ]',
        '{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}',
        ["invalid", "error"], [("null", "orphan")]),
    "empty array": (
        "[]",
        '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}',
        ["invalid", "error"], [("null", "orphan")]),
    "invalid batch, not empty": (
        "[1]",
        '[{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]',
        ["invalid", "error"], [("null", "orphan")]),
    "invalid batch": (
        "[1,2,3]",
        '[{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},'
        '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},'
        '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]',
        ["invalid"] * 3 + ["error"] * 3, [("null", "orphan")] * 3),
    "batch": (
        '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
        '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
        '{"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
        '{"foo": "boo"},'
        '{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
        '{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]',
        '[{"jsonrpc": "2.0", "result": 7, "id": "1"},'
        '{"jsonrpc": "2.0", "result": 19, "id": "2"},'
        '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},'
        '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},'
        '{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}]',
        ["request", "notification", "request", "invalid", "request", "request",
         "result", "result", "error", "error", "result"],
        [('"1"', "result"), ('"2"', "result"), ('"5"', "error"), ('"9"', "result"),
         ("null", "orphan")]),
    "batch, all notifications": (
        '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
        '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]', None,
        ["notification", "notification"], []),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_section_7_example(name, tmp_path):
    call, reply, kinds, pairs = EXAMPLES[name]
    rows = [("c2s", call)] + ([("s2c", reply)] if reply else [])
    t = load_rows(tmp_path, rows, version="2025-03-26")  # the one MCP version with batches
    assert list(t.frames["kind"].astype(str)) == kinds
    got = sorted(zip(t.pairs["id_key"].astype(str).replace("None", "null"),
                     t.pairs["outcome"].astype(str), strict=True))
    assert got == sorted(pairs)
    # a reply to a broken request carries id null: legal, shown as info, never an error on it
    nulls = t.violations[t.violations["rule"] == "error-id-null"]
    assert set(nulls["severity"].astype(str)) <= {"info"}
    assert not (t.violations["rule"] == "orphan-response").any()


def test_batch_members_keep_their_position(tmp_path):
    call, reply, _, _ = EXAMPLES["batch"]
    t = load_rows(tmp_path, [("c2s", call), ("s2c", reply)], version="2025-03-26")
    assert t.frames["batch"].tolist() == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4]
    assert t.message(3) == {"foo": "boo"}
    assert t.message(10) == {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}
