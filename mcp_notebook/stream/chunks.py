"""A line capture read in chunks: byte ranges cut at line boundaries, each scanned by the
fast loader's own entry points (``fast.ndjson.read_part`` / ``fast.tap.read_part``: the C
scanner, or its Python path where the extension is not built) into a column store of that
chunk alone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..fast import to_part
from ..fast.lines import MAX_LINE_BYTES, join_spans
from ..fast.store import Store

__all__ = ["Chunk", "cuts", "read_chunk", "chunks", "CHUNK_BYTES"]

#: bytes of a chunk (it ends at the first line boundary after this many): 1 MiB keeps a
#: chunk's columns and Python objects near 15 MB; larger chunks are no faster (measured
#: on 1M tiny frames: 1, 2 and 4 MiB within the noise), and cost memory
CHUNK_BYTES = 1 << 20
_SEEK = 1 << 16


@dataclass
class Chunk:
    start: int  # byte range [start, stop)
    stop: int
    first_line: int  # file line index of the chunk's first line (0-based)
    store: Store
    line: np.ndarray  # 1-based file line of each row
    lines: int  # lines in the chunk, blank ones included


def cuts(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, int]]:
    """Byte ranges ``[start, stop)`` of about ``chunk_bytes``, each ending after a newline
    (or at the end of the file)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        a = 0
        while a < size:
            b = a + max(chunk_bytes, 1)
            if b >= size:
                yield a, size
                return
            f.seek(b - 1)
            while True:  # a long line: read on to its end, a piece at a time
                piece = f.read(_SEEK)
                if not piece:
                    b = size
                    break
                nl = piece.find(b"\n")
                if nl >= 0:
                    b = f.tell() - len(piece) + nl + 1
                    break
            yield a, b
            a = b


def read_chunk(path: Path, fmt: str, session: str, direction: str | None, start: int,
               stop: int, first_line: int, max_line: int = MAX_LINE_BYTES) -> Chunk:
    """The store of the lines of ``path`` in ``[start, stop)`` (``first_line``: the file
    line index of the first), frame text left on disk."""
    if fmt == "ndjson":
        from ..fast.ndjson import read_part
    else:
        from ..fast.tap import read_part
    with open(path, "rb") as f:
        f.seek(start)
        rows, spans = read_part(f, path.name, session, direction, start, stop,
                                keep_text=False, max_line=max_line)
    rows.flush()
    line = rows.column("line", np.int64)
    rows.arrays["line"] = [line]
    part = to_part(path, fmt, session, direction, rows, join_spans(spans), True, first_line)
    return Chunk(start, stop, first_line, Store.from_parts([part]), line + (first_line + 1),
                 rows.lines)


def chunks(path: Path, fmt: str, session: str, direction: str | None,
           chunk_bytes: int = CHUNK_BYTES, max_line: int = MAX_LINE_BYTES) -> Iterator[Chunk]:
    """Every chunk of the file, in order."""
    first = 0
    for a, b in cuts(path, chunk_bytes):
        c = read_chunk(path, fmt, session, direction, a, b, first, max_line)
        first += c.lines
        yield c
