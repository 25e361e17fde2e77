"""``fast.lines.blocks``: every line once, with its number; long lines cut; blank runs counted.

Random files of short, long and blank lines (``\\n`` and ``\\r\\n``, with and without a
last newline) are read with small buffers and limits, whole and in two byte ranges cut
at a line start, and the lines given back are compared with a plain split.
"""

from __future__ import annotations

import io

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from mcp_notebook.fast import lines as L

_line = st.one_of(st.just(b""), st.just(b"\r"), st.binary(max_size=8).map(
    lambda b: b.replace(b"\n", b"x")), st.integers(20, 300).map(lambda n: b"y" * n),
    st.sampled_from([9, 10, 11, 49, 50, 51, 99, 100, 101]).map(lambda n: b"w" * n))


def _expected(data: bytes, max_line: int, first: int = 0) -> tuple[dict, int]:
    """``{line number: text, or (head, length) when cut}`` of the non-blank lines, and the
    count of blank ones, as a plain split sees them."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    want: dict = {}
    blank = 0
    for i, raw in enumerate(parts):
        text = raw[:-1] if raw.endswith(b"\r") else raw
        if len(text) > max_line:  # cut: its head kept (a \r in it when it is that short)
            want[first + i] = ("cut", raw[:L.LONG_KEEP])
        elif text:
            want[first + i] = text
        else:
            blank += 1
    return want, blank


def _read(data: bytes, start: int, stop: int | None, first: int, block: int,
          max_line: int) -> tuple[dict, int, int]:
    f = io.BytesIO(data)
    f.seek(start)
    got: dict = {}
    blank = 0
    last = first
    for blk in L.blocks(f, start, stop, first, block_bytes=block, max_line=max_line):
        blank += blk.skipped
        assert blk.first_line >= last
        for i, (a, b) in enumerate(zip(blk.starts.tolist(), blk.ends.tolist(), strict=True)):
            j = blk.first_line + i
            assert j not in got
            if blk.long >= 0:
                got[j] = ("cut", bytes(blk.buf[a:b]))
                assert blk.long > max_line
            elif b > a:
                got[j] = bytes(blk.buf[a:b])
            else:
                blank += 1
        last = blk.first_line + len(blk.starts)
    return got, blank, last


@seed(20261201)
@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(_line, max_size=60), st.sampled_from([b"\n", b"\r\n"]), st.booleans(),
       st.sampled_from([16, 64, 1 << 12]), st.sampled_from([10, 50, 100, 1 << 20]),
       st.sampled_from([1, 3, 4096]), st.floats(0, 1))
def test_blocks_give_every_line_once(lines: list[bytes], eol: bytes, last_eol: bool,
                                     block: int, max_line: int, run: int, where: float) -> None:
    data = eol.join(lines) + (eol if last_eol and lines else b"")
    with __import__("pytest").MonkeyPatch.context() as m:
        m.setattr(L, "BLANK_RUN", run)
        m.setattr(L, "LONG_KEEP", 8)
        want, blank = _expected(data, max_line)
        got, got_blank, _ = _read(data, 0, None, 0, block, max_line)
        assert (got, got_blank) == (want, blank)
        # two ranges, cut at a line start, as the two-process split reads them
        cut = data.find(b"\n", int(len(data) * where)) + 1 or len(data)
        got1, blank1, n1 = _read(data, 0, cut, 0, block, max_line)
        got2, blank2, _ = _read(data, cut, None, 0, block, max_line)
        assert n1 == data[:cut].count(b"\n") + (0 if data[:cut].endswith(b"\n") or
                                                 not data[:cut] else 1)
        assert {**got1, **{k + n1: v for k, v in got2.items()}} == want
        assert blank1 + blank2 == blank


def test_the_limit_is_exact() -> None:
    """A line of ``max_line`` bytes is kept, one byte more is cut, with ``\n`` or ``\r\n``
    and whether it fits the buffer or is read through in pieces."""
    import pytest

    with pytest.MonkeyPatch.context() as m:
        m.setattr(L, "LONG_KEEP", 8)
        for max_line in (10, 50):
            for block in (16, 4096):
                for eol in (b"\n", b"\r\n"):
                    lines = [b"y" * n for n in (max_line - 1, max_line, max_line + 1)] + [b"z"]
                    data = eol.join(lines) + eol
                    got, blank, n = _read(data, 0, None, 0, block, max_line)
                    assert (got, blank, n) == (_expected(data, max_line)[0], 0, 4)
                    assert [k for k, v in got.items() if isinstance(v, tuple)] == [2]
