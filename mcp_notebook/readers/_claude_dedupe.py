"""Loading ``mcp.log`` with the per-server logs of the same run, without doubles.

Claude Desktop writes every entry twice: once to ``mcp-server-<name>.log`` and once to
``mcp.log`` (fields swapped, the time off by about a millisecond). When both are
loaded, the copy in the combined ``mcp.log`` is dropped for every entry that has a
twin in a per-server file: same server, same direction, same text, times at most
:data:`TOLERANCE` apart, matched in order. Entries with no twin are kept (the files
can cover different spans).
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._claude_lines import _LEVEL_ONLY, _LEVEL_SERVER, _match
from .base import Record, read_head

__all__ = ["dedupe", "TOLERANCE"]

#: Seconds two copies of one entry may be apart.
TOLERANCE = 0.003

_CONN = re.compile(r"#\d+$")
# what only one of the two files appends: `` {"context":...}`` or `` { metadata: ... }``
_SUFFIX = re.compile(r' \{(?:"| metadata: |$).*$')


def _server(rec: Record) -> str:
    return _CONN.sub("", rec.session or "")


def _key(rec: Record) -> tuple[Any, ...] | None:
    """What two copies of one entry share; None for rows that have no twin (stderr)."""
    if rec.kind == "log":

        first = rec.raw.split("\n", 1)[0]
        m = _match(first)
        text = (m.group("msg") or "") if m else first
        return (_server(rec), "log", _SUFFIX.sub("", text))
    if rec.kind in ("stderr", "blank"):
        return None
    return (_server(rec), rec.direction, rec.raw)


def _is_combined(key: object, records: Sequence[Record]) -> bool:
    name = Path(str(key)).name
    if name == "mcp.log":
        return True
    if name.startswith("mcp-server-"):
        return False
    path = Path(str(key))
    if path.is_file():

        for line in read_head(path, 16384).splitlines():
            m = _match(line)
            if m is not None:
                return m.re in (_LEVEL_SERVER, _LEVEL_ONLY)
    return len({_server(r) for r in records if r.session}) > 1


def dedupe(records_by_file: Mapping[Any, Sequence[Record]]) -> dict[Any, list[Record]]:
    """Drop from combined ``mcp.log`` files the entries a per-server file also has.

    ``records_by_file`` maps each loaded Claude Desktop file (its path) to its records in
    file order; the result has the same keys, with the doubles removed.
    """
    out = {k: list(v) for k, v in records_by_file.items()}
    combined = [k for k, v in out.items() if _is_combined(k, v)]
    singles = [k for k in out if k not in combined]
    if not combined or not singles:
        return out
    twins: dict[tuple[Any, ...], deque[float | None]] = defaultdict(deque)
    for k in singles:
        for rec in out[k]:
            key = _key(rec)
            if key is not None:
                twins[key].append(rec.ts)
    for k in combined:
        kept: list[Record] = []
        for rec in out[k]:
            key = _key(rec)
            queue = twins.get(key) if key is not None else None
            if queue and _take(queue, rec.ts):
                continue
            kept.append(rec)
        out[k] = kept
    return out


def _take(queue: deque[float | None], ts: float | None) -> bool:
    """Remove the first twin time within tolerance of ``ts``; True when one was found."""
    if ts is not None:  # twins too old to match this or any later entry
        while queue and queue[0] is not None and queue[0] < ts - 1.0:
            queue.popleft()
    for i, other in enumerate(queue):
        if ts is None or other is None:
            ok = ts is None and other is None
        else:
            ok = abs(other - ts) <= TOLERANCE
            if not ok and other > ts + TOLERANCE:
                return False
        if ok:
            del queue[i]
            return True
    return False
