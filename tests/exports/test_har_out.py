"""HAR out: a capture of MCP over HTTP written as HAR 1.2 and read back by the project's
own HAR reader (the consumer), to the same frames and pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.har_out import NotHTTPTraffic

ROOT = Path(__file__).resolve().parents[2]
HARS = sorted(p for d in (ROOT / "data", ROOT / "tests" / "fixtures" / "peers")
              for p in d.iterdir() if p.suffix == ".har")
OTHERS = sorted(p for d in (ROOT / "data", ROOT / "tests" / "fixtures" / "peers")
                for p in d.iterdir() if p.suffix == ".jsonl")
FRAME_COLUMNS = ["seq", "kind", "direction", "id", "method", "raw", "session", "stream",
                 "error_code", "is_tool_error", "ts"]
PAIR_COLUMNS = ["request_seq", "response_seq", "session", "requester", "id", "method",
                "outcome", "error_code", "t_request", "t_response", "cancel_seq",
                "progress_count"]
# the members HAR 1.2 requires (http://www.softwareishard.com/blog/har-12-spec/)
REQUIRED = {
    "log": {"version", "creator", "entries"},
    "entry": {"startedDateTime", "time", "request", "response", "cache", "timings"},
    "request": {"method", "url", "httpVersion", "cookies", "headers", "queryString",
                "headersSize", "bodySize"},
    "response": {"status", "statusText", "httpVersion", "cookies", "headers", "content",
                 "redirectURL", "headersSize", "bodySize"},
    "content": {"size", "mimeType"},
    "timings": {"send", "wait", "receive"},
}


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True).astype(object),
                                  b.reset_index(drop=True).astype(object))


@pytest.mark.parametrize("path", HARS, ids=lambda p: p.name)
def test_har_loads_back_to_the_same_frames_and_pairs(path: Path, tmp_path: Path) -> None:
    t = mn.load(path)
    out = tmp_path / path.name  # sessions named after the file keep their names
    assert t.to_har(out) == out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert REQUIRED["log"] <= doc["log"].keys() and doc["log"]["version"] == "1.2"
    for e in doc["log"]["entries"]:
        assert REQUIRED["entry"] <= e.keys()
        assert REQUIRED["request"] <= e["request"].keys()
        assert REQUIRED["response"] <= e["response"].keys()
        assert REQUIRED["content"] <= e["response"]["content"].keys()
        assert REQUIRED["timings"] <= e["timings"].keys()
    back = mn.load(out)
    assert len(back.frames) == len(t.frames) > 0
    _same(back.frames[FRAME_COLUMNS], t.frames[FRAME_COLUMNS])
    _same(back.pairs[PAIR_COLUMNS], t.pairs[PAIR_COLUMNS])
    assert back.violations["rule"].tolist() == t.violations["rule"].tolist()
    for seq in t.frames["seq"]:  # the HTTP status stays beside each frame
        assert back.extra(seq).get("status") == t.extra(seq).get("status")
    # the entries that made frames, one entry each
    made = {s.split("#entry")[1].split("/")[0] for s in t.frames["source"]}
    assert len(doc["log"]["entries"]) == len(made)


def test_a_har_of_the_old_transport_keeps_its_endpoint_sessions(tmp_path: Path) -> None:
    t = mn.load(ROOT / "data" / "demo-sse.har")
    back = mn.load(t.to_har(tmp_path / "demo-sse.har"))
    ends = [back.extra(s).get("endpoint") for s in back.frames["seq"]]
    assert [e for e in ends if e] == [e for e in (t.extra(s).get("endpoint")
                                                  for s in t.frames["seq"]) if e]


def test_sessions_named_after_the_file_take_the_new_name(tmp_path: Path) -> None:
    src = ROOT / "tests" / "fixtures" / "peers" / "python-2026-two-clients-http.har"
    t = mn.load(src)
    back = mn.load(t.to_har(tmp_path / "other.har"))
    want = [s.replace(src.name, "other.har") for s in t.frames["session"].astype(str)]
    assert back.frames["session"].astype(str).tolist() == want
    assert want != t.frames["session"].astype(str).tolist()


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: p.name)
def test_a_trace_that_is_not_http_is_refused(path: Path, tmp_path: Path) -> None:
    t = mn.load(path)
    with pytest.raises(NotHTTPTraffic, match="not read from a HAR entry"):
        t.to_har(tmp_path / "out.har")
    assert not (tmp_path / "out.har").exists()


def test_the_module_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest

    import mcp_notebook.har_out as module

    monkeypatch.chdir(ROOT)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def _built(tmp_path: Path) -> list[Path]:
    """HARs built by hand from the HAR and transport specs (tests/readers/harkit.py): a
    Streamable HTTP session, the 2024-11-05 transport, the proxy's stamped events, one with
    an event of no time, a base64 body, a cut reply and a proxy error."""
    import base64

    from tests.readers import harkit

    out = [harkit.streamable(tmp_path / "streamable.har"), harkit.old_sse(tmp_path / "old.har"),
           harkit.stamped(tmp_path / "stamped.har")]
    doc = json.loads(out[-1].read_text())
    del doc["log"]["entries"][1]["response"]["content"]["_sseEvents"][1]["t"]
    untimed = tmp_path / "untimed.har"
    untimed.write_text(json.dumps(doc))
    body = json.dumps(harkit.msg(id=5, method="ping"))
    e1 = harkit.entry("POST", at=0, mime="application/json", reply='{"jsonrpc":"2.0","id":5,"re')
    e1["request"]["postData"] = {"mimeType": "application/json", "_encoding": "base64",
                                 "text": base64.b64encode(body.encode()).decode()}
    e1["response"]["content"]["_truncated"] = 90000
    e2 = harkit.entry("POST", at=1, body=harkit.msg(id=6, method="ping"), status=502,
                      mime="text/plain", reply="mcp-notebook proxy: cannot reach ...",
                      _proxyError="ClientConnectorError: refused")
    return [*out, untimed, harkit.write(tmp_path / "cut.har", [e1, e2])]


def test_hand_built_hars_load_back_alike(tmp_path: Path) -> None:
    for path in _built(tmp_path):
        t = mn.load(path)
        (tmp_path / "out").mkdir(exist_ok=True)
        back = mn.load(t.to_har(tmp_path / "out" / path.name))
        assert len(back.frames) == len(t.frames) > 0, path.name
        cols = [c for c in FRAME_COLUMNS if c != "ts"]
        _same(back.frames[cols], t.frames[cols])
        # times: the same, or none where the capture had none (the order is kept above)
        _same(back.frames["ts"].to_frame(), t.frames["ts"].to_frame())
        _same(back.pairs[PAIR_COLUMNS], t.pairs[PAIR_COLUMNS])
        for seq in t.frames["seq"]:
            for key in ("status", "truncated_bytes", "proxy_error", "event_id", "sse_event"):
                assert back.extra(seq).get(key) == t.extra(seq).get(key), (path.name, key)
