"""classify(): one frame in, one envelope per message out."""

import pytest

from mcp_notebook.protocol.envelope import classify, id_key_of

CASES = [
    # (frame text, kinds, flags of the first message)
    ('{"jsonrpc":"2.0","id":1,"method":"ping"}', ["request"], ()),
    ('{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}', ["request"], ()),
    ('{"jsonrpc":"2.0","method":"notifications/initialized"}', ["notification"], ()),
    ('{"jsonrpc":"2.0","id":1,"result":{}}', ["result"], ()),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}', ["error"], ()),
    # both result and error: error wins, and it is flagged
    ('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-1,"message":"x"}}', ["error"],
     ("result-and-error",)),
    ('{"jsonrpc":"2.0","id":1}', ["invalid"], ("response-neither",)),
    ('{"jsonrpc":"2.0","id":1,"result":null}', ["result"], ("result-not-object",)),
    ('{"jsonrpc":"2.0","id":1,"result":[1]}', ["result"], ("result-not-object",)),
    ('{"jsonrpc":"1.0","id":1,"method":"x"}', ["request"], ("jsonrpc-version",)),
    ('{"id":1,"method":"x"}', ["request"], ("jsonrpc-version",)),
    ('{"jsonrpc":"2.0","id":null,"method":"x"}', ["request"], ("request-id-type",)),
    ('{"jsonrpc":"2.0","id":1.5,"method":"x"}', ["request"], ("request-id-type",)),
    ('{"jsonrpc":"2.0","id":true,"method":"x"}', ["request"], ("request-id-type",)),
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}', ["request"], ("params-not-object",)),
    ('{"jsonrpc":"2.0","id":1,"method":"rpc.x"}', ["request"], ("reserved-method",)),
    ('{"jsonrpc":"2.0","id":1,"method":7}', ["invalid"], ("method-not-string",)),
    ('{"jsonrpc":"2.0","id":1,"method":"x","result":{}}', ["invalid"], ("mixed-request-response",)),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":1}}', ["error"],
     ("error-code-not-integer", "error-message-not-string")),
    ('{"jsonrpc":"2.0","id":1,"error":"boom"}', ["error"], ("error-not-object",)),
    ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', ["error"],
     ("response-id-null",)),
    ('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid"}}', ["error"],
     ("response-id-missing",)),
    ('{"foo":"boo"}', ["invalid"], ("not-a-message",)),
    ('"hello"', ["invalid"], ("not-an-object",)),
    ('{"jsonrpc":"2.0","method":"x"', ["invalid"], ("parse-error",)),
    ('{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}', ["invalid"], ("parse-error",)),
    ('{"jsonrpc":"2.0","id":1,"result":{},}', ["invalid"], ("parse-error",)),
    ("[]", ["invalid"], ("batch-empty",)),
    ("[" * 100_000, ["invalid"], ("parse-error",)),
    ('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},3]',
     ["request", "notification", "invalid"], ("batch",)),
]


@pytest.mark.parametrize("text,kinds,flags", CASES)
def test_classify(text, kinds, flags):
    envs = classify(text)
    assert [e.kind for e in envs] == kinds
    assert set(flags) <= set(envs[0].flags)
    if envs[0].kind == "invalid":
        assert envs[0].reason


def test_batch_positions():
    envs = classify('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]')
    assert [e.batch for e in envs] == [0, 1]
    assert classify('{"jsonrpc":"2.0","id":1,"method":"a"}')[0].batch is None


@pytest.mark.parametrize("raw,key,value", [
    (b"1", "1", 1),
    (b'"1"', '"1"', "1"),
    (b"18446744073709551617", "18446744073709551617", 2**64 + 1),
    (b"9223372036854775808", "9223372036854775808", 2**63),
    (b'"\\u0031"', '"1"', "1"),
    (b"-5", "-5", -5),
])
def test_id_keys_are_typed_and_exact(raw, key, value):
    assert id_key_of(raw) == key
    env = classify(b'{"jsonrpc":"2.0","id":' + raw + b',"method":"m"}')[0]
    assert env.id_key == key and env.id == value and type(env.id) is type(value)


def test_int_and_string_ids_differ():
    a = classify('{"jsonrpc":"2.0","id":1,"method":"m"}')[0]
    b = classify('{"jsonrpc":"2.0","id":"1","method":"m"}')[0]
    assert a.id_key != b.id_key


def test_tool_error_is_a_result():
    env = classify('{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}')[0]
    assert env.kind == "result" and env.is_tool_error
    env = classify('{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":false}}')[0]
    assert not env.is_tool_error


def test_details_for_pairing_and_versions():
    env = classify('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}')[0]
    assert env.ref == '"7"'
    env = classify('{"jsonrpc":"2.0","method":"notifications/progress",'
                   '"params":{"progressToken":5,"progress":0.5}}')[0]
    assert (env.ref, env.progress) == ("5", 0.5)
    env = classify('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t"}}}')[0]
    assert env.ref == '"t"'
    env = classify('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}')[0]
    assert env.version == "2025-06-18"
    env = classify('{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05"}}')[0]
    assert env.version == "2024-11-05"
    env = classify('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
                   '{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}')[0]
    assert env.version == "2026-07-28"


def test_invalid_utf8_is_invalid_not_a_crash():
    env = classify(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}')[0]
    assert env.kind == "invalid" and "UTF-8" in env.reason
