"""The hostile-input corpus: no traceback anywhere, every input line a row.

Each hostile line sits between valid frames of an NDJSON and of a tap capture; each
hostile file is read by every reader. The library, the CLI (in-process, so a traceback
fails the test) and a fresh interpreter with a raised recursion limit all survive.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook import readers
from mcp_notebook.cli import main
from mcp_notebook.table import collect

from .corpus import (
    FORMATS,
    LINE_FORMATS,
    RANGE_FORMATS,
    ROOT,
    check_lines,
    exercise,
    exercise_views,
    load_any,
)
from .hostile import DEPTH, FILES, LINES, ndjson_with, tap_with

CONTAINERS = {"ndjson": ndjson_with, "tap": tap_with}


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("container", sorted(CONTAINERS))
@pytest.mark.parametrize("case", sorted(LINES))
def test_hostile_line_in_a_capture(case: str, container: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = CONTAINERS[container](LINES[case])
    path = tmp_path / f"capture.{container}"
    path.write_bytes(data)
    for fmt in ("auto", container):
        trace = load_any(path, fmt)
        assert trace is not None, "a capture with valid frames around the hostile line loads"
        s = exercise(trace)
        if fmt == "auto":
            exercise_views(trace)
        check_lines(trace, data, container)
        assert s["requests"] >= 1 and s["results"] >= 1  # the valid frames around it survive
    if container != "ndjson":  # the command line prints what the library loaded, checked
        return                 # above in both containers: its output once per hostile line
    rc, out, err = _cli(["summary", "--json", str(path)], capsys)
    assert rc == 0 and json.loads(out)["frames"] >= 3 and not err
    rc, out, err = _cli(["check", "--all", str(path)], capsys)
    assert rc in (0, 1) and not err


@pytest.mark.parametrize("case", sorted(FILES))
def test_hostile_file_every_reader(case: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = FILES[case]
    path = tmp_path / case
    path.write_bytes(data)
    for fmt in ("auto", *FORMATS):
        trace = load_any(path, fmt)
        if trace is None:
            continue
        exercise(trace)
        if fmt == "auto":
            exercise_views(trace)
        if (fmt in LINE_FORMATS or fmt in RANGE_FORMATS) and not case.endswith(".gz"):
            check_lines(trace, data, fmt)
    rc, out, err = _cli(["summary", str(path)], capsys)
    if rc == 2:  # refused: one line saying why, and only for a file of no known format
        assert err.count("\n") == 1 and ("not a capture format" in err or "cannot" in err)
    else:
        assert rc == 0 and not err


@pytest.mark.parametrize("container", sorted(CONTAINERS))
def test_thirty_mb_single_line(container: str, tmp_path: Path) -> None:
    big = "x" * 30_000_000
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "t", "arguments": {"blob": big}}}).encode()
    data = CONTAINERS[container](frame)
    path = tmp_path / f"big.{container}"
    path.write_bytes(data)
    trace = mn.load(path)
    check_lines(trace, data, container)
    f = trace.frames
    sizes = f.loc[f["kind"] == "request", "size"]
    assert sizes.max() == len(frame)  # the 30 MB frame is a whole request, not cut
    assert trace.message(int(sizes.idxmax()))["params"]["arguments"]["blob"] == big


_DEEP_SCRIPT = """
import sys
sys.setrecursionlimit(1_000_000)  # as some notebooks do: the C decoders must still be safe
import mcp_notebook as mn
for path in sys.argv[1:]:
    try:
        t = mn.load(path)
    except mn.CaptureError:
        continue
    t.summary(); t.message(0); t.redact(); t._repr_html_()
