"""HAR: JSON-RPC answers sent with an HTTP error status pair like any other answer."""

from __future__ import annotations

from pathlib import Path

import mcp_notebook as mn
from mcp_notebook.readers import curl

from . import harkit
from .harkit import entry, js, msg


def _stateless(path: Path) -> Path:
    """2026-07-28 stateless Streamable HTTP: errors answered with 400 and 404."""
    bad_version = msg(id=1, error={"code": -32602, "message": "Unsupported protocol version"})
    no_tool = msg(id=2, error={"code": -32601, "message": "Method not found"})
    return harkit.write(path, [
        entry("POST", at=0.0, body=msg(id=1, method="tools/list"), status=400,
              mime="application/json", reply=js(bad_version)),
        entry("POST", at=0.1, body=msg(id=2, method="nope/nothing"), status=404,
              mime="application/json", reply=js(no_tool)),
        entry("POST", at=0.2, body=msg(id=3, method="tools/call", params={"name": "x"}),
              status=500, mime="text/event-stream",
              reply=harkit.sse("data: " + js(msg(id=3, error={"code": -32603,
                                                              "message": "boom"})))),
        entry("POST", at=0.3, body=msg(id=4, method="tools/list"),
              headers={"Mcp-Session-Id": "gone"}, status=404, mime="application/json",
              reply=js(msg(id=None, error={"code": -32001, "message": "Session not found"}))),
    ])


def test_error_answers_with_4xx_5xx_pair(tmp_path):
    t = mn.load(_stateless(tmp_path / "stateless.har"))
    p = t.pairs.set_index("id")
    assert p.loc[1, "outcome"] == "error" and p.loc[1, "error_code"] == -32602
    assert p.loc[2, "outcome"] == "error" and p.loc[3, "outcome"] == "error"
    # no answer to id 4: the 404's body names no id (the session is gone), so it answers
    # no request it can name: an orphan, as the same error would be on stdio
    assert p.loc[4, "outcome"] == "unanswered"
    assert p.outcome.astype(str).eq("orphan").sum() == 1
    assert (t.violations.rule == "unanswered-request").sum() == 1
    assert (t.violations.rule == "error-id-null").sum() == 1
    # the HTTP status stays beside each answer
    f = t.frames
    statuses = {int(f.id[s]): t.extra(s)["status"] for s in f.index
                if f.kind[s] == "error" and f.id[s] is not None}
    assert statuses == {1: 400, 2: 404, 3: 500}


def test_curl_error_answer_with_400_pairs(tmp_path):
    path = tmp_path / "paste.txt"
    path.write_text(
        "$ curl -i -X POST http://localhost:8000/mcp -H 'Content-Type: application/json' "
        "-d '{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}'\n"
        "HTTP/1.1 400 Bad Request\n"
        "content-type: application/json\n\n"
        '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unsupported protocol '
        'version"}}\n', encoding="utf-8")
    assert [r.extra.get("status") for r in curl.read(path) if r.direction] == [400, 400]
    t = mn.load(path, format="curl")
    assert t.pairs.outcome.astype(str).tolist() == ["error"]


def test_the_status_is_shown_with_the_frame(tmp_path):
    from mcp_notebook.widgets.render import frame_html

    t = mn.load(_stateless(tmp_path / "stateless.har"))
    seq = int(t.pairs.set_index("id").loc[2, "response_seq"])
    row = t.frames.iloc[seq].to_dict()
    assert "HTTP 404" in frame_html(row, t.message(seq), row["raw"], "its response",
                                    context=t.extra(seq))


def test_stateless_posts_are_exchanges_of_their_own(tmp_path):
    """2026-07-28 has no sessions: two clients (or two runs) numbering their requests alike,
    their calls overlapping in time, are not one client reusing an id in flight."""
    v26 = {"MCP-Protocol-Version": "2026-07-28"}
    slow = msg(id=1, method="tools/call", params={"name": "slow"})
    fast = msg(id=1, method="tools/call", params={"name": "add"})
    path = harkit.write(tmp_path / "two-clients.har", [
        entry("POST", at=0.0, body=slow, headers=v26, mime="application/json", wait_ms=500,
              reply=js(msg(id=1, result={"content": [], "isError": False}))),
        entry("POST", at=0.1, body=fast, headers=v26, mime="application/json",
              reply=js(msg(id=1, result={"content": [], "isError": False}))),
        # an older client on the same endpoint, no version header: one session as before
        entry("POST", at=0.2, body=msg(id=7, method="ping"), mime="application/json",
              reply=js(msg(id=7, result={}))),
    ])
    t = mn.load(path)
    p = t.pairs
    assert p["outcome"].astype(str).tolist() == ["result", "result", "result"]
    req = p["request_seq"].tolist()
    assert [t.frames["session"][s] for s in req] == [
        "two-clients.har entry 0", "two-clients.har entry 1", "two-clients.har"]
    # the slow call's answer comes last, after the other client's call and the ping
    assert dict(zip(req, p["response_seq"].tolist(), strict=True)) == {0: 5, 1: 2, 3: 4}
    assert not {"request-id-in-flight", "duplicate-response"} & set(t.violations["rule"])
