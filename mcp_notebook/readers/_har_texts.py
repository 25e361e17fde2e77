"""The texts of the HAR column path (``_har_columns``): JSON string literals unescaped
into one buffer as UTF-8 (the C extension's ``json_texts``, else msgspec ``RUN`` at a
time), SSE bodies split into their events (``sse_events``, else numpy)."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

__all__ = ["RUN", "distinct"]

#: how many bodies are decoded into strings at once
RUN = 1 << 14
_decode_texts = msgspec.json.Decoder(list[str]).decode


class _HandOver(Exception):
    """The document is not one this path reads: the entry-by-entry path reads it."""


def _texts(raws: list[msgspec.Raw], out: bytearray) -> np.ndarray:
    """Append the texts of JSON string literals to ``out`` (UTF-8); where each ends in
    it. By the C extension (no string made), else decoded ``RUN`` at a time by msgspec."""
    fn = _native_fn("json_texts")
    if fn is not None:
        got = fn(raws, out)
        if isinstance(got, int):
            raise _HandOver  # not Unicode text: the reference path says what it is
        return np.frombuffer(got, dtype=np.int64)
    ends = [np.zeros(0, dtype=np.int64)]
    for c in range(0, len(raws), RUN):
        texts = _decode_texts(b"[" + b",".join(raws[c:c + RUN]) + b"]")
        pieces = [t.encode() for t in texts]
        del texts
        ends.append(len(out) + np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64,
                                                     count=len(pieces))))
        out += b"".join(pieces)
    return np.concatenate(ends)


def _native_fn(name: str) -> Any:
    """The C extension's function ``name``, or None (not built, or built without it)."""
    from ..engine.native import native

    return getattr(native, name, None)


