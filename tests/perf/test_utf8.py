"""The scanner's UTF-8 check agrees with Python's decoder, byte string for byte string."""

from __future__ import annotations

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from mcp_notebook.fast import native


@pytest.fixture(autouse=True)
def scanner() -> str:
    if native.native is None:
        pytest.fail("the C scanner is not built (pip install -e . builds it)")
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
@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(EDGES + [b"x", b"\x7f", b"\x00", b"0123456789abcdef"]),
                max_size=60).map(b"".join) | st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    want = _python(data)
    got = _levels(data)
    assert got and got == [want] * len(got)
