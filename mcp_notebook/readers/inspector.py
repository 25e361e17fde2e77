"""MCP Inspector v2 protocol export (``inspector-protocol-<server>-<time>.json``).

The file is ``JSON.stringify(MessageEntry[], null, 2)`` with ``MessageEntry = {id,
timestamp, direction: "request" | "response" | "notification", origin?: "client" |
"server", message, response?, duration?, clientError?}``. ``direction`` is the message
*kind*, not the flow; ``origin`` (when present) says who sent ``message``. A request
and its response are pre-paired in one entry; both become frames.

- ``message``: a frame from ``origin`` (``c2s`` for client, ``s2c`` for server; no
  direction when the export has no ``origin``), at ``timestamp``,
  ``source`` = ``file#entry<N>`` (N counts the array from 0);
- ``response``: a frame the other way, at ``timestamp + duration`` when ``duration`` is
  given (else no time), ``source`` = ``file#entry<N>/response``;
- ``clientError``: a ``log`` row (the Inspector's own error, e.g. a timeout).

The JSON-RPC texts are the exported objects in compact form (every number and key
order kept; the original wire bytes are not in the export).

Order: records come in time order (stable: equal times keep the export's order), not
in the export's order: the export lists a request with its response in one entry, so
the progress notifications sent while the request ran come after its response there.
A response with no time (no ``duration``) stays right after its request. A response
timed by its duration goes last among the records of its millisecond: the stamps and
durations are whole milliseconds, so a notification stamped in the millisecond the
response arrived in may have come before it or after it; in the export's order it would
always come after (the response is part of its request's entry, earlier in the array),
a ``progress-after-response`` the export cannot show. The order taken is the one in
which the server kept the rules.

A broken export costs only what is broken: each entry is decoded on its own, an entry
that cannot be (a lone surrogate, not an object) is one ``invalid`` row, and a file cut
inside an entry keeps the entries before the cut.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ..engine.gcpause import gc_paused
from ._docscan import inspector_columns
from ._docspans import Columns, Doc, DocLabels, DocRecords, time_order
from ._jsondoc import compact, compacted, is_null, joined, nulls, salvage, text_of
from ._time import read_time, read_times
from .base import Record

__all__ = ["name", "description", "sniff", "read"]

name = "inspector"
description = "MCP Inspector v2 protocol export (JSON array of message entries)"


class _Entry(msgspec.Struct, gc=False):
    message: msgspec.Raw = msgspec.Raw()
    response: msgspec.Raw = msgspec.Raw()
    timestamp: msgspec.Raw = msgspec.Raw()
    direction: msgspec.Raw = msgspec.Raw()
    origin: msgspec.Raw = msgspec.Raw()
    duration: msgspec.Raw = msgspec.Raw()
    clientError: msgspec.Raw = msgspec.Raw()  # noqa: N815 - the export's member name


class _Usual(msgspec.Struct, gc=False):
    """An entry as the export usually holds it, decoded with the whole array at once:
    the members other than the two messages as the per-entry path reads them (any JSON
    value). Any entry that does not decode so sends the file to the per-entry path."""

    message: msgspec.Raw = msgspec.Raw()
    response: msgspec.Raw = msgspec.Raw()
    timestamp: Any = None
    direction: Any = None
    origin: Any = None
    duration: Any = None
    clientError: msgspec.Raw = msgspec.Raw()  # noqa: N815 - the export's member name


_decode = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode_entry = msgspec.json.Decoder(_Entry).decode
_decode_usual = msgspec.json.Decoder(list[_Usual]).decode


def sniff(head: str, filename: str) -> int:
    text = head.lstrip()
    if not text.startswith("["):
        return 0
    window = text[:8192]
    if all(k in window for k in ('"direction"', '"message"', '"timestamp"')) and (
            '"jsonrpc"' in window):
        return 90
    return 0


_FLOW = {"client": "c2s", "server": "s2c"}
_BACK = {"c2s": "s2c", "s2c": "c2s", None: None}


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the frames of an Inspector protocol export, in time order."""
    # the export is read here, not as the records are taken: with the cyclic collector
    # paused, as the table's part is (a million entries make millions of objects, none in
    # a cycle; at 1M entries its runs cost about 1 s)
    with gc_paused():
        return _read(path, session or path.name)


def _order(ts: np.ndarray, derived: np.ndarray) -> np.ndarray:
    """The records' order (slots with times ``ts``, NaN: none), as
    :func:`~._docspans.time_order`, the ``derived`` ones (responses timed by their
    duration) last among the records of their millisecond (see the module's doc)."""
    with np.errstate(over="ignore", invalid="ignore"):  # a time beyond 1e302 s: inf
        us = np.round(ts * 1e6)  # whole microseconds, exact in float64 (NaN stays NaN)
        d = derived & ~np.isnan(us)
        us[d] = np.floor(us[d] / 1000) * 1000 + 999
    return time_order(us)


