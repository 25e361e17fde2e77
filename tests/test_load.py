"""mn.load: files, lists, folders, gzip, sniffing, and every line accounted for."""

import gzip
import json
from pathlib import Path

import pytest

import mcp_notebook as mn
from helpers import INIT, ok, req, tap

DATA = Path(__file__).resolve().parents[1] / "data"

LINES = [
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    "",
    "Starting server... (junk on stdout)",
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    "   ",
    '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}',
]


def test_ndjson_every_line_accounted_for(tmp_path):
    path = tmp_path / "bare.ndjson"
    path.write_text("\n".join(LINES) + "\n")
    t = mn.load(path)
    non_empty = [ln for ln in LINES if ln]
    assert len(t.frames) == len(non_empty)
    assert t.frames["raw"].tolist() == non_empty
    assert t.frames["source"].tolist() == [f"bare.ndjson:{i + 1}" for i, ln in enumerate(LINES) if ln]
    kinds = t.frames["kind"].astype(str).tolist()
    assert kinds == ["request", "result", "notification", "invalid", "invalid", "request",
                     "invalid", "result"]
    assert all(t.frames.loc[t.frames["kind"] == "invalid", "reason"].str.len() > 0)
    assert t.summary()["blank_lines"] == 1
    # direction inferred from the flow, and said so
    assert t.frames["direction"].astype(str).tolist()[:3] == ["c2s", "s2c", "c2s"]
    assert any("inferred" in n for n in t.notes)


def test_direction_given_by_caller(tmp_path):
    path = tmp_path / "client.ndjson"
    path.write_text(LINES[0] + "\n")
    assert mn.load(path, direction="c2s").frames["direction"].tolist() == ["c2s"]


def test_gzip_and_sniffing(tmp_path):
    plain = tap(tmp_path / "a.jsonl", INIT)
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert len(mn.load(gz).frames) == len(mn.load(plain).frames) == 3
    assert mn.load(gz).frames["direction"].astype(str).tolist() == ["c2s", "s2c", "c2s"]


def test_many_files_one_session_each_unless_named(tmp_path):
    a = tap(tmp_path / "a.jsonl", INIT)
    b = tap(tmp_path / "b.jsonl", INIT, session="shared")
    t = mn.load([a, b])
    assert sorted(t.frames["session"].unique()) == ["a.jsonl", "shared"]
    assert t.summary()["pairs"] == 2
    assert len(mn.load(tmp_path).frames) == 6  # a folder


def test_folder_skips_what_is_not_a_capture(tmp_path):
    tap(tmp_path / "a.jsonl", INIT)
    (tmp_path / "notes.txt").write_bytes(b"\x00\x01\x02 not a capture")
    t = mn.load(tmp_path)
    assert len(t.frames) == 3 and any("notes.txt" in n for n in t.notes)


def test_errors_name_the_fix(tmp_path):
    with pytest.raises(mn.CaptureError, match="no such file"):
        mn.load(tmp_path / "missing.jsonl")
    with pytest.raises(mn.CaptureError, match="Known formats"):
        mn.load(tap(tmp_path / "a.jsonl", INIT), format="pcap")
    with pytest.raises(ValueError, match="direction"):
        mn.load(tap(tmp_path / "b.jsonl", INIT), direction="up")


def test_tap_lines_that_are_not_tap_records(tmp_path):
    path = tmp_path / "t.jsonl"
    good = json.dumps({"ts": 1.0, "dir": "c2s", "raw": json.dumps(req(1, "ping"))})
    path.write_text("\n".join([good, "not json at all", json.dumps({"ts": 2.0, "dir": "sideways", "raw": "x"}),
                               json.dumps({"ts": 3.0, "dir": "stderr", "raw": "server log line"})]) + "\n")
    t = mn.load(path, format="tap")
    assert t.frames["kind"].astype(str).tolist() == ["request", "invalid", "invalid", "stderr"]
    assert "unknown tap direction" in t.frames["reason"][2]


