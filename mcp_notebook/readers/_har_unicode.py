"""Texts of a HAR that are not Unicode: a JSON ``\\ud800`` escape decodes to a lone
surrogate, which was never on the wire. A record whose text holds one becomes an invalid
record with that text shown escaped; a session name holding one is shown escaped."""

from __future__ import annotations

from collections.abc import Callable

from .base import Record

__all__ = ["_escaped", "_sessions_checked", "_unicode_checked"]


def _escaped(text: str) -> str:
    """``text``, with any lone surrogate (not Unicode, not a kept byte) as ``\\udxxx``."""
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _sessions_checked() -> Callable[[Record], Record]:
    """:func:`_unicode_checked` of the session alone, once per session name."""
    done: dict[str, str] = {}

    def check(rec: Record) -> Record:
        s = rec.session
        if s is not None:
            e = done.get(s)
            if e is None:
                e = done[s] = _escaped(s)
            rec.session = e
        return rec

    return check


def _unicode_checked(rec: Record) -> Record:
    """The record, or an invalid one when its text holds a lone surrogate (a ``\\ud800``
    escape in the HAR): such a text is no Unicode and was never on the wire."""
    if rec.session is not None:
        rec.session = _escaped(rec.session)
    try:
        rec.raw.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        bad = rec.raw[exc.start]
        rec.raw = _escaped(rec.raw)
        if rec.kind is None:
            rec.kind, rec.reason = "invalid", (
                f"the HAR text holds a lone surrogate (U+{ord(bad):04X} at character "
                f"{exc.start}): not Unicode, so not what was sent; shown escaped")
    return rec
