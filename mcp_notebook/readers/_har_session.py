"""Which session and endpoint a HAR entry belongs to, from its URL and its
``MCP-Protocol-Version`` header: the ``sessionId`` query parameter of the 2024-11-05
transport's endpoint URL, the endpoint (a URL without its query), and whether a request
is of the stateless revision (an exchange of its own)."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, urlsplit

__all__ = ["STATELESS_FROM", "_endpoint", "_session_from_url", "_stateless"]

_SESSION_PARAMS = ("sessionId", "session_id", "sessionid")


def _split(url: str) -> SplitResult | None:
    """The parts of a URL; None for one that cannot be parsed (``http://[::1``)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _session_from_url(url: str) -> str | None:
    parts = _split(url)
    query = parse_qs(parts.query) if parts is not None else {}
    for key in _SESSION_PARAMS:
        if query.get(key):
            return query[key][0]
    return None


def _endpoint(url: str) -> str:
    parts = _split(url)
    return url if parts is None else f"{parts.scheme}://{parts.netloc}{parts.path}"


#: the first revision without sessions: each request stands alone
STATELESS_FROM = "2026-07-28"


def _stateless(version: str | None) -> bool:
    """Whether an ``MCP-Protocol-Version`` header names the stateless revision or a later
    one (versions are dates: ``YYYY-MM-DD`` compares as text)."""
    v = (version or "").strip()
    return len(v) == 10 and v[4] == "-" and v[7] == "-" and v >= STATELESS_FROM

