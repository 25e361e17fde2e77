"""Read a line-format file, in one process or split in byte ranges over several."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..readers.base import open_bytes
from .rows import Rows

__all__ = ["read_file"]


def _reader(fmt: str):  # noqa: ANN202
    if fmt == "ndjson":
        from .ndjson import read_part
    else:
        from .tap import read_part
    return read_part


def _spans(spans: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(spans) if spans else np.empty((0, 2), dtype=np.int64)


def read_file(path: Path, fmt: str, session: str, direction: str | None, *, gz: bool,
              keep_text: bool) -> list[tuple[Rows, np.ndarray, int]]:
    """``[(rows, line spans, first line), ...]`` for consecutive parts of the file."""
    read_part = _reader(fmt)
    with open_bytes(path) as f:
        rows, spans = read_part(f, path.name, session, direction, keep_text=keep_text)
    return [(rows, _spans(spans), 0)]

#: files at least this large are split over two processes (see ``read_file``)
MIN_PARALLEL_BYTES = 1 << 62
