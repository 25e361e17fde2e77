"""Lines of a capture file in large blocks: where each line starts and ends, found with numpy.

The lines are those of :func:`mcp_notebook.readers.base.iter_lines`: split on ``\\n`` only,
one trailing ``\\r`` removed, a UTF-8 byte order mark opening the file left out of the
first line, and a last line without ``\\n`` kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, TypeAlias

import numpy as np

from ..engine import native as _native
from . import progress as _progress

__all__ = ["Block", "Bounds", "blocks", "bounds", "line_spans", "too_long", "bad_utf8", "lines_with",
           "MAX_LINE_BYTES"]

BLOCK_BYTES = 8 << 20
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class Block:
    """Whole lines of a file: ``buf[starts[i]:ends[i]]`` is line ``first_line + i``.

    ``buf`` is reused for the next block: take what is needed from it before asking for
    the next one. ``skipped`` blank lines came right before the block's first line (long
    runs of blank lines are counted, not listed). A line longer than the limit comes
    alone in a block of its own: ``long`` is its length, ``buf`` holds only its first
    :data:`LONG_KEEP` bytes.
    """

    buf: bytearray
    starts: np.ndarray  # int64, relative to buf
    ends: np.ndarray  # int64, relative to buf, a trailing \r left out
    offset: int  # where buf starts in the (decompressed) file
    first_line: int  # 0-based index of the block's first line in the file
    skipped: int = 0  # blank lines right before first_line, not in starts/ends
    long: int = -1  # the length of the one line of the block when it was cut (else -1)


#: a line longer than this is cut (``mn.load(max_line_bytes=...)`` raises it)
MAX_LINE_BYTES = 64 << 20

#: the starts or ends of a block's lines: a list of ints for a reader that indexes them line
#: by line, the int64 array itself for one that reads only a few lines (after the C scanner)
Bounds: TypeAlias = "list[int] | np.ndarray"
#: what is kept of a line longer than the limit
LONG_KEEP = 4096
#: blank lines in a row, at least this many, are counted without listing them
BLANK_RUN = 4096


def too_long(length: int, limit: int) -> str:
    """The reason of the invalid row of a cut line."""
    return (f"line of {length:,} bytes, longer than the limit of {limit:,} bytes; only its "
            f"first {LONG_KEEP:,} bytes are kept (pass max_line_bytes= to mn.load to raise "
            "the limit)")


def blocks(f: BinaryIO, start: int = 0, stop: int | None = None, first_line: int = 0,
           block_bytes: int = BLOCK_BYTES, max_line: int = MAX_LINE_BYTES) -> Iterator[Block]:
    """Read ``f`` from byte ``start`` (a line start) to ``stop`` (a line start, or the end).

    ``f`` is positioned at ``start`` by the caller. Memory stays bounded by the block size
    and ``max_line`` whatever the file holds: a line longer than ``max_line`` bytes (its
    trailing ``\r`` not counted) is cut (:attr:`Block.long`), runs of blank lines are
    counted.
    """
    cap = max(max_line, 0) + 2  # a line, a \r and its newline
    buf = bytearray(max(block_bytes, 1))
    have = 0  # bytes of buf in use (a partial line carried over, then new data)
    pos = start  # file offset of buf[0]
    line = first_line
    bom_checked = start != 0
    at_end = False
    readinto = f.readinto  # type: ignore[attr-defined]
    while not at_end:
        if have == len(buf):
            if have >= cap:  # a line longer than the limit: keep its head, skip the rest
                blk, have, at_end = _long_line(readinto, buf, pos, stop, line, bom_checked)
                bom_checked = True
                yield blk
                line += 1
                pos += blk.long + (not at_end)
                continue
            # one line longer than the buffer: a larger one (not resized: the caller may
            # still hold views of it)
            bigger = bytearray(min(2 * len(buf), cap))
            bigger[:have] = buf
            buf = bigger
        want = len(buf) - have
        if stop is not None:
            want = min(want, stop - pos - have)
        got = readinto(memoryview(buf)[have:have + want]) if want > 0 else 0
        _progress.tick(f)
        at_end = not got
        have += got or 0
        if not have:
            return
        arr = np.frombuffer(buf, dtype=np.uint8, count=have)
        if buf[0] == 10 and buf[have - 1] == 10 and not (arr != 10).any():
            # nothing but newlines: blank lines, counted
            del arr
            bom_checked = True
            yield Block(buf, _EMPTY, _EMPTY, pos, line + have, skipped=have)
            line += have
            pos += have
            have = 0
            continue
        nl = _newlines(buf, have)
        if at_end:
            if not len(nl) or nl[-1] != have - 1:
                nl = np.append(nl, have)  # a last line without a newline
            used = have
        elif not len(nl):
            continue  # a line longer than what is read so far: read on
        else:
            used = int(nl[-1]) + 1
        starts = np.empty(len(nl), dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        del nl
        if not bom_checked:
            bom_checked = True
            if buf.startswith(UTF8_BOM):
                starts[0] = min(3, int(ends[0]))
        # one trailing \r is not part of the line
        idx = np.flatnonzero(ends > starts)
        ends[idx] -= arr[ends[idx] - 1] == 13
        del arr
        del idx
        if max_line < len(buf):  # lines over the limit may be whole in the buffer
            yield from _cut_long(buf, starts, ends, pos, line, max_line)
        else:
            yield from _runs(buf, starts, ends, pos, line)
        line += len(starts)
        rest = have - used
        buf[:rest] = buf[used:have]
        pos += used
        have = rest


_EMPTY = np.empty(0, dtype=np.int64)


def _runs(buf: bytearray, starts: np.ndarray, ends: np.ndarray, pos: int,
          line: int) -> Iterator[Block]:
    """The lines as one block, or, when they hold long runs of blank lines, as the blocks
    between those runs (each run counted in the next block's ``skipped``)."""
    n = len(starts)
    nb = np.flatnonzero(ends > starts)
    if n - len(nb) < BLANK_RUN:
        yield Block(buf, starts, ends, pos, line)
        return
    # the blank lines before each non-blank line, and after the last one
    gaps = np.diff(nb, prepend=-1) - 1
    cut = np.flatnonzero(gaps >= BLANK_RUN)  # block k starts at nb[cut[k]]
    if not len(cut) or cut[0] != 0:
        cut = np.concatenate([[0], cut]) if len(nb) else cut
    for k in range(len(cut)):
        gap = int(gaps[cut[k]])
        skip = gap if gap >= BLANK_RUN else 0  # (only the first block can start after less)
        a = int(nb[cut[k]]) - (gap - skip)
        b = int(nb[cut[k + 1] - 1]) + 1 if k + 1 < len(cut) else int(nb[-1]) + 1
        yield Block(buf, starts[a:b], ends[a:b], pos, line + a, skipped=skip)
    tail = n - (int(nb[-1]) + 1 if len(nb) else 0)
    if tail:
        yield Block(buf, _EMPTY, _EMPTY, pos, line + n, skipped=tail)


def _cut_long(buf: bytearray, starts: np.ndarray, ends: np.ndarray, pos: int, line: int,
              max_line: int) -> Iterator[Block]:
    """:func:`_runs` of the lines, each line longer than ``max_line`` in a block of its
    own, as :func:`_long_line` gives one (a limit below the buffer size)."""
    over = np.flatnonzero(ends - starts > max_line).tolist()
    a = 0
    for k in over:
        if k > a:
            yield from _runs(buf, starts[a:k], ends[a:k], pos, line + a)
        s0 = int(starts[k])
        head = bytearray(buf[s0:s0 + LONG_KEEP])
        yield Block(head, np.zeros(1, dtype=np.int64), np.array([len(head)], dtype=np.int64),
                    pos + s0, line + k, long=int(ends[k]) - s0)
        a = k + 1
    if a < len(starts) or not over:
        yield from _runs(buf, starts[a:], ends[a:], pos, line + a)


def _long_line(readinto, buf: bytearray, pos: int, stop: int | None, line: int,  # noqa: ANN001
               bom_checked: bool) -> tuple[Block, int, bool]:
    """The block of a line that fills ``buf`` without a newline: its head kept, the rest
    read through to the newline in pieces of ``buf``; ``(block, bytes of buf holding what
    follows the line, at end)``."""
    head = bytearray(buf[:LONG_KEEP])
    skip = 3 if not bom_checked and head.startswith(UTF8_BOM) else 0
    length = len(buf)
    mv = memoryview(buf)
    while True:
        want = len(buf) if stop is None else min(len(buf), stop - pos - length)
        got = readinto(mv[:want]) if want > 0 else 0
        if not got:
            rest, at_end = 0, True
            break
        i = buf.find(b"\n", 0, got)
        if i >= 0:
            length += i
            rest, at_end = got - i - 1, False
            buf[:rest] = buf[i + 1:got]
            break
        length += got
        _progress.tick(readinto.__self__)
    del mv
    blk = Block(head, np.array([skip], dtype=np.int64), np.array([len(head)], dtype=np.int64),
                pos, line, long=length)
    return blk, rest, at_end


def bounds(blk: Block, listed: bool) -> tuple[Bounds, Bounds]:
    """The block's line starts and ends: lists of ints for a reader that indexes them line
    by line (``listed``: the Python path, or kept texts), else the arrays themselves (after
    the C scanner, which leaves a few lines at most: no two int objects per line)."""
    return (blk.starts.tolist(), blk.ends.tolist()) if listed else (blk.starts, blk.ends)


def line_spans(blk: Block, nonblank: np.ndarray) -> np.ndarray:
    """The lines, starts and ends in the file of the block's non-blank lines ``nonblank``:
    three rows of one array, so that each is contiguous."""
    out = np.empty((3, len(nonblank)), dtype=np.int64)
    np.add(nonblank, blk.first_line, out=out[0])
    np.add(blk.starts[nonblank], blk.offset, out=out[1])
    np.add(blk.ends[nonblank], blk.offset, out=out[2])
    return out


def join_spans(spans: list[np.ndarray]) -> np.ndarray:
    """The line spans of several blocks (:func:`line_spans`) end to end: one array of three
    rows (lines, starts, ends)."""
    return np.concatenate(spans, axis=1) if spans else np.empty((3, 0), dtype=np.int64)


def _newlines(buf: bytearray, n: int) -> np.ndarray:
    """Offsets of the newline bytes of ``buf[:n]`` (int64)."""
    if _native.native is not None:
        return np.frombuffer(_native.native.newlines(buf, n), dtype=np.int64)
    return np.flatnonzero(np.frombuffer(buf, dtype=np.uint8, count=n) == 10)


def lines_with(buf: bytes | bytearray, starts: np.ndarray, ends: np.ndarray,
               pairs: tuple[bytes, ...]) -> np.ndarray:
    """Whether each line holds one of the two-byte sequences ``pairs`` (all with the same
    first byte), found for the whole block at once."""
    n = len(starts)
    hi = int(ends[-1]) if n else 0
    if hi < 2:
        return np.zeros(n, dtype=bool)
    arr = np.frombuffer(buf, dtype=np.uint8, count=hi)
    second = arr[1:]
    hit = second == pairs[0][1]
    for p in pairs[1:]:
        hit |= second == p[1]
    hit &= arr[:-1] == pairs[0][0]
    at = np.flatnonzero(hit)
    out = np.zeros(n, dtype=bool)
    if len(at):
        line = np.searchsorted(starts, at, side="right") - 1
        ok = at + 1 < ends[line]  # both bytes inside the line
        out[line[ok]] = True
    return out


#: bytes of whole lines decoded at once by :func:`bad_utf8` (a failed piece: line by line)
UTF8_PIECE = 1 << 16


def bad_utf8(buf: bytes | bytearray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Indices of the lines that are not valid UTF-8 (the Python path's check; the C
    scanner has its own): pieces of about :data:`UTF8_PIECE` bytes of whole lines are
    decoded at once, the lines of a piece that fails one by one. A sequence cannot run
    across a line end (``\n`` and ``\r`` are never part of one), so a piece decodes
    exactly when each of its lines does."""
    n = len(starts)
    if not n or buf.isascii():  # all of the buffer (it may hold more than the lines)
        return np.empty(0, dtype=np.int64)
    mv = memoryview(buf)
    # the first line of each piece
    firsts = np.unique(np.searchsorted(starts, np.arange(int(starts[0]), int(ends[-1]) + 1,
                                                         UTF8_PIECE)))
    st, en = starts.tolist(), ends.tolist()
    bad: list[int] = []
    bounds = [*firsts.tolist(), n]
    for i, j in zip(bounds[:-1], bounds[1:], strict=False):
        if i >= j:
            continue
        try:
            str(mv[st[i]:max(en[j - 1], st[i])], "utf-8")
            continue
        except UnicodeDecodeError:
            pass
        for k in range(i, j):
            try:
                str(mv[st[k]:en[k]], "utf-8")
            except UnicodeDecodeError:
                bad.append(k)
    return np.asarray(bad, dtype=np.int64)
