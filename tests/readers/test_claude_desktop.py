"""Claude Desktop logs: every wild sample, counted by reading it, plus the traps one by one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.readers import claude_desktop as cd
from mcp_notebook.readers import sniff
from mcp_notebook.readers.base import Record
from mcp_notebook.table import settled

HERE = Path(__file__).parent
WILD = HERE.parent / "fixtures" / "wild"
DATA = HERE / "data"
MESSAGES = ("request", "notification", "result", "error")

# Counted by reading each sample (line by line, see the notes): messages by direction,
# Claude's own lines (log), raw server stderr rows (an indented block is one row),
# invalid rows, and the sessions (server name + connection number).
GOLDEN = [
    # file, c2s, s2c, log, stderr, invalid, sessions
    ("claude-desktop-mcp-log/claude-ai-mcp-664-redacted-2026.txt", 3, 2, 1, 1, 0,
     {"obsidian-vault"}),  # 2 requests + initialized; poster's "// <-" comment is stderr
    ("claude-desktop-mcp-log/db-timetable-4-json-position-error.txt", 1, 0, 3, 0, 0,
     {"db-timetable"}),
    ("claude-desktop-mcp-log/rifaterdemsahin-tools-call-level-first.txt", 4, 4, 0, 0, 0,
     {"demo-server"}),
    ("claude-desktop-mcp-log/servers-106-nov2024-connect-lines.txt", 0, 0, 12, 0, 0,
     {"neo4j", "sqlite", "memory", "neo4j#2", "sqlite#2", "memory#2"}),
    ("claude-desktop-mcp-log/taptools-combined-mcp-log.txt", 6, 0, 42, 0, 0,
     {"filesystem", "filesystem#2", "server", "server#2", "server#3", "server#4"}),
    ("claude-desktop-mcp-log/unity-mcp-196-stdout-noise-errors.txt", 2, 0, 6, 0, 0,
     {"Unity-MCP", "Unity-MCP#2"}),  # a second initialize id 0 = a second connection
    ("claude-desktop-server-log/amazing-marvin-11-desktop-truncation-marker.txt", 0, 0, 0, 0, 1,
     {"amazing-marvin"}),  # one entry re-wrapped over 3 lines, cut by Claude's logger
    ("claude-desktop-server-log/anytype-34-multiline-inspect.txt", 0, 0, 5, 1, 1,
     {"anytype"}),  # lines 1-14 are one entry; last line is a cut timestamp
    ("claude-desktop-server-log/go-sdk-395-double-launch.txt", 0, 0, 6, 0, 1,
     {"rebe", "rebe#2"}),  # two 15-line inspect entries; initialize cut mid-JSON
    ("claude-desktop-server-log/mcpb-200-server-name-with-parens.txt", 0, 0, 7, 0, 0,
     {"Hello World MCP Server (Reference Extension)",
      "Hello World MCP Server (Reference Extension)#2"}),
    ("claude-desktop-server-log/notion-mcp-8-method-not-found-poll.txt", 3, 3, 0, 0, 0,
     {"notionApi"}),
    ("claude-desktop-server-log/rifaterdemsahin-python-tracebacks.txt", 3, 0, 21, 3, 0,
     {"demo-server", "demo-server#2", "demo-server#3"}),
    ("claude-desktop-server-log/servers-625-no-timestamp.txt", 1, 1, 0, 0, 0,
     {"servers-625-no-timestamp.txt"}),  # the poster stripped time and server name
    ("claude-desktop-server-log/supergateway-19-bridge-stderr-interleaved.txt", 1, 0, 2, 2, 0,
     {"bucket"}),
    ("claude-desktop-server-log/taptools-per-server-filesystem.txt", 2, 0, 14, 13, 0,
     {"filesystem", "filesystem#2"}),
    ("claude-desktop-server-log/taptools-per-server-server.txt", 4, 0, 28, 5, 0,
     {"server", "server#2", "server#3", "server#4"}),
    ("claude-desktop-server-log/whatsapp-mcp-36-stderr-then-truncated.txt", 1, 0, 6, 1, 1,
     {"whatsapp"}),
]


def counts(frames: pd.DataFrame) -> tuple[int, int, int, int, int, set[str]]:
    msg = frames[frames.kind.isin(MESSAGES)]
    return ((msg.direction == "c2s").sum(), (msg.direction == "s2c").sum(),
            (frames.kind == "log").sum(), (frames.kind == "stderr").sum(),
            (frames.kind == "invalid").sum(), set(frames.session.astype(str)))


@pytest.mark.parametrize("name,c2s,s2c,log,stderr,invalid,sessions", GOLDEN,
                         ids=[g[0].split("/")[1] for g in GOLDEN])
def test_wild_sample_golden(name, c2s, s2c, log, stderr, invalid, sessions):
    path = WILD / name
    assert sniff(path) == "claude-desktop"
    frames = mn.load(path).frames
    assert counts(frames) == (c2s, s2c, log, stderr, invalid, sessions)
    # every non-blank line of the file is in exactly one row
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    assert sum(r.count("\n") + 1 for r in _row_texts(path)) == sum(
        1 for ln in text.split("\n") if ln.strip())


def _row_texts(path: Path) -> list[str]:
    """Each record's source span, as the file's lines it covers."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out = []
    for rec in settled(cd.read(path)):
        if rec.kind == "blank":
            continue
        span = rec.source.rsplit(":", 1)[1]
        first, _, last = span.partition("-")
        out.append("\n".join(lines[int(first) - 1:int(last or first)]))
    return out


