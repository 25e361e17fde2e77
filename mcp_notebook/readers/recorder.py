"""mcp-recorder cassettes (devhelmhq/mcp-recorder record/replay files).

``{version, metadata: {recorded_at, server_url, protocol_version, server_info},
interactions: [{type: "jsonrpc_request" | "notification" | "lifecycle", request,
response, response_is_sse, response_status, latency_ms, http_method, http_path}]}``.

A request and its response are pre-paired in one interaction and no message carries
its own time: frames have no ``ts``; ``extra`` keeps ``status`` (the HTTP status, e.g.
202 for a notification), ``latency_ms`` and ``sse`` (the reply came as an SSE stream).
``request`` is a client-to-server frame (``file#interaction<N>``), ``response`` a
server-to-client one (``file#interaction<N>/response``); a ``lifecycle`` interaction
(a GET stream or a DELETE) is a ``log`` row. The JSON-RPC texts are the stored objects
in compact form, every number and key order kept.

Order: recording order (a request, then its response); the cassette has no times.

A cassette the JSON decoder refuses is read interaction by interaction: a bad one is
one ``invalid`` row, and a file cut inside one keeps those before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ._docscan import recorder_columns
from ._docspans import Columns, Doc, DocLabels, DocRecords
from ._jsondoc import compact, compacted, is_null, joined, nulls, places, salvage, text_of
from ._spans import Spans
from .base import Record

__all__ = ["name", "description", "sniff", "read"]

name = "recorder"
description = "mcp-recorder cassette (JSON with pre-paired interactions)"


class _Interaction(msgspec.Struct, gc=False):
    type: msgspec.Raw = msgspec.Raw()
    request: msgspec.Raw = msgspec.Raw()
    response: msgspec.Raw = msgspec.Raw()
    response_is_sse: msgspec.Raw = msgspec.Raw()
    response_status: msgspec.Raw = msgspec.Raw()
    latency_ms: msgspec.Raw = msgspec.Raw()
    http_method: msgspec.Raw = msgspec.Raw()
    http_path: msgspec.Raw = msgspec.Raw()


class _Cassette(msgspec.Struct, gc=False):
    interactions: list[msgspec.Raw]
    metadata: msgspec.Raw = msgspec.Raw()
    version: msgspec.Raw = msgspec.Raw()


class _UsualInteraction(msgspec.Struct, gc=False):
    """An interaction as a cassette usually holds it, decoded with the whole file at
    once: the members other than the two messages as the per-interaction path reads
    them (any JSON value). Anything that does not decode so sends the file to the
    per-interaction path."""

    type: Any = None
    request: msgspec.Raw = msgspec.Raw()
    response: msgspec.Raw = msgspec.Raw()
    response_is_sse: Any = None
    response_status: Any = None
    latency_ms: Any = None
    http_method: Any = None
    http_path: Any = None


class _UsualCassette(msgspec.Struct, gc=False):
    interactions: list[_UsualInteraction]
    metadata: msgspec.Raw = msgspec.Raw()
    version: msgspec.Raw = msgspec.Raw()


_decode = msgspec.json.Decoder(_Cassette).decode
_decode_one = msgspec.json.Decoder(_Interaction).decode
_decode_usual = msgspec.json.Decoder(_UsualCassette).decode


def sniff(head: str, filename: str) -> int:
    text = head.lstrip()
    if text.startswith("{") and '"interactions"' in head and (
            '"recorded_at"' in head or '"response_status"' in head):
        return 90
    return 0


def _value(raw: msgspec.Raw) -> Any:
    try:
        return msgspec.json.decode(bytes(raw)) if not is_null(raw) else None
    except msgspec.DecodeError:
        return None


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the frames of a cassette, in recording order."""
    return DocRecords(_blocks(path, session or path.name))


def _blocks(path: Path, sess: str) -> Iterator[Record | Spans]:
    # the usual cassette: compacted and read in one C pass, no typed decoding
    fast = recorder_columns(path, sess, path.name)
    if fast is not None:
        yield from fast.blocks(path.name)
        return
    # compacted first, as a whole: the messages' compact texts are then slices of it;
    # something unusual somewhere: each interaction on its own (``data``)
    cassette, data = compacted(path, _decode_usual)
    if cassette is not None:
        usual = cassette.interactions
        del cassette
        if not nulls([it.request for it in usual]).any():
            yield from _columns(usual, data, sess, path.name).blocks(path.name)
        else:
            del data
            yield from _doc(usual, sess, path.name).blocks()
    else:
        yield from _general(data, sess, path.name)


def _general(data: bytes, sess: str, name: str) -> Iterator[Record]:
    """The records of a cassette the whole-file decoding refused, interaction by
    interaction."""
    tail: list[Record] = []
    try:
        items: list[tuple[int, Any]] = list(enumerate(_decode(data).interactions))
    except (msgspec.DecodeError, RecursionError) as exc:
        items = salvage(data, ("interactions",), what="an mcp-recorder cassette",
                        unit="interaction", name=name, sess=sess, exc=exc, tail=tail,
                        need_object=False)
    for i, item in items:
        src = f"{name}#interaction{i}"
        try:
            it = _decode_one(item)
        except (msgspec.DecodeError, RecursionError) as exc:
            text = bytes(item).decode("utf-8", "surrogateescape")
            yield Record(raw=text[:2000], session=sess, source=src, kind="invalid",
                         reason="an interaction that is not an object" if text[:1] != "{"
                         else f"an interaction that cannot be decoded: {exc}")
            continue
        extra: dict[str, Any] = {}
        for key, raw in (("status", it.response_status), ("latency_ms", it.latency_ms),
                         ("sse", it.response_is_sse)):
            value = _value(raw)
            if value is not None:
                extra[key] = value
        kind = text_of(it.type)
        yield from _records(it, extra, kind, text_of(it.http_method),
                            text_of(it.http_path), sess, src)
    yield from tail



