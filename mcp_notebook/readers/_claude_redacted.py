"""The 2026 redacted form of a Claude Desktop message line: ``method="tools/list" id=1
params`` in place of the payload (2026 builds write no payload)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..protocol.envelope import Envelope, id_key_of

__all__ = ["parse_redacted"]


def parse_redacted(text: str) -> Envelope | None:
    """The envelope of a 2026 redacted payload (``method="x" id=1 params``), or None.

    >>> parse_redacted('method="tools/list" id=1 params').kind
    'request'
    >>> parse_redacted('id=1 result').id_key
    '1'
    >>> parse_redacted('method="notifications/initialized"').kind
    'notification'
    """
    m = _REDACTED.match(text.strip())
    if m is None or not (m.group("method") or m.group("id")):
        return None
    method = _json_or_text(m.group("method")) if m.group("method") else None
    flags = set((m.group("flags") or "").split())
    if m.group("id") is None:
        id_value, id_key = None, None
    else:
        raw = m.group("id")
        id_value = _json_or_text(raw)
        id_key = id_key_of(json.dumps(id_value, separators=(",", ":")).encode())
    if method is not None:
        if not isinstance(method, str):
            return None
        kind = "request" if id_key is not None else "notification"
    elif "error" in flags:
        kind = "error"
    elif "result" in flags:
        kind = "result"
    else:
        return None
    return Envelope(kind, id_value, id_key, method, None, None, False, None, None, ())


_REDACTED = re.compile(r'(?:method=(?P<method>"(?:[^"\\]|\\.)*"|\S+))?\s*'
                       r'(?:id=(?P<id>"(?:[^"\\]|\\.)*"|\S+))?\s*'
                       r'(?P<flags>(?:(?:params|result|error)\s*)*)$')


def _json_or_text(token: str) -> Any:
    try:
        return json.loads(token)
    except ValueError:
        return token
