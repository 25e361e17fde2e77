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


@pytest.mark.parametrize("simd", [True, False])
def test_edges_at_every_offset(simd: bool) -> None:
    for edge in EDGES:
        for before in range(0, 35):
            for after in (0, 1, 15, 16, 17):
                data = b"a" * before + edge + b"b" * after
                assert native.native.utf8_valid(data, simd) == _python(data), (data, simd)


@seed(20261130)
@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(EDGES + [b"x", b"\x7f", b"\x00", b"0123456789abcdef"]),
                max_size=40).map(b"".join) | st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    want = _python(data)
    assert native.native.utf8_valid(data, True) == want
    assert native.native.utf8_valid(data, False) == want