def _extra(it: _UsualInteraction) -> dict[str, Any]:
    """What an interaction says beside its messages: the response's status, the latency,
    whether the response was an event stream (each where the cassette has it)."""
    extra: dict[str, Any] = {}
    if it.response_status is not None:
        extra["status"] = it.response_status
    if it.latency_ms is not None:
        extra["latency_ms"] = it.latency_ms
    if it.response_is_sse is not None:
        extra["sse"] = it.response_is_sse
    return extra


def _columns(interactions: list[_UsualInteraction], flat: bytes, sess: str,
             name: str) -> Columns:
    """The records of a cassette whose every interaction has a request (those of
    :func:`_doc`), made a column at a time: each interaction's request, then its response
    where it has one; the compacted messages as places in one buffer (the compacted
    cassette ``flat``, see :func:`~._jsondoc.joined`)."""
    n = len(interactions)
    requests = list(map(_REQUEST, interactions))
    responses = list(map(_RESPONSE, interactions))
    answered = ~nulls(responses)
    first = np.zeros(n, dtype=np.int64)  # each interaction's request's record
    np.cumsum(1 + answered[:-1], out=first[1:])
    second = first[answered] + 1  # the responses' records
    m = n + len(second)
    replies = list(compress(responses, answered.tolist()))
    del responses
    at, sizes = places(flat, requests), places(flat, replies)
    if at is not None and sizes is not None:
        buf = flat
        starts, lengths = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        starts[first], lengths[first] = at
        starts[second], lengths[second] = sizes
        ends = starts + lengths
    else:  # without the C extension: the texts joined in record order
        ordered: list[msgspec.Raw] = [None] * m  # type: ignore[list-item]
        for k, r in zip(first.tolist(), requests, strict=True):
            ordered[k] = r
        for k, r in zip(second.tolist(), replies, strict=True):
            ordered[k] = r
        buf, starts, ends = joined(flat, ordered)
        del ordered
    del requests, replies
    status, latency, sse = (list(map(get, interactions)) for get in _EXTRA)
    if None in status or None in latency or None in sse:
        given = [_extra(it) for it in interactions]
    else:  # every member there (the usual): the dicts of _extra, made at once
        given = [{"status": a, "latency_ms": b, "sse": c}
                 for a, b, c in zip(status, latency, sse, strict=True)]
    extras = {k: e for k, e in zip(first.tolist(), given, strict=True) if e}
    extras.update((k, e) for k, e in zip(second.tolist(), compress(given, answered.tolist()),
                                         strict=True) if e)
    stream = np.zeros(m, dtype=np.int64)  # 1: the response came as an event stream
    stream[second] = np.fromiter(map(bool, compress(sse, answered.tolist())), dtype=bool,
                                 count=len(second))
    labels = DocLabels.of_pairs(f"{name}#interaction", answered)
    direction = np.ones(m, dtype=np.int8)
    direction[first] = 0
    return Columns(buf, starts, ends, np.full(m, np.nan), direction,
                   np.zeros(m, dtype=np.int64), (sess,), stream, ("http", "sse"),
                   labels, extras)


_REQUEST, _RESPONSE = attrgetter("request"), attrgetter("response")
_EXTRA = (attrgetter("response_status"), attrgetter("latency_ms"),
          attrgetter("response_is_sse"))


def _doc(interactions: list[_UsualInteraction], sess: str, name: str) -> Doc:
    """The records of the whole-file decoding (those of the per-interaction path), the
    messages as their compact texts in one buffer."""
    doc = Doc(name)
    fmt = msgspec.json.format
    add = doc.text
    for i, it in enumerate(interactions):
        src = f"{name}#interaction{i}"
        extra = _extra(it)
        if is_null(it.request):
            kind = it.type if isinstance(it.type, str) else None
            method = it.http_method if isinstance(it.http_method, str) else None
            where = it.http_path if isinstance(it.http_path, str) else None
            doc.record(Record(raw=f"{method or '?'} {where or ''} -> "
                              f"{extra.get('status', '?')}".strip(), session=sess,
                              stream="http", source=src, kind="log",
                              extra={**extra, "interaction": kind}))
            continue
        add(fmt(it.request, indent=-1), None, "c2s", sess, "http", src, extra)
        if not is_null(it.response):
            add(fmt(it.response, indent=-1), None, "s2c", sess,
                "sse" if extra.get("sse") else "http", f"{src}/response", extra)
    return doc


def _records(it: Any, extra: dict[str, Any], kind: str | None, method: str | None,
             where: str | None, sess: str, src: str) -> Iterator[Record]:
    """The records of one interaction, its members read by the caller from either
    decoding: its request and response, or a log line where it has no request."""
    if is_null(it.request):
        yield Record(raw=f"{method or '?'} {where or ''} -> {extra.get('status', '?')}"
                     .strip(), session=sess, stream="http", source=src, kind="log",
                     extra={**extra, "interaction": kind})
        return
    yield Record(raw=compact(it.request), direction="c2s", session=sess, stream="http",
                 source=src, extra=dict(extra))
    if not is_null(it.response):
        yield Record(raw=compact(it.response), direction="s2c", session=sess,
                     stream="sse" if extra.get("sse") else "http",
                     source=f"{src}/response", extra=dict(extra))
