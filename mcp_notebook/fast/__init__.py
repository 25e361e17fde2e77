"""The fast loader for the two line formats (bare NDJSON and tap JSONL).

It gives the same rows as the reference path (``readers`` + ``table.collect``), faster:

- the file is read in 8 MB blocks; numpy finds the lines; the C scanner (or, on the
  Python path, a plain decode) checks UTF-8;
- 128 lines at a time are decoded by one ``msgspec`` call into typed envelope members
  (payloads are skipped, never built); a segment that fails is redone line by line;
- the usual message is classified in one short Python loop (:mod:`.message`); any
  other line (malformed, batch, odd id, ...) goes through the reference classifier, so
  the answer for it is the reference's by construction;
- the frame text stays on disk: the ``raw`` and ``source`` columns of files of at least
  :data:`LAZY_TEXT_MIN_BYTES` are :class:`~mcp_notebook.lazytext.LazyTextArray` columns
  that read by byte offset on access; smaller files and ``.gz`` files keep their text;
- a large file is split in two byte ranges decoded in two processes, or, in a process
  that runs other threads (a Jupyter kernel), two threads for bare NDJSON (see
  :mod:`.parallel`), when the machine has two cores or more.

Set :data:`ENABLED` to False to load through the reference path only. A fast path that
fails is never silent: the load notes it and warns once, and raises under
``MCP_NOTEBOOK_STRICT=1`` (see :mod:`.fallback`).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.fallback import FastPathError, fell_back
from ..engine.gcpause import gc_paused
from ..lazytext import FileSource, LabelSource, ListSource, TextSource
from ..readers.base import GZIP_MAGIC
from .lines import MAX_LINE_BYTES
from .rows import Rows
from .store import Part, Sparse, Store, call_column, list_column

__all__ = ["ENABLED", "LAZY_TEXT_MIN_BYTES", "MAX_LINE_BYTES", "FORMATS", "supports",
           "load_file", "try_load",
           "load_many", "combine", "infer_directions", "Store"]

#: Use the fast path for the formats it knows (False: the reference path for everything).
ENABLED = True
#: Files at least this large keep their frame text on disk (read by offset on demand).
LAZY_TEXT_MIN_BYTES = 16 << 20
FORMATS = ("ndjson", "tap")
#: files whose frame text is kept in memory whatever their size (temporary copies of
#: streams, removed after the load)
KEEP_TEXT: set[Path] = set()


def supports(fmt: str, options: dict[str, Any]) -> bool:
    """Whether the fast path reads this format with these reader options."""
    return ENABLED and fmt in FORMATS and not options


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def load_file(path: Path, fmt: str, session: str | None = None,
              direction: str | None = None, max_line: int = MAX_LINE_BYTES) -> Store:
    """Load one capture file of a line format into a store (a line longer than
    ``max_line`` bytes becomes an invalid row of its first bytes)."""
    from .parallel import read_file

    gz = _is_gzip(path)
    lazy = not gz and path not in KEEP_TEXT and os.path.getsize(path) >= LAZY_TEXT_MIN_BYTES
    sess = session or path.name
    with gc_paused():  # millions of small objects, none in a cycle
        parts = read_file(path, fmt, sess, direction, gz=gz, keep_text=not lazy,
                          max_line=max_line,
                          finish=lambda rows, spans, line0: to_part(
                              path, fmt, sess, direction, rows, spans, lazy, line0))
    return Store.from_parts(parts)


def to_part(path: Path, fmt: str, session: str, direction: str | None, rows: Rows,
            spans: np.ndarray, lazy: bool, line_base: int) -> Part:
    """Numpy columns of gathered rows; ``line_base`` is the file line of the rows' line 0;
    ``spans`` are the lines, starts and ends of the non-blank lines (three rows), in line
    order."""
    rows.flush()
    n = len(rows)
    line = rows.column("line", np.int64)
    if n and n == spans.shape[1] and np.array_equal(spans[0], line):
        # a row for each non-blank line (the usual capture: no batch, no line of several
        # rows): the spans are the rows' own, no search
        offsets = spans[1].copy()
        lengths = spans[2] - offsets
    elif n:
        at = np.searchsorted(spans[0], line)
        offsets = spans[1][at]
        lengths = spans[2][at] - offsets
        del at
    else:
        offsets = lengths = np.empty(0, dtype=np.int64)
    labels = line + (line_base + 1)
    del line
    over_src = rows.source_over
    if rows.context:  # tap: per-row context
        ts = rows.column("ts", np.float64)
        sess = (rows.column("session", np.int32), rows.sessions.values)
        stream = (rows.column("stream", np.int32), rows.streams.values)
        direct = rows.column("direction", np.int8)
        size = rows.column("size", np.int64)
        tap_mask: np.ndarray | None = rows.column("tap_raw", bool)
    else:
        ts = np.broadcast_to(np.float64(np.nan), (n,))
        sess = (np.zeros(n, dtype=np.int8), [session])
        stream = (np.zeros(n, dtype=np.int8), ["stdio"])
        code = {"c2s": 0, "s2c": 1}.get(direction or "", -1)
        direct = np.full(n, code, dtype=np.int8)
        size = lengths
        tap_mask = None
    raw: TextSource
    source: TextSource
    if lazy:
        raw = FileSource(path, offsets, lengths.astype(np.int32), tap=tap_mask,
                         overrides=rows.raw_over)
        source = LabelSource(path.name, labels.astype(np.int32) if len(labels) and
                             labels[-1] < 1 << 31 else labels, over_src)
    else:
        raw = ListSource(rows.raw or [])
        src = [f"{path.name}:{k}" for k in labels.tolist()]
        for r, v in over_src.items():
            src[r] = v
        source = ListSource(src)
    return Part(n=n, kind=rows.column("kind", np.int8), id=rows.column("id", object),
                id_key=rows.column("id_key", object),
                id_code=(rows.column("id_code", np.int32), rows.keys.values),
                method=(rows.column("method", np.int32), rows.methods.values), size=size, ts=ts,
                session=sess, stream=stream, direction=direct, sparse=rows.sparse,
                flags=dict(rows.flags), extra=rows.extra, raw=raw, source=source,
                blank=rows.blank, lines=rows.lines,
                ref=Sparse(rows.ref_rows, rows.ref_vals),
                progress=Sparse(rows.prog_rows, rows.prog_vals, np.float64),
                version=Sparse.from_dict(rows.sparse["version"]),
                empty_result=Sparse(rows.empty_rows, np.ones(len(rows.empty_rows), dtype=bool),
                                    bool),
                call=call_column(rows, path), listed=list_column(rows),
                id_index=rows.keys.index or None,
                long_keys=np.asarray(rows.long_keys, dtype=np.int64))


#: give freed heap memory back to the system after each phase of a load (glibc's
#: ``malloc_trim``); off unless asked for (``MCP_NOTEBOOK_TRIM=1``): it changes the
#: allocator state of the user's whole process
TRIM_MEMORY = os.environ.get("MCP_NOTEBOOK_TRIM", "").strip() not in ("", "0")


def release_memory() -> None:
    """Give freed heap memory back to the system when :data:`TRIM_MEMORY` is set (glibc
    keeps it otherwise), so that the temporary arrays of one phase do not add to the peak
    of the next."""
    global _TRIM
    if not TRIM_MEMORY:
        return
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


#: what a file that cannot be read (or a gzip stream cut short or corrupt) raises
FILE_ERRORS = (OSError, EOFError, zlib.error)


def try_load(path: Path, fmt: str, session: str | None, direction: str | None,
             max_line: int = MAX_LINE_BYTES) -> Store | None:
    """The store of one file by the fast path, or None when the reference path must read it:
    an unreadable or cut-short file (the reference path keeps what it read and says so), or
    a failure of the fast path itself, which is noted (:func:`.fallback.fell_back`: it
    raises under ``MCP_NOTEBOOK_STRICT=1``)."""
    try:
        return load_file(path, fmt, session, direction, max_line)
    except FILE_ERRORS:
        return None
    except FastPathError:
        raise
    except Exception as exc:  # a fast-path bug must not cost the user the capture
        fell_back(f"{path.name}: the fast loader failed and the reference path read the "
                  "file instead (same rows, slower); please report it", exc)
        return None


def load_many(jobs: list[tuple[Path, str, str | None, str | None, int]]
              ) -> dict[Path, Store | None]:
    """``{path: try_load(*job)}`` for several files loaded by two processes, when it pays
    (see :func:`.parallel.load_many`); ``{}`` otherwise."""
    from .parallel import load_many as share

    return share(jobs, try_load) if ENABLED else {}


def combine(pieces: list[Any]) -> Store:
    """One store from the pieces of a load, in order (``Columns`` or ``Store``)."""
    from ..table import Columns

    stores = [Store.from_columns(p) if isinstance(p, Columns) else p for p in pieces
              if len(p) or p.blank_lines]
    if not stores:
        return Store.from_columns(Columns())
    out = Store.concat(stores)
    release_memory()
    return out


def infer_directions(store: Store) -> bool:
    """Fill the unknown directions of messages (as ``engine.walks.infer``); the members of
    a batch array take the direction of its first member. True when anything was unknown."""
    from ..engine.direction import infer_codes

    if not ((store.direction < 0) & (store.kind <= 3)).any():
        return False
    d = infer_codes(store.kind, store.session[0], store.id_code[0], store.method[0],
                    store.method[1], store.direction)
    b = store.batch
    members = np.flatnonzero(b > 0)
    if len(members):
        heads = np.where(b == 0, np.arange(len(b)), -1)
        last_head = np.maximum.accumulate(heads)[members]
        ok = last_head >= 0
        src = d[last_head[ok]]
        has = src >= 0
        d[members[ok][has]] = src[has]
    store.direction = d
    release_memory()
    return True
