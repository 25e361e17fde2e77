"""The MCP Inspector v2 network export: real ones (``scripts/record_inspector_web.py http
sse``: the web UI on server-everything over Streamable HTTP and over the 2024-11-05
HTTP+SSE transport, its Network tab exported beside its Protocol tab, the same session),
each held to the protocol export of the same traffic; and the export's odd entries (a
failed request, not an object, a cut file)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import inspector_network, sniff

WEB = Path(__file__).resolve().parents[1] / "fixtures" / "inspector-web"
MESSAGES = ("request", "result", "error", "notification")


def _transport(network: Path) -> str:
    """"sse" where the export's GET stream is the old transport's ``/sse``, else "http"."""
    entries = json.loads(network.read_text("utf-8"))
    return "sse" if any(e["url"].endswith("/sse") for e in entries) else "http"


NETWORKS = {_transport(p): p for p in sorted(WEB.glob("inspector-network-*.json"))}
# the protocol export of the same session: the same server port in its name
PROTOCOLS = {t: next(WEB.glob(f"inspector-protocol-{p.name.split('-')[2]}-*.json"))
             for t, p in NETWORKS.items()}
NETWORK, PROTOCOL = NETWORKS["http"], PROTOCOLS["http"]
BOTH = pytest.mark.parametrize("transport", ["http", "sse"])


def _messages(t: mn.Trace) -> collections.Counter[tuple[str, str]]:
    f = t.frames[t.frames["kind"].isin(MESSAGES)]
    return collections.Counter((d, json.dumps(json.loads(r), sort_keys=True))
                               for d, r in zip(f["direction"], f["raw"], strict=True))


def test_both_transports_are_here():
    assert sorted(NETWORKS) == ["http", "sse"]


@BOTH
def test_it_is_found_and_told_from_the_protocol_export(transport):
    assert sniff(NETWORKS[transport]) == "inspector-network"
    assert sniff(PROTOCOLS[transport]) == "inspector"


@BOTH
def test_it_holds_the_protocol_exports_messages_but_the_get_streams(transport):
    net, proto = mn.load(NETWORKS[transport]), mn.load(PROTOCOLS[transport])
    got, want = _messages(net), _messages(proto)
    assert not got - want  # nothing the session did not send
    missing = want - got
    # what the export does not hold: the events of the GET stream, counted in its log row
    held = net.frames[net.frames["kind"] == "log"]
    counts = [net.extra(int(s)).get("events_not_held") for s in held["seq"]]
    assert sum(c for c in counts if c) >= sum(missing.values()) > 0
    assert all(d == "s2c" for d, _ in missing)  # the server's messages on that stream
    assert any("roots/list" in m for _, m in missing)
    if transport == "sse":  # every message the server sent, answers included
        assert not [d for d, _ in got if d == "s2c"]
    assert any("GET stream(s)" in n and "Protocol tab" in n for n in net.notes)
    assert net.frames["session"].nunique() == 1


def test_over_streamable_http_its_calls_pair_and_the_missing_stream_is_no_finding():
    t = mn.load(NETWORK)
    p = t.pairs
    calls = p[p["method"] == "tools/call"]
    assert len(calls) == 2 and set(calls["outcome"].astype(str)) == {"result"}
    assert calls["progress_count"].tolist() == [0, 5]
    # the client's answer to roots/list, asked on the GET stream the export does not
    # hold: unasked in the pairs, as the capture has it, and no violation
    orphan = p[p["outcome"].astype(str) == "orphan"]
    assert len(orphan) == 1
    seq = int(orphan["response_seq"].iat[0])
    assert json.loads(t.frames["raw"].iat[seq])["id"] == 0
    assert t.extra(seq)["request_not_held"] is True
    assert t.violations.empty
    # a reply stream's events are placed when its headers came, and say so
    long_call = int(calls["response_seq"].iat[1])
    assert t.extra(long_call).get("ts_estimated") is True


def test_over_http_sse_every_answer_is_on_the_stream_and_none_is_missed_aloud():
    t = mn.load(NETWORKS["sse"])
    p = t.pairs
    asked = p[p["requester"].astype(str) == "c2s"]
    assert len(asked) >= 7 and set(asked["outcome"].astype(str)) == {"unanswered"}
    assert all(t.extra(int(s))["answer_not_held"] is True for s in asked["request_seq"])
    assert t.violations.empty


@BOTH
def test_the_cli_checks_it(transport):
    done = subprocess.run([sys.executable, "-m", "mcp_notebook", "check",
                           str(NETWORKS[transport]), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["violations"] == []
    # what was passed over is said (and in the text output, a note: line before the count)
    assert any("answer_not_held" in n for n in report["notes"])
    text = subprocess.run([sys.executable, "-m", "mcp_notebook", "check",
                           str(NETWORKS[transport])], capture_output=True, text=True,
                          timeout=120).stdout.splitlines()
    assert text[-1].startswith("0 finding(s)")
    assert any(ln.startswith("note: ") and "Protocol tab" in ln for ln in text[:-1])


def test_a_stream_not_held_makes_the_findings_go_only_where_they_are_the_captures(tmp_path):
    """The same requests with no stream the export lacks: unanswered, and reported."""
    entries = json.loads(NETWORKS["sse"].read_text("utf-8"))
    posts = [e for e in entries if e["method"] == "POST"]
    t = mn.load(_write(tmp_path, posts))
    assert set(t.violations["rule"]) == {"unanswered-request", "orphan-response"}


def _write(tmp_path: Path, entries: list, text: str | None = None) -> Path:
    path = tmp_path / "inspector-network-x.json"
    path.write_text(text if text is not None else json.dumps(entries, indent=2), "utf-8")
    return path


POST = {"id": "1", "timestamp": "2026-12-07T20:50:24.210Z", "method": "POST",
        "url": "http://127.0.0.1:9/mcp", "requestHeaders": {"content-type": "application/json"},
        "requestBody": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})}


def test_a_request_that_failed_is_sent_and_unanswered(tmp_path):
    failed = {**POST, "error": "fetch failed", "duration": 3}
    t = mn.load(_write(tmp_path, [failed]))
    assert t.frames["kind"].tolist() == ["request", "log"]
    assert t.extra(1)["fetch_error"] == "fetch failed"
    assert "fetch failed" in t.frames["raw"].iat[1]
    assert t.pairs["outcome"].astype(str).tolist() == ["unanswered"]


def test_a_reply_in_json_is_paired(tmp_path):
    ok = {**POST, "duration": 7, "responseStatus": 200, "responseStatusText": "OK",
          "responseHeaders": {"content-type": "application/json"},
          "responseBody": json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})}
    t = mn.load(_write(tmp_path, [ok]))
    assert t.frames["kind"].tolist() == ["request", "result"]
    assert round(float(t.pairs["latency"].dt.total_seconds().iat[0]) * 1000) == 7


def test_entries_that_are_no_object_or_cut_cost_only_themselves(tmp_path):
    t = mn.load(_write(tmp_path, [POST, 5, POST]))
    assert t.frames["kind"].tolist().count("request") == 2
    bad = t.frames[t.frames["kind"] == "invalid"]
    assert "not an object" in bad["reason"].iat[0]
    text = json.dumps([POST, POST], indent=2)
    cut = _write(tmp_path, [], text=text[: text.rindex('"requestBody"')])
    t = mn.load(cut, format="inspector-network")
    assert t.frames["kind"].tolist().count("request") == 1
    assert "ends inside" in " ".join(t.frames["reason"].dropna())


def test_the_note_counts_every_stream():
    extra = {1: {"events_not_held": 2}, 4: {"events_not_held": 3}, 5: {"http": "GET"}}
    (note,) = inspector_network.not_held_note(extra)
    assert note.startswith("2 GET stream(s) of the server's messages (5 event(s))")
    assert inspector_network.not_held_note({}) == []


@pytest.mark.parametrize("text", ["", "[]", "{}", "[1, 2]", "not json", "[{\"url\": 1}]"])
def test_odd_documents_load_or_say_why(tmp_path, text):
    path = _write(tmp_path, [], text=text)
    rows = list(inspector_network.read(path))  # the reader alone: no exception
    assert all(r.kind in (None, "invalid", "log") for r in rows)


@BOTH
def test_with_the_protocol_export_of_its_session_it_is_not_read_twice(tmp_path, transport):
    """A folder of both exports (or both named): the protocol export's frames only, and a
    note that says why the network export was left out."""
    network, protocol = NETWORKS[transport], PROTOCOLS[transport]
    for path in (network, protocol):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    alone = mn.load(protocol)
    for t in (mn.load(tmp_path), mn.load([tmp_path / network.name, tmp_path / protocol.name])):
        assert t.frames["raw"].tolist() == alone.frames["raw"].tolist()
        assert t.violations.empty
        assert any(n.startswith(f"skipped {network.name}: its messages are all in "
                                f"{protocol.name}") for n in t.notes)


def test_with_the_protocol_export_of_another_session_both_are_read(tmp_path):
    """The stdio session said every message the HTTP one did, word for word (the same
    Inspector, server and calls): told apart by when the client sent them."""
    other = WEB / "inspector-protocol-node-2026-12-07T18-40-58.367Z.json"  # over stdio
    t = mn.load([NETWORK, other])
    assert len(t.frames) == len(mn.load(NETWORK).frames) + len(mn.load(other).frames)
    assert not any(n.startswith("skipped") for n in t.notes)
    assert inspector_network.same_session(NETWORK, [other]) is None
    assert inspector_network.same_session(NETWORK, [other, PROTOCOL]) == PROTOCOL


def test_each_protocol_export_is_read_once_for_every_network_export(monkeypatch):
    from mcp_notebook.readers import inspector

    reads: list[Path] = []
    real = inspector.read
    monkeypatch.setattr(inspector, "read", lambda path, **kw: reads.append(path) or real(path))
    protocols = [PROTOCOLS["sse"], PROTOCOLS["http"]]
    read_before: dict = {}
    assert inspector_network.same_session(NETWORKS["http"], protocols,
                                          read_before) == PROTOCOLS["http"]
    assert inspector_network.same_session(NETWORKS["sse"], protocols,
                                          read_before) == PROTOCOLS["sse"]
    assert sorted(reads) == sorted(protocols)
