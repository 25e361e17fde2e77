"""The project's own tap JSONL: one object per line.

``{"ts": <unix seconds>, "dir": "c2s" | "s2c" | "stderr" | "meta", "raw": "<exact line>"}``
with an optional ``"session"``. ``meta`` records are the tap's own events (start, exit
code); they load as ``log`` rows.

Order: file order, which is capture order: the tap writes each record as it relays
the frame. (Its time stamps are taken as each frame is read, before the write, so
two records of opposite directions a few microseconds apart may carry times in the
other order; the file's order is the one the tap saw.)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ._time import read_time
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
    extra: dict[str, Any] | None = None  # a reader's context (HTTP status, SSE event, ...)
    # written by the capture tap: the exact bytes of a line that is not UTF-8, and the full
    # length of a frame longer than its cap (``raw`` then holds only the first bytes)
    raw_b64: str | None = None
    truncated: int | None = None
    # a meta record's event (``start``, ``stdin-eof``, ``exit``, ...) and, on an exit by a
    # signal, its name: kept in the frame's context as ``tap_event`` / ``tap_signal``
    event: str | None = None
    signal: str | None = None


_decode = msgspec.json.Decoder(_TapLine).decode


def sniff(head: str, filename: str) -> int:
    # split on "\n" only: a record may hold U+2028, U+0085 or \x1c unescaped in a string
    lines = head.split("\n")
    for i, line in enumerate(lines[:5]):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            # a first record longer than the head (a huge frame) is cut: judge its start
            cut = i == len(lines) - 1 and len(line) >= 4096
            return 90 if cut and line[:1] == "{" and '"raw":' in line and '"dir":' in line \
                else 0
        if isinstance(obj, dict) and "raw" in obj and "dir" in obj:
            return 95
        return 0
    return 0


def parse_ts(value: float | str | None) -> float | None:
    """Unix seconds from a number or an ISO-8601 string (None: absent or unreadable)."""
    return read_time(value)[0]


def _redacted(raw: str) -> Any:
    """The envelope of a payload-less log line (``method="x" id=1 params``) that a
    conversion wrote out: such a line has no JSON to classify."""
    from .claude_desktop import parse_redacted

    return parse_redacted(raw)


def _exact(b64: str, fallback: str) -> str:
    """The exact bytes of ``raw_b64`` as text (bytes that are not UTF-8 as surrogate escapes)."""
    try:
        return base64.b64decode(b64, validate=True).decode("utf-8", "surrogateescape")
    except ValueError:
        return fallback


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    return read_lines(path, iter_lines(path), session or path.name)


def read_lines(path: Any, lines: Iterable[tuple[Any, str]], stem: str) -> Iterator[Record]:
    """The records of ``(line number, text)`` pairs of a tap file (``path.name`` names it).

    The fast loader (:mod:`mcp_notebook.fast.tap`) reads unusual lines through this too.
    """
    for n, line in lines:
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
        except RecursionError:
            yield Record(raw=line, session=stem, source=source, kind="invalid",
                         reason="not a tap record: JSON nested too deeply to decode safely")
            continue
        if rec.raw_b64 is not None:
            rec.raw = _exact(rec.raw_b64, rec.raw)
        if rec.truncated is not None and rec.dir in ("c2s", "s2c") and rec.kind is None:
            rec.kind = "invalid"
            rec.reason = (f"the tap kept only the first part of this frame (full size "
                          f"{rec.truncated} bytes)")
        ts, problem = read_time(rec.ts)
        sess = rec.session or stem
        source = rec.source or source
        extra = rec.extra or {}
        if problem:
            extra = {**extra, "ts_error": problem}
        if rec.kind == "invalid":
            yield Record(raw=rec.raw, ts=ts, direction=rec.dir, session=sess, source=source,
                         stream=rec.stream or "stdio", kind="invalid", reason=rec.reason,
                         local_time=rec.local_time, extra=extra)
        elif rec.dir in ("c2s", "s2c", None):
            yield Record(raw=rec.raw, ts=ts, direction=rec.dir, session=sess, source=source,
                         stream=rec.stream or "stdio", local_time=rec.local_time, extra=extra,
                         envelope=_redacted(rec.raw) if extra.get("redacted") else None)
        elif rec.dir == "stderr":
            yield Record(raw=rec.raw, ts=ts, session=sess, stream=rec.stream or "stderr",
                         source=source, kind="stderr", local_time=rec.local_time, extra=extra)
        elif rec.dir == "meta":
            if rec.event is not None:
                extra = {**extra, "tap_event": rec.event}
                if rec.signal is not None:
                    extra["tap_signal"] = rec.signal
            yield Record(raw=rec.raw, ts=ts, session=sess, stream=rec.stream or "log",
                         source=source, kind="log", local_time=rec.local_time, extra=extra)
        else:
            yield Record(raw=line, ts=ts, session=sess, source=source, kind="invalid",
                         reason=f"unknown tap direction {rec.dir!r} (expected c2s, s2c, stderr, meta)")
