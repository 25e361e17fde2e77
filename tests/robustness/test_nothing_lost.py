"""Nothing lost: every input line is a row, conversions round-trip, raw bytes are reachable."""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.capture.jsonl import TapWriter
from mcp_notebook.cli import main

from .corpus import LINE_FORMATS, RANGE_FORMATS, check_lines, seeds
from .hostile import LINES, ndjson_with, tap_with

# -- every line is a row --------------------------------------------------------------------


@pytest.mark.parametrize("name, data, fmt", [s for s in seeds()
                                             if s[2] in LINE_FORMATS + RANGE_FORMATS],
                         ids=lambda v: v if isinstance(v, str) and len(v) < 80 else "")
def test_every_line_of_a_real_capture_is_a_row(name: str, data: bytes, fmt: str,
                                               tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    check_lines(mn.load(path, format=fmt), data, fmt)


# -- convert --to jsonl and back ---------------------------------------------------------------

def _cases() -> list[object]:
    out = [(name, data, fmt) for name, data, fmt in seeds()]
    for key, line in sorted(LINES.items()):
        if key.startswith("deep"):
            continue  # covered by test_hostile; 400 kB each, and slow to compare
        out.append((f"line-{key}.ndjson", ndjson_with(line), "ndjson"))
        out.append((f"line-{key}.tap", tap_with(line), "tap"))
    return [pytest.param(*c, id=c[0]) for c in out]


@pytest.mark.parametrize("name, data, fmt", _cases())
def test_convert_to_jsonl_and_back_gives_identical_frames(
        name: str, data: bytes, fmt: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "converted.jsonl"
    assert main(["convert", "--to", "jsonl", "--format", fmt, str(src), "-o", str(out)]) == 0
    capsys.readouterr()
    a, b = mn.load(src, format=fmt), mn.load(out)
    pd.testing.assert_frame_equal(a.frames, b.frames)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    for seq in range(len(a.frames)):
        assert a.message(seq) == b.message(seq)


# -- the exact bytes of every frame ------------------------------------------------------------

FRAMES = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
          b'{"jsonrpc":"2.0","id":1,"result":{"t":"caf\xe9"}}',  # Latin-1, not UTF-8
          b"\xff\xfe\x00binary\x00",
          b'{"jsonrpc":"2.0","id":2,"method":"a\xe2\x80\xa8b"}']  # U+2028 inside a string


def test_raw_bytes_of_a_tap_capture_are_exact(tmp_path: Path) -> None:
    """Frames that are not UTF-8 come back byte for byte (the tap's ``raw_b64``)."""
    path = tmp_path / "tap.jsonl"
    w = TapWriter(path, "s")
    for i, data in enumerate(FRAMES):
        w.frame("c2s" if i % 2 == 0 else "s2c", data, len(data))
    w.frame("s2c", b'{"jsonrpc":"2.0","id":3,"res', 5_000_000)  # kept only in part
    w.close()
    trace = mn.load(path)
    f = trace.frames
    assert [r.encode("utf-8", "surrogateescape") for r in f["raw"][:4]] == FRAMES
    assert list(f["size"][:4]) == [len(x) for x in FRAMES]
    assert list(f["kind"]) == ["request", "invalid", "invalid", "request", "invalid"]
    assert "5000000" in f["reason"].iloc[-1]  # a cut frame says it was cut, not malformed


def test_raw_b64_that_is_not_base64_keeps_the_text(tmp_path: Path) -> None:
    path = tmp_path / "tap.jsonl"
    path.write_text('{"ts":1,"dir":"c2s","raw":"{}","raw_b64":"%%%"}\n'
                    '{"ts":1,"dir":"c2s","raw":"x","raw_b64":"' + base64.b64encode(
                        b"[1]").decode() + '"}\n')
    assert list(mn.load(path).frames["raw"]) == ["{}", "[1]"]


@pytest.mark.parametrize("data, blank, rows", [
    (b"", 0, 0), (b"\n", 1, 0), (b"\n\n\r\n", 3, 0), (b"   \n", 0, 1),
    (b'{"jsonrpc":"2.0","method":"a"}\n\n{"jsonrpc":"2.0","method":"b"}', 1, 2),
])
def test_blank_lines_are_counted_not_rows(data: bytes, blank: int, rows: int,
                                          tmp_path: Path) -> None:
    path = tmp_path / "c.ndjson"
    path.write_bytes(data)
    s = mn.load(path, format="ndjson").summary()
    assert (s["blank_lines"], s["frames"]) == (blank, rows)
