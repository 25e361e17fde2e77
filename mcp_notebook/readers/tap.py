"""The project's own tap JSONL: one object per line.

``{"ts": <unix seconds>, "dir": "c2s" | "s2c" | "stderr" | "meta", "raw": "<exact line>"}``
with an optional ``"session"``. ``meta`` records are the tap's own events (start, exit
code); they load as ``log`` rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .base import BLANK, Record, iter_lines

name = "tap"
description = "mcp-notebook tap JSONL ({ts, dir, raw, session?} per line)"


class _TapLine(msgspec.Struct, gc=False):
    raw: str
    dir: str | None
    ts: float | str | None = None
    session: str | None = None
    # written by `mcp-notebook convert --to jsonl` so that a conversion loads back the same
    kind: str | None = None
    reason: str | None = None
    stream: str | None = None
    source: str | None = None
    local_time: bool = False


_decode = msgspec.json.Decoder(_TapLine).decode


def sniff(head: str, filename: str) -> int:
    for line in head.splitlines()[:5]:
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            return 0
        if isinstance(obj, dict) and "raw" in obj and "dir" in obj:
            return 95
        return 0
    return 0


def parse_ts(value: float | str | None) -> float | None:
    """Unix seconds from a number or an ISO-8601 string."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        from datetime import timezone

        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    stem = session or path.name
    for n, line in iter_lines(path):
        source = f"{path.name}:{n}"
        if not line:
            yield BLANK  # no row; counted as a blank line in the summary
            continue
        try:
            rec = _decode(line.encode("utf-8", "surrogateescape"))
        except msgspec.DecodeError as exc:
            yield Record(raw=line, session=stem, source=source, kind="invalid",
                         reason=f"not a tap record: {exc}")
            continue
        ts = parse_ts(rec.ts)
        sess = rec.session or stem
        source = rec.source or source
        if rec.kind == "invalid":
            yield Record(raw=rec.raw, ts=ts, direction=rec.dir, session=sess, source=source,
                         stream=rec.stream or "stdio", kind="invalid", reason=rec.reason,
                         local_time=rec.local_time)
        elif rec.dir in ("c2s", "s2c", None):
            yield Record(raw=rec.raw, ts=ts, direction=rec.dir, session=sess, source=source,
                         stream=rec.stream or "stdio", local_time=rec.local_time)
        elif rec.dir == "stderr":
            yield Record(raw=rec.raw, ts=ts, session=sess, stream="stderr", source=source,
                         kind="stderr")
        elif rec.dir == "meta":
            yield Record(raw=rec.raw, ts=ts, session=sess, stream="log", source=source, kind="log")
        else:
            yield Record(raw=line, ts=ts, session=sess, source=source, kind="invalid",
                         reason=f"unknown tap direction {rec.dir!r} (expected c2s, s2c, stderr, meta)")
