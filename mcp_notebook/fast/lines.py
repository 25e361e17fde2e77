"""Lines of a capture file in large blocks: where each line starts and ends, found with numpy.

The lines are those of :func:`mcp_notebook.readers.base.iter_lines`: split on ``\\n`` only,
one trailing ``\\r`` removed, a UTF-8 byte order mark opening the file left out of the
first line, and a last line without ``\\n`` kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

__all__ = ["Block", "blocks", "bad_utf8"]

BLOCK_BYTES = 8 << 20
UTF8_BOM = b"\xef\xbb\xbf"
_INDEX = re.compile(r"string index (\d+)")


@dataclass
class Block:
    """Whole lines of a file: ``buf[starts[i]:ends[i]]`` is line ``first_line + i``."""

    buf: bytes
    starts: np.ndarray  # int64, relative to buf
    ends: np.ndarray  # int64, relative to buf, a trailing \r left out
    offset: int  # where buf starts in the (decompressed) file
    first_line: int  # 0-based index of the block's first line in the file


def blocks(f: BinaryIO, start: int = 0, stop: int | None = None, first_line: int = 0,
           block_bytes: int = BLOCK_BYTES) -> Iterator[Block]:
    """Read ``f`` from byte ``start`` (a line start) to ``stop`` (a line start, or the end).

    ``f`` is positioned at ``start`` by the caller.
    """
    pos = start
    rest = b""
    line = first_line
    bom_checked = start != 0
    while True:
        want = block_bytes if stop is None else min(block_bytes, stop - pos - len(rest))
        chunk = f.read(want) if want > 0 else b""
        at_end = not chunk
        buf = rest + chunk if rest else chunk
        if not buf:
            return
        arr = np.frombuffer(buf, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        if at_end:
            if not len(nl) or nl[-1] != len(buf) - 1:
                nl = np.append(nl, len(buf))  # a last line without a newline
            used = len(buf)
        elif not len(nl):
            rest = buf  # one line longer than a block: read on
            continue
        else:
            used = int(nl[-1]) + 1
        starts = np.empty(len(nl), dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        if not bom_checked:
            bom_checked = True
            if buf.startswith(UTF8_BOM):
                starts[0] = min(3, int(ends[0]))
        # one trailing \r is not part of the line
        nonempty = ends > starts
        cr = np.zeros(len(ends), dtype=bool)
        idx = np.flatnonzero(nonempty)
        cr[idx] = arr[ends[idx] - 1] == 13
        ends -= cr
        yield Block(buf[:used] if used < len(buf) else buf, starts, ends, pos, line)
        line += len(nl)
        pos += used
        rest = buf[used:]
        if at_end:
            return


def bad_utf8(buf: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Indices of the lines that are not valid UTF-8 (checked by Arrow, bisecting on failure)."""
    if buf.isascii():
        return np.empty(0, dtype=np.int64)
    import pyarrow as pa

    n = len(starts)
    if not n:
        return np.empty(0, dtype=np.int64)
    # an Arrow string array over the block: element i spans starts[i]..ends[i]
    lo = int(starts.min())
    offsets = np.empty(2 * n, dtype=np.int64)
    offsets[0::2] = starts - lo
    offsets[1::2] = ends - lo
    arr = pa.Array.from_buffers(pa.large_string(), 2 * n - 1,
                                [None, pa.py_buffer(offsets), pa.py_buffer(buf[lo:])])
    bad: list[int] = []
    a, stop = 0, 2 * n - 1
    while a < stop:  # validate from a on; the error names the first bad element
        try:
            arr.slice(a, stop - a).validate(full=True)
            break
        except pa.ArrowInvalid as exc:
            found = _INDEX.search(str(exc))
            if found is None:  # an Arrow that words it otherwise: bisect
                _bisect(arr, a, stop, bad)
                break
            k = a + int(found.group(1))
            if k % 2 == 0:
                bad.append(k // 2)
            a = k + 1
    return np.asarray(sorted(set(bad)), dtype=np.int64)


def _bisect(arr: Any, a: int, b: int, bad: list[int]) -> None:
    """Find the invalid elements of ``arr[a:b]`` by halving (even elements are lines)."""
    import pyarrow as pa

    try:
        arr.slice(a, b - a).validate(full=True)
        return
    except pa.ArrowInvalid:
        pass
    if b - a <= 1:
        if a % 2 == 0:
            bad.append(a // 2)
        return
    mid = (a + b) // 2
    _bisect(arr, a, mid, bad)
    _bisect(arr, mid, b, bad)
