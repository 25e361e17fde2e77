"""What the commands print: text from a trace made safe for a terminal, strict JSON, errors.

Like the whole of :mod:`mcp_notebook.cli`, nothing but ``os`` and ``sys`` at import (``re``
and ``json`` load on first use): ``record`` must start its server before anything loads.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    from typing import Any

_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # patterns: re (and its cache) load on first use
#: invisible characters that reorder or hide text: bidi controls (the right-to-left
#: override U+202E, embeddings, isolates, marks), zero-width characters, line and paragraph
#: separators, the BOM: a hostile label could make a line read other than it is
_INVISIBLE = "[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"


def safe(text: str) -> str:
    """Text from a trace made harmless for a terminal: control characters (escape
    sequences a hostile capture could carry) as ``\\xNN``, bidi controls and other
    invisible characters as ``\\uNNNN``."""
    import re

    text = re.sub(_CONTROL, lambda m: f"\\x{ord(m.group()):02x}", text)
    return re.sub(_INVISIBLE, lambda m: f"\\u{ord(m.group()):04x}", text)


def show(text: str) -> None:
    """Print text from a trace (see :func:`safe`); what the terminal's encoding cannot
    hold (undecodable bytes as lone surrogates, say) as backslash escapes."""
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    print(safe(text).encode(enc, "backslashreplace").decode(enc))


def error(message: str) -> None:
    """One line on stderr, its control characters shown as escapes."""
    print(f"mcp-notebook: {safe(message)}".replace("\n", " "), file=sys.stderr)


def json_text(value: Any) -> str:
    """Strict JSON (ASCII, so no terminal control survives): NaN and infinities, which JSON
    has not, as null."""
    import json

    return json.dumps(_finite(value), indent=2, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
