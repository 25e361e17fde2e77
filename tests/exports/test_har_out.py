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
