"""A usual HAR of MCP over HTTP read a column at a time, its bodies never all strings at once.

The HAR reader's entry-by-entry path decodes every body into a string (all of them alive
at once after the typed decoding), makes an :class:`~._har_entry.Entry` per entry and a
record (or a place in a :class:`~._docspans.Doc`) per message. Most captures are made of
few kinds of entry: a POST of a JSON-RPC body whose reply is JSON, a short text such as
``Accepted``, nothing, or a stream of usual SSE events; and, for the 2024-11-05
transport, GET streams of usual events (an ``endpoint`` event naming the session, then
the server's messages, which have no time). For such a document, :func:`columns` gives
the same records, as :class:`~._docspans.Columns` and the order the table takes them in:

- the document is decoded into strict typed structs whose bodies and header lists are
  :class:`msgspec.Raw` (places in the file's bytes, mapped, no string);
- the bodies are unescaped into one buffer as UTF-8 by the C extension
  (``json_texts``; without it, decoded by msgspec ``RUN`` at a time), the SSE bodies
  split there (``sse_events``; without it, with numpy);
- a header list is read once per distinct pair of lists, the times and timings a column
  at a time with numpy, the records' extras shared by records of the same facts (the
  table copies one per row);
- the untimed events of a GET stream are placed as ``har._in_time_order`` places them
  (an answer right after the request it answers, any other at the stream's opening),
  from the kinds and id keys the table's own classification gives (:func:`_meaning`);
  such a HAR's records are given as spans like any other (a document whose texts come
  to 16 MB or more then gets a ``lazytext`` ``raw`` column, as every large document).

Any document with an entry of another kind (a method but POST or GET, a body that is not
JSON, an HTTP error, an encoding, a truncation, a proxy's note, stamped SSE events, an SSE
body that is not made of usual events, an ``endpoint`` event in a POST's reply stream, a
time that cannot be read, a value of an unexpected type) gives None: the reader's
entry-by-entry path reads it, so the records are always what that path gives
(``tests/readers/test_har_columns.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import urljoin

import msgspec
import numpy as np

from ..protocol.vocab import KINDS
from ._docspans import Columns, stamp_order
from ._har_entry import MCP_HEADERS, headers_of
from ._har_entry import _Header as _Header  # the typed decoding's header
from ._spans import Spans
from ._time import read_times
from .base import Record

__all__ = ["columns", "RUN"]

#: how many bodies are decoded into strings at once
RUN = 1 << 14
_NULL = msgspec.Raw(b"null")
_EMPTY = msgspec.Raw(b'""')


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
            session_from_url: Any, reader: Any = None) -> _Found | None:
    """The records of a usual Streamable HTTP HAR (the file's bytes) as columns, in file
    order, as the entry-by-entry path makes them; None for any other document.

    ``stateless``, ``escaped`` and ``session_from_url`` are the HAR reader's own rules
    (a protocol version of the stateless revision, a session name made valid Unicode,
    the session named by an endpoint URL). ``reader`` (the HAR reader, or None) reads the
    entries that are not read as columns (a method but POST or GET, an HTTP error, a GET
    of no stream, stamped events, ...: ``others`` and ``records_of``), whose records are
    placed among the others'; without it such a document gives None."""
    try:
        held = [_decode_doc(data).log.entries]
    except (msgspec.DecodeError, RecursionError):
        return None
    try:
        return _Columns(name, default, stateless, escaped, session_from_url, reader,
                        data).read(held)
    except (_HandOver, msgspec.DecodeError):
        return None


class _Found(NamedTuple):
    """The records of a HAR read a column at a time: the usual ones as :class:`Columns`,
    each slot (in file order) a usual record (``at``) or, where ``at`` is -1, one of
    ``others`` (a GET stream's ``endpoint`` event), and the order the table takes them
    in."""

    cols: Columns
    at: np.ndarray | None
    others: dict[int, Record]
    order: np.ndarray

    def blocks(self, name: str) -> Iterator[Record | Spans]:
        return self.cols.blocks(name, self.at, self.others or None, self.order)

    @staticmethod
    def of(cols: Columns, entry: np.ndarray, sub: np.ndarray,
           others: list[tuple[int, int, Record]], get: np.ndarray, first_byte: np.ndarray,
           name: str, read: bool = False) -> _Found:
        n = len(entry)
        ts = cols.ts
        if others:
            o_entry = np.array([i for i, _, _ in others], dtype=np.int64)
            o_sub = np.array([q + 1 for _, q, _ in others], dtype=np.int64)
            slot_entry = np.concatenate((entry, o_entry))
            slot_sub = np.concatenate((sub, o_sub))
            slots = np.lexsort((slot_sub, slot_entry))
            at = np.concatenate((np.arange(n, dtype=np.int64),
                                 np.full(len(others), -1, dtype=np.int64)))[slots]
            where = np.flatnonzero(at < 0).tolist()
            placed = np.argsort(slots, kind="stable")[n:].tolist()  # each other's slot
            recs = {placed[k]: others[k][2] for k in range(len(others))}
            assert sorted(recs) == where
            slot_ts = np.full(len(at), np.nan)
            slot_ts[at >= 0] = ts[at[at >= 0]]
            for k, rec in recs.items():
                if rec.ts is not None:
                    slot_ts[k] = rec.ts
            entry_of = slot_entry[slots]
        else:
            at, recs, slot_ts, entry_of = None, {}, ts, entry
        usual = np.arange(len(slot_ts)) if at is None else at
        untimed = (usual >= 0) & np.isnan(slot_ts) & get[entry_of]
        if not untimed.any():  # the times' order alone
            return _Found(cols, at, recs, stamp_order(slot_ts))
        if read:  # entries read one by one: their requests would place untimed answers
            raise _HandOver
        # as ``har._in_time_order``: an event of a GET stream answering a request sent
        # by POST right after it, any other at the opening of its stream
        asked = np.flatnonzero(untimed | ((usual >= 0) & (cols.direction[usual] == 0)))
        kind, id_key, first = _meaning(cols, usual[asked], name)
        session = cols.session_of[usual[asked]]
        sent: dict[tuple[int, str], float] = {}
        kinds = np.asarray(kind, dtype=np.int64)
        record = np.repeat(np.arange(len(asked)), np.diff(first))  # each frame's record
        c2s = cols.direction[usual[asked]] == 0
        asked_ts = slot_ts[asked]
        for r in np.flatnonzero(c2s[record] & (kinds == KINDS.index("request"))).tolist():
            key = id_key[r]
            if key is not None:
                j = int(record[r])
                sent.setdefault((int(session[j]), key), float(asked_ts[j]))
        key1 = np.where(np.isnan(slot_ts), np.inf, slot_ts)
        key2 = np.zeros(len(slot_ts), dtype=np.int64)
        key1[untimed] = first_byte[entry_of[untimed]]
        heads = first[:-1]
        answer = untimed[asked] & np.isin(kinds[heads], [KINDS.index("result"),
                                                         KINDS.index("error")])
        found_at, found_ts = [], []
        for j in np.flatnonzero(answer).tolist():
            got = sent.get((int(session[j]), id_key[int(heads[j])]))  # type: ignore[arg-type]
            if got is not None:
                found_at.append(j)
                found_ts.append(got)
        if found_at:
            placed_at = asked[np.array(found_at, dtype=np.int64)]
            key1[placed_at] = found_ts
            key2[placed_at] = 1
        return _Found(cols, at, recs, np.lexsort((np.arange(len(key1)), key2, key1)))


def _meaning(cols: Columns, which: np.ndarray, name: str
             ) -> tuple[list[int], list[str | None], np.ndarray]:
    """The kind (a code of ``KINDS``) and id key of every frame of the usual records
    ``which``, as the table classifies them, and where each record's frames start (one
    more: the end)."""
    from ..fast.records import part_of

    k = len(which)
    sp = Spans(cols.buf, cols.starts[which], cols.ends[which], np.zeros(k, dtype=np.int64),
               np.full(k, np.nan), cols.direction[which], "", name, False, None, None,
               labels=[""] * k)  # labelled as a document's: its texts are not decoded
    part = part_of([sp])  # type: ignore[list-item]
    batch = np.full(part.n, -1, dtype=np.int64)  # a frame's place in its batch
    inside = part.sparse.get("batch") or {}
    if inside:
        batch[np.fromiter(inside, dtype=np.int64, count=len(inside))] = list(inside.values())
    first = np.flatnonzero(batch <= 0)
    if len(first) != k:
        raise _HandOver  # a record of no frame, or of several without a batch
    return (np.asarray(part.kind).tolist(), list(part.id_key),
            np.append(first, part.n))


class _Columns:
    def __init__(self, name: str, default: str, stateless: Any, escaped: Any,
                 session_from_url: Any, reader: Any = None, data: Any = None) -> None:
        self.reader, self.data = reader, data
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

    def read(self, held: list[list[_Entry]]) -> _Found | None:
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
        urls = [r.url for r in reqs]
        get = np.fromiter((r.method == "GET" for r in reqs), dtype=bool, count=n)
        # entries read one by one (``reader``): a method but POST or GET, a transport
        # error, a POST of no body, a GET with one, stamped events (and, below, a stream
        # of no body, a GET of no stream)
        other = np.fromiter(
            (r.method != "GET" and r.method != "POST" or (s is not None and s >= 400)
             or (r.postData is None) != g
             or (c is not None and c.sse_events != _NULL)
             for r, s, g, c in zip(reqs, status, get.tolist(), (x.content for x in resps),
                                   strict=True)), dtype=bool, count=n)
        posts = [r.postData for r in reqs]
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
        empty = np.fromiter((r == _EMPTY for r in replies), dtype=bool, count=n)
        other |= (sse & (~has_reply | empty)) | (get & ~sse)  # log rows
        self.read_others(other, urls, get)
        if self.entries:
            sse &= ~other
            has_reply &= ~other
        post_at = np.flatnonzero(~get & ~other)
        bodies = [posts[k].text for k in post_at.tolist()]  # type: ignore[union-attr]
        del posts
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
        r_starts = np.concatenate(([b_ends[-1] if len(b_ends) else 0], r_ends[:-1])
                                  )[:len(r_ends)]
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
        c2s_extra, s2c_extra = self.entry_extras(facts, status, incomplete, plain, get)
        # the records: each entry's POST (sub 0), its JSON reply (sub 1), or the events
        # of its reply stream (sub 1 + the event's place in the body)
        m = len(post_at)
        r_entry = [post_at, plain_at[json_reply]]
        r_sub = [np.zeros(m, dtype=np.int64), np.ones(int(json_reply.sum()), dtype=np.int64)]
        r_start = [b_starts, r_starts[json_reply]]
        r_end = [b_ends, r_ends[json_reply]]
        r_type = [np.zeros(m + len(r_sub[1]), dtype=np.int64)]
        r_last = [np.zeros(m + len(r_sub[1]), dtype=bool)]
        types: list[bytes] = [b""]
        endpoints: dict[int, list[tuple[int, str]]] = {}  # a GET's endpoint events
        if len(sse_at):
            body, q, last, x, y, e_type, types = _events(  # type: ignore[assignment]
                buf, s_base, s_ends, get[sse_at])
            if len(types) > 1 and b"endpoint" in types:
                point = np.flatnonzero(e_type == types.index(b"endpoint"))
                for k in point.tolist():
                    i = int(sse_at[body[k]])
                    endpoints.setdefault(i, []).append(
                        (int(q[k]), buf[int(x[k]):int(y[k])].decode()))
                keep = np.ones(len(body), dtype=bool)
                keep[point] = False
                body, q, last, x, y, e_type = (v[keep] for v in (body, q, last, x, y,
                                                                  e_type))
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
        # reply stream at its first byte, the last one at its end; a GET stream's: none
        ts = np.where(sub == 0, start[entry],
                      np.where(~ev | last_ev, end[entry], first_byte[entry]))
        ts[get[entry]] = np.nan
        extras = self.extras(entry, sub, ev, type_of, types, c2s_extra, s2c_extra, status,
                             get)
        el, sl, evl = entry.tolist(), sub.tolist(), ev.tolist()
        session_of, names, others = self.sessions(facts, urls, get, endpoints, el, sl,
                                                  status, first_byte)
        del facts, urls
        if self.entries and self.reader.untimed:
            raise _HandOver  # events of no time among the entries read one by one
        name = self.name
        labels = [f"{name}#entry{i}" if s == 0 else f"{name}#entry{i}/event{s - 1}" if e
                  else f"{name}#entry{i}/response" for i, s, e in zip(el, sl, evl,
                                                                      strict=True)]
        cols = Columns(buf, starts, ends, ts,  # type: ignore[arg-type]
                       (sub != 0).astype(np.int8), session_of, names,
                       ev.astype(np.int64), ("http", "sse") if ev.any() else ("http",),
                       labels, dict(enumerate(extras)))
        return _Found.of(cols, entry, sub, others, get, first_byte, self.name,
                         bool(self.entries))

    def read_others(self, other: np.ndarray, urls: list[str], get: np.ndarray) -> None:
        """The entries ``other`` as the reader reads them (``self.entries``), or
        :class:`_HandOver`."""
        self.entries: dict[int, Any] = {}
        if not other.any():
            return
        if self.reader is None:
            raise _HandOver
        raws = _decode_raws(self.data).log.entries
        at = np.flatnonzero(other).tolist()
        post = [urls[k] for k in np.flatnonzero(~other & ~get).tolist()]
        got = self.reader.others({k: raws[k] for k in at}, post)
        if got is None:
            raise _HandOver
        self.entries = got

    def sessions(self, facts: list[tuple[Any, ...]], urls: list[str], get: np.ndarray,
                 endpoints: dict[int, list[tuple[int, str]]], entry: list[int],
                 sub: list[int], status: list[int | None], first_byte: np.ndarray
                 ) -> tuple[np.ndarray, tuple[str, ...], list[tuple[int, int, Record]]]:
        """The session of each record (as ``_Reader.session_of`` and ``events`` name
        them, in file order: a GET stream's ``endpoint`` event names the session of the
        events after it and of the POSTs to that URL after it) as codes, the names (made
        valid Unicode, in the order they first come), and the endpoint events' records
        (each with its entry and its place in the stream)."""
        url_sessions: dict[str, str] = {}
        # an endpoint URL (with query) -> its session (the reader's, for the entries it
        # reads one by one)
        old: dict[str, str] = self.reader.old_sessions if self.entries else {}
        read = self.entries
        names: dict[str, int] = {}  # a session as valid Unicode -> its code
        codes: dict[str, int] = {}  # a session -> its code
        others: list[tuple[int, int, Record]] = []
        by_entry = np.empty(len(facts), dtype=np.int64)
        switch: dict[int, list[tuple[int, int]]] = {}  # GET entry -> (event, code) changes

        def code_of(session: str) -> int:
            code = codes.get(session)
            if code is None:
                named = self.escaped(session)
                code = names.get(named)
                if code is None:
                    code = names[named] = len(names)
                codes[session] = code
            return code

        getl = get.tolist()
        for i, f in enumerate(facts):
            if i in read:  # read by the reader, in file order (its endpoint events too)
                others.extend((i, q, rec) for q, rec in enumerate(self.reader.records_of(
                    read[i])))
                by_entry[i] = -1
                continue
            session = f[0]
            if session is None:
                url = urls[i]
                if f[1] and not getl[i]:
                    session = f"{self.default} entry {i}"
                elif url in old:
                    session = old[url]
                else:
                    session = url_sessions.get(url)  # type: ignore[assignment]
                    if session is None:
                        session = url_sessions[url] = self.session_from_url(url) \
                            or self.default
            by_entry[i] = code_of(session)
            for q, data in endpoints.get(i, ()):
                try:
                    url = urljoin(urls[i], data.strip())
                except ValueError:  # a URL that cannot be parsed: taken as written
                    url = data.strip()
                session = self.session_from_url(url) or url
                old[url] = session
                switch.setdefault(i, []).append((q, code_of(session)))
                st = status[i]
                base: dict[str, Any] = {"http": "GET"} if st is None else \
                    {"http": "GET", "status": st}
                others.append((i, q, Record(
                    raw=data, ts=float(first_byte[i]) if q == 0 else None,
                    session=self.escaped(session), stream="sse",
                    source=f"{self.name}#entry{i}/event{q}", kind="log",
                    extra={**base, "sse_event": "endpoint", "endpoint": url})))
        out = by_entry[np.asarray(entry, dtype=np.int64)]
        if switch:  # the events after an endpoint event: its session
            for k, (i, s) in enumerate(zip(entry, sub, strict=True)):
                changes = switch.get(i)
                if changes is not None and s:
                    for q, code in changes:
                        if s - 1 > q:
                            out[k] = code
        return out, tuple(names), others

    @staticmethod
    def entry_extras(facts: list[tuple[Any, ...]], status: list[int | None],
                     incomplete: list[bool], plain: list[str | None], get: np.ndarray
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
        base = np.empty(2 * len(codes), dtype=object)
        base[:] = [{"http": h} if x is None else {"http": h, "status": x}
                   for h in ("POST", "GET") for x in codes]
        return c2s, base[status_code + len(codes) * get]

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
               status: list[int | None], get: np.ndarray) -> list[dict[str, Any]]:
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
            which = (status_code[entry[at]] * 2 + get[entry[at]]) * len(types) \
                + type_of[at]
            kinds, first = np.unique(which, return_index=True)
            made = np.empty(len(kinds), dtype=object)
            for k, (w, f) in enumerate(zip(kinds.tolist(), first.tolist(), strict=True)):
                extra = {**s2c_extra[int(entry[at[f]])]}
                t = w % len(types)
                if t:
                    extra["sse_event"] = types[t].decode("utf-8", "surrogateescape")
                if not (w // len(types)) % 2:  # a POST's reply stream: times estimated
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


def _events(buf: bytearray, base: int, ends: np.ndarray, get: np.ndarray
            ) -> tuple[np.ndarray, ...]:
    """The events with data of SSE bodies (``buf`` from ``base``, each ending at ``ends``) made
    only of usual events, as :func:`~._sse.simple_spans` reads them and the reader keeps
    them: ``(body, q, last, start, end, type, types)`` of each kept event (its body, its
    place among the body's events, whether it is the body's last, its data's bounds in
    ``buf``, its type as a code: 0 none or ``message``, else ``types[code]``). A body of
    anything else (or an ``endpoint`` event but in a GET stream: ``get``, by body)
    raises :class:`_HandOver`; an ``endpoint`` event is kept whatever its data."""
    fn = _native_fn("sse_events")
    if fn is not None:
        return _c_events(fn, buf, base, ends, get)
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


def _c_events(fn: Any, buf: bytearray, base: int, ends: np.ndarray, get: np.ndarray
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
