"""Pasted curl transcripts: the wild README sample, counted by reading it."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import curl, sniff

SAMPLE = (Path(__file__).parent.parent / "fixtures" / "wild" / "http-sse-capture"
          / "agentgateway-readme-inspector-proxy-curl-sse.txt")
SID = "5f130863-32e2-420a-a747-9fa654e774ef"


def test_readme_sample_golden():
    # 39 lines: 2 curl commands (lines 4-7 and 35-39) with --data-raw bodies, one SSE
    # reply (lines 12-13: event + data), a header block with the session id and a Date,
    # 13 blank lines and 22 other lines (markdown, fences, headers) kept as log rows
    assert sniff(SAMPLE) == "curl"
    t = mn.load(SAMPLE)
    f = t.frames
    assert list(f[f.kind != "log"].kind) == ["request", "result", "request"]
    assert list(f[f.kind != "log"].source.str.rsplit(":", n=1).str[1]) == ["4-7", "12", "35-39"]
    assert (f.kind == "log").sum() == 22
    assert t.summary()["frames"] == 25
    msgs = f[f.kind != "log"]
    assert set(msgs.session.astype(str)) == {SID}  # the 2nd names it; the 1st's reply headers
    assert list(t.pairs.outcome) == ["result", "unanswered"]  # tools/list: no reply shown
    assert str(msgs.ts.iloc[0]) == "2025-09-04 07:09:28+00:00"  # the Date header


def test_verbose_curl_and_json_reply(tmp_path):
    p = tmp_path / "session.txt"
    p.write_text(
        "$ curl -s -i http://localhost:8000/mcp -H 'Mcp-Session-Id: s1' "
        "-d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}'\n"
        "< HTTP/1.1 200 OK\n"
        "< content-type: application/json\n"
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n')
    recs = list(curl.read(p))
    assert [(r.direction, r.kind, r.session) for r in recs] == [
        ("c2s", None, "s1"), (None, "log", "s1"), (None, "log", "s1"), ("s2c", None, "s1")]


CHALLENGED = """\
$ curl -i -X POST http://localhost:8000/mcp -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
HTTP/1.1 {status}
{header}Content-Type: application/json

{{"error":"invalid_token","error_description":"Missing Authorization header"}}
$ curl -i -X POST http://localhost:8000/mcp -H 'Authorization: Bearer abc' -d '{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}'
HTTP/1.1 200 OK
Content-Type: application/json

{{"jsonrpc":"2.0","id":1,"result":{{"tools":[]}}}}
"""


@pytest.mark.parametrize("status,header,refused", [
    ("401 Unauthorized", "WWW-Authenticate: Bearer\n", True),
    ("401 Unauthorized", "", True),
    ("403 Forbidden", "WWW-Authenticate: Bearer error=\"insufficient_scope\"\n", True),
    ("403 Forbidden", "", False)])  # a 403 of another cause (an Origin refused): a request
def test_a_command_answered_by_an_authorization_challenge(tmp_path, status, header, refused):
    path = tmp_path / "auth.txt"
    path.write_text(CHALLENGED.replace("{status}", status).replace("{header}", header)
                    .replace("{{", "{").replace("}}", "}"))
    t = mn.load(path, format="curl")
    first = t.frames.iloc[0]
    assert (first["kind"] == "log") == refused
    if refused:
        assert "the message was not processed" in first["reason"]
        assert t.violations.empty and t.pairs["outcome"].astype(str).tolist() == ["result"]
    else:  # the request stays one, and its twin sent again is reported
        assert first["kind"] == "request" and not t.violations.empty