def test_repr_html_escapes(tmp_path):
    path = tap(tmp_path / "<b>x<i>.jsonl", INIT + [("c2s", req(1, "<script>alert(1)</script>")), ("s2c", ok(1))])
    t = mn.load(path)
    html = t._repr_html_()
    assert "<script>" not in html and "<b>x<i>" not in html and "&lt;b&gt;" in html
    assert "3 requests" not in repr(t) and "frames" in repr(t)


def test_message_of_log_rows_is_none(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"ts": 1.0, "dir": "stderr", "raw": '{"looks": "like json"}'}) + "\n")
    assert mn.load(path).message(0) is None


def test_a_reader_that_fails_midway_keeps_what_it_read(tmp_path, monkeypatch):
    """A reader bug on hostile input: the rows read so far stay, one invalid row says why,
    and one warning; under MCP_NOTEBOOK_STRICT=1 (the suite's setting) the bug raises."""
    import types

    from mcp_notebook import readers
    from mcp_notebook.engine.fallback import FallbackWarning, FastPathError
    from mcp_notebook.readers.base import Record

    def read(path, session=None, **options):
        yield Record(raw='{"jsonrpc":"2.0","id":1,"method":"ping"}', direction="c2s",
                     session="s", source=f"{path.name}:1")
        raise KeyError("boom")

    fragile = types.SimpleNamespace(name="fragile", description="test", read=read,
                                    sniff=lambda head, name: 0)
    monkeypatch.setitem(readers.REGISTRY, "fragile", fragile)
    path = tmp_path / "x.txt"
    path.write_text("anything\n")
    with pytest.raises(FastPathError, match="KeyError"):
        mn.load(path, format="fragile")
    monkeypatch.delenv("MCP_NOTEBOOK_STRICT")
    with pytest.warns(FallbackWarning, match="reader stopped") as got:
        t = mn.load(path, format="fragile")
    assert len(got) == 1
    assert t.frames["kind"].astype(str).tolist() == ["request", "invalid"]
    assert "KeyError" in t.frames["reason"][1] and "missing" in t.frames["reason"][1]
    assert any("KeyError" in n for n in t.notes)


@pytest.mark.parametrize("fast_path", [True, False])
def test_tables_have_the_declared_dtypes(fast_path, monkeypatch):
    """Frames, pairs and violations of real traces carry the dtypes `mn.table` declares
    (the same as the empty tables), by the fast path and by the reference path."""
    from mcp_notebook import fast
    from mcp_notebook.table import FRAME_COLUMNS, PAIR_COLUMNS, VIOLATION_COLUMNS, empty

    monkeypatch.setattr(fast, "ENABLED", fast_path)
    t = mn.load(DATA)
    for df, cols in [(t.frames, FRAME_COLUMNS), (t.pairs, PAIR_COLUMNS),
                     (t.violations, VIOLATION_COLUMNS)]:
        assert len(df) > 0
        want = {c: str(d) for c, d in empty(cols).dtypes.items()}
        assert {c: str(d) for c, d in df.dtypes.items()} == want


# -- input conventions -------------------------------------------------------------------------
def test_bytes_and_binary_file_objects(tmp_path):
    """The capture itself, as bytes or an open binary file (a pipe read as a stream too)."""
    import os
    import threading

    path = tap(tmp_path / "a.jsonl", INIT)
    want = mn.load(path).frames["raw"].tolist()
    assert mn.load(path.read_bytes()).frames["raw"].tolist() == want
    with open(path, "rb") as f:
        t = mn.load(f)
    assert t.frames["raw"].tolist() == want and t.paths == ["<a.jsonl>"]
    assert t.frames["source"][0] == "a.jsonl:1"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(path.read_bytes()))
    writer.start()
    with open(fifo, "rb") as f:  # asked for as a stream: read to its end
        assert mn.load(f).frames["raw"].tolist() == want
    writer.join(10)
    with open(path) as f, pytest.raises(TypeError, match="binary mode"):
        mn.load(f)
    with pytest.raises(mn.CaptureError, match="^<bytes>: not a capture format"):
        mn.load(b"\x00\x01 not a capture")


