"""Numbers people read: durations in µs / ms / s / min / h, counts with separators.

Pure functions shared by the timeline's and the sequence diagram's static pictures (the
browser side of the timeline has the same rules in ``static/timeline.js``).
"""

from __future__ import annotations

import math

__all__ = ["fmt_duration", "fmt_offset", "fmt_count"]


def _trim(x: float, digits: int) -> str:
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_duration(seconds: float) -> str:
    """A duration with a unit and three significant digits at most.

    >>> [fmt_duration(s) for s in (0, 4.2e-5, 0.0123, 0.5, 3.25, 95, 5000, 39860)]
    ['0 s', '42 µs', '12.3 ms', '500 ms', '3.25 s', '1 min 35 s', '1 h 23 min', '11 h 4 min']
    """
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    a = abs(float(seconds))
    sign = "−" if seconds < 0 else ""
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{sign}{a * 1e6:.0f} µs"
    if a < 1:
        ms = a * 1e3
        return f"{sign}{_trim(ms, 2 if ms < 10 else 1 if ms < 100 else 0)} ms"
    if a < 60:
        return f"{sign}{_trim(a, 2 if a < 10 else 1)} s"
    if a < 3600:
        m, s = divmod(round(a), 60)
        return f"{sign}{m} min" + (f" {s} s" if s else "")
    h, m = divmod(round(a / 60), 60)
    return f"{sign}{h} h" + (f" {m} min" if m else "")


def fmt_offset(seconds: float) -> str:
    """A time relative to a start: ``+12.3 ms``, ``+1 h 23 min``.

    >>> fmt_offset(0.0123), fmt_offset(0), fmt_offset(-2)
    ('+12.3 ms', '+0 s', '−2 s')
    """
    text = fmt_duration(seconds)
    return text if text.startswith("−") else "+" + text


def fmt_count(n: int) -> str:
    """A count with thousands separators: ``1,234,567``."""
    return f"{int(n):,}"
