"""Small helpers shared by the text-log readers: fast timestamps, JSON-ish checks.

Log files can be gigabytes, so timestamps are parsed by slicing, with the epoch of
each calendar day computed once.
"""

from __future__ import annotations

import re
from datetime import date as _date
from functools import lru_cache

__all__ = ["iso_z", "local_stamp", "looks_like_json", "TRUNCATED_RE"]

#: Claude Desktop's own in-line cut of a long message (2026 builds).
TRUNCATED_RE = re.compile(r"\.\.\.\[(\d+) chars truncated\]\.\.\.")


_UNIX_DAY = _date(1970, 1, 1).toordinal()


@lru_cache(maxsize=4096)
def _day_epoch(date: str) -> int:
    """Unix seconds at 00:00 UTC of ``YYYY-MM-DD``; ValueError for a day that does not exist."""
    return (_date(int(date[0:4]), int(date[5:7]), int(date[8:10])).toordinal()
            - _UNIX_DAY) * 86400


def _clock(hms: str) -> float:
    """Seconds since midnight of ``HH:MM:SS[.fff...]``; ValueError for no such time of day."""
    seconds = float(hms[6:]) if len(hms) > 6 else 0.0
    hours, minutes = int(hms[0:2]), int(hms[3:5])
    if hours > 23 or minutes > 59 or not 0 <= seconds < 61:
        raise ValueError(f"no such time of day: {hms!r}")
    return hours * 3600 + minutes * 60 + seconds


@lru_cache(maxsize=4096)
def _minute_epoch(prefix: str) -> int:
    """Unix seconds at ``YYYY-MM-DDTHH:MM`` (UTC)."""
    hours, minutes = int(prefix[11:13]), int(prefix[14:16])
    if hours > 23 or minutes > 59:
        raise ValueError(f"no such time of day: {prefix!r}")
    return _day_epoch(prefix[:10]) + hours * 3600 + minutes * 60


def iso_z(stamp: str) -> float | None:
    """Unix seconds of ``2025-02-22T04:14:49.169Z`` (UTC); None for a clock-only stamp.

    >>> iso_z("2025-02-22T04:14:49.169Z")
    1740197689.169
    >>> iso_z("20:23:53.215Z") is None
    True
    """
    if len(stamp) < 20 or stamp[10] != "T":
        return None
    try:
        seconds = float(stamp[17:].rstrip("Z"))
        if not 0 <= seconds < 61:
            return None
        return round(_minute_epoch(stamp[:16]) + seconds, 6)
    except ValueError:
        return None


def local_stamp(date: str, clock: str) -> float:
    """Unix seconds of a zone-less ``YYYY-MM-DD`` + ``HH:MM:SS.fff``, read as UTC.

    Raises ValueError for a day or a time of day that does not exist.

    >>> local_stamp("2025-03-23", "16:38:00.970")
    1742747880.97
    """
    return round(_day_epoch(date) + _clock(clock), 6)


def looks_like_json(text: str) -> bool:
    """True when ``text`` starts like a JSON object or array (after blanks)."""
    head = text.lstrip()[:1]
    return head == "{" or head == "["
