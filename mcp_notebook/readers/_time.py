"""ISO 8601 times as the capture formats write them, read the same on every Python.

``datetime.fromisoformat`` reads a fraction of 3 or 6 digits only before Python 3.11
(and no ``Z`` at all), so every reader parses times here: a date ``YYYY-MM-DD`` (or
``YYYYMMDD``), then ``T``, ``t`` or a space and ``HH:MM[:SS[.fraction]]`` (or
``HHMMSS``), a fraction of any number of digits after ``.`` or ``,`` (kept to the
nanosecond), then ``Z``, ``+hh:mm``, ``+hhmm``, ``+hh``, a trailing `` UTC`` / `` GMT``,
or nothing (taken as UTC, and said so). A leap second (``:60``) is the next second's
start; ``24:00`` ends the day.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import NamedTuple

__all__ = ["Stamp", "parse_iso", "read_time"]

_ISO = re.compile(
    r"\s*(?P<y>\d{4})(?P<dsep>-?)(?P<mo>\d\d)(?P=dsep)(?P<d>\d\d)"
    r"(?:[Tt ](?P<h>\d\d)(?:(?P<tsep>:?)(?P<mi>\d\d)"
    r"(?:(?P=tsep)(?P<s>\d\d)(?:[.,](?P<f>\d+))?)?)?)?"
    r"\s*(?:(?P<z>[Zz])|(?P<sign>[+-])(?P<oh>\d\d)(?::?(?P<om>\d\d)(?::?(?P<os>\d\d))?)?"
    r"|(?P<utc>UTC|GMT))?\s*$")
_UNIX_DAY = date(1970, 1, 1).toordinal()
#: the usual stamp (``2026-01-01T00:00:00.000Z``, any fraction): read without the
#: general expression's groups, its minute's epoch computed once
_USUAL = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d):(\d\d)(?:\.(\d+))?Z", re.ASCII)


class Stamp(NamedTuple):
    """A parsed time: unix seconds (UTC), and whether the text named no zone."""

    seconds: float
    naive: bool


@lru_cache(maxsize=4096)
def _day(y: int, mo: int, d: int) -> int:
    """Unix seconds at 00:00 UTC of a calendar day; ValueError for one that does not exist."""
    return (date(y, mo, d).toordinal() - _UNIX_DAY) * 86400


@lru_cache(maxsize=4096)
def _minute(prefix: str) -> int | None:
    """Unix seconds at ``YYYY-MM-DDTHH:MM`` (UTC), or None for one the general path must
    judge (no such day, hour 24 or more, minute 60 or more)."""
    h, mi = int(prefix[11:13]), int(prefix[14:16])
    if h > 23 or mi > 59:
        return None
    try:
        return _day(int(prefix[0:4]), int(prefix[5:7]), int(prefix[8:10])) + h * 3600 + mi * 60
    except ValueError:
        return None


def parse_iso(text: str) -> Stamp:
    """The time an ISO 8601 text names; raises ValueError saying what is wrong.

    >>> parse_iso("2025-06-18T12:00:00.1Z").seconds
    1750248000.1
    >>> parse_iso("2025-06-18 14:00:00.123456789+0200").seconds
    1750248000.1234567
    >>> parse_iso("2025-06-18T12:00:00")
    Stamp(seconds=1750248000.0, naive=True)
    >>> parse_iso("2025-13-01T00:00:00Z")
    Traceback (most recent call last):
    ...
    ValueError: not a time: '2025-13-01T00:00:00Z' (month must be in 1..12)
    """
    u = _USUAL.fullmatch(text) if isinstance(text, str) else None
    if u is not None:
        minute, s = _minute(u.group(1)), int(u.group(2))
        if minute is not None and s <= 60:
            frac = u.group(3)
            whole = minute + s
            return Stamp(whole + int(frac[:9].ljust(9, "0")) / 1e9 if frac else float(whole),
                         False)
    m = _ISO.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"not an ISO 8601 time: {str(text)[:60]!r}")
    g = m.group
    h, mi, s = int(g("h") or 0), int(g("mi") or 0), int(g("s") or 0)
    try:
        day = _day(int(g("y")), int(g("mo")), int(g("d")))
    except ValueError as exc:
        raise ValueError(f"not a time: {text[:60]!r} ({exc})") from None
    if h > 24 or mi > 59 or s > 60 or (h == 24 and (mi or s or int(g("f") or 0))):
        raise ValueError(f"not a time: {text[:60]!r} (no such time of day)")
    offset = 0
    if g("sign"):
        oh, om, os_ = int(g("oh")), int(g("om") or 0), int(g("os") or 0)
        if oh > 23 or om > 59 or os_ > 59:
            raise ValueError(f"not a time: {text[:60]!r} (no such zone offset)")
        offset = (oh * 3600 + om * 60 + os_) * (1 if g("sign") == "+" else -1)
    whole = day + h * 3600 + mi * 60 + s - offset
    frac = g("f")
    seconds = whole + int(frac[:9].ljust(9, "0")) / 1e9 if frac else float(whole)
    return Stamp(seconds, not (g("z") or g("sign") or g("utc")))


def read_time(value: object, numbers: bool = True) -> tuple[float | None, str | None]:
    """``(unix seconds, problem)`` of a time field: a number, an ISO 8601 text or None.

    ``numbers=False`` for a format whose times are texts only (HAR, the Inspector's
    export): a number there has no known unit, so it is a problem, not a time.

    The problem (None when there is none) says why a time that is present cannot be
    read; a reader keeps it beside the frame instead of leaving a silent NaT.

    >>> read_time(1750248000)
    (1750248000.0, None)
    >>> read_time("yesterday")
    (None, "not an ISO 8601 time: 'yesterday'")
    """
    if value is None:
        return None, None
    if isinstance(value, bool):
        return None, f"a time that is {value!r}"
    if isinstance(value, (int, float)):
        if not numbers:
            return None, f"a time that is the number {value!r}, not an ISO 8601 text"
        seconds = float(value)
        if seconds != seconds or seconds in (float("inf"), float("-inf")):
            return None, f"a time that is {value!r}"
        return seconds, None
    if isinstance(value, str):
        try:
            return parse_iso(value).seconds, None
        except ValueError as exc:
            return None, str(exc)
    return None, f"a time that is a JSON {type(value).__name__}, not a number or text"
