"""One bad value costs one row, never the file: HAR, Inspector, VS Code, Claude, curl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import har, inspector
from mcp_notebook.table import settled

from . import harkit

WILD = Path(__file__).parent.parent / "fixtures" / "wild"
EXPORT = Path(__file__).parent / "data" / "inspector-protocol-everything-2026-05-20T10-00-05.000Z.json"
VSCODE = WILD / "vscode-mcp-output" / "vscode-244377-client-says-server-says.txt"
CLAUDE = WILD / "claude-desktop-server-log" / "taptools-per-server-filesystem.txt"
CURL = WILD / "http-sse-capture" / "agentgateway-readme-inspector-proxy-curl-sse.txt"


def _pings(n: int) -> list[dict]:
    return [harkit.entry("POST", at=i * 0.1, body=harkit.msg(id=i, method="ping"),
                         mime="application/json", reply=harkit.js(harkit.msg(id=i, result={})))
            for i in range(n)]


def _kinds(path: Path, **kw) -> list[str]:
    return mn.load(path, **kw).frames.kind.astype(str).tolist()


def test_har_cut_mid_entry_keeps_the_entries_before(tmp_path):
    text = harkit.write(tmp_path / "ok.har", _pings(3)).read_text()
    third = text.index('"startedDateTime"', text.index('"startedDateTime"',
                                                       text.index('"startedDateTime"') + 1) + 1)
    cut = text[:third + 40]
    path = tmp_path / "cut.har"
    path.write_text(cut)
    t = mn.load(path)
    f = t.frames
    assert f.kind.astype(str).tolist() == ["request", "result", "request", "result", "invalid"]
    assert "the file ends inside this HAR entry" in f.reason.iloc[-1]
    assert t.pairs.outcome.astype(str).tolist() == ["result", "result"]


def test_har_cut_between_entries_says_so(tmp_path):
    text = json.dumps({"log": {"entries": _pings(2)}})
    path = tmp_path / "cut.har"
    path.write_text(text[:text.rindex("]")] + ",")
    recs = list(settled(har.read(path)))
    assert [r.kind for r in recs] == [None, None, None, None, "log"]
    assert "cut" in recs[-1].raw


def test_har_unparsable_url_costs_nothing(tmp_path):
    entries = _pings(3)
    entries[1]["request"]["url"] = "http://[::1/mcp"
    assert _kinds(harkit.write(tmp_path / "u.har", entries)) == ["request", "result"] * 3


def test_har_lone_surrogate_is_one_invalid_row(tmp_path):
    entries = _pings(3)
    entries[1]["response"]["content"]["text"] = '{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}'
    path = tmp_path / "s.har"
    path.write_text(json.dumps({"log": {"entries": entries}}))  # json escapes it: \\ud800
    f = mn.load(path).frames
    assert f.kind.astype(str).tolist() == ["request", "result", "request", "invalid",
                                           "request", "result"]
    assert "lone surrogate (U+D800" in f.reason[3] and "\\ud800" in f.raw[3]


def test_har_entry_not_an_object_and_bad_json_entry(tmp_path):
    text = json.dumps({"log": {"entries": _pings(2)}})
    text = text.replace('[{"startedDateTime"', '[7, {"startedDateTime"', 1)
    path = tmp_path / "x.har"
    path.write_text(text.replace('"wait": 5.0', '"wait": 5.0.0', 1))  # entry 1 breaks
    recs = list(settled(har.read(path)))
    assert sorted(r.kind or "" for r in recs) == ["", "", "invalid", "invalid"]


def test_sse_event_after_a_bom_is_kept(tmp_path):
    e = harkit.entry("POST", body=harkit.msg(id=1, method="ping"), mime="text/event-stream",
                     reply="\ufeff" + harkit.sse("data: " + harkit.js(harkit.msg(id=1,
                                                                             result={}))))
    t = mn.load(harkit.write(tmp_path / "b.har", [e]))
    assert t.pairs.outcome.astype(str).tolist() == ["result"]


def test_inspector_cut_and_surrogate_entries_cost_one_row_each(tmp_path):
    data = EXPORT.read_bytes()
    good = len(list(inspector.read(EXPORT)))
    bad = data.replace(b'"Unknown tool: nope"', b'"Unknown \\ud800 tool"')
    (tmp_path / "s.json").write_bytes(bad)
    recs = list(inspector.read(tmp_path / "s.json"))
    assert [r.kind for r in recs].count("invalid") == 1
    assert len(recs) == good - 1  # the bad entry's request and response: one row
    cut = data[:data.index(b'"id": "e4"')]
    (tmp_path / "c.json").write_bytes(cut)
    recs = list(inspector.read(tmp_path / "c.json"))
    assert [r.kind for r in recs][-1] == "invalid"
    assert [r.source.split("#")[1] for r in recs[:-1]] == [
        "entry0", "entry0/response", "entry1", "entry2", "entry2/response"]


def _vscode_lines() -> list[str]:
    return VSCODE.read_text(encoding="utf-8").splitlines()


def test_vscode_surrogate_ansi_and_cr_only(tmp_path):
    base = mn.load(VSCODE)
    want = base.pairs[["method", "outcome"]].astype(str).values.tolist()
    assert want
    lines = _vscode_lines()
    colour = ["\x1b[2m" + ln[:23] + "\x1b[0m" + ln[23:] if ln[:2] == "20" else ln
              for ln in lines]
    for name, text in (("cr.log", "\r".join(lines) + "\r"),
                       ("ansi.log", "\n".join(colour) + "\n"),
                       ("both.log", "\r".join(colour))):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", newline="")
        t = mn.load(path, format="vscode")
        assert t.pairs[["method", "outcome"]].astype(str).values.tolist() == want, name
    # a lone surrogate escaped in one message costs that message only
    i = next(i for i, ln in enumerate(lines) if "[Server Says] {" in ln)
    lines[i] = lines[i].replace('"result":', '"x":"\\ud800","result":', 1)
    path = tmp_path / "s.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = mn.load(path, format="vscode")
    assert len(t.frames) == len(base.frames)
    assert (t.frames.kind == "invalid").sum() == (base.frames.kind == "invalid").sum() + 1


@pytest.mark.parametrize("path,fmt", [(CLAUDE, "claude-desktop"), (CURL, "curl")])
def test_claude_and_curl_with_cr_only_and_ansi_still_pair(tmp_path, path, fmt):
    base = mn.load(path, format=fmt).pairs[["method", "outcome"]].astype(str).values.tolist()
    assert base
    lines = path.read_text(encoding="utf-8").splitlines()
    colour = ["\x1b[36m" + ln[:10] + "\x1b[39m" + ln[10:] if ln[:4].isdigit() else ln
              for ln in lines]
    for name, text in (("cr", "\r".join(lines) + "\r"), ("ansi", "\n".join(colour) + "\n"),
                       ("both", "\r".join(colour))):
        p = tmp_path / (name + path.suffix)
        p.write_text(text, encoding="utf-8", newline="")
        got = mn.load(p, format=fmt).pairs[["method", "outcome"]].astype(str).values.tolist()
        assert got == base, name


def test_har_after_a_byte_order_mark_loads_whole(tmp_path):
    path = tmp_path / "bom.har"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"log": {"entries": _pings(2)}}).encode())
    assert [r.kind for r in settled(har.read(path))] == [None] * 4
