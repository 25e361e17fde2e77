"""The conformance suite's own servers, recorded with the Python SDK client through the
recording proxy (``scripts/record_conformance_clients.py``): traffic of servers the bundled
traces do not have. Each capture gives exactly the findings listed here, checked by hand.

What these servers do that others do not: answer a notification with an id-less result
(``initialize``); close a tool call's SSE stream after a priming event and send the result
on the GET stream the client reopens (``sse-retry``); challenge the client with HTTP 401,
then 403 ``insufficient_scope``, before and during OAuth (``auth_*``), the client sending
the same request again, with the same id, once authorized; take an OAuth client
registration (JSON that is not MCP) on the same origin (``auth_2025-03-26-...``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.readers import _har_reader

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "conformance-clients"
CAPTURES = sorted(FOLDER.glob("*.har"))

#: capture -> the (rule, frame) of every finding, each a real fault of the suite's server
#: or of the client
FOUND = {
    "initialize.har": [
        ("capability-server-undeclared", 4),  # tools/list; the server declared no tools
        ("result-id-null", 3)],  # the server answered notifications/initialized
}


def test_the_captures_are_here():
    assert len(CAPTURES) == 9 and sum(p.stat().st_size for p in CAPTURES) < 200_000


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_no_false_finding(path):
    t = mn.load(path)
    assert sorted(zip(t.violations["rule"], t.violations["seq"].tolist(), strict=True)) == \
        FOUND.get(path.name, [])
    with conversation.deep():  # the schema rules too
        deep = {(f.rule, f.seq) for f in conversation.check(t)
                if f.severity in ("error", "warning")}
    assert deep <= set(FOUND.get(path.name, []))
    outcomes = set(t.pairs["outcome"].astype(str))
    assert outcomes == ({"result", "orphan"} if path.name == "initialize.har" else {"result"})


@pytest.mark.parametrize("path", [p for p in CAPTURES if p.name.startswith("auth_")],
                         ids=lambda p: p.stem)
def test_a_post_answered_by_an_authorization_challenge_carried_no_message(path):
    har = json.loads(path.read_text("utf-8"))["log"]["entries"]
    challenged = [e for e in har if e["request"]["method"] == "POST" and (
        e["response"]["status"] == 401 or e["response"]["status"] == 403 and any(
            h["name"].lower() == "www-authenticate" for h in e["response"]["headers"]))]
    assert challenged
    t = mn.load(path)
    f = t.frames
    refused = f[f["reason"].astype(str).str.contains("the message was not processed")]
    assert len(refused) == len(challenged)
    assert set(refused["kind"]) == {"log"}
    assert set(refused["raw"]) == {e["request"]["postData"]["text"] for e in challenged}


def test_an_oauth_registration_is_not_mcp_traffic():
    t = mn.load(FOLDER / "auth_2025-03-26-oauth-endpoint-fallback.har")
    left_out = t.frames[t.frames["raw"].astype(str).str.contains("not MCP traffic")]
    assert len(left_out) == 1 and "POST http://" in left_out["raw"].iloc[0]
    assert "/register" in left_out["raw"].iloc[0]
    assert not t.frames["raw"].astype(str).str.contains("client_name").any()


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_the_column_path_reads_them_as_the_entry_path(path, monkeypatch):
    cols = mn.load(path).frames
    monkeypatch.setattr(_har_reader, "_columns", lambda *a, **k: None)
    entries = mn.load(path).frames
    pd_cols = ["kind", "direction", "method", "id_key", "raw", "source"]
    assert cols[pd_cols].astype(str).values.tolist() == \
        entries[pd_cols].astype(str).values.tolist()


def test_the_sse_retry_result_comes_on_the_reopened_stream():
    t = mn.load(FOLDER / "sse-retry.har")
    call = t.pairs[t.pairs["method"] == "tools/call"]
    assert call["outcome"].astype(str).tolist() == ["result"]
    answer = t.frames.iloc[int(call["response_seq"].iloc[0])]
    assert answer["source"].startswith("sse-retry.har#entry") and "/event" in answer["source"]


def test_a_json_post_to_an_endpoint_sent_no_json_rpc_is_left_out(tmp_path):
    # every POST body JSON (the column path's kind of document) but one endpoint is sent no
    # JSON-RPC: an OAuth client registration, say; both paths leave it out
    doc = json.loads((FOLDER / "tools_call.har").read_text("utf-8"))
    entry = json.loads(json.dumps(doc["log"]["entries"][0]))
    entry["request"]["url"] = entry["request"]["url"].rsplit("/", 1)[0] + "/register"
    entry["request"]["postData"]["text"] = '{"client_name":"x","redirect_uris":["http://a"]}'
    entry["response"]["content"] = {"size": 20, "mimeType": "application/json",
                                    "text": '{"client_id":"c1"}'}
    entry["response"]["headers"] = [{"name": "content-type", "value": "application/json"}]
    doc["log"]["entries"].insert(0, entry)
    path = tmp_path / "registered.har"
    path.write_text(json.dumps(doc), "utf-8")
    want = mn.load(FOLDER / "tools_call.har")
    t = mn.load(path)
    assert t.violations.empty
    messages = t.frames[t.frames["kind"] != "log"]
    assert messages["raw"].tolist() == want.frames["raw"].tolist()
    assert "/register" in t.frames[t.frames["kind"] == "log"]["raw"].iloc[0]


@pytest.mark.parametrize("later", [True, False])
def test_an_endpoint_whose_first_post_is_no_json_rpc(tmp_path, monkeypatch, later):
    """Where POSTs go to two endpoints, each is looked at for JSON-RPC by the first POST
    to each of its URLs, then, if none showed it, by its POSTs one by one: an endpoint
    whose first POST is other JSON but a later one JSON-RPC is MCP traffic (``later``:
    the column path reads the document), one of no JSON-RPC POST is not (the entry path
    reads it and leaves that endpoint out); the frames are the entry path's either way."""
    doc = json.loads((FOLDER / "tools_call.har").read_text("utf-8"))
    first = doc["log"]["entries"][0]

    def post(url: str, body: str, reply: str) -> dict:
        e = json.loads(json.dumps(first))
        e["request"]["url"] = first["request"]["url"].rsplit("/", 1)[0] + url
        e["request"]["postData"]["text"] = body
        e["response"]["content"] = {"size": len(reply), "mimeType": "application/json",
                                    "text": reply}
        e["response"]["headers"] = [{"name": "content-type", "value": "application/json"}]
        return e

    call = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    answer = '{"jsonrpc":"2.0","id":1,"result":{}}'
    entries = [post("/other", call, answer), post("/mcp", '{"hello":1}', '{"ok":true}')]
    if later:
        entries.append(post("/mcp", call, answer))
    doc["log"]["entries"] = entries
    path = tmp_path / "first-post.har"
    path.write_text(json.dumps(doc), "utf-8")
    read = _har_reader._columns
    taken: list[bool] = []

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        got = read(*a, **k)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(_har_reader, "_columns", spy)
    cols = mn.load(path).frames
    monkeypatch.setattr(_har_reader, "_columns", lambda *a, **k: None)
    entry_path = mn.load(path).frames
    pd_cols = ["kind", "direction", "method", "id_key", "raw", "source", "reason"]
    assert cols[pd_cols].astype(str).values.tolist() == \
        entry_path[pd_cols].astype(str).values.tolist()
    # the column path read it where every endpoint is sent JSON-RPC, else handed it over
    assert taken == [later]
    if later:  # both endpoints' messages; the first POST to /mcp and its reply invalid
        assert sorted(cols["kind"].astype(str)) == ["invalid", "invalid", "request",
                                                    "request", "result", "result"]
    else:
        assert "/mcp" in cols[cols["kind"] == "log"]["raw"].iloc[0]