def test_every_wild_claude_file_is_golden():
    listed = {g[0] for g in GOLDEN}
    found = {f"{p.parent.name}/{p.name}" for p in WILD.glob("claude-desktop-*/*.txt")
             if not p.name.endswith(".source.txt")}
    assert found == listed


def test_message_lines_match_an_independent_count():
    for name, *_ in GOLDEN:
        path = WILD / name
        text = path.read_text(encoding="utf-8")
        recs = [r for r in settled(cd.read(path)) if r.kind != "blank"]
        assert sum(r.direction == "c2s" for r in recs) == text.count("Message from client")
        assert sum(r.direction == "s2c" for r in recs) == text.count("Message from server")


def test_both_bracket_orders_give_the_same_entries():
    per_server = list(settled(cd.read(WILD / "claude-desktop-server-log/taptools-per-server-server.txt")))
    combined = [r for r in settled(cd.read(WILD / "claude-desktop-mcp-log/taptools-combined-mcp-log.txt"))
                if r.session.startswith("server")]
    pick = [(r.kind, r.direction, r.session, r.raw if r.kind != "log" else None)
            for r in per_server if r.kind != "stderr"]
    assert pick == [(r.kind, r.direction, r.session, r.raw if r.kind != "log" else None)
                    for r in combined]


def test_json_payload_is_exact_and_metadata_suffix_is_dropped():
    recs = list(settled(cd.read(DATA / "mcp-server-rebe.log")))
    first = next(r for r in recs if r.direction == "c2s")
    assert first.raw.startswith('{"method":"initialize"') and first.raw.endswith('"id":0}')
    assert first.ts == pytest.approx(1756980518.663)
    assert first.source == "mcp-server-rebe.log:5"


def test_inspect_block_is_one_log_row():
    recs = list(settled(cd.read(WILD / "claude-desktop-server-log/anytype-34-multiline-inspect.txt")))
    assert recs[0].source.endswith(":1-14") and recs[0].kind == "log"
    assert recs[0].raw.endswith("} %o") and recs[0].raw.count("\n") == 13


