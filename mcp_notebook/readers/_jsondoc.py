"""Helpers for readers of whole-JSON capture files (Inspector exports, cassettes)."""

from __future__ import annotations

import msgspec

__all__ = ["compact", "is_null", "text_of"]


def compact(raw: msgspec.Raw | bytes) -> str:
    """The compact JSON text of a raw JSON value, every number and key order kept.

    >>> compact(b'{\\n  "id": 18446744073709551617,\\n  "x": 1.50\\n}')
    '{"id":18446744073709551617,"x":1.50}'
    """
    return msgspec.json.format(bytes(raw), indent=-1).decode("utf-8", "surrogateescape")


def is_null(raw: msgspec.Raw | bytes) -> bool:
    """True when a raw JSON value is absent or ``null``."""
    data = bytes(raw).strip()
    return not data or data == b"null"


def text_of(raw: msgspec.Raw | bytes) -> str | None:
    """A raw JSON string value as text; None when it is not a string."""
    try:
        value = msgspec.json.decode(bytes(raw))
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, str) else None
