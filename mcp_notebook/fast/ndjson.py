"""Bare NDJSON, fast: the C scanner (or blocks of 128 lines decoded by msgspec), unusual
lines by the reference.

The rows are those of ``readers.ndjson`` + ``table.collect``: one per non-blank line
(one per member for a batch array), in line order, with the same values.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import BinaryIO

import msgspec
import numpy as np

from ..engine import native as _native
from ..readers.base import Record
from ..table import collect
from . import cores
from .lines import MAX_LINE_BYTES, Bounds, bad_utf8, blocks, bounds, line_spans, too_long
from .message import decoder, scan
from .rows import Rows

__all__ = ["read_part", "SEGMENT"]

SEGMENT = 128  # lines per decode_lines call: a malformed line costs a redo of this many
_DecodeErrors = (msgspec.DecodeError, RecursionError)


def read_part(f: BinaryIO, name: str, session: str, direction: str | None, start: int = 0,
              stop: int | None = None, keep_text: bool = False,
              max_line: int = MAX_LINE_BYTES) -> tuple[Rows, list[np.ndarray]]:
    """The rows of lines from byte ``start`` to ``stop``, and the line spans of each block
    (:func:`.lines.line_spans`: the line, start and end in the file of each non-blank line).

    Line indices in the rows are relative to the first line read. With ``keep_text`` the
    rows also hold each frame's text (``rows.raw``). A line longer than ``max_line`` bytes
    is one invalid row holding its first bytes (:func:`.lines.blocks`). The C scanner reads
    the lines with a worker thread where a core is free (:func:`.cores.scan_pipe`).
    """
    rows = Rows(per_row_context=False)
    rows.raw = [] if keep_text else None
    spans: list[np.ndarray] = []
    label = f"{name}:?"  # the reader's source label: the line number is set by the store
    native = _native.native
    pipe = cores.scan_pipe()  # not in a split half: the other half has the other core
    # the file is the store of the text (a plain file read lazily): the call column points
    # into it (fast.store.CallColumn) instead of copying the arguments texts
    in_file = not keep_text and isinstance(f, io.BufferedReader)
    for blk in blocks(f, start, stop, first_line=rows.lines, max_line=max_line):
        buf, starts, ends = blk.buf, blk.starts, blk.ends
        line0 = blk.first_line
        lens = ends - starts
        nonblank = np.flatnonzero(lens > 0)
        spans.append(line_spans(blk, nonblank))
        mv = memoryview(buf)
        st, en = bounds(blk, listed=native is None or keep_text)
        rows.blank += len(starts) - len(nonblank) + blk.skipped

        def line_bytes(j: int, mv: memoryview = mv, st: Bounds = st, en: Bounds = en,
                       line0: int = line0) -> bytes:
            return bytes(mv[st[j - line0]:en[j - line0]])

        def escaped(j: int, buf: bytes | bytearray = buf, st: Bounds = st, en: Bounds = en,
                    line0: int = line0) -> bool:
            return buf.find(b"\\u", st[j - line0], en[j - line0]) >= 0

        def slow(j: int, line_bytes=line_bytes) -> None:  # noqa: ANN001
            text = line_bytes(j).decode("utf-8", "surrogateescape")
            rec = Record(raw=text, direction=direction, session=session, source=label)
            rows.add_columns(collect([rec]), j, label)

        if blk.long >= 0:  # a line over the limit: an invalid row of its head
            head = line_bytes(line0).decode("utf-8", "surrogateescape")
            rows.add_columns(collect([Record(raw=head, direction=direction, session=session,
                                             source=label, kind="invalid",
                                             reason=too_long(blk.long, max_line))]),
                             line0, label)
        elif native is not None:  # the C scanner; the Python path for the lines it leaves
            n = len(starts)
            base = blk.offset if in_file else -1
            i = native.scan(buf, starts, ends, 0, n, line0, _native.out_lists(rows),
                            file_base=base, pipe=pipe)
            while i < n:
                _one(mv[st[i]:en[i]], line0 + i, rows, escaped, slow)
                i = native.scan(buf, starts, ends, i + 1, n, line0, _native.out_lists(rows),
                                file_base=base, pipe=pipe)
        else:
            _segments(nonblank.tolist(), bad_utf8(buf, starts, ends), mv, st, en, line0,
                      rows, escaped, slow)
        if keep_text and rows.raw is not None:
            add = rows.raw.append
            for j in rows.line:
                add(line_bytes(j).decode("utf-8", "surrogateescape"))
        rows.flush()
        rows.lines = line0 + len(starts)
    return rows, spans


def _one(line: memoryview, j: int, rows: Rows, escaped: Callable[[int], bool],
         slow: Callable[[int], None]) -> None:
    """One line by the Python path: msgspec, or the reference."""
    try:
        bytes(line).decode("utf-8")  # the reference refuses invalid UTF-8
        m = decoder.decode(line)
    except (UnicodeDecodeError, *_DecodeErrors):
        slow(j)
    else:
        scan((m,), (j,), rows, escaped, slow)


def _segments(nb: list[int], bad: np.ndarray, mv: memoryview, st: Bounds, en: Bounds,
              line0: int, rows: Rows, escaped: Callable[[int], bool],
              slow: Callable[[int], None]) -> None:
    """The Python path for the non-blank lines ``nb`` of a block: ``decode_lines`` on
    segments of :data:`SEGMENT` lines, a failed segment redone line by line; ``bad``
    lists the lines that are not valid UTF-8."""
    decode_lines = decoder.decode_lines
    decode = decoder.decode
    badmask = np.zeros(len(st), dtype=bool)
    badmask[bad] = True
    for k0 in range(0, len(nb), SEGMENT):
        seg = nb[k0:k0 + SEGMENT]
        a, b = seg[0], seg[-1]
        msgs = None
        if not (len(bad) and badmask[a:b + 1].any()):
            try:
                msgs = decode_lines(mv[st[a]:en[b]])
            except _DecodeErrors:
                msgs = None
            if msgs is not None and len(msgs) != len(seg):
                msgs = None  # a whitespace-only line was skipped: go line by line
        if msgs is not None:
            scan(msgs, [line0 + i for i in seg], rows, escaped, slow)
            continue
        for i in seg:
            j = line0 + i
            if badmask[i]:
                slow(j)
                continue
            try:
                m = decode(mv[st[i]:en[i]])
            except _DecodeErrors:
                slow(j)
                continue
            scan((m,), (j,), rows, escaped, slow)
