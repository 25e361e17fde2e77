"""The info column: one readable line per frame (mcp_notebook/info.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.info import WIDTH, InfoSource, info_line

REQ = {"jsonrpc": "2.0", "id": 1}

CASES = [  # (kind, method, message or None, keywords, expected line)
    ("request", "tools/call", {"method": "tools/call", "params": {
        "name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}, {},
     'tools/call get_weather(city="Paris", days=3)'),
    ("request", "tools/call", {"method": "tools/call", "params": {
        "name": "q", "arguments": {"rows": [1, 2], "opts": {"a": 1}, "none": None}}}, {},
     "tools/call q(rows=[2], opts={…}, none=null)"),
    ("request", "prompts/get", {"method": "prompts/get", "params": {"name": "review"}}, {},
     "prompts/get review"),
    ("request", "resources/read", {"method": "resources/read",
                                   "params": {"uri": "file:///notes.txt"}}, {},
     "resources/read file:///notes.txt"),
    ("request", "initialize", {"method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "clientInfo": {"name": "cli", "version": "1.2"}}}, {},
     "initialize cli 1.2 · protocol 2025-06-18"),
    ("notification", "notifications/progress", {"method": "notifications/progress", "params": {
        "progressToken": "t", "progress": 3, "total": 10, "message": "working"}}, {},
     "progress 3/10 working"),
    ("notification", "notifications/cancelled", {"method": "notifications/cancelled",
                                                 "params": {"requestId": 7, "reason": "slow"}},
     {}, "cancel request 7: slow"),
    ("result", None, {"result": {"content": [{"type": "text", "text": "x" * 120},
                                             {"type": "image", "data": "y" * 3400,
                                              "mimeType": "image/png"}]}}, {},
     "2 content: text 120 B, image 3.4 kB"),
    ("result", None, {"result": {"content": [{"type": "text", "text": "division by zero"}],
                                 "isError": True}}, {}, "isError: division by zero"),
    ("result", None, {"result": {"tools": [{"name": "a"}, {"name": "b"}]}}, {},
     "2 tools: a, b"),
    ("result", None, {"result": {"contents": [{"uri": "file:///a", "text": "hello"}]}}, {},
     "1 contents: resource 5 B"),
    ("result", None, {"result": {"serverInfo": {"name": "srv", "version": "0.1"},
                                 "protocolVersion": "2025-11-25"}}, {},
     "srv 0.1 · protocol 2025-11-25"),
    ("result", None, {"result": {}}, {}, "empty result"),
    ("error", None, None, {"error_code": -32601, "error_message": "Method not found"},
     "-32601 Method not found"),
    ("invalid", None, None, {"reason": "not JSON"}, "not JSON"),
    # shapes the typed decoding does not fit are read plainly, never raised
    ("request", "tools/call", {"method": "tools/call", "params": {"name": 5}}, {},
     "tools/call 5"),
    ("request", "tools/call", {"method": "tools/call", "params": [1, 2]}, {}, "tools/call"),
    ("request", "tools/call", {"method": "tools/call", "params": {"clientInfo": 3,
                                                                   "name": "t"}}, {},
     "tools/call {clientInfo, name}"),
    ("result", None, {"result": {"content": "just text"}}, {}, "result {content}"),
]


@pytest.mark.parametrize("kind, method, msg, kw, want", CASES)
def test_info_line(kind, method, msg, kw, want):
    text = None if msg is None else json.dumps({**REQ, **msg})
    assert info_line(kind, method, text, **kw) == want


def test_broken_json_and_long_text_are_cut_not_raised():
    assert info_line("request", "x", '{"method": "x", "params": {') == '{"method": "x", "params": {'
    long = info_line("log", None, "word " * 100)
    assert len(long) == WIDTH and long.endswith("…")


def test_batch_member_takes_its_own_element():
    text = json.dumps([{**REQ, "method": "prompts/get", "params": {"name": "one"}},
                       {**REQ, "id": 2, "method": "prompts/get", "params": {"name": "two"}}])
    assert info_line("request", "prompts/get", text, batch=1) == "prompts/get two"


@pytest.mark.parametrize("sample", ["demo-stdio"])
def test_frames_carry_info_for_every_row(sample):
    t = mn.load(mn.sample_path(sample))
    f = t.frames
    info = f["info"].tolist()
    assert len(info) == len(f) and all(isinstance(x, str) and x for x in info)
    calls = f.index[(f["kind"] == "request") & (f["method"] == "tools/call")]
    # each tools/call row names its tool, which the raw frame holds
    for i in calls:
        name = json.loads(f.at[i, "raw"])["params"]["name"]
        assert info[i].startswith(f"tools/call {name}(")
    errs = f.index[f["kind"] == "error"]
    for i in errs:
        assert str(int(f.at[i, "error_code"])) in info[i]
    # searchable as any text column
    hit = f["info"].str.contains("isError", regex=False)
    assert hit.sum() == int(f["is_tool_error"].sum())


def test_source_reads_only_the_rows_asked():
    t = mn.load(mn.sample_path("demo-stdio"))
    src = InfoSource(t.frames)
    rows = np.array([len(t.frames) - 1, 1])
    assert src.texts(rows) == [t.frames["info"].iat[int(r)] for r in rows]
    assert isinstance(t.frames["info"].iloc[:3], pd.Series)
