"""Sniffing picks the right reader for every sample and fixture; other files are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_notebook.readers import CaptureError, formats, sniff

ROOT = Path(__file__).parent.parent.parent
WILD = ROOT / "tests" / "fixtures" / "wild"
BY_DIR = {
    "claude-desktop-mcp-log": "claude-desktop",
    "claude-desktop-server-log": "claude-desktop",
    "vscode-mcp-output": "vscode",
    "http-sse-capture": "curl",
    "recorder-mcp-recorder-cassette": "recorder",
}


def _samples() -> list[tuple[Path, str]]:
    out = [(p, BY_DIR[p.parent.name]) for p in sorted(WILD.glob("*/*"))
           if not p.name.endswith(".source.txt")]
    data = ROOT / "tests" / "readers" / "data"
    out += [(data / "mcp-server-rebe.log", "claude-desktop"),
            (next(data.glob("inspector-protocol-*.json")), "inspector")]
    out += [(p, "har") for p in sorted((ROOT / "data").glob("*.har"))]
    out += [(p, "tap") for p in sorted((ROOT / "data").glob("*.jsonl"))]
    out += [(p, "tap") for p in sorted((ROOT / "tests" / "fixtures").glob("*/*.tap.jsonl"))]
    return out


SAMPLES = _samples()


def test_every_wild_directory_is_covered():
    assert {p.parent.name for p, _ in SAMPLES if p.is_relative_to(WILD)} == set(BY_DIR)
    assert len([p for p, _ in SAMPLES if p.is_relative_to(WILD)]) == 23


@pytest.mark.parametrize("path,fmt", SAMPLES, ids=[p.name for p, _ in SAMPLES])
def test_sniff(path, fmt):
    assert sniff(path) == fmt


@pytest.mark.parametrize("text", [
    "just some prose\nwith two lines\n",
    "<html><body>not a capture</body></html>\n",
    "2025-01-01 10:00:00,123 INFO something unrelated\n",
    '{"name": "package", "version": "1.0.0"}\n',
])
def test_other_files_are_a_clear_error(tmp_path, text):
    p = tmp_path / "notes.txt"
    p.write_text(text)
    with pytest.raises(CaptureError) as err:
        sniff(p)
    for name in ("claude-desktop", "vscode", "har", "inspector", "recorder", "curl", "tap"):
        assert name in str(err.value)


def test_formats_lists_the_readers():
    assert {"claude-desktop", "vscode", "har", "inspector", "recorder", "curl"} <= set(formats())


def test_the_inspectors_logs_export_is_named_and_the_right_export_said(tmp_path):
    """The Logs tab's export (as the web Inspector 2.12 writes it) holds the server's log
    messages, not the traffic: the error says what it is and which export to load."""
    logs = [{"receivedAt": "2026-12-07T22:22:50.968Z",
             "params": {"level": "info", "logger": "everything-server",
                        "data": "Roots updated: 0 root(s) received from client"}}]
    path = tmp_path / "inspector-logs-127.0.0.1%3A51957-2026-12-07T22-23-07.447Z.json"
    path.write_text(json.dumps(logs, indent=2), "utf-8")
    with pytest.raises(CaptureError, match="Logs export .* export the Protocol tab"):
        sniff(path)
