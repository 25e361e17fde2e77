"""The typed structs the HAR column path decodes a document into (``_har_columns``): its
bodies and header lists :class:`msgspec.Raw` (places in the file's bytes), the members
that change a record absent or null, so msgspec itself refuses what the path does not
take."""

from __future__ import annotations

from typing import Any

import msgspec

from ._har_entry import _Header as _Header  # the typed decoding's header

__all__ = ["NULL", "EMPTY"]

_NULL = NULL = msgspec.Raw(b"null")
_EMPTY = EMPTY = msgspec.Raw(b'""')


class _Body(msgspec.Struct, gc=False):
    """A ``postData`` or ``content``: the members the reader reads that change a record
    (an encoding, a truncation, stamped events) must be absent or null here."""

    text: msgspec.Raw = _NULL
    mimeType: Any = None  # noqa: N815 - HAR's member name
    encoding: None = None
    alt_encoding: None = msgspec.field(default=None, name="_encoding")
    #: stamped events: the entry is read entry by entry (``others``)
    sse_events: msgspec.Raw = msgspec.field(default=_NULL, name="_sseEvents")
    truncated: None = msgspec.field(default=None, name="_truncated")


class _Request(msgspec.Struct, gc=False):
    method: str
    url: str
    postData: _Body | None = None  # noqa: N815 - HAR's member name
    headers: msgspec.Raw = _NULL


class _Response(msgspec.Struct, gc=False):
    status: int | None = None
    headers: msgspec.Raw = _NULL
    content: _Body | None = None


class _Timings(msgspec.Struct, gc=False):
    blocked: float | None = None
    dns: float | None = None
    connect: float | None = None
    send: float | None = None
    wait: float | None = None
    receive: float | None = None


class _Entry(msgspec.Struct, gc=False):
    startedDateTime: str  # noqa: N815 - HAR's member name
    request: _Request
    response: _Response
    time: float | None = None
    timings: _Timings | None = None
    proxy_error: None = msgspec.field(default=None, name="_proxyError")
    incomplete: bool | None = msgspec.field(default=None, name="_incomplete")


class _Log(msgspec.Struct, gc=False):
    entries: list[_Entry]


class _Doc(msgspec.Struct, gc=False):
    log: _Log


class _RawLog(msgspec.Struct, gc=False):
    entries: list[msgspec.Raw]


class _RawDoc(msgspec.Struct, gc=False):
    log: _RawLog


_decode_doc = msgspec.json.Decoder(_Doc).decode
_decode_raws = msgspec.json.Decoder(_RawDoc).decode
_decode_headers = msgspec.json.Decoder(list[_Header] | None).decode
_NO_TIMINGS = _Timings()
_SSE = "text/event-stream"
