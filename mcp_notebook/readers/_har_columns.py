"""A usual HAR of MCP over HTTP read a column at a time, its bodies never all strings at once.

The HAR reader's entry-by-entry path decodes every body into a string (all of them alive
at once after the typed decoding), makes an :class:`~._har_entry.Entry` per entry and a
record (or a place in a :class:`~._docspans.Doc`) per message. Most captures are made of
few kinds of entry: a POST of a JSON-RPC body whose reply is JSON, a short text such as
``Accepted``, nothing, or a stream of usual SSE events; and, for the 2024-11-05
transport, GET streams of usual events (an ``endpoint`` event naming the session, then
the server's messages, which have no time). For such a document, :func:`columns` gives
the same records, as :class:`~._docspans.Columns` and the order the table takes them in:

- the document is read in one pass by the C extension (``har_scan``,
  ``csrc/harscan.h``): each entry's members as columns, the bodies unescaped into one
  buffer as UTF-8 as they are passed; a document that pass does not take (counted in
  ``_har_parts.COUNTS``), or without the extension, is decoded into strict typed structs
  whose bodies and header lists are :class:`msgspec.Raw` (places in the file's bytes,
  mapped, no string), the bodies then unescaped by ``json_texts`` (without the
  extension, decoded by msgspec ``RUN`` at a time): both give the same ``_har_parts``
  columns;
- the SSE bodies are split in the buffer (``sse_events``; without the extension, with
  numpy);
- a header list is read once per distinct pair of lists, the times and timings a column
  at a time with numpy, the records' extras shared by records of the same facts (the
  table copies one per row);
- the untimed events of a GET stream are placed as ``har._in_time_order`` places them
  (an answer right after the request it answers, any other in its stream's order
  between the answers around it),
  from the kinds and id keys the table's own classification gives (``_har_kinds.meaning``);
  such a HAR's records are given as spans like any other (a document whose texts come
  to 16 MB or more then gets a ``lazytext`` ``raw`` column, as every large document).

An entry of a few other kinds (a method but POST or GET, an HTTP error, a POST of no
body, a GET of no stream, stamped SSE events) is read by the reader itself, one by one in
file order among the columns (``reader``), its records placed among theirs. Any document
with an entry of another kind (an event stream the HAR does not hold, a body that is not JSON,
an encoding, a truncation, a proxy's note, an SSE body that is not made of usual events,
an ``endpoint`` event in a POST's reply stream, a time that cannot be read, a value of an
unexpected type, an entry that is not MCP traffic, an untimed event among the entries
read one by one) gives None: the reader's entry-by-entry path reads it, so the records
are always what that path gives (``tests/readers/test_har_columns.py``).

The two readings are in ``_har_parts`` (the structs in ``_har_structs``), the texts in
``_har_texts``, the extras and spans in ``_har_facts``, the sessions in ``_har_sessions``,
the order in ``_har_order`` (the kinds it reads in ``_har_kinds``).
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ._docspans import Columns, DocLabels
from ._har_entry import MCP_HEADERS, headers_of
from ._har_facts import entry_extras
from ._har_facts import extras as record_extras
from ._har_facts import spans as entry_spans
from ._har_kinds import Early, Joined
from ._har_order import _Found
from ._har_parts import Parts, of_scan, of_structs
from ._har_session import _endpoint
from ._har_sessions import sessions
from ._har_structs import _SSE, _decode_doc, _decode_headers, _decode_raws
from ._har_texts import RUN, _events, _HandOver, _looks_like_json, _native_fn, _opens, distinct

__all__ = ["columns", "RUN"]


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
    parts = of_scan(data)
    if parts is None:  # the C pass did not take it (or is not built): msgspec reads it
        try:
            parts = of_structs(_decode_doc(data).log.entries)
        except (msgspec.DecodeError, RecursionError):
            return None
    c = _Columns(name, default, stateless, escaped, session_from_url, reader, data)
    try:
        return c.read(parts)
    except (_HandOver, msgspec.DecodeError):
        for early in c.early:  # a reading begun for the order: not wanted
            early.cancel()
        return None


def _one_kind_of_endpoint(urls: list[Any], post_at: np.ndarray, buf: bytes | bytearray,
                          starts: np.ndarray, ends: np.ndarray) -> None:
    """Hand over (``_HandOver``) a document whose POSTs go to several endpoints, one of
    which is sent no JSON-RPC (a body naming ``"jsonrpc"``): an OAuth registration, say,
    whose JSON is not MCP; the entry-by-entry path leaves it out (``mcp_endpoints``)."""
    distinct = set(urls)
    if len(distinct) < 2:
        return
    ends_of = {u: _endpoint(u) if isinstance(u, str) else u for u in distinct}
    if len(set(ends_of.values())) < 2:
        return
    # an endpoint is sent JSON-RPC where any POST to it is: the first POST to each of its
    # URLs looked at (made in C: no Python step per POST), then, only for an endpoint
    # none of those showed it for, its POSTs one by one
    posted = list(map(urls.__getitem__, post_at.tolist()))
    first = dict(zip(reversed(posted), range(len(posted) - 1, -1, -1), strict=True))
    seen: dict[Any, bool] = {}
    for u, k in first.items():
        where = ends_of[u]
        if not seen.get(where):
            seen[where] = b'"jsonrpc"' in buf[int(starts[k]):int(ends[k])]
    for where in [w for w, ok in seen.items() if not ok]:
        seen[where] = any(b'"jsonrpc"' in buf[int(starts[k]):int(ends[k])]
                          for k, u in enumerate(posted) if ends_of[u] == where)
    if not all(seen.values()):
        raise _HandOver


class _Columns:
    def __init__(self, name: str, default: str, stateless: Any, escaped: Any,
                 session_from_url: Any, reader: Any = None, data: Any = None) -> None:
        self.reader, self.data = reader, data
        self.name, self.default = name, default
        #: the readings of the records the order needs, begun as soon as their texts
        #: are known (``Early``: a POST's body, then a GET stream's events)
        self.early: list[Early] = []
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

    def read(self, parts: Parts) -> _Found | None:
        n = len(parts.methods)
        if not n:
            return None
        status, urls, methods = parts.status, parts.urls, parts.methods
        is_get = {m: m == "GET" for m in set(methods)}  # each distinct method once
        get = np.fromiter(map(is_get.__getitem__, methods), dtype=bool, count=n)
        # entries read one by one (``reader``): a method but POST or GET, a transport
        # error, a POST of no body, a GET with one, stamped events (and, below, a stream
        # of no body, a GET of no stream)
        other = parts.stamped | (parts.post_none != get)
        if not set(methods) <= {"GET", "POST"} \
                or any(s is not None and s >= 400 for s in set(status)):
            other |= np.fromiter(
                (m != "GET" and m != "POST" or (s is not None and s >= 400)
                 for m, s in zip(methods, status, strict=True)), dtype=bool, count=n)
        # each distinct pair of header lists read once, in the order they first come
        fcache = {k: self.facts(k) for k in dict.fromkeys(parts.hkeys)}
        facts = list(map(fcache.__getitem__, parts.hkeys))
        del fcache
        # a stream: by the reply's Content-Type, else its content's mimeType (each
        # distinct one looked at once; only a str can name the stream's type)
        mimes = [f[3] or m for f, m in zip(facts, parts.mimes, strict=True)]
        try:
            is_sse = {m: _SSE in str(m or "").lower() for m in set(mimes)}
            sse = np.fromiter(map(is_sse.__getitem__, mimes), dtype=bool, count=n)
        except TypeError:  # a mimeType of a list or an object (msgspec's reading)
            sse = np.fromiter((_SSE in str(m or "").lower() for m in mimes), dtype=bool,
                              count=n)
        del mimes
        has_reply = parts.has_reply.copy()
        if (sse & ~parts.stamped & (~has_reply | parts.empty)).any():
            # an event stream the HAR does not hold: the reader marks the requests whose
            # answers it may have held (``_har_reader.entry``), entry by entry
            raise _HandOver
        other |= (get & ~sse)  # log rows
        self.read_others(other, urls, get)
        if self.entries:
            sse &= ~other
            has_reply &= ~other
        post_at = np.flatnonzero(~get & ~other)
        # the texts: the POSTs' bodies, the other replies, the streams' bodies
        plain_at = np.flatnonzero(has_reply & ~sse)
        sse_at = np.flatnonzero(sse)
        buf, (b_starts, b_ends), (r_starts, r_ends), (s_starts, s_ends) = parts.texts(
            post_at, plain_at, sse_at)
        # a GET stream's events have no time: their place needs what the table makes of
        # them and of the requests sent (``_Found.of``), read in a thread where a core is
        # free from now on, the POSTs' bodies first (else when asked)
        from ..fast import cores

        ahead = bool(_native_fn("frame_spans") and not self.entries and len(sse_at)
                     and get[sse_at].any() and cores.free())
        if ahead:
            self.early.append(Early(buf, b_starts, b_ends, np.arange(len(b_starts))))
        # the streams' events (their reading for the order begun at once, as the POSTs')
        types: list[bytes] = [b""]
        endpoints: dict[int, list[tuple[int, str]]] = {}  # a GET's endpoint events
        events = None
        if len(sse_at):
            body, q, last, x, y, e_type, types = _events(  # type: ignore[assignment]
                buf, s_starts, s_ends, get[sse_at])
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
            if ahead:  # the GET streams' events, read next
                self.early.append(Early(buf, x, y, np.flatnonzero(get[sse_at[body]])))
            events = body, q, last, x, y, e_type
        a = np.frombuffer(buf, dtype=np.uint8)
        for k in np.flatnonzero(~_opens(a, b_starts, b_ends)).tolist():
            if not _looks_like_json(buf[b_starts[k]:b_ends[k]].decode()):
                raise _HandOver  # a body that is not JSON: not this path
        _one_kind_of_endpoint(urls, post_at, buf, b_starts, b_ends)
        # a reply: JSON (a record), a short text (a fact of the POST), or nothing
        json_reply = _opens(a, r_starts, r_ends)
        odd = np.flatnonzero(~json_reply)
        # each distinct short reply (``Accepted``, say) looked at once: JSON (True), a
        # text kept (its first 200 characters: ``plain`` numbers each entry's, -1 none)
        # or nothing (None)
        code, raws = distinct(a, r_starts[odd], r_ends[odd])
        said: list[str | bool | None] = []
        for raw in raws:
            text = raw.decode()
            said.append(None if not text or text.isspace() else
                        True if _looks_like_json(text) else text[:200])
        json_reply[odd[np.fromiter((g is True for g in said), dtype=bool,
                                   count=len(said))[code]]] = True
        kept = {t: k for k, t in enumerate(dict.fromkeys(
            t for t in said if type(t) is str))}  # each text once
        text_of = np.fromiter((kept[t] if type(t) is str else -1 for t in said),
                              dtype=np.int64, count=len(said))
        plain = np.full(n, -1, dtype=np.int64)
        plain[plain_at[odd]] = text_of[code]
        incomplete = parts.incomplete
        start, problems = parts.start_times()
        if problems or np.isnan(start).any():
            raise _HandOver
        first_byte, end = entry_spans(start, parts.nums)
        del parts
        c2s_extra, s2c_extra = entry_extras(facts, status, incomplete, plain, list(kept),
                                            get)
        # the records: each entry's POST (sub 0), its JSON reply (sub 1), or the events
        # of its reply stream (sub 1 + the event's place in the body)
        m = len(post_at)
        r_entry = [post_at, plain_at[json_reply]]
        r_sub = [np.zeros(m, dtype=np.int64), np.ones(int(json_reply.sum()), dtype=np.int64)]
        r_start = [b_starts, r_starts[json_reply]]
        r_end = [b_ends, r_ends[json_reply]]
        r_type = [np.zeros(m + len(r_sub[1]), dtype=np.int64)]
        r_last = [np.zeros(m + len(r_sub[1]), dtype=bool)]
        if events is not None:
            body, q, last, x, y, e_type = events
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
        on_get = get[entry]
        ts[on_get] = np.nan
        # the records the order asks about: the POSTs' and the GET streams' events, as
        # read by the readings begun above (each record of the POSTs' bodies, then of
        # the streams' events: its place among them)
        early = self.joined(order, np.flatnonzero(on_get | (sub == 0)), m,
                            len(r_sub[1])) if len(self.early) == 2 else None
        extras = record_extras(entry, sub, ev, type_of, types, c2s_extra, s2c_extra, status,
                             get)
        session_of, names, others = sessions(self, facts, urls, get, endpoints, entry, sub,
                                             status, first_byte)
        del facts, urls
        if self.entries and self.reader.untimed:
            raise _HandOver  # events of no time among the entries read one by one
        # the labels, made when asked: ``<name>#entry<i>``, then ``/response`` (a JSON
        # reply) or ``/event<q>`` (the event of a stream at ``sub`` q + 1)
        labels = DocLabels(f"{self.name}#entry", entry, (sub != 0) & ~ev,
                           np.where(ev, sub - 1, -1))
        cols = Columns(buf, starts, ends, ts,  # type: ignore[arg-type]
                       (sub != 0).astype(np.int8), session_of, names,
                       ev.astype(np.int64), ("http", "sse") if ev.any() else ("http",),
                       labels, extras)
        return _Found.of(cols, entry, sub, others, get, first_byte, self.name,
                         bool(self.entries), early)

    def joined(self, order: np.ndarray, which: np.ndarray, posts: int, replies: int
               ) -> Joined | None:
        """The readings of :attr:`early` as one of the records ``which`` (of the records
        in table order; ``order``: each one's place among the POSTs' bodies, the
        ``replies`` JSON replies, then the events, as they were gathered), or None where
        one of them is neither a POST's body nor a GET stream's event (never, as the
        records are chosen)."""
        src = order[which]
        events = self.early[1]
        table = np.full(int(order.max(initial=-1)) + 1 - posts - replies, -1,
                        dtype=np.int64)  # an event's place among those read
        table[events.which] = np.arange(len(events.which))
        at = np.where(src < posts, src, -1)
        on = np.flatnonzero(src >= posts + replies)
        at[on] = np.where(table[src[on] - posts - replies] >= 0,
                          table[src[on] - posts - replies] + posts, -1)
        if (at < 0).any():
            for early in self.early:
                early.cancel()
            return None
        return Joined(self.early, which, at)

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