def _responses(labels: list[str] | DocLabels) -> np.ndarray:
    """Which slots are responses (their labels, ``.../response``)."""
    if isinstance(labels, DocLabels):
        return labels.response
    return np.array([label.endswith("/response") for label in labels], dtype=bool)


def _in_order(records: list[Record]) -> list[Record]:
    """:func:`_order` of records (those of :func:`_entry`)."""
    ts = np.array([np.nan if r.ts is None else r.ts for r in records], dtype=np.float64)
    derived = _responses([r.source for r in records])
    return [records[k] for k in _order(ts, derived).tolist()]


def _read(path: Path, sess: str) -> Iterator[Record]:
    out: list[Record] = []
    tail: list[Record] = []  # what is said of the file as a whole, after its frames
    # the usual export: compacted and read in one C pass, no typed decoding
    fast = inspector_columns(path, sess, path.name)
    if fast is not None:
        return DocRecords(fast.blocks(path.name, order=_order(fast.ts, _responses(fast.labels))))
    # compacted first, as a whole: the messages' compact texts are then slices of it;
    # something unusual in some entry: each entry on its own (``data``)
    usual, data = compacted(path, _decode_usual)
    if usual is not None:
        cols = _columns(usual, data, sess, path.name)
        if cols is not None:
            del usual
            return DocRecords(cols.blocks(path.name, order=_order(cols.ts,
                                                                  _responses(cols.labels))))
        doc = _doc(usual, sess, path.name)
        del usual
        return DocRecords(doc.blocks(_order(doc.times(), _responses(doc.labels))))
    try:
        items: list[Any] = list(enumerate(_decode(data)))
    except (msgspec.DecodeError, RecursionError) as exc:
        items = salvage(data, (), what="an Inspector protocol export", unit="entry",
                        name=path.name, sess=sess, exc=exc, tail=tail)
    for i, item in items:
        out.extend(_entry(i, item, sess, f"{path.name}#entry{i}"))
    return iter(_in_order(out) + tail)


def _columns(usual: list[_Usual], flat: bytes, sess: str, name: str) -> Columns | None:
    """The records of an export whose every entry has a message and no client error (those
    of :func:`_doc`), made a column at a time from the compacted export ``flat`` (the
    messages and responses as places in one buffer, the usual time stamps read together).
    None for any other export."""
    n = len(usual)
    if not n:
        return None
    message, response, stamp, duration, origin, kind, error = zip(*[
        (e.message, e.response, e.timestamp, e.duration, e.origin, e.direction, e.clientError)
        for e in usual], strict=True)
    # compacted: a value is its own bytes, so only a 4-byte one may be ``null``
    if not nulls(error).all() or nulls(message).any():
        return None
    answered = ~nulls(response)
    entry = np.repeat(np.arange(n), 1 + answered)  # each record's entry
    first = np.concatenate(([True], entry[1:] != entry[:-1]))
    slots = np.flatnonzero(first)
    # the messages and responses in record order
    ordered: list[msgspec.Raw] = [None] * len(entry)  # type: ignore[list-item]
    for k, r in zip(slots.tolist(), message, strict=True):
        ordered[k] = r
    for k, r in zip((slots[answered] + 1).tolist(), (r for r, a in zip(
            response, answered.tolist(), strict=True) if a), strict=True):
        ordered[k] = r
    del message, response, error
    buf, starts, ends = joined(flat, ordered)
    del ordered
    stamps, problems = read_times(list(stamp), numbers=False)
    durations = np.array([float(d) if isinstance(d, (int, float)) and not isinstance(d, bool)
                          else np.nan for d in duration], dtype=np.float64)
    flow = np.array([_CODE.get(o, -1) if isinstance(o, str) else -1 for o in origin],
                    dtype=np.int8)
    ts = stamps[entry]
    ts[~first] = (stamps + durations / 1000)[entry[~first]]
    direction = flow[entry]
    direction[~first] = _BACK_CODE[flow[entry[~first]] + 1]
    extras: dict[int, dict[str, Any]] = {}
    kinds: dict[str, dict[str, Any]] = {}
    for i, (k, what) in enumerate(zip(slots.tolist(), kind, strict=True)):
        problem = problems.get(i)
        if isinstance(what, str) and what:
            if problem:
                extras[k] = {"entry_kind": what, "ts_error": problem}
            else:
                extra = kinds.get(what)
                if extra is None:
                    extra = kinds[what] = {"entry_kind": what}
                extras[k] = extra
        elif problem:
            extras[k] = {"ts_error": problem}
    for k, d in zip((slots[answered] + 1).tolist(), durations[answered].tolist(), strict=True):
        if d == d:
            extras[k] = {"duration_ms": d}
    labels = DocLabels.of_pairs(f"{name}#entry", answered)
    m = len(entry)
    return Columns(buf, starts, ends, ts, direction, np.zeros(m, dtype=np.int64), (sess,),
                   np.zeros(m, dtype=np.int64), ("stdio",), labels, extras)