def test_truncation_marker_is_the_loggers_cut_not_a_violation():
    path = WILD / "claude-desktop-server-log/amazing-marvin-11-desktop-truncation-marker.txt"
    t = mn.load(path)
    row = t.frames.iloc[0]
    assert row.kind == "invalid" and row.direction == "s2c"
    assert "Claude Desktop's logger cut this message" in row.reason
    assert t.extra(0)["truncated_chars"] == 52653
    assert t.violations.empty


def test_redacted_lines_pair_by_method_and_id():
    t = mn.load(WILD / "claude-desktop-mcp-log/claude-ai-mcp-664-redacted-2026.txt")
    msgs = t.frames[t.frames.kind.isin(MESSAGES)]
    assert list(msgs.kind) == ["request", "result", "notification", "request", "result"]
    assert list(msgs.method.astype(object).fillna("")) == [
        "initialize", "", "notifications/initialized", "tools/list", ""]
    assert list(t.pairs.outcome) == ["result", "result"]
    assert list(t.pairs.method) == ["initialize", "tools/list"]


@pytest.mark.parametrize("text,kind,id_key,method", [
    ('method="tools/call" id=3 params', "request", "3", "tools/call"),
    ('method="notifications/cancelled" params', "notification", None,
     "notifications/cancelled"),
    ("id=7 result", "result", "7", None),
    ("id=7 error", "error", "7", None),
    ('id="a-1" result', "result", '"a-1"', None),
    ("something else", None, None, None),
    ("id=1", None, None, None),
])
def test_parse_redacted(text, kind, id_key, method):
    env = cd.parse_redacted(text)
    if kind is None:
        assert env is None
    else:
        assert (env.kind, env.id_key, env.method) == (kind, id_key, method)


def test_two_connections_give_two_sessions_and_flag_ambiguous_pairs():
    t = mn.load(DATA / "mcp-server-rebe.log")
    f = t.frames
    assert set(f.session.astype(str)) == {"rebe", "rebe#2"}
    ambiguous = sorted(i for i in range(len(f)) if "ambiguous" in t.extra(i))
    lines = [int(f.source[i].rsplit(":", 1)[1]) for i in ambiguous]
    assert lines == [5, 6, 8, 9, 10, 11, 12, 13, 14, 15]  # the whole overlap, nothing after
    assert (t.violations.rule == "ambiguous-pairing").sum() == 10
    # each connection got one initialize, one initialized, one tools/list and their answers
    for s, later in (("rebe", []), ("rebe#2", ["tools/call"])):
        mine = f[(f.session == s) & f.kind.isin(MESSAGES)]
        assert sorted(mine.method.dropna().astype(str)) == sorted(
            ["initialize", "notifications/initialized", "tools/list"] + later)
        assert (mine.kind == "result").sum() == 2 + len(later)
    pairs = t.pairs
    assert (pairs.outcome == "result").all() and len(pairs) == 5
    # after the close, the call is on the surviving connection and not flagged
    last = pairs[pairs.method == "tools/call"].iloc[0]
    assert last.session == "rebe#2"
    assert "ambiguous" not in t.extra(int(last.request_seq))


def test_second_initialize_without_initializing_line_is_a_new_connection():
    t = mn.load(WILD / "claude-desktop-mcp-log/unity-mcp-196-stdout-noise-errors.txt")
    reqs = t.frames[t.frames.kind == "request"]
    assert list(reqs.session.astype(str)) == ["Unity-MCP", "Unity-MCP#2"]
    assert (t.violations.rule == "stdout-noise").sum() == 5


def test_stack_lines_continue_claudes_error_entry(tmp_path):
    p = tmp_path / "mcp.log"
    p.write_text(
        "2024-12-02T10:00:00.000Z [info] Attempting to connect to MCP server terminal...\n"
        "2024-12-02T10:00:00.100Z [error] Error in MCP connection to server terminal: "
        "SyntaxError: Unexpected token\n"
        "    at JSON.parse (<anonymous>)\n"
        "    at Socket.emit (node:events:519:28)\n"
        "2024-12-02T10:00:00.200Z [info] MCP server terminal disconnected.\n")
    recs = list(settled(cd.read(p)))
    assert [(r.kind, r.source, r.session) for r in recs] == [
        ("log", "mcp.log:1", "terminal"), ("log", "mcp.log:2-4", "terminal"),
        ("log", "mcp.log:5", "terminal")]
    assert recs[1].extra["level"] == "error"


