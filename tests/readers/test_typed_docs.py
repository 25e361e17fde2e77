"""The typed decodings of the whole-JSON formats (HAR, the Inspector's export) give the
records their generic decodings give: on every bundled file, and on files edited so
that the typed decoding refuses them (then the generic one reads them, as before)."""

from __future__ import annotations

import json
from dataclasses import astuple
from pathlib import Path

import pytest

from mcp_notebook.readers import _docscan, _har_entry, _har_load, har, inspector, recorder

ROOT = Path(__file__).resolve().parents[2]
HARS = sorted([*ROOT.glob("data/*.har"), *ROOT.glob("tests/fixtures/peers/*.har"),
               *ROOT.glob("tests/conversation/fixtures/*.har")])
EXPORTS = sorted(ROOT.glob("tests/readers/data/inspector-protocol-*.json"))
CASSETTES = sorted(p for p in [*ROOT.glob("data/*.json"), *ROOT.glob("tests/readers/data/*"),
                               *ROOT.glob("../shared/fixtures/wild/*/*")]
                   if p.is_file() and p.suffix in (".json", ".yaml", ".yml")
                   and b'"interactions"' in p.read_bytes()[:65536])


def _records(path: Path, module) -> list[tuple]:
    out = []
    for r in module.read(path):
        t = astuple(r)
        out.append(t[:-3] + (r.arrange is not None,))  # the steps are closures
    return out


def _generic(monkeypatch, module) -> None:
    if module is har:
        monkeypatch.setattr(_har_load, "decode_usual", lambda data: None)
    else:
        monkeypatch.setattr(module, "_decode_usual", _refuse)
        # and no C pass over the document (it does not use the typed decoding)
        monkeypatch.setattr(_docscan, "_scanner", lambda name: None)


def _refuse(data: bytes):
    raise inspector.msgspec.DecodeError("refused for the test")


@pytest.mark.parametrize("path", [*HARS, *EXPORTS, *CASSETTES], ids=lambda p: p.name)
def test_typed_and_generic_decodings_give_the_same_records(path, monkeypatch):
    module = har if path.suffix == ".har" else recorder if path in CASSETTES else inspector
    if module is har:
        assert _har_entry.decode_usual(path.read_bytes()) is not None  # the typed path ran
    typed = _records(path, module)
    _generic(monkeypatch, module)
    assert typed == _records(path, module)
    assert typed


def test_bundled_files_are_many():
    assert len(HARS) >= 8 and EXPORTS and CASSETTES


@pytest.mark.parametrize("edit", [
    lambda d: d["log"]["entries"].append(7),  # an entry that is not an object
    lambda d: d["log"]["entries"][0]["request"].update(headers={"a": 1}),  # headers no list
    lambda d: d["log"]["entries"][0]["response"].update(content="text"),  # content no object
    lambda d: d["log"]["entries"][0].update(request=None, response=None),  # nulls: typed
    lambda d: d["log"]["entries"][0].update(timings={"wait": "x"}, time=True),
    lambda d: d["log"]["entries"][0]["request"]["headers"].append({"name": None}),
])
def test_an_unusual_har_gives_the_generic_records(edit, tmp_path, monkeypatch):
    doc = json.loads((ROOT / "data/everything-http.har").read_text())
    edit(doc)
    path = tmp_path / "edited.har"
    path.write_text(json.dumps(doc))
    got = _records(path, har)
    _generic(monkeypatch, har)
    assert got == _records(path, har)


def _no_response_headers(d):
    for e in d["log"]["entries"]:
        e["response"]["headers"] = []  # the type from content.mimeType alone


def _base64_bodies(d):
    import base64
    for e in d["log"]["entries"]:
        post = e["request"].get("postData")
        if post and isinstance(post.get("text"), str):
            post.update(text=base64.b64encode(post["text"].encode()).decode(),
                        encoding="base64", _truncated=3)
        e.update(_proxyError="the proxy's note", _aborted=True, _incomplete=True)


@pytest.mark.parametrize("edit", [_no_response_headers, _base64_bodies])
def test_usual_edits_keep_the_typed_path_and_its_records(edit, tmp_path, monkeypatch):
    doc = json.loads((ROOT / "data/everything-http.har").read_text())
    edit(doc)
    path = tmp_path / "edited.har"
    path.write_text(json.dumps(doc))
    assert _har_entry.decode_usual(path.read_bytes()) is not None
    got = _records(path, har)
    _generic(monkeypatch, har)
    assert got == _records(path, har)


def _lifecycle(d):
    d["interactions"].append({"type": "lifecycle", "request": None, "http_method": "GET",
                              "http_path": "/mcp", "response_status": 200})
    d["interactions"].append({"type": 5, "http_method": None, "response_is_sse": True})


def _odd_values(d):
    first = d["interactions"][0]
    first.update(response_status=None, latency_ms="12", response_is_sse=False)
    d["interactions"][-1].update(response=None, type=None, latency_ms=0)


@pytest.mark.parametrize("edit", [_lifecycle, _odd_values])
def test_usual_cassette_edits_keep_the_typed_path_and_its_records(edit, tmp_path,
                                                                  monkeypatch):
    doc = json.loads(CASSETTES[0].read_text())
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    got = _records(path, recorder)
    assert any(r[0].startswith(("GET", "?")) for r in got) or edit is _odd_values
    _generic(monkeypatch, recorder)
    assert got == _records(path, recorder)
