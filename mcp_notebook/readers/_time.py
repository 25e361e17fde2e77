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

import numpy as np

__all__ = ["Stamp", "parse_iso", "read_time", "read_times"]

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


#: the fixed characters of the usual stamp ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (0: a digit)
_SHAPE = np.frombuffer(b"0000-00-00T00:00:00.000Z", dtype=np.uint8)
_DIGIT = _SHAPE == ord("0")


def _heads(values: list[object]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values that may be usual stamps (str of 24 characters): their places, their
    characters as bytes (a row each) and which are ASCII (the others' rows are no text).
    Where every value is an ASCII str of 24 characters (the usual), the rows are the
    bytes of the values joined, no array of them as text."""
    n = len(values)
    if n and set(map(type, values)) == {str}:
        joined = "".join(values)  # type: ignore[arg-type]
        if len(joined) == 24 * n and joined.isascii() and bool(
                (np.fromiter(map(len, values), dtype=np.int64, count=n) == 24).all()):  # type: ignore[arg-type]
            return (np.arange(n, dtype=np.int64),
                    np.frombuffer(joined.encode("ascii"), dtype=np.uint8).reshape(n, 24),
                    np.ones(n, dtype=bool))
    usual = [k for k, v in enumerate(values) if type(v) is str and len(v) == 24]
    text = np.array([values[k] for k in usual], dtype="U24").view(np.uint32).reshape(
        len(usual), 24)
    ascii_ = np.asarray((text < 128).all(axis=1), dtype=bool)
    return np.asarray(usual, dtype=np.int64), text.astype(np.uint8), ascii_


def read_times(values: list[object], numbers: bool = True
               ) -> tuple[np.ndarray, dict[int, str]]:
    """:func:`read_time` of many values at once: the times (NaN: none) and the problems
    by position. The usual stamps (``2026-01-01T00:00:00.000Z``) are read together with
    numpy, to the same double as :func:`parse_iso` gives; every other value by
    :func:`read_time`.

    >>> ts, problems = read_times(["2025-06-18T12:00:00.100Z", None, "2025-02-30T00:00:00.000Z"])
    >>> bool(ts[0] == parse_iso("2025-06-18T12:00:00.100Z").seconds), bool(ts[1] != ts[1])
    (True, True)
    >>> problems
    {2: "not a time: '2025-02-30T00:00:00.000Z' (day is out of range for month)"}
    """
    n = len(values)
    out = np.full(n, np.nan)
    problems: dict[int, str] = {}
    usual, heads, ok = _heads(values)
    done = np.zeros(n, dtype=bool)
    if len(usual):
        ok &= (heads[:, ~_DIGIT] == _SHAPE[~_DIGIT]).all(axis=1)
        d = heads[:, _DIGIT]
        ok &= ((d >= 48) & (d <= 57)).all(axis=1)

        def field(a: int, b: int) -> np.ndarray:
            v = np.zeros(len(heads), dtype=np.int64)
            for c in range(a, b):
                v = v * 10 + (heads[:, c].astype(np.int64) - 48)
            return v

        h, mi, sec, frac = field(11, 13), field(14, 16), field(17, 19), field(20, 23)
        ok &= (h <= 23) & (mi <= 59) & (sec <= 60)
        # each distinct date (its digits as a number; no date where they are not all
        # digits: those stamps are not usual already) looked at once
        dates = np.where(ok, field(0, 4) * 10000 + field(5, 7) * 100 + field(8, 10),
                         19700101)
        uniq, inv = np.unique(dates, return_inverse=True)
        inv = inv.reshape(-1)
        day = np.zeros(len(uniq), dtype=np.int64)
        good = np.ones(len(uniq), dtype=bool)
        for k, t in enumerate(uniq.tolist()):
            try:
                day[k] = _day(t // 10000, t // 100 % 100, t % 100)
            except ValueError:
                good[k] = False
        ok &= good[inv]
        whole = day[inv] + h * 3600 + mi * 60 + sec
        # as parse_iso: the whole seconds, plus the fraction's nanoseconds / 1e9
        seconds = whole.astype(np.float64) + (frac * 1_000_000).astype(np.float64) / 1e9
        at = usual[ok]
        out[at] = seconds[ok]
        done[at] = True
    for k in np.flatnonzero(~done).tolist():
        t, problem = read_time(values[k], numbers)
        if t is not None:
            out[k] = t
        if problem:
            problems[k] = problem
    return out, problems