def test_multiline_metadata_after_a_message_and_file_starting_mid_entry(tmp_path):
    p = tmp_path / "mcp-server-x.log"
    p.write_text(
        "    at async Object.stat (node:internal/fs/promises:1032:18)\n"
        "}\n"
        '2026-01-01T00:00:00.000Z [x] [info] Message from server: {"jsonrpc":"2.0","id":1,'
        '"result":{}} {\n'
        "  metadata: {\n"
        "    context: 'connection'\n"
        "  }\n"
        "}\n"
        '2026-01-01T00:00:01.000Z [x] [info] Message from client: {"jsonrpc":"2.0",'
        '"method":"notifications/cancelled","params":{"requestId":1}} { metadata: { a: 1 } }\n')
    recs = list(settled(cd.read(p)))
    assert [r.kind for r in recs] == ["stderr", None, None]
    assert recs[0].source == "mcp-server-x.log:1-2"  # an indented block: one stderr row
    assert recs[1].raw == '{"jsonrpc":"2.0","id":1,"result":{}}'
    assert recs[1].source == "mcp-server-x.log:3-7"
    assert recs[2].raw.endswith('"params":{"requestId":1}}')
    assert {r.session for r in recs} == {"x"}  # the server name comes from the file name


def test_hostile_and_binary_lines_do_not_crash(tmp_path):
    p = tmp_path / "mcp-server-bad.log"
    p.write_bytes(b"\xff\xfe junk\n2025-01-01T00:00:00.000Z [b] [info] Message from client: "
                  b"{\"a\":\xff}\n[info] [b] Message from server: <script>\n\x00\x01\n")
    recs = list(settled(cd.read(p)))
    assert [r.kind for r in recs] == ["stderr", None, "invalid", "stderr"]
    assert recs[2].reason.startswith("a message line with neither JSON")
    mn.load(p)  # the table classifies the broken JSON as invalid, no exception


def _session_of(records: list[Record], prefix: str) -> list[Record]:
    return [r for r in records if r.session and r.session.split("#")[0] == prefix]


def test_dedupe_drops_mcp_log_twins_of_per_server_entries():
    files = {
        WILD / "claude-desktop-mcp-log/taptools-combined-mcp-log.txt": None,
        WILD / "claude-desktop-server-log/taptools-per-server-filesystem.txt": None,
        WILD / "claude-desktop-server-log/taptools-per-server-server.txt": None,
    }
    by_file = {p: list(settled(cd.read(p))) for p in files}
    out = cd.dedupe(by_file)
    combined = out[WILD / "claude-desktop-mcp-log/taptools-combined-mcp-log.txt"]
    assert combined == []  # every entry of the combined log has a twin within 3 ms
    total = sum(len(v) for v in out.values())
    singles = sum(len(v) for k, v in by_file.items() if "per-server" in k.name)
    assert total == singles
    msgs = [r for v in out.values() for r in v if r.direction == "c2s"]
    assert len(msgs) == 6  # not 12


def test_dedupe_keeps_entries_without_twin():
    combined = WILD / "claude-desktop-mcp-log/taptools-combined-mcp-log.txt"
    fs = WILD / "claude-desktop-server-log/taptools-per-server-filesystem.txt"
    out = cd.dedupe({combined: list(settled(cd.read(combined))), fs: list(settled(cd.read(fs)))})
    kept = out[combined]
    assert kept and {r.session.split("#")[0] for r in kept} == {"server"}
    assert len(kept) == 32  # the "server" entries: no per-server file for them here