def test_glob_patterns(tmp_path):
    tap(tmp_path / "a.jsonl", INIT)
    (tmp_path / "sub").mkdir()
    tap(tmp_path / "sub" / "b.jsonl", INIT)
    (tmp_path / "c.txt").write_text("not a capture\n")
    assert len(mn.load(str(tmp_path / "*.jsonl")).paths) == 1
    assert len(mn.load(str(tmp_path / "**" / "*.jsonl")).paths) == 2
    with pytest.raises(mn.CaptureError, match="no file matches"):
        mn.load(str(tmp_path / "*.har"))


def test_a_folder_says_what_it_skipped_and_fails_when_nothing_loads(tmp_path):
    tap(tmp_path / "a.jsonl", INIT)
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / ".hidden.jsonl").write_text("{}\n")
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01\x02 not a capture")
    t = mn.load(tmp_path)
    skipped = [n for n in t.notes if n.startswith("skipped")]
    assert len(skipped) == 3 and any("README.md: not a capture by its name" in n for n in skipped)
    assert any(".hidden.jsonl: a hidden file" in n for n in skipped)
    assert any(n.startswith("skipped junk.bin: ") for n in skipped)
    (tmp_path / "a.jsonl").unlink()
    with pytest.raises(mn.CaptureError, match="nothing in it loads.*junk.bin"):
        mn.load(tmp_path)


# -- progress ----------------------------------------------------------------------------------
class _Bar:
    """What the loader asks of a tqdm bar, recorded."""

    def __init__(self, total):
        self.total, self.n, self.closed = total, 0, False

    def update(self, k):
        assert k > 0
        self.n += k

    def close(self):
        self.closed = True


@pytest.fixture
def big_enough(monkeypatch):
    """Every load is 'long' (the threshold is 50 MB)."""
    from mcp_notebook.fast import progress

    monkeypatch.setattr(progress, "MIN_BYTES", 0)
    return progress


def test_progress_moves_to_the_end_and_closes(tmp_path, big_enough, monkeypatch):
    bars = []

    def bar(total, force):
        bars.append(_Bar(total))
        return bars[-1]

    monkeypatch.setattr(big_enough, "_bar", bar)
    a = tap(tmp_path / "a.jsonl", INIT)
    gz = tmp_path / "b.jsonl.gz"
    gz.write_bytes(gzip.compress(a.read_bytes()))
    (tmp_path / "c.har").write_text((DATA / "demo-http.har").read_text())
    mn.load(tmp_path)
    (b,) = bars
    assert b.total == sum(p.stat().st_size for p in tmp_path.iterdir()) and b.n == b.total
    assert b.closed
    mn.load(a, progress=False)
    assert len(bars) == 1


def test_progress_only_where_it_can_be_seen(tmp_path, big_enough, monkeypatch, capsys):
    """A bar on stderr when it is a terminal or asked for; nothing when piped or off."""
    import sys

    a = tap(tmp_path / "a.jsonl", INIT)
    mn.load(a)  # stderr captured: not a terminal
    assert capsys.readouterr().err == ""
    mn.load(a, progress=True)
    assert "loading" in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    mn.load(a)
    assert "loading" in capsys.readouterr().err
    mn.load(a, progress=False)
    assert capsys.readouterr().err == ""


def test_progress_is_a_notebook_bar_in_jupyter_and_optional(big_enough, monkeypatch):
    import sys

    from tqdm.notebook import tqdm as notebook_bar

    monkeypatch.setattr(big_enough, "_in_notebook", lambda: True)
    bar = big_enough._bar(100, force=False)
    try:
        assert isinstance(bar, notebook_bar)
    finally:
        bar.close()
    monkeypatch.setitem(sys.modules, "tqdm", None)  # not installed: no bar, no error
    monkeypatch.setitem(sys.modules, "tqdm.notebook", None)
    assert big_enough._bar(100, force=True) is None


def test_a_folder_does_not_enter_hidden_folders(tmp_path):
    tap(tmp_path / "a.jsonl", INIT)
    (tmp_path / ".git").mkdir()
    tap(tmp_path / ".git" / "b.jsonl", INIT)
    t = mn.load(tmp_path)
    assert len(t.frames) == 3 and "skipped .git/: a hidden folder" in t.notes