def _opens(a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which texts ``a[starts:ends]`` are not empty and open with ``{`` or ``[``."""
    first = a[np.minimum(starts, max(len(a) - 1, 0))] if len(a) else np.zeros(len(starts),
                                                                               np.uint8)
    return (ends > starts) & ((first == 123) | (first == 91))


#: the texts :func:`distinct` compares a column at a time: at most this many bytes,
#: and as many rounds (each the texts equal to the first left)
_SHORT = 32
_ROUNDS = 4


def distinct(a: np.ndarray, starts: np.ndarray, ends: np.ndarray
             ) -> tuple[np.ndarray, list[bytes]]:
    """The distinct texts ``a[starts[k]:ends[k]]`` in the order they first come, and the
    number of each text's among them. The texts equal to the first one left (a short
    one) are found together, for a few rounds (most short replies are the same few:
    ``Accepted``, nothing); the rest one by one."""
    n = len(starts)
    code = np.full(n, -1, dtype=np.int64)
    out: list[bytes] = []
    lens = ends - starts
    rest = np.arange(n, dtype=np.int64)
    for _ in range(_ROUNDS):
        if not len(rest):
            break
        k = int(rest[0])
        size = int(lens[k])
        if size > _SHORT:
            break
        text = a[int(starts[k]):int(ends[k])]
        same = rest[lens[rest] == size]
        if size:
            same = same[(a[starts[same, None] + np.arange(size)] == text).all(axis=1)]
        code[same] = len(out)
        out.append(text.tobytes())
        rest = rest[code[rest] < 0]
    if len(rest):
        seen = {t: c for c, t in enumerate(out)}
        for k, x, y in zip(rest.tolist(), starts[rest].tolist(), ends[rest].tolist(),
                           strict=True):
            raw = a[x:y].tobytes()
            c = seen.get(raw)
            if c is None:
                c = seen[raw] = len(out)
                out.append(raw)
            code[k] = c
    return code, out


_DATA = np.frombuffer(b"data:", dtype=np.uint8)
_EVENT = np.frombuffer(b"event:", dtype=np.uint8)
_MESSAGE = np.frombuffer(b"message", dtype=np.uint8)


def _events(buf: bytearray, starts: np.ndarray, ends: np.ndarray, get: np.ndarray
            ) -> tuple[np.ndarray, ...]:
    """The events with data of SSE bodies (``buf[starts[k]:ends[k]]``, not empty) made
    only of usual events, as :func:`~._sse.simple_spans` reads them and the reader keeps
    them: ``(body, q, last, start, end, type, types)`` of each kept event (its body, its
    place among the body's events, whether it is the body's last, its data's bounds in
    ``buf``, its type as a code: 0 none or ``message``, else ``types[code]``). A body of
    anything else (or an ``endpoint`` event but in a GET stream: ``get``, by body)
    raises :class:`_HandOver`; an ``endpoint`` event is kept whatever its data."""
    fn = _native_fn("sse_events")
    if fn is not None:
        return _c_events(fn, buf, starts, ends, get)
    base = int(starts[0])
    if (starts[1:] != ends[:-1]).any():  # never: the bodies are one run without the C pass
        raise _HandOver
    sbuf = memoryview(buf)[base:]
    ends = ends - base
    a = np.frombuffer(sbuf, dtype=np.uint8)
    n = len(ends)
    starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1]))
    size = ends - starts
    if (size < 2).any() or (a[ends - 1] != 10).any() or (a[ends - 2] != 10).any() \
            or buf.find(b"\r", base) >= 0:
        raise _HandOver
    nl = np.flatnonzero(a == 10)
    ls = np.concatenate((np.zeros(1, dtype=np.int64), nl[:-1] + 1))
    length = nl - ls
    width = np.arange(7)
    head = a[np.minimum(ls[:, None] + width, len(a) - 1)]
    head[width[None, :] >= length[:, None]] = 0
    is_d = (head[:, :5] == _DATA).all(axis=1)
    is_e = (head[:, :6] == _EVENT).all(axis=1)
    is_b = length == 0
    if not (is_d | is_e | is_b).all():
        raise _HandOver
    body = np.searchsorted(starts, ls, side="right") - 1
    first = np.ones(len(ls), dtype=bool)
    first[1:] = body[1:] != body[:-1]
    prev_d = np.concatenate(([False], is_d[:-1])) & ~first
    prev_e = np.concatenate(([False], is_e[:-1])) & ~first
    prev_b = np.concatenate(([False], is_b[:-1])) & ~first
    ok = np.where(is_b, prev_d, True) & np.where(is_d, first | prev_e | prev_b, True) \
        & np.where(is_e, first | prev_b, True)
    if not ok.all():
        raise _HandOver
    d = np.flatnonzero(is_d)
    d_body = body[d]
    new = np.ones(len(d), dtype=bool)
    new[1:] = d_body[1:] != d_body[:-1]
    if int(new.sum()) != n:
        raise _HandOver  # a body with no event
    group = np.flatnonzero(new)
    q = np.arange(len(d)) - np.repeat(group, np.diff(np.append(group, len(d))))
    last = np.append(new[1:], True)
    x = ls[d] + np.where(head[d, 5] == 32, 6, 5)
    y = nl[d]
    # types: the ``event:`` line before a data line
    e_type = np.zeros(len(d), dtype=np.int64)
    types = [b""]
    typed = np.flatnonzero(prev_e[d])
    if len(typed):
        e = d[typed] - 1
        t0 = ls[e] + np.where(head[e, 6] == 32, 7, 6)
        tl = nl[e] - t0
        usual = tl == 0
        seven = np.flatnonzero(tl == 7)
        if len(seven):
            usual[seven] = (a[t0[seven, None] + width] == _MESSAGE).all(axis=1)
        codes: dict[bytes, int] = {}
        for k in np.flatnonzero(~usual).tolist():
            t = bytes(sbuf[int(t0[k]):int(nl[e[k]])])
            if b":" in t or (t == b"endpoint" and not get[d_body[typed[k]]]):
                raise _HandOver
            code = codes.get(t)
            if code is None:
                code = codes[t] = len(types)
                types.append(t)
            e_type[typed[k]] = code
    # the events kept: data neither empty nor blank (a priming or keep-alive event)
    point = np.isin(e_type, [types.index(b"endpoint")] if b"endpoint" in types else [])
    keep = (y > x) & ~point
    odd = np.flatnonzero(keep & ~np.isin(a[np.minimum(x, len(a) - 1)], _OPEN_BYTES))
    for k in odd.tolist():
        if bytes(sbuf[int(x[k]):int(y[k])]).decode("utf-8", "surrogateescape").isspace():
            keep[k] = False
    keep |= point
    return (d_body[keep], q[keep], last[keep], x[keep] + base, y[keep] + base,
            e_type[keep], types)  # type: ignore[return-value]


_OPEN_BYTES = np.frombuffer(b"{[", dtype=np.uint8)


def _c_events(fn: Any, buf: bytearray, starts: np.ndarray, ends: np.ndarray,
              get: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_events` by the C extension's ``sse_events``."""
    got = fn(buf, np.ascontiguousarray(starts, dtype=np.int64),
             np.ascontiguousarray(ends, dtype=np.int64))
    if isinstance(got, int):
        raise _HandOver  # a body of anything but usual events
    rows = np.frombuffer(got[0], dtype=np.int64).reshape(-1, 6)
    counts = np.frombuffer(got[1], dtype=np.int64)
    body, q, x, y = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
    last = q == counts[body] - 1
    e_type = np.zeros(len(rows), dtype=np.int64)
    types = [b""]
    typed = np.flatnonzero(rows[:, 4] >= 0)
    if len(typed):
        codes: dict[bytes, int] = {}
        for k, t0, tl in zip(typed.tolist(), rows[typed, 4].tolist(), rows[typed, 5].tolist(),
                             strict=True):
            t = bytes(buf[t0:t0 + tl])
            if t == b"endpoint" and not get[body[k]]:
                raise _HandOver
            code = codes.get(t)
            if code is None:
                code = codes[t] = len(types)
                types.append(t)
            e_type[k] = code
    point = np.isin(e_type, [types.index(b"endpoint")] if b"endpoint" in types else [])
    keep = (y > x) & ~point
    a = np.frombuffer(buf, dtype=np.uint8)
    odd = np.flatnonzero(keep & ~np.isin(a[np.minimum(x, len(a) - 1)], _OPEN_BYTES))
    del a
    for k in odd.tolist():
        if buf[int(x[k]):int(y[k])].decode("utf-8", "surrogateescape").isspace():
            keep[k] = False
    keep |= point
    return body[keep], q[keep], last[keep], x[keep], y[keep], e_type[keep], \
        types  # type: ignore[return-value]


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    return head == "{" or head == "["