assert sys.getrecursionlimit() == 1_000_000
print("alive")
"""


def test_nesting_bomb_cannot_crash_the_interpreter(tmp_path: Path) -> None:
    paths = []
    for name, data in list(FILES.items()) + [(f"line-{k}.ndjson", ndjson_with(v))
                                             for k, v in LINES.items() if k.startswith("deep")]:
        if b"[" * DEPTH in data or b'{"a":' * 1000 in data:
            p = tmp_path / name
            p.write_bytes(data)
            paths.append(str(p))
    done = subprocess.run([sys.executable, "-c", _DEEP_SCRIPT, *paths], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "alive"


def test_cli_exit_codes_in_a_real_process(tmp_path: Path) -> None:
    """Exit 2 with one line only for what cannot be read; never a traceback."""
    binary = tmp_path / "binary.bin"
    binary.write_bytes(FILES["binary.bin"])
    hostile = tmp_path / "hostile.ndjson"
    hostile.write_bytes(b"".join(ndjson_with(v) for v in LINES.values()))
    cases = [([str(tmp_path / "missing.jsonl")], 2), ([str(binary)], 2), ([str(hostile)], 0)]
    for args, code in cases:
        done = subprocess.run([sys.executable, "-m", "mcp_notebook.cli", "summary", *args],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
        if code == 2:
            assert done.stderr.count("\n") == 1 and done.stderr.startswith("mcp-notebook: ")


# -- reader modules on their own (without mn.load's safety net) -----------------------------

_DEEP_DOCS = {"har": "deep.har", "inspector": "inspector-deep.json",
              "recorder": "recorder-deep.json"}


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in _DEEP_DOCS])
def test_reader_alone_survives_every_hostile_file(fmt: str, tmp_path: Path) -> None:
    for case, data in FILES.items():
        path = tmp_path / case
        path.write_bytes(data)
        try:
            collect(readers.REGISTRY[fmt].read(path))
        except (OSError, EOFError, zlib.error):  # an I/O error: mn.load says "cannot be read"
            assert case.endswith(".gz")


@pytest.mark.parametrize("fmt", sorted(_DEEP_DOCS))
def test_whole_document_reader_alone_survives_a_nesting_bomb(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / _DEEP_DOCS[fmt]
    path.write_bytes(FILES[_DEEP_DOCS[fmt]])
    cols = collect(readers.REGISTRY[fmt].read(path))
    assert cols.kind == ["invalid"] and "recursion" in (cols.reason[0] or "").lower()


@pytest.mark.parametrize("fmt", sorted(_DEEP_DOCS))
def test_load_keeps_a_reader_failure_as_an_invalid_row(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / _DEEP_DOCS[fmt]
    path.write_bytes(FILES[_DEEP_DOCS[fmt]])
    trace = mn.load(path, format=fmt)
    f = trace.frames
    assert list(f["kind"]) == ["invalid"]
    assert "recursion" in f["reason"][0].lower()


# -- a .gz capture whose compressed stream is cut short -------------------------------------

_CUT_GZ = ["data/everything-stdio-progress-cancel.jsonl", "data/everything-http.har",
           "data/demo-sse.har", "tests/readers/data/inspector-protocol-everything-2026-05-20T"
           "10-00-05.000Z.json",
           "tests/fixtures/wild/claude-desktop-mcp-log/taptools-combined-mcp-log.txt"]


@pytest.mark.parametrize("sample", _CUT_GZ, ids=lambda s: Path(s).name[:30])
def test_a_gz_capture_cut_short_loads_what_it_holds(sample: str, tmp_path: Path) -> None:
    """A compressed capture cut short (a log still being written, a copy stopped): what
    decompresses before the cut loads, and the trace says the file is cut."""
    import gzip

    root = Path(__file__).resolve().parents[2]
    data = (root / sample).read_bytes()
    whole = mn.load(root / sample)
    z = gzip.compress(data, mtime=0)
    path = tmp_path / (Path(sample).name + ".gz")
    path.write_bytes(z[:len(z) * 3 // 4])
    t = mn.load(path)
    assert any("cut short" in n for n in t.notes), t.notes
    assert 0 < len(t.frames) <= len(whole.frames)
    # what was read is what the file holds: the frames before the cut, word for word
    usual = t.frames[t.frames["kind"] != "invalid"]
    assert set(usual["raw"]) <= set(whole.frames["raw"])
    # a corrupt stream (not a cut one) is still refused, with the reason
    path.write_bytes(z[:20] + bytes(b ^ 0xFF for b in z[20:60]) + z[60:])
    with pytest.raises(mn.CaptureError, match="cannot be read"):
        mn.load(path)
