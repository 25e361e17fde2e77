"""The fast loader for the two line formats (bare NDJSON and tap JSONL).

It gives the same rows as the reference path (``readers`` + ``table.collect``), faster:

- the file is read in 8 MB blocks; numpy finds the lines; Arrow checks UTF-8;
- 128 lines at a time are decoded by one ``msgspec`` call into typed envelope members
  (payloads are skipped, never built); a segment that fails is redone line by line;
- the usual message is classified in one short Python loop (:mod:`.message`); any
  other line (malformed, batch, odd id, ...) goes through the reference classifier, so
  the answer for it is the reference's by construction;
- the frame text stays on disk: the ``raw`` and ``source`` columns of files of at least
  :data:`LAZY_TEXT_MIN_BYTES` are :class:`~mcp_notebook.lazytext.LazyTextArray` columns
  that read by byte offset on access; smaller files and ``.gz`` files keep their text;
- a large file is split in two byte ranges decoded in two processes (see
  :mod:`.parallel`) when the machine has two cores or more.

Set :data:`ENABLED` to False to load through the reference path only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..lazytext import FileSource, LabelSource, ListSource
from ..readers.base import GZIP_MAGIC
from .rows import KINDS, Rows
from .store import Part, Store, factorize

__all__ = ["ENABLED", "LAZY_TEXT_MIN_BYTES", "FORMATS", "supports", "load_file", "Store"]

#: Use the fast path for the formats it knows (False: the reference path for everything).
ENABLED = True
#: Files at least this large keep their frame text on disk (read by offset on demand).
LAZY_TEXT_MIN_BYTES = 16 << 20
FORMATS = ("ndjson", "tap")


def supports(fmt: str, options: dict[str, Any]) -> bool:
    """Whether the fast path reads this format with these reader options."""
    return ENABLED and fmt in FORMATS and not options


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def load_file(path: Path, fmt: str, session: str | None = None,
              direction: str | None = None) -> Store:
    """Load one capture file of a line format into a store."""
    from .parallel import read_file

    gz = _is_gzip(path)
    lazy = not gz and os.path.getsize(path) >= LAZY_TEXT_MIN_BYTES
    sess = session or path.name
    parts = read_file(path, fmt, sess, direction, gz=gz, keep_text=not lazy)
    return Store.from_parts([to_part(path, fmt, sess, direction, rows, spans, lazy, base)
                             for rows, spans, base in parts])


def to_part(path: Path, fmt: str, session: str, direction: str | None, rows: Rows,
            spans: np.ndarray, lazy: bool, line_base: int) -> Part:
    """Numpy columns of gathered rows; ``line_base`` is the file line of the rows' line 0."""
    n = len(rows)
    line = np.asarray(rows.line, dtype=np.int64)
    if n:
        offsets, ends = spans[line, 0], spans[line, 1]
    else:
        offsets = ends = np.empty(0, dtype=np.int64)
    lengths = ends - offsets
    labels = line + (line_base + 1)
    over_src = rows.source_over
    if rows.context:  # tap: per-row context
        ts = np.array([np.nan if v is None else v for v in rows.ts], dtype=np.float64)
        sess = factorize(rows.session)
        stream = factorize(rows.stream)
        direct = np.array(rows.direction, dtype=np.int8)
        size = np.array(rows.size, dtype=np.int64)
        tap_mask: np.ndarray | None = np.array(rows.tap_raw, dtype=bool)
    else:
        ts = np.full(n, np.nan)
        sess = (np.zeros(n, dtype=np.int32), [session])
        stream = (np.zeros(n, dtype=np.int32), ["stdio"])
        code = {"c2s": 0, "s2c": 1}.get(direction or "", -1)
        direct = np.full(n, code, dtype=np.int8)
        size = lengths
        tap_mask = None
    if lazy:
        raw = FileSource(path, offsets, lengths, tap=tap_mask, overrides=rows.raw_over)
        source = LabelSource(path.name, labels, over_src)
    else:
        raw = ListSource(rows.raw)  # type: ignore[attr-defined]
        src = [f"{path.name}:{k}" for k in labels.tolist()]
        for r, v in over_src.items():
            src[r] = v
        source = ListSource(src)
    kind = np.array(rows.kind, dtype=np.int8)
    assert len(KINDS) < 127
    return Part(n=n, kind=kind, id=_objects(rows.id), id_key=_objects(rows.id_key),
                method=factorize(rows.method), size=size, ts=ts, session=sess, stream=stream,
                direction=direct, sparse=rows.sparse, flags=dict(rows.flags), extra=rows.extra,
                raw=raw, source=source, blank=rows.blank, lines=rows.lines)


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
