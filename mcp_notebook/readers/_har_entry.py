"""The facts of HAR entries the HAR reader needs, from either of two decodings.

The usual HAR is decoded into typed structs (:class:`_Doc`) that hold only the members
the records use: every other member (cookies, caches, query lists, sizes, ...) is
skipped by the decoder, not made into dicts. A document that does not fit those types
anywhere (an entry that is not an object, a header list that is not a list, a value the
decoder refuses) is decoded as generic JSON instead, and :class:`Entry` reads the same
facts from the dicts, as it always did: both give the same entries (checked on every
bundled HAR by ``tests/readers/test_typed_docs.py``).
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec

__all__ = ["Entry", "UsualEntry", "decode_usual", "headers_of", "MCP_HEADERS"]

#: the headers the records need (names in lower case)
MCP_HEADERS = ("mcp-method", "mcp-name", "mcp-protocol-version")
#: www-authenticate: a 403 that carries it is an authorization challenge (``_har_reader``)
_WANTED = frozenset(("content-type", "mcp-session-id", "www-authenticate", *MCP_HEADERS))
_TIMINGS_FIRST = ("blocked", "dns", "connect", "send", "wait")


class _Header(msgspec.Struct, gc=False):
    name: Any = ""
    value: Any = None


class _Body(msgspec.Struct, gc=False):
    text: Any = None
    encoding: Any = None
    alt_encoding: Any = msgspec.field(default=None, name="_encoding")
    mimeType: Any = None  # noqa: N815 - HAR's member name
    sse_events: Any = msgspec.field(default=None, name="_sseEvents")
    truncated: Any = msgspec.field(default=None, name="_truncated")


class _Request(msgspec.Struct, gc=False):
    method: Any = ""
    url: Any = ""
    headers: list[_Header] | None = None
    postData: _Body | None = None  # noqa: N815 - HAR's member name


class _Response(msgspec.Struct, gc=False):
    status: Any = None
    headers: list[_Header] | None = None
    content: _Body | None = None


class _Timings(msgspec.Struct, gc=False):
    blocked: Any = None
    dns: Any = None
    connect: Any = None
    send: Any = None
    wait: Any = None
    receive: Any = None


class UsualEntry(msgspec.Struct, gc=False):
    startedDateTime: Any = None  # noqa: N815 - HAR's member name
    time: Any = None
    request: _Request | None = None
    response: _Response | None = None
    timings: _Timings | None = None
    proxy_error: Any = msgspec.field(default=None, name="_proxyError")
    aborted: Any = msgspec.field(default=None, name="_aborted")
    incomplete: Any = msgspec.field(default=None, name="_incomplete")


class _Log(msgspec.Struct, gc=False):
    entries: list[UsualEntry]


class _Doc(msgspec.Struct, gc=False):
    log: _Log


_decode_doc = msgspec.json.Decoder(_Doc).decode


def decode_usual(data: bytes) -> list[UsualEntry] | None:
    """The entries of a usual HAR (the file's bytes), typed; None when the document is
    not one (then the generic decoding reads it, and says what is wrong)."""
    try:
        return _decode_doc(data).log.entries
    except (msgspec.DecodeError, RecursionError):
        return None


def headers_of(headers: Any) -> dict[str, str | None]:
    """The headers of :data:`_WANTED` in a HAR ``headers`` list (dicts or typed): lower-case
    name -> the value of its first occurrence (None where that value is not a string)."""
    found: dict[str, str | None] = {}
    if not isinstance(headers, list):
        return found
    for h in headers:
        if isinstance(h, _Header):
            name, value = h.name, h.value
        elif isinstance(h, dict):
            name, value = h.get("name", ""), h.get("value")
        else:
            continue
        key = str(name).lower()
        if key in _WANTED and key not in found:
            found[key] = value if isinstance(value, str) else None
    return found


def _text(text: Any, encoding: Any, alt: Any) -> str | None:
    """The text of a HAR ``postData`` / ``content`` (base64 decoded), or None."""
    if not isinstance(text, str):
        return None
    if encoding == "base64" or alt == "base64":
        try:
            return base64.b64decode(text).decode("utf-8", "surrogateescape")
        except ValueError:
            return text
    return text


def _ms(value: Any) -> float:
    return float(value) / 1000 if isinstance(value, (int, float)) and value > 0 else 0.0


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Entry:
    """The facts of one HAR entry the records need."""

    __slots__ = ("index", "method", "url", "req_headers", "resp_headers", "has_post",
                 "body", "post_truncated", "reply", "content_truncated", "sse_events",
                 "status", "sse", "started", "time", "timings", "proxy_error", "aborted",
                 "incomplete", "mime")

    def __init__(self, index: int, e: dict[str, Any] | UsualEntry) -> None:
        self.index = index
        self.mime = ""
        if isinstance(e, UsualEntry):
            self._typed(e)
        else:
            self._generic(e)
        mime = self.resp_headers.get("content-type") or self.mime
        self.sse = "text/event-stream" in mime.lower()

    def _generic(self, e: dict[str, Any]) -> None:
        req, resp = _obj(e.get("request")), _obj(e.get("response"))
        self.method = str(req.get("method", "")).upper()
        self.url = str(req.get("url", ""))
        self.req_headers = headers_of(req.get("headers"))
        self.resp_headers = headers_of(resp.get("headers"))
        post = req.get("postData") if isinstance(req.get("postData"), dict) else None
        self.has_post = post is not None
        self.body = None if post is None else _text(post.get("text"), post.get("encoding"),
                                                    post.get("_encoding"))
        self.post_truncated = None if post is None else post.get("_truncated")
        content = _obj(resp.get("content"))
        self.reply = _text(content.get("text"), content.get("encoding"),
                           content.get("_encoding"))
        self.content_truncated = content.get("_truncated")
        self.sse_events = content.get("_sseEvents")
        status = resp.get("status")
        self.status = status if isinstance(status, int) else None
        self.mime = str(content.get("mimeType") or "")
        self.started, self.time = e.get("startedDateTime"), e.get("time")
        t = _obj(e.get("timings"))
        self.timings = (*(t.get(k) for k in _TIMINGS_FIRST), t.get("receive"))
        self.proxy_error, self.aborted = e.get("_proxyError"), e.get("_aborted")
        self.incomplete = e.get("_incomplete")

    def _typed(self, e: UsualEntry) -> None:
        req, resp = e.request, e.response
        if req is None:
            self.method, self.url, self.req_headers, post = "", "", {}, None
        else:
            self.method = str(req.method).upper()
            self.url = str(req.url)
            self.req_headers = headers_of(req.headers)
            post = req.postData
        self.has_post = post is not None
        self.body = None if post is None else _text(post.text, post.encoding,
                                                    post.alt_encoding)
        self.post_truncated = None if post is None else post.truncated
        content = None if resp is None else resp.content
        if content is None:
            self.reply = self.content_truncated = self.sse_events = None
        else:
            self.reply = _text(content.text, content.encoding, content.alt_encoding)
            self.content_truncated, self.sse_events = content.truncated, content.sse_events
            self.mime = str(content.mimeType or "")
        if resp is None:
            self.resp_headers, self.status = {}, None
        else:
            self.resp_headers = headers_of(resp.headers)
            status = resp.status
            self.status = status if isinstance(status, int) else None
        self.started, self.time = e.startedDateTime, e.time
        t = e.timings
        self.timings = (None,) * 6 if t is None else (
            t.blocked, t.dns, t.connect, t.send, t.wait, t.receive)
        self.proxy_error, self.aborted, self.incomplete = e.proxy_error, e.aborted, \
            e.incomplete

    def span(self, start: float | None) -> tuple[float | None, float | None]:
        """``(first byte, end)`` of the entry, from its start and timings."""
        if start is None:
            return None, None
        first = sum((_ms(v) for v in self.timings[:5]), 0.0)
        total = _ms(self.time) or first + _ms(self.timings[5])
        return start + first, start + total
