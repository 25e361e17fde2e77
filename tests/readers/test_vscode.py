"""VS Code MCP output channel: the wild samples, counted by reading them, and the traps."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import sniff
from mcp_notebook.readers import vscode as vs

WILD = Path(__file__).parent.parent / "fixtures" / "wild" / "vscode-mcp-output"
MESSAGES = ("request", "notification", "result", "error")

GOLDEN = [
    # file, c2s, s2c, log, stderr, invalid (direction), sessions
    ("appium-41-failed-to-parse.txt", 0, 0, 8, 0, ["s2c"], {"mcp-appium", "mcp-appium#2"}),
    ("obot-4150-log-notifications-http.txt", 0, 0, 9, 0, [], {"DuckDuckGo Search"}),
    ("taskfile-134-editor-server-debug.txt", 1, 0, 6, 0, ["s2c"], {"mcp-taskfile-server"}),
    ("vscode-244377-client-says-server-says.txt", 1, 1, 0, 0, [],
     {"vscode-244377-client-says-server-says.txt"}),
]


@pytest.mark.parametrize("name,c2s,s2c,log,stderr,invalid,sessions", GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_wild_sample_golden(name, c2s, s2c, log, stderr, invalid, sessions):
    path = WILD / name
    assert sniff(path) == "vscode"
    f = mn.load(path).frames
    msg = f[f.kind.isin(MESSAGES)]
    assert (msg.direction == "c2s").sum() == c2s
    assert (msg.direction == "s2c").sum() == s2c
    assert (f.kind == "log").sum() == log
    assert (f.kind == "stderr").sum() == stderr
    assert list(f[f.kind == "invalid"].direction) == invalid
    assert set(f.session.astype(str)) == sessions
    assert f.local_time.all()


def test_every_wild_vscode_file_is_golden():
    found = {p.name for p in WILD.glob("*.txt") if not p.name.endswith(".source.txt")}
    assert found == {g[0] for g in GOLDEN}


def test_failed_to_parse_is_stdout_noise_from_the_server():
    t = mn.load(WILD / "appium-41-failed-to-parse.txt")
    row = t.frames.iloc[7]
    assert (row.kind, row.direction, row.raw) == ("invalid", "s2c", "MCP-appium server started")
    assert "not a JSON-RPC message" in row.reason
    assert list(t.violations.rule) == ["stdout-noise"]


def test_client_says_server_says_pair_with_latency():
    t = mn.load(WILD / "vscode-244377-client-says-server-says.txt")
    p = t.pairs.iloc[0]
    assert (p.method, p.outcome) == ("tools/call", "result")
    assert p.latency.total_seconds() == pytest.approx(0.019, abs=1e-6)
    assert p.t_request.strftime("%Y-%m-%d %H:%M:%S.%f")[:23] == "2025-03-23 16:38:00.970"


def test_timezone_option_converts_and_clears_local_time():
    path = WILD / "vscode-244377-client-says-server-says.txt"
    recs = list(vs.read(path, tz="Europe/Paris"))
    assert recs[0].ts == pytest.approx(1742747880.97 - 3600)  # 16:38 CET = 15:38 UTC
    assert not recs[0].local_time


def test_log_notification_rendering_is_not_taken_as_a_message():
    t = mn.load(WILD / "obot-4150-log-notifications-http.txt")
    assert (t.frames.kind == "log").all()
    assert t.extra(5)["server_log"] is True and t.extra(4)["level"] == "error"


def test_continuation_lines_and_server_stderr(tmp_path):
    p = tmp_path / "MCP- demo.log"
    p.write_text(
        "2025-06-01 10:00:00.000 [info] Starting server demo\n"
        "2025-06-01 10:00:00.100 [warning] [server stderr] booting\n"
        "2025-06-01 10:00:00.200 [error] Server exited: Error: boom\n"
        "    at main (/srv/index.js:1:1)\n"
        "2025-06-01 10:00:01.000 [info] Starting server demo\n"
        '2025-06-01 10:00:01.100 [trace] [editor -> server] {"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    recs = list(vs.read(p))
    assert [(r.kind, r.source, r.session) for r in recs] == [
        ("log", "MCP- demo.log:1", "demo"), ("stderr", "MCP- demo.log:2", "demo"),
        ("log", "MCP- demo.log:3-4", "demo"), ("log", "MCP- demo.log:5", "demo#2"),
        (None, "MCP- demo.log:6", "demo#2")]
    assert recs[1].raw == "booting"
