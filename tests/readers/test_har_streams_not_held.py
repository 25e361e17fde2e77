"""A HAR that does not hold an event stream (a browser's DevTools export keeps none of a
stream's events): the bundled real HARs with their streams' bodies taken out, as such an
export has them. The requests answered on a stream the HAR lacks, and the client's
answers to requests made on one, are marked and not reported; the pairs keep them as
captured; a request whose answer the HAR would hold is still reported."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_notebook as mn

ROOT = Path(__file__).resolve().parents[2]


def _without_streams(src: Path, dst: Path, which: str) -> Path:
    """``src`` with the bodies of its event streams taken out (``which``: "get", "post" or
    "all"), and the proxy's stamped events with them."""
    doc = json.loads(src.read_text("utf-8"))
    for e in doc["log"]["entries"]:
        content = e["response"].get("content") or {}
        if "event-stream" not in str(content.get("mimeType", "")):
            continue
        if which in ("all", e["request"]["method"].lower()):
            content.pop("text", None)
            content.pop("_sseEvents", None)
    dst.write_text(json.dumps(doc), "utf-8")
    return dst


def _unreported(t: mn.Trace) -> set[str]:
    return set(t.violations["rule"]) & {"unanswered-request", "orphan-response"}


def test_http_sse_without_its_get_stream(tmp_path):
    """The 2024-11-05 transport: every server message is on the GET stream."""
    src = ROOT / "data" / "demo-sse.har"
    held = mn.load(src)
    t = mn.load(_without_streams(src, tmp_path / "browser.har", "get"))
    p = t.pairs
    asked = p[p["requester"].astype(str) == "c2s"]
    # unanswered, as captured (one the client cancelled: cancelled)
    assert len(asked) >= 5 and set(asked["outcome"].astype(str)) <= {"unanswered", "cancelled"}
    assert all(t.extra(int(s)).get("answer_not_held") for s in asked["request_seq"])
    assert not _unreported(t)
    assert any("answer_not_held" in n for n in t.notes)
    # what the full HAR found on the client's side, the cut one finds too
    assert set(held.violations["rule"]) - {"unanswered-request", "orphan-response"} >= set(
        t.violations["rule"])


def test_streamable_http_without_its_reply_streams(tmp_path):
    """Streamable HTTP: a POST's answer is in its reply stream; the HAR lacks them all."""
    src = ROOT / "data" / "everything-http.har"
    t = mn.load(_without_streams(src, tmp_path / "browser.har", "post"))
    p = t.pairs
    lost = p[(p["requester"].astype(str) == "c2s") & (p["outcome"].astype(str) == "unanswered")]
    assert len(lost) > 0
    assert all(t.extra(int(s)).get("answer_not_held") for s in lost["request_seq"])
    assert not _unreported(t)
    # the client's answers to the server's requests made in those streams: unasked
    orphans = p[p["outcome"].astype(str) == "orphan"]
    assert all(t.extra(int(s)).get("request_not_held") for s in orphans["response_seq"])


def test_a_request_the_har_holds_the_answer_of_is_still_reported(tmp_path):
    """Without any stream missing, an unanswered request is reported, as ever: a JSON
    reply taken out of a HAR that holds all its streams."""
    src = ROOT / "data" / "everything-http.har"
    doc = json.loads(src.read_text("utf-8"))
    cut = None
    for e in doc["log"]["entries"]:
        content = e["response"].get("content") or {}
        body = e["request"].get("postData", {}).get("text", "")
        if "application/json" in str(content.get("mimeType", "")) and '"method"' in body \
                and '"id"' in body:
            content["text"] = ""
            cut = e
            break
    if cut is None:  # every answer came as a stream: take one stream's events out instead
        for e in doc["log"]["entries"]:
            content = e["response"].get("content") or {}
            if e["request"]["method"] == "POST" and content.get("_sseEvents"):
                content["_sseEvents"], content["text"] = [], ": ping\n\n"
                cut = e
                break
    assert cut is not None
    path = tmp_path / "cut.har"
    path.write_text(json.dumps(doc), "utf-8")
    t = mn.load(path)
    assert "unanswered-request" in set(t.violations["rule"])
    assert not any("answer_not_held" in n for n in t.notes)
