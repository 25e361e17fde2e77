"""A usual Streamable HTTP HAR read a column at a time, its bodies never all strings at once.

The HAR reader's entry-by-entry path decodes every body into a string (all of them alive
at once after the typed decoding), makes an :class:`~._har_entry.Entry` per entry and
writes each record into a :class:`~._docspans.Doc`. Most captures are made of one kind
of entry only: a POST of a JSON-RPC body whose reply is JSON, an ``Accepted``-like text,
nothing, or a stream of usual SSE events. For such a document, :func:`columns` gives the
same records as :class:`~._docspans.Columns`:

- the document is decoded into strict typed structs whose bodies and header lists are
  :class:`msgspec.Raw` (places in the file's bytes, no string);
- the bodies are decoded a batch at a time (``RUN`` of them) and written into one buffer
  as UTF-8, so only one batch's strings are alive at once;
- a header list is read once per distinct list (its bytes), the times a column at a
  time with numpy (:func:`~._time.read_times`, the entry's timings as arrays);
- the records' extras are shared between records of the same facts (the table copies
  one per row).

Any document with an entry of another kind (not a POST, a body that is not JSON, an
HTTP error, a base64 or truncated body, a proxy's note, an SSE body that is not made of
usual events or names an ``endpoint``, a time that cannot be read, a value of an
unexpected type) gives None: the reader's entry-by-entry path reads it, so the records
are always what that path gives (``tests/readers/test_har_columns.py``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
import numpy as np

from ._docspans import Columns
from ._har_entry import MCP_HEADERS, headers_of
from ._har_entry import _Header as _Header  # the typed decoding's header
from ._time import read_times

__all__ = ["columns", "RUN"]

#: how many bodies are decoded into strings at once
RUN = 1 << 14
_NULL = msgspec.Raw(b"null")


class _Body(msgspec.Struct, gc=False):
    """A ``postData`` or ``content``: the members the reader reads that change a record
    (an encoding, a truncation, stamped events) must be absent or null here."""

    text: msgspec.Raw = _NULL
    mimeType: Any = None  # noqa: N815 - HAR's member name
    encoding: None = None
    alt_encoding: None = msgspec.field(default=None, name="_encoding")
    sse_events: None = msgspec.field(default=None, name="_sseEvents")
    truncated: None = msgspec.field(default=None, name="_truncated")


class _Request(msgspec.Struct, gc=False):
    method: Literal["POST"]
    url: str
    postData: _Body  # noqa: N815 - HAR's member name
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


_decode_doc = msgspec.json.Decoder(_Doc).decode
_decode_texts = msgspec.json.Decoder(list[str]).decode
_decode_headers = msgspec.json.Decoder(list[_Header] | None).decode
_NO_TIMINGS = _Timings()
_SSE = "text/event-stream"


class _HandOver(Exception):
    """The document is not one this path reads: the entry-by-entry path reads it."""


def _ms(v: np.ndarray) -> np.ndarray:
    """``_har_entry._ms`` of each value (NaN: none)."""
    with np.errstate(invalid="ignore"):
        return np.where(v > 0, v / 1000, 0.0)


def _ms1(value: float | None) -> float:
    return value / 1000 if value is not None and value > 0 else 0.0


def columns(data: bytes, name: str, default: str, stateless: Any, escaped: Any,
            session_from_url: Any) -> Columns | None:
    """The records of a usual Streamable HTTP HAR (the file's bytes) as columns, in file
    order, as the entry-by-entry path makes them; None for any other document.

    ``stateless``, ``escaped`` and ``session_from_url`` are the HAR reader's own rules
    (a protocol version of the stateless revision, a session name made valid Unicode,
    the session named by an endpoint URL)."""
    try:
        held = [_decode_doc(data).log.entries]
    except (msgspec.DecodeError, RecursionError):
        return None
    try:
        return _Columns(name, default, stateless, escaped, session_from_url).read(held)
    except (_HandOver, msgspec.DecodeError):
        return None


class _Columns:
    def __init__(self, name: str, default: str, stateless: Any, escaped: Any,
                 session_from_url: Any) -> None:
        self.name, self.default = name, default
        self.stateless, self.escaped, self.session_from_url = stateless, escaped, \
            session_from_url

    def facts(self, key: tuple[bytes, bytes]) -> tuple[Any, ...]:
        """What the records take from an entry's two header lists: the session header,
        whether the request names the stateless revision, the ``mcp_headers`` (as
        pairs) and the reply's ``Content-Type``."""
        try:
            rq = headers_of(_decode_headers(key[0]))
            rs = headers_of(_decode_headers(key[1]))
        except msgspec.DecodeError:
            raise _HandOver from None
        return (rq.get("mcp-session-id") or rs.get("mcp-session-id") or None,
                bool(self.stateless(rq.get("mcp-protocol-version"))),
                tuple((k, v) for k in MCP_HEADERS if (v := rq.get(k)) is not None),
                rs.get("content-type"))

    def read(self, held: list[list[_Entry]]) -> Columns | None:
        entries = held.pop()  # the structs are let go once read
        n = len(entries)
        if not n:
            return None
        reqs = [e.request for e in entries]
        resps = [e.response for e in entries]
        started = [e.startedDateTime for e in entries]
        times = [e.time for e in entries]
        tims = [e.timings or _NO_TIMINGS for e in entries]
        incomplete = [bool(e.incomplete) for e in entries]
        del entries
        status = [r.status for r in resps]
        if any(s is not None and s >= 400 for s in status):
            raise _HandOver  # transport errors: their own extras
        urls = [r.url for r in reqs]
        bodies = [r.postData.text for r in reqs]
        hkeys = [(bytes(q.headers), bytes(r.headers)) for q, r in zip(reqs, resps,
                                                                       strict=True)]
        contents = [r.content for r in resps]
        del reqs, resps
        replies = [_NULL if c is None else c.text for c in contents]
        mimes = ["" if c is None else c.mimeType for c in contents]
        del contents
        fcache: dict[tuple[bytes, bytes], tuple[Any, ...]] = {}
        facts = [fcache.get(k) or fcache.setdefault(k, self.facts(k)) for k in hkeys]
        del hkeys, fcache
        mcache: dict[Any, bool] = {}

        def is_sse(mime: Any) -> bool:
            got = mcache.get(mime) if mime.__class__ is str else None
            if got is None:
                got = _SSE in str(mime or "").lower()
                if mime.__class__ is str:
                    mcache[mime] = got
            return got

        sse = np.fromiter(map(is_sse, [f[3] or m for f, m in zip(facts, mimes, strict=True)]),
                          dtype=bool, count=n)
        del mimes
        has_reply = np.fromiter((r != _NULL for r in replies), dtype=bool, count=n)
        if (sse & ~has_reply).any():
            raise _HandOver  # a stream with no body: a log row
        # the texts: the POSTs' bodies, the other replies, the streams' bodies
        buf = bytearray()
        b_ends = _texts(bodies, buf)
        del bodies
        plain_at = np.flatnonzero(has_reply & ~sse)
        r_ends = _texts([replies[k] for k in plain_at.tolist()], buf)
        sse_at = np.flatnonzero(sse)
        s_base = len(buf)
        s_ends = _texts([replies[k] for k in sse_at.tolist()], buf)
        del replies
        a = np.frombuffer(buf, dtype=np.uint8)
        b_starts = np.concatenate(([0], b_ends[:-1]))
        r_starts = np.concatenate(([b_ends[-1]], r_ends[:-1]))[:len(r_ends)]
        for k in np.flatnonzero(~_opens(a, b_starts, b_ends)).tolist():
            if not _looks_like_json(buf[b_starts[k]:b_ends[k]].decode()):
                raise _HandOver  # a body that is not JSON: not this path
        # a reply: JSON (a record), a short text (a fact of the POST), or nothing
        json_reply = _opens(a, r_starts, r_ends)
        plain: list[str | None] = [None] * n
        for k in np.flatnonzero(~json_reply).tolist():
            text = buf[r_starts[k]:r_ends[k]].decode()
            if text and not text.isspace():
                if _looks_like_json(text):
                    json_reply[k] = True
                else:
                    plain[int(plain_at[k])] = text[:200]
        start, problems = read_times(started, numbers=False)  # type: ignore[arg-type]
        if problems or np.isnan(start).any():
            raise _HandOver
        first_byte, end = self.spans(start, times, tims)
        session_of, names = self.sessions(facts, urls)
        c2s_extra, s2c_extra = self.entry_extras(facts, status, incomplete, plain)
        del facts, urls
        # the records: each entry's POST (sub 0), its JSON reply (sub 1), or the events
        # of its reply stream (sub 1 + the event's place in the body)
        r_entry = [np.arange(n), plain_at[json_reply]]
        r_sub = [np.zeros(n, dtype=np.int64), np.ones(int(json_reply.sum()), dtype=np.int64)]
        r_start = [b_starts, r_starts[json_reply]]
        r_end = [b_ends, r_ends[json_reply]]
        r_type = [np.zeros(n + len(r_sub[1]), dtype=np.int64)]
        r_last = [np.zeros(n + len(r_sub[1]), dtype=bool)]
        types: list[bytes] = [b""]
        if len(sse_at):
            body, q, last, x, y, e_type, types = _events(  # type: ignore[assignment]
                buf, s_base, s_ends)
            r_entry.append(sse_at[body])
            r_sub.append(q + 1)
            r_start.append(x)
            r_end.append(y)
            r_type.append(e_type)
            r_last.append(last)
        del a
        ev = np.concatenate([np.zeros(len(r_sub[0]) + len(r_sub[1]), dtype=bool),
                             np.ones(len(r_sub[2]) if len(r_sub) > 2 else 0, dtype=bool)])
        entry, sub = np.concatenate(r_entry), np.concatenate(r_sub)
        order = np.lexsort((sub, entry))
        entry, sub, ev = entry[order], sub[order], ev[order]
        type_of = np.concatenate(r_type)[order]
        last_ev = np.concatenate(r_last)[order]
        starts, ends = np.concatenate(r_start)[order], np.concatenate(r_end)[order]
        # times: a POST at its start, a JSON reply at the entry's end, an event of a
        # reply stream at its first byte, the last one at its end
        ts = np.where(sub == 0, start[entry],
                      np.where(~ev | last_ev, end[entry], first_byte[entry]))
        extras = self.extras(entry, sub, ev, type_of, types, c2s_extra, s2c_extra, status)
        el, sl, evl = entry.tolist(), sub.tolist(), ev.tolist()
        name = self.name
        labels = [f"{name}#entry{i}" if s == 0 else f"{name}#entry{i}/event{s - 1}" if e
                  else f"{name}#entry{i}/response" for i, s, e in zip(el, sl, evl,
                                                                      strict=True)]
        return Columns(buf, starts, ends, ts,  # type: ignore[arg-type]
                       (sub != 0).astype(np.int8), session_of[entry], names,
                       ev.astype(np.int64), ("http", "sse") if ev.any() else ("http",),
                       labels, dict(enumerate(extras)))

    def sessions(self, facts: list[tuple[Any, ...]], urls: list[str]
                 ) -> tuple[np.ndarray, tuple[str, ...]]:
        """The session of each entry (as ``_Reader.session_of``, no endpoint event read)
        as codes, and the names (made valid Unicode, in the order they first come)."""
        url_sessions: dict[str, str] = {}
        names: dict[str, int] = {}  # a session as valid Unicode -> its code
        codes: dict[str, int] = {}  # a session -> its code
        out = np.empty(len(facts), dtype=np.int64)
        for i, f in enumerate(facts):
            session = f[0]
            if session is None:
                if f[1]:
                    session = f"{self.default} entry {i}"
                else:
                    url = urls[i]
                    session = url_sessions.get(url)
                    if session is None:
                        session = url_sessions[url] = self.session_from_url(url) \
                            or self.default
            code = codes.get(session)
            if code is None:
                named = self.escaped(session)
                code = names.get(named)
                if code is None:
                    code = names[named] = len(names)
                codes[session] = code
            out[i] = code
        return out, tuple(names)

    @staticmethod
    def entry_extras(facts: list[tuple[Any, ...]], status: list[int | None],
                     incomplete: list[bool], plain: list[str | None]
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The ``extra`` of each entry's POST and of its reply, as object arrays (one dict
        per distinct set of facts: the table copies one per row)."""
        n = len(facts)
        codes: dict[Any, int] = {}
        status_code = np.fromiter((codes.setdefault(x, len(codes)) for x in status),
                                  dtype=np.int64, count=n)
        mcps: dict[tuple[Any, ...], int] = {}
        mcp_code = np.fromiter((mcps.setdefault(f[2], len(mcps)) for f in facts),
                               dtype=np.int64, count=n)
        inc = np.fromiter(incomplete, dtype=bool, count=n)
        key = (mcp_code * len(codes) + status_code) * 2 + inc
        kinds, first, inverse = np.unique(key, return_index=True, return_inverse=True)

        def made(k: int, text: str | None) -> dict[str, Any]:
            st = status[k]
            extra: dict[str, Any] = {"http": "POST"}
            if st is not None:
                extra["status"] = st
            if incomplete[k]:
                extra["incomplete"] = True
            if text is not None:
                extra["reply"] = text
            if facts[k][2]:
                extra["mcp_headers"] = dict(facts[k][2])
            return extra

        c2s = np.empty(len(kinds), dtype=object)
        c2s[:] = [made(k, None) for k in first.tolist()]
        c2s = c2s[inverse.reshape(-1)]
        texts: dict[tuple[int, str], dict[str, Any]] = {}  # a short reply: a fact of it
        for k in (k for k, t in enumerate(plain) if t is not None):
            t = plain[k]
            assert t is not None
            c2s[k] = texts.get((int(key[k]), t)) or texts.setdefault((int(key[k]), t),
                                                                      made(k, t))
        base = np.empty(len(codes), dtype=object)
        base[:] = [{"http": "POST"} if x is None else {"http": "POST", "status": x}
                   for x in codes]
        return c2s, base[status_code]

    @staticmethod
    def spans(start: np.ndarray, times: list[float | None], tims: list[_Timings]
              ) -> tuple[np.ndarray, np.ndarray]:
        """``Entry.span`` of every entry: its first byte and its end."""
        cols = np.array([(t.blocked, t.dns, t.connect, t.send, t.wait, t.receive)
                         for t in tims], dtype=np.float64).reshape(len(tims), 6).T
        ms = _ms(cols)
        five = ms[:5]
        # a sum of one non-zero value is that value whatever the order of the additions;
        # the others are summed as ``Entry.span`` sums them (``sum``, from 0.0)
        first = five.sum(axis=0)
        several = np.flatnonzero((five != 0).sum(axis=0) > 1)
        if len(several):
            for k in several.tolist():
                t = tims[k]
                first[k] = sum((_ms1(v) for v in (t.blocked, t.dns, t.connect, t.send,
                                                   t.wait)), 0.0)
        total = _ms(np.array(times, dtype=np.float64))
        total = np.where(total != 0.0, total, first + ms[5])
        return start + first, start + total

    @staticmethod
    def extras(entry: np.ndarray, sub: np.ndarray, ev: np.ndarray, type_of: np.ndarray,
               types: list[bytes], c2s_extra: np.ndarray, s2c_extra: np.ndarray,
               status: list[int | None]) -> list[dict[str, Any]]:
        """The ``extra`` of each record (one dict per distinct set of facts)."""
        c2s, s2c = c2s_extra, s2c_extra
        out = np.empty(len(entry), dtype=object)
        post = sub == 0
        out[post] = c2s[entry[post]]
        reply = ~post & ~ev
        out[reply] = s2c[entry[reply]]
        at = np.flatnonzero(ev)
        if len(at):
            # an event's: its entry's reply extra with the event's type, estimated time
            codes: dict[Any, int] = {}
            status_code = np.array([codes.setdefault(s, len(codes)) for s in status],
                                   dtype=np.int64)
            which = status_code[entry[at]] * len(types) + type_of[at]
            kinds, first = np.unique(which, return_index=True)
            made = np.empty(len(kinds), dtype=object)
            for k, (w, f) in enumerate(zip(kinds.tolist(), first.tolist(), strict=True)):
                extra = {**s2c_extra[int(entry[at[f]])]}
                t = w % len(types)
                if t:
                    extra["sse_event"] = types[t].decode("utf-8", "surrogateescape")
                extra["ts_estimated"] = True
                made[k] = extra
            out[at] = made[np.searchsorted(kinds, which)]
        return out.tolist()  # type: ignore[no-any-return]


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


_DATA = np.frombuffer(b"data:", dtype=np.uint8)
_EVENT = np.frombuffer(b"event:", dtype=np.uint8)
_MESSAGE = np.frombuffer(b"message", dtype=np.uint8)


def _events(buf: bytearray, base: int, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """The events with data of SSE bodies (``buf`` from ``base``, each ending at ``ends``) made
    only of usual events, as :func:`~._sse.simple_spans` reads them and the reader keeps
    them: ``(body, q, last, start, end, type, types)`` of each kept event (its body, its
    place among the body's events, whether it is the body's last, its data's bounds in
    ``buf``, its type as a code: 0 none or ``message``, else ``types[code]``). A body of
    anything else (or an ``endpoint`` event) raises :class:`_HandOver`."""
    fn = _native_fn("sse_events")
    if fn is not None:
        return _c_events(fn, buf, base, ends)
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
            if b":" in t or t == b"endpoint":
                raise _HandOver
            code = codes.get(t)
            if code is None:
                code = codes[t] = len(types)
                types.append(t)
            e_type[typed[k]] = code
    # the events kept: data neither empty nor blank (a priming or keep-alive event)
    keep = y > x
    odd = np.flatnonzero(keep & ~np.isin(a[np.minimum(x, len(a) - 1)], _OPEN_BYTES))
    for k in odd.tolist():
        if bytes(sbuf[int(x[k]):int(y[k])]).decode("utf-8", "surrogateescape").isspace():
            keep[k] = False
    return (d_body[keep], q[keep], last[keep], x[keep] + base, y[keep] + base,
            e_type[keep], types)  # type: ignore[return-value]


_OPEN_BYTES = np.frombuffer(b"{[", dtype=np.uint8)


def _c_events(fn: Any, buf: bytearray, base: int, ends: np.ndarray
              ) -> tuple[np.ndarray, ...]:
    """:func:`_events` by the C extension's ``sse_events``."""
    starts = np.concatenate((np.array([base], dtype=np.int64), ends[:-1]))
    got = fn(buf, starts, ends)
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
            if t == b"endpoint":
                raise _HandOver
            code = codes.get(t)
            if code is None:
                code = codes[t] = len(types)
                types.append(t)
            e_type[k] = code
    keep = y > x
    a = np.frombuffer(buf, dtype=np.uint8)
    odd = np.flatnonzero(keep & ~np.isin(a[np.minimum(x, len(a) - 1)], _OPEN_BYTES))
    del a
    for k in odd.tolist():
        if buf[int(x[k]):int(y[k])].decode("utf-8", "surrogateescape").isspace():
            keep[k] = False
    return body[keep], q[keep], last[keep], x[keep], y[keep], e_type[keep], \
        types  # type: ignore[return-value]


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    return head == "{" or head == "["
