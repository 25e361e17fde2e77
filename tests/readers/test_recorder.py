"""mcp-recorder cassette: the wild sample, counted by reading it."""

from __future__ import annotations

from pathlib import Path

import mcp_notebook as mn
from mcp_notebook.readers import recorder, sniff

CASSETTE = (Path(__file__).parent.parent / "fixtures" / "wild" / "recorder-mcp-recorder-cassette"
            / "devhelm-mock-session-cassette.json")


def test_cassette_golden():
    # 9 interactions: 6 jsonrpc_request (request + response each), 1 notification
    # (response null, HTTP 202), 2 lifecycle (DELETE, GET) with no messages
    assert sniff(CASSETTE) == "recorder"
    t = mn.load(CASSETTE)
    f = t.frames
    assert (f.direction == "c2s").sum() == 7 and (f.direction == "s2c").sum() == 6
    assert list(f.kind.value_counts()[["request", "result", "notification", "log"]]) == [6, 6, 1, 2]
    assert list(t.pairs.outcome) == ["result"] * 6
    assert f.ts.isna().all()  # a cassette stores no per-message time
    assert t.extra(2) == {"status": 202, "latency_ms": 1, "sse": False}
    assert f.raw[f.kind == "log"].tolist() == ["DELETE /mcp -> 200", "GET /mcp -> 200"]


def test_payloads_keep_their_numbers():
    recs = list(recorder.read(CASSETTE))
    call = next(r for r in recs if r.raw.startswith('{"method":"tools/call"')
                and '"multiply"' in r.raw)
    assert '"a":3.5,"b":2.0' in call.raw  # 2.0 stays 2.0


def test_cut_or_damaged_cassette_costs_one_row(tmp_path):
    whole = [(r.source, r.raw) for r in recorder.read(CASSETTE)]
    data = CASSETTE.read_bytes()
    cut_at = data.index(b'"type"', data.index(b'"type"', data.index(b'"type"') + 1) + 1) + 20
    (tmp_path / "cut.json").write_bytes(data[:cut_at])  # inside the third interaction
    recs = list(recorder.read(tmp_path / "cut.json"))
    assert recs[-1].kind == "invalid" and "ends inside this interaction" in recs[-1].reason
    assert [(r.source, r.raw) for r in recs[:-1]] == [
        (s.replace(CASSETTE.name, "cut.json"), raw) for s, raw in whole
        if s.split("#interaction")[1].split("/")[0] in ("0", "1")]
    first = data.index(b'"jsonrpc"')
    bad = data[:first] + b'"x": "\\ud800", ' + data[first:]  # a lone surrogate
    (tmp_path / "bad.json").write_bytes(bad)
    recs = list(recorder.read(tmp_path / "bad.json"))
    assert [r.kind for r in recs].count("invalid") == 1 and len(recs) == len(whole) - 1
