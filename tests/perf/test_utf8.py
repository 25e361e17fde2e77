"""The scanner's UTF-8 check agrees with Python's decoder, byte string for byte string."""

from __future__ import annotations

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from helpers import need_native
from mcp_notebook.engine import native


@pytest.fixture(autouse=True)
def scanner() -> str:
    need_native()
    return "c"


def _python(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# sequences at the edges of validity: overlong forms, surrogates, above U+10FFFF, cut ones
EDGES = [b"\xc0\x80", b"\xc1\xbf", b"\xc2\x80", b"\xdf\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
         b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xee\x80\x80",
         b"\xef\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf0\x90\x80\x80",
         b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80",
         b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x9a", "\u00e9\u4e2d\U0001f680".encode()]


LEVELS = [-1, 0, 1, 2]  # what the scanner uses; a sequence, 16 or 32 bytes at a time


def _levels(data: bytes) -> list[bool]:
    """The answer of every level this CPU has (a level it lacks answers None)."""
    return [v for v in (native.native.utf8_valid(data, lv) for lv in LEVELS) if v is not None]


def test_every_level_runs_here() -> None:
    """The CI machine has the SIMD levels: they are tested, not skipped."""
    import platform

    got = [lv for lv in LEVELS if native.native.utf8_valid(b"x", lv) is not None]
    if platform.machine() in ("x86_64", "AMD64"):
        assert 1 in got, "the 16-byte check is not in use on this x86-64 machine"
    assert -1 in got and 0 in got


def test_edges_at_every_offset() -> None:
    for edge in EDGES:
        for before in range(0, 70):
            for after in (0, 1, 15, 16, 17, 31, 32, 33):
                data = b"a" * before + edge + b"b" * after
                want = _python(data)
                assert _levels(data) == [want] * len(_levels(data)), data


@seed(20261130)
@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(EDGES + [b"x", b"\x7f", b"\x00", b"0123456789abcdef"]),
                max_size=60).map(b"".join) | st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    want = _python(data)
    got = _levels(data)
    assert got and got == [want] * len(got)


@seed(20261201)
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.sampled_from(EDGES + [b"x", b"\r", b"{}", b"\xef\xbb\xbf"]),
                         max_size=12).map(b"".join) | st.binary(max_size=40), max_size=40),
       st.sampled_from([1, 7, 64, 1 << 16]))
def test_python_path_check_agrees_with_decode(lines: list[bytes], piece: int) -> None:
    """The Python path's check (a plain decode, in pieces of whole lines) names exactly the
    lines Python's decoder refuses, whatever the piece size."""
    import numpy as np

    from mcp_notebook.fast import lines as L

    lines = [ln.replace(b"\n", b"") for ln in lines]
    buf = bytearray(b"\n".join(lines) + b"\n")
    starts = np.cumsum([0] + [len(ln) + 1 for ln in lines[:-1]], dtype=np.int64)
    ends = starts + np.array([len(ln) for ln in lines], dtype=np.int64)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(L, "UTF8_PIECE", piece)
        got = L.bad_utf8(buf, starts, ends).tolist()
    assert got == [i for i, ln in enumerate(lines) if not _python(ln)]


def test_the_loader_does_not_need_pyarrow(tmp_path) -> None:  # noqa: ANN001
    """Non-ASCII and invalid UTF-8 are loaded by the fast loader's Python path with
    pyarrow unimportable (it is for parquet export only), and the reference path unused."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "x.ndjson"
    path.write_bytes('{"jsonrpc":"2.0","id":1,"method":"caf\u00e9"}\n'.encode() +
                     b'{"jsonrpc":"2.0","id":2,"method":"\xff"}\n')
    code = ("import sys\nsys.modules['pyarrow'] = None  # import pyarrow raises\n"
            "from mcp_notebook import readers\nfrom mcp_notebook.engine import native\n"
            "native.native = None\n"
            "def no(*a, **k): raise SystemExit('the reference path read the file')\n"
            "readers.read = no\n"
            "import mcp_notebook as mn\nt = mn.load(sys.argv[1])\n"
            "print(t.frames['kind'].astype(str).tolist(), t.notes)")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.stdout.strip() == "['request', 'invalid'] ['directions inferred from the " \
        "message flow (the capture does not say)']", done.stderr[-2000:]
