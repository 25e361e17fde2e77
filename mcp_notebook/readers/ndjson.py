"""Bare stdio NDJSON: one JSON-RPC message per line, nothing else.

Direction is not written in the file: the caller may give it (``direction="c2s"``, for
a one-sided capture) or the table layer infers it from the message flow.

Order: file order (the format has no times).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import BLANK, Record, iter_lines

name = "ndjson"
description = "bare stdio NDJSON (one JSON-RPC message per line)"


def sniff(head: str, filename: str) -> int:
    lines = [ln.strip() for ln in head.splitlines()[:20] if ln.strip()]
    if not lines:
        return 0
    hits = sum(1 for ln in lines if ln[:1] in "{[" and ('"jsonrpc"' in ln or '"method"' in ln
                                                          or '"result"' in ln))
    if hits == 0:
        return 0
    return 80 if hits >= len(lines) / 2 else 40


def read(path: Path, session: str | None = None, direction: str | None = None,
         **options: Any) -> Iterator[Record]:
    sess = session or path.name
    for n, line in iter_lines(path):
        source = f"{path.name}:{n}"
        if not line:
            yield BLANK  # no row; counted as a blank line in the summary
            continue
        yield Record(raw=line, direction=direction, session=sess, source=source)