_CODE = {"client": 0, "server": 1}
_BACK_CODE = np.array([-1, 1, 0], dtype=np.int8)  # by code + 1: none, c2s -> s2c, s2c -> c2s


def _doc(usual: list[_Usual], sess: str, name: str) -> Doc:
    """The records of the whole-array decoding (those of :func:`_entry`), the messages as
    their compact texts in one buffer."""
    doc = Doc(name)
    fmt = msgspec.json.format
    for i, e in enumerate(usual):
        src = f"{name}#entry{i}"
        ts, problem = read_time(e.timestamp, numbers=False)
        origin, kind = e.origin, e.direction
        direction = _FLOW.get(origin) if isinstance(origin, str) else None
        extra: dict[str, Any] = {"entry_kind": kind} if isinstance(kind, str) and kind else {}
        if problem:
            extra["ts_error"] = problem
        d = e.duration
        duration = float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) \
            else None
        if is_null(e.message):
            doc.record(Record(raw="", ts=ts, direction=direction, session=sess, source=src,
                              kind="invalid", reason="an export entry with no message",
                              extra=extra))
        else:
            doc.text(fmt(e.message, indent=-1), ts, direction, sess, "stdio", src, extra)
        if not is_null(e.response):
            rts = ts + duration / 1000 if ts is not None and duration is not None else None
            doc.text(fmt(e.response, indent=-1), rts, _BACK[direction], sess, "stdio",
                     f"{src}/response", {"duration_ms": duration} if duration is not None
                     else {})
        if not is_null(e.clientError):
            text = text_of(e.clientError) or compact(e.clientError)
            doc.record(Record(raw=text, ts=ts, session=sess, stream="log",
                              source=f"{src}/error", kind="log",
                              extra={"client_error": True}))
    return doc


def _entry(i: int, item: Any, sess: str, src: str) -> Iterator[Record]:
    try:
        e = _decode_entry(item)
    except (msgspec.DecodeError, RecursionError) as exc:
        text = bytes(item).decode("utf-8", "surrogateescape")
        yield Record(raw=text[:2000], session=sess, source=src, kind="invalid",
                     reason=(f"an export entry that is not an object: {exc}"
                             if text[:1] != "{" else f"an export entry that cannot be "
                             f"decoded: {exc}"))
        return
    ts, problem = read_time(_value(e.timestamp), numbers=False)
    direction = _FLOW.get(text_of(e.origin) or "")
    kind = text_of(e.direction)
    extra: dict[str, Any] = {"entry_kind": kind} if kind else {}
    if problem:
        extra["ts_error"] = problem
    yield from _records(e, ts, direction, extra, _number(e.duration), sess, src)

def _records(e: Any, ts: float | None, direction: str | None, extra: dict[str, Any],
             duration: float | None, sess: str, src: str) -> Iterator[Record]:
    """The records of one entry (its message, response and client error), its time,
    direction and duration read by the caller from either decoding."""
    if is_null(e.message):
        yield Record(raw="", ts=ts, direction=direction, session=sess, source=src,
                     kind="invalid", reason="an export entry with no message",
                     extra=extra)
    else:
        yield Record(raw=compact(e.message), ts=ts, direction=direction, session=sess,
                     source=src, extra=extra)
    if not is_null(e.response):
        rts = ts + duration / 1000 if ts is not None and duration is not None else None
        yield Record(raw=compact(e.response), ts=rts, direction=_BACK[direction],
                     session=sess, source=f"{src}/response",
                     extra={"duration_ms": duration} if duration is not None else {})
    if not is_null(e.clientError):
        text = text_of(e.clientError) or compact(e.clientError)
        yield Record(raw=text, ts=ts, session=sess, stream="log", source=f"{src}/error",
                     kind="log", extra={"client_error": True})


def _value(raw: msgspec.Raw) -> Any:
    if is_null(raw):
        return None
    try:
        return msgspec.json.decode(bytes(raw))
    except msgspec.DecodeError:
        return bytes(raw).decode("utf-8", "surrogateescape")


def _number(raw: msgspec.Raw) -> float | None:
    if is_null(raw):
        return None
    try:
        value = msgspec.json.decode(bytes(raw))
    except msgspec.DecodeError:
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None
