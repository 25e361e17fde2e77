"""Captures pasted into Markdown load as the file itself: quoted, fenced, indented, ticked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import sniff
from mcp_notebook.readers._markdown import Wrapping, detect, unwrap

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "fixtures" / "wild"
TAP = ROOT / "data" / "everything-stdio-progress-cancel.jsonl"
CLAUDE = WILD / "claude-desktop-server-log" / "anytype-34-multiline-inspect.txt"
CLAUDE_MCP_LOG = WILD / "claude-desktop-mcp-log" / "taptools-combined-mcp-log.txt"
VSCODE = WILD / "vscode-mcp-output" / "taskfile-134-editor-server-debug.txt"


def _ndjson(tmp: Path) -> Path:
    """The frames of a real tap capture, one per line (bare NDJSON)."""
    lines = [json.loads(ln) for ln in TAP.read_text(encoding="utf-8").splitlines() if ln]
    path = tmp / "orig" / "capture.ndjson"
    path.parent.mkdir()
    path.write_text("".join(r["raw"] + "\n" for r in lines if r["dir"] in ("c2s", "s2c")),
                    encoding="utf-8")
    return path


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def fence(text: str, mark: str = "```", lang: str = "") -> str:
    return f"{mark}{lang}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{mark}\n"


def quote(text: str, levels: int = 1) -> str:
    return "".join("> " * levels + ln + "\n" if ln else ">" * levels + "\n"
                   for ln in _lines(text))


def indent(text: str, by: str = "    ") -> str:
    return "".join(by + ln + "\n" if ln else "\n" for ln in _lines(text))


def ticks(text: str) -> str:
    return "".join(f"`{ln}`\n" if ln else "\n" for ln in _lines(text))


WRAPS: dict[str, Callable[[str], str]] = {
    "fence": fence,
    "fence-lang": lambda t: fence(t, "```", "json"),
    "tilde-fence": lambda t: fence(t, "~~~", "log"),
    "long-fence": lambda t: fence(t, "````", " text"),
    "ticks": ticks,
    "quote": quote,
    "nested-quote": lambda t: quote(t, 2),
    "indent-4": indent,
    "indent-tab": lambda t: indent(t, "\t"),
    "quoted-fence": lambda t: quote(fence(t, "```", "jsonl")),
    "list-item-fence": lambda t: indent(fence(t), "   "),
    "quoted-indented": lambda t: quote(indent(t, "  ")),
    "quoted-ticks": lambda t: quote(ticks(t)),
}


def _facts(t: mn.Trace) -> tuple:
    f = t.frames
    frames = list(zip(f.kind.astype(str), f.direction.astype(str), f.method.astype(str),
                      f.id_key, f.raw, f.session.astype(str), f.ts, strict=True))
    p = t.pairs
    pairs = list(zip(p.method.astype(str), p.outcome.astype(str), p.request_seq,
                     p.response_seq, strict=True))
    return frames, pairs, sorted(t.violations.rule)


@pytest.fixture(params=["tap", "ndjson", "claude", "claude-mcp-log", "vscode"])
def capture(request, tmp_path) -> Path:
    if request.param == "ndjson":
        return _ndjson(tmp_path)
    src = {"tap": TAP, "claude": CLAUDE, "claude-mcp-log": CLAUDE_MCP_LOG,
           "vscode": VSCODE}[request.param]
    path = tmp_path / "orig" / src.name
    path.parent.mkdir()
    path.write_bytes(src.read_bytes())
    return path


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_wrapped_paste_loads_as_the_file(capture, wrap, tmp_path):
    original = mn.load(capture)
    assert len(original.frames) and not any("Markdown" in n for n in original.notes)
    pasted = tmp_path / "pasted" / capture.name  # the same name: the same session names
    pasted.parent.mkdir()
    pasted.write_text(WRAPS[wrap](capture.read_text(encoding="utf-8")), encoding="utf-8")
    assert sniff(pasted) == sniff(capture)
    t = mn.load(pasted)
    assert _facts(t) == _facts(original)
    assert any("Markdown wrapping taken off" in n for n in t.notes)


def test_prose_around_a_code_block_is_not_unwrapped():
    assert not detect(["Here is the log:", "", "```", "{}", "```"])
    assert not detect(['{"jsonrpc":"2.0"}', "  indented continuation"])


def test_a_line_lacking_part_of_the_wrapping_keeps_what_it_has():
    w = detect(["    > {}", "    > []"])
    assert w == Wrapping(indent="    ")  # a quote inside the indentation is content
    assert unwrap("  x", Wrapping(indent="    ")) == "x"
    assert unwrap("x", Wrapping(quote=2)) == "x"
    assert unwrap("> >", Wrapping(quote=2)) == ""
    assert unwrap("```", Wrapping(fenced=True)) == ""
    assert unwrap("`` a `b` c ``", Wrapping(ticks=True)) == "a `b` c"
