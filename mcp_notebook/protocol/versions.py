"""MCP protocol versions and what each one defines.

The method table is ``methods-by-version.json``, derived from the official MCP JSON
schemas (github.com/modelcontextprotocol/modelcontextprotocol, ``schema/<ver>/schema.json``
at commit b0f60ba5; MIT licence) by the ``ClientRequest``/``ServerRequest``/
``ClientNotification``/``ServerNotification`` unions of each version.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

__all__ = [
    "VERSIONS",
    "LATEST",
    "DEFAULT",
    "methods",
    "direction_of",
    "removed_in",
    "error_codes",
    "normalise",
    "at_least",
]

#: Released protocol versions, oldest first.
VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
LATEST = VERSIONS[-1]
#: What a capture with no initialize exchange is checked against: the version a server
#: assumes when a client sends no version (2025-06-18 transports: "the server SHOULD assume
#: protocol version 2025-03-26").
DEFAULT = "2025-03-26"

#: JSON-RPC 2.0 §5.1 pre-defined codes.
STANDARD_CODES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}

#: Codes MCP itself defines, by version (reference/mcp-protocol.md §3).
_MCP_CODES: dict[str, dict[int, str]] = {
    "2024-11-05": {-32002: "Resource not found"},
    "2025-03-26": {-32002: "Resource not found"},
    "2025-06-18": {-32002: "Resource not found"},
    "2025-11-25": {-32002: "Resource not found", -32042: "URL elicitation required"},
    "2026-07-28": {
        -32020: "Header mismatch",
        -32021: "Missing required client capability",
        -32022: "Unsupported protocol version",
    },
}

#: Codes the SDKs use locally, never defined by the spec.
SDK_CODES = {-32000: "Connection closed (SDK)", -32001: "Request timed out (SDK)"}


def normalise(version: str | None) -> str:
    """Map any version string to the profile it is checked against.

    Unknown or pre-release strings map to the nearest released version not newer than
    them; ``draft`` maps to the latest; ``None`` to :data:`DEFAULT`.

    >>> normalise("2024-10-07"), normalise("draft"), normalise(None)
    ('2024-11-05', '2026-07-28', '2025-03-26')
    """
    if version is None:
        return DEFAULT
    if version in VERSIONS:
        return version
    if version == "draft":
        return LATEST
    older = [v for v in VERSIONS if v <= version]
    return older[-1] if older else VERSIONS[0]


def at_least(version: str, floor: str) -> bool:
    return normalise(version) >= floor


@cache
def _table() -> dict[str, list[dict[str, str]]]:
    text = resources.files(__package__).joinpath("methods-by-version.json").read_text("utf-8")
    return json.loads(text)["versions"]


@cache
def methods(version: str) -> dict[str, tuple[str, str]]:
    """``{method: (kind, direction)}`` for a version; direction is ``c2s``, ``s2c`` or ``both``.

    >>> methods("2025-06-18")["sampling/createMessage"]
    ('request', 's2c')
    """
    out: dict[str, tuple[str, str]] = {}
    for row in _table()[normalise(version)]:
        d = row["direction"]
        if d.startswith("embedded-only"):
            continue  # 2026: only inside InputRequiredResult, never a message on the wire
        direction = "c2s" if d.startswith("client->server") else "s2c" if d.startswith(
            "server->client") else "both"
        out[row["method"]] = (row["kind"], direction)
    return out


def removed_in(method: str, version: str) -> tuple[str, str] | None:
    """``(the revision that removed it, the last that had it)`` when ``method`` is not a
    method of ``version`` but of an earlier one (and of none since); else None. Such a method
    is reported as removed (``removed-method``), not as unknown.

    >>> removed_in("initialize", "2026-07-28")
    ('2026-07-28', '2025-11-25')
    >>> removed_in("no/such/method", "2026-07-28") is None
    True
    """
    version = normalise(version)
    if method in methods(version):
        return None
    had = [v for v in VERSIONS if method in methods(v)]
    if not had or VERSIONS.index(had[-1]) > VERSIONS.index(version):
        return None
    return VERSIONS[VERSIONS.index(had[-1]) + 1], had[-1]


def direction_of(method: str, version: str | None = None) -> str | None:
    """The direction a method travels in (``c2s``, ``s2c``, ``both``), or None if unknown.

    Without a version, any version that defines the method answers.
    """
    if version is not None:
        entry = methods(version).get(method)
        return entry[1] if entry else None
    for v in reversed(VERSIONS):
        entry = methods(v).get(method)
        if entry:
            return entry[1]
    return None


def error_codes(version: str) -> dict[int, str]:
    """The error codes a version defines: JSON-RPC's own plus MCP's."""
    return {**STANDARD_CODES, **_MCP_CODES[normalise(version)]}
