"""What OTLP spans carry of a capture beyond its boundary view (OpenTelemetry MCP
conventions, client span): the request's ``jsonrpc`` member (``jsonrpc.protocol.version``)
and ``_meta.traceparent`` (the span's parent), read from its message; and the network under
it: ``network.protocol.name`` / ``network.protocol.version`` and ``server.address`` /
``server.port``.

A HAR capture knows them: each entry's ``request.url`` names the server (the recording
proxy writes the upstream URL, the server behind it) and its ``httpVersion`` the HTTP
version. The loaded trace keeps neither, so the HAR file is read again here, a frame's
entry found by its ``source`` (``file#entryN``, ``file#entryN/eventM``); only those two
members of each entry are decoded. A stdio or tap capture knows none of them, nor does a
HAR file that is gone, cannot be read, or lacks the member: the attribute is left out.

>>> http_version("HTTP/1.1"), http_version("h2"), http_version("HTTP/2.0"), http_version("")
('1.1', '2', '2', None)
>>> server_of("https://example.com/mcp"), server_of("http://127.0.0.1:8080/mcp")
(('example.com', 443), ('127.0.0.1', 8080))
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from .base import open_bytes

__all__ = ["HttpFacts", "http_version", "server_of", "envelopes", "network_attributes"]

_ENTRY = re.compile(r"^(?P<file>.*)#entry(?P<n>\d+)(?:/.*)?$")
_VERSION = re.compile(r"^(?:https?/)?(\d+)(?:\.(\d+))?$|^h(\d)c?$", re.IGNORECASE)
_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_JSONRPC_2 = re.compile(r'"jsonrpc"\s*:\s*"2\.0"')
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
#: (protocol version, server address, server port) of a request; None where not known
Facts = tuple[str | None, str | None, int | None]


class _Request(msgspec.Struct):
    url: Any = None
    httpVersion: Any = None  # noqa: N815 - HAR's member name


class _Response(msgspec.Struct):
    httpVersion: Any = None  # noqa: N815


class _Entry(msgspec.Struct):
    request: _Request | None = None
    response: _Response | None = None


class _Log(msgspec.Struct):
    entries: list[_Entry] = msgspec.field(default_factory=list)


class _Har(msgspec.Struct):
    log: _Log


def http_version(text: Any) -> str | None:
    """``network.protocol.version`` of a HAR ``httpVersion``: ``1.0``, ``1.1``, ``2``,
    ``3`` (the conventions' examples); None for what is not an HTTP version."""
    m = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if m is None:
        return None
    if m.group(3):
        return m.group(3)
    major, minor = m.group(1), m.group(2)
    return major if int(major) >= 2 and (minor in (None, "0")) else f"{major}.{minor or 0}"


def server_of(url: Any) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a request URL (the port the scheme's
    default where the URL names none); None where the URL does not say."""
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
        host = parts.hostname if parts else None
        port = parts.port if parts else None
    except ValueError:  # a port that is not a number
        return None, None
    if not host or parts is None:
        return None, None
    return host, port if port is not None else _PORTS.get(parts.scheme.lower())


class HttpFacts:
    """The network facts of frames by their ``source``: each HAR file of ``paths`` read
    (its entries' URLs and HTTP versions only) when a frame of it is first asked about."""

    def __init__(self, paths: list[str]) -> None:
        self._paths = {Path(p).name: Path(p) for p in paths}
        self._files: dict[str, list[Facts] | None] = {}

    def of(self, source: Any) -> Facts | None:
        """The facts of the HAR entry a frame's ``source`` names; None when it names no
        entry of a HAR file that can be read."""
        m = _ENTRY.match(source) if isinstance(source, str) else None
        if m is None:
            return None
        entries = self._entries(m.group("file"))
        n = int(m.group("n"))
        return entries[n] if entries is not None and n < len(entries) else None

    def _entries(self, name: str) -> list[Facts] | None:
        if name not in self._files:
            self._files[name] = _read(self._paths.get(name))
        return self._files[name]


def _read(path: Path | None) -> list[Facts] | None:
    if path is None:
        return None
    try:
        with open_bytes(path) as f:
            har = msgspec.json.decode(f.read(), type=_Har)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # the loader said what is wrong with it; here it knows nothing
    out: list[Facts] = []
    for e in har.log.entries:
        req, resp = e.request, e.response
        version = http_version(resp.httpVersion if resp else None) or http_version(
            req.httpVersion if req else None)
        out.append((version, *server_of(req.url if req else None)))
    return out


def envelopes(trace: Any, seqs: list[int]
               ) -> tuple[dict[int, tuple[str, str]], dict[int, str]]:
    """Of the requests ``seqs``: seq -> (trace id, parent span id) of those that carry
    ``_meta.traceparent``, and seq -> the ``jsonrpc`` member of those whose member is a
    string other than ``"2.0"`` (the conventions' ``jsonrpc.protocol.version``: written
    when it is not 2.0). Only the messages that may have either are decoded."""
    texts = trace.texts(seqs)
    odd = [seq for seq, text in zip(seqs, texts, strict=True) if isinstance(text, str) and (
        "traceparent" in text or text.count('"jsonrpc"') != 1 or not _JSONRPC_2.search(text))]
    parents: dict[int, tuple[str, str]] = {}
    versions: dict[int, str] = {}
    decoded = (m for lo in range(0, len(odd), 2048) for m in trace.messages(odd[lo:lo + 2048]))
    for seq, msg in zip(odd, decoded, strict=True):
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get("jsonrpc"), str) and msg["jsonrpc"] != "2.0":
            versions[seq] = msg["jsonrpc"]
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        tp = meta.get("traceparent") if isinstance(meta, dict) else None
        m = _TRACEPARENT.match(tp) if isinstance(tp, str) else None
        if m and set(m.group(1)) != {"0"} and set(m.group(2)) != {"0"}:
            parents[seq] = (m.group(1), m.group(2))
    return parents, versions


def network_attributes(known: Facts | None) -> list[dict[str, Any]]:
    """The OTLP/JSON attributes ``network.protocol.*`` and ``server.*`` of a request's
    facts (:meth:`HttpFacts.of`), those the capture knows."""
    if known is None:
        return []
    version, address, port = known
    out = [_string("network.protocol.name", "http")]
    if version is not None:
        out.append(_string("network.protocol.version", version))
    if address is not None:
        out.append(_string("server.address", address))
        if port is not None:
            out.append(_int("server.port", port))
    return out


def _string(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _int(key: str, value: int) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)}}
