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

from typing import Any

import msgspec
import numpy as np

from ._docspans import Columns
from ._har_entry import MCP_HEADERS, headers_of
from ._har_entry import _Header as _Header  # the typed decoding's header
from ._sse import simple_spans
from ._time import read_times

__all__ = ["columns", "RUN"]

#: how many bodies are decoded into strings at once
RUN = 1 << 14
_NULL = msgspec.Raw(b"null")


class _Body(msgspec.Struct, gc=False):
    text: msgspec.Raw = _NULL
    encoding: Any = None
    alt_encoding: Any = msgspec.field(default=None, name="_encoding")
    mimeType: Any = None  # noqa: N815 - HAR's member name
    sse_events: msgspec.Raw = msgspec.field(default=_NULL, name="_sseEvents")
    truncated: Any = msgspec.field(default=None, name="_truncated")


class _Request(msgspec.Struct, gc=False):
    method: Any = ""
    url: Any = ""
    headers: msgspec.Raw = _NULL
    postData: _Body | None = None  # noqa: N815 - HAR's member name


class _Response(msgspec.Struct, gc=False):
    status: Any = None
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
    proxy_error: Any = msgspec.field(default=None, name="_proxyError")
    incomplete: Any = msgspec.field(default=None, name="_incomplete")


class _Log(msgspec.Struct, gc=False):
    entries: list[_Entry]


class _Doc(msgspec.Struct, gc=False):
    log: _Log


_decode_doc = msgspec.json.Decoder(_Doc).decode
_decode_texts = msgspec.json.Decoder(list[str]).decode
_decode_headers = msgspec.json.Decoder(list[_Header] | None).decode
_decode_text = msgspec.json.Decoder(str).decode
_JSON_OPEN = (b'"{', b'"[')
_OPENS = frozenset(b"{[")
_NO_TIMINGS = _Timings()


class _HandOver(Exception):
    """The document is not one this path reads: the entry-by-entry path reads it."""


def _headers(cache: dict[bytes, dict[str, str | None]], raw: msgspec.Raw
             ) -> dict[str, str | None]:
    key = bytes(raw)
    found = cache.get(key)
    if found is None:
        try:
            found = cache[key] = headers_of(_decode_headers(key))
        except msgspec.DecodeError:
            raise _HandOver from None
    return found


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

    def read(self, held: list[list[_Entry]]) -> Columns | None:
        entries = held.pop()  # the structs are let go once read
        n = len(entries)
        if not n:
            return None
        hcache: dict[bytes, dict[str, str | None]] = {}
        url_sessions: dict[str, str] = {}
        sessions: dict[str, int] = {}  # a session -> its code
        names: dict[str, int] = {}  # a session as valid Unicode -> its code
        post_extras: dict[tuple[Any, ...], dict[str, Any]] = {}
        base_extras: dict[tuple[Any, ...], dict[str, Any]] = {}
        # per entry
        starts_txt: list[str] = []
        times: list[float | None] = []
        tims: list[_Timings] = []
        # per record, in file order
        raws: list[msgspec.Raw] = []  # each record's body (an SSE reply: once, its events)
        kinds: list[int] = []  # 0: POST body, 1: JSON reply, 2: SSE reply
        entry_of: list[int] = []  # the entry of each of ``raws``
        session_of: list[int] = []  # by entry
        c2s_extra: list[dict[str, Any]] = []  # by entry
        s2c_extra: list[dict[str, Any]] = []  # by entry (also the SSE events' base)
        status_of: list[Any] = []  # by entry (the SSE events' extras)
        for i, e in enumerate(entries):
            req, resp = e.request, e.response
            post = req.postData
            if req.method != "POST" or post is None or type(req.url) is not str \
                    or e.proxy_error.__class__ is str or post.truncated:
                raise _HandOver
            body = post.text
            if bytes(memoryview(body)[:2]) not in _JSON_OPEN:
                if bytes(memoryview(body)[:1]) != b'"' or not _looks_like_json(
                        _decode_text(body)):
                    raise _HandOver  # no body, or one that is not JSON: not this path
            if post.encoding == "base64" or post.alt_encoding == "base64":
                raise _HandOver
            rq = _headers(hcache, req.headers)
            rs = _headers(hcache, resp.headers)
            status = resp.status
            if not isinstance(status, int):
                status = None
            elif status >= 400:
                raise _HandOver  # transport errors: their own extras
            content = resp.content
            reply = _NULL if content is None else content.text
            if content is not None:
                if content.sse_events != _NULL or content.truncated:
                    raise _HandOver
                if reply != _NULL and (content.encoding == "base64"
                                       or content.alt_encoding == "base64"):
                    raise _HandOver
                mime = rs.get("content-type") or str(content.mimeType or "")
            else:
                mime = rs.get("content-type") or ""
            sse = "text/event-stream" in mime.lower()
            # the reply: JSON (a record), a short text (a fact of the POST), or nothing
            plain: str | None = None
            what = 0
            if reply != _NULL:
                rb = bytes(memoryview(reply)[:2])
                if rb in _JSON_OPEN:
                    what = 2 if sse else 1
                elif rb[:1] != b'"':
                    raise _HandOver  # a reply text that is not a string
                else:
                    text = _decode_text(reply)
                    if text and not text.isspace():
                        if sse:
                            what = 2
                        elif _looks_like_json(text):
                            what = 1
                        else:
                            plain = text[:200]
                    elif sse:
                        raise _HandOver  # a stream with no body: a log row
            elif sse:
                raise _HandOver
            # the session (as ``_Reader.session_of``, with no endpoint event read)
            header = rq.get("mcp-session-id") or rs.get("mcp-session-id")
            if header:
                session = header
            elif self.stateless(rq.get("mcp-protocol-version")):
                session = f"{self.default} entry {i}"
            else:
                session = url_sessions.get(req.url)  # type: ignore[assignment]
                if session is None:
                    session = url_sessions[req.url] = self.session_from_url(req.url) \
                        or self.default
            code = sessions.get(session)
            if code is None:  # as the reader's check makes it valid Unicode, once a name
                named = self.escaped(session)
                code = names.get(named)
                if code is None:
                    code = names[named] = len(names)
                sessions[session] = code
            session_of.append(code)
            # the extras (one dict per distinct set of facts)
            incomplete = bool(e.incomplete)
            mcp = tuple((k, v) for k in MCP_HEADERS if (v := rq.get(k)) is not None)
            skey = (status.__class__, status)
            key = (*skey, incomplete, plain, mcp)
            extra = post_extras.get(key)
            if extra is None:
                extra = {"http": "POST"}
                if status is not None:
                    extra["status"] = status
                if incomplete:
                    extra["incomplete"] = True
                if plain is not None:
                    extra["reply"] = plain
                if mcp:
                    extra["mcp_headers"] = dict(mcp)
                post_extras[key] = extra
            c2s_extra.append(extra)
            extra = base_extras.get(skey)
            if extra is None:
                extra = base_extras[skey] = {"http": "POST"}
                if status is not None:
                    extra["status"] = status
            s2c_extra.append(extra)
            status_of.append(status)
            raws.append(body)
            kinds.append(0)
            entry_of.append(i)
            if what:
                raws.append(reply)
                kinds.append(what)
                entry_of.append(i)
            starts_txt.append(e.startedDateTime)
            times.append(e.time)
            tims.append(e.timings or _NO_TIMINGS)
        del entries
        start, problems = read_times(starts_txt, numbers=False)  # type: ignore[arg-type]
        if problems or np.isnan(start).any():
            raise _HandOver
        first_byte, end = self.spans(start, times, tims)
        return self.records(raws, kinds, entry_of, session_of, names, c2s_extra,
                            s2c_extra, status_of, start, first_byte, end)

    @staticmethod
    def spans(start: np.ndarray, times: list[float | None], tims: list[_Timings]
              ) -> tuple[np.ndarray, np.ndarray]:
        """``Entry.span`` of every entry: its first byte and its end."""
        cols = [np.array([getattr(t, f) for t in tims], dtype=np.float64)
                for f in ("blocked", "dns", "connect", "send", "wait", "receive")]
        ms = [_ms(c) for c in cols]
        five = np.stack(ms[:5])
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

    def records(self, raws: list[msgspec.Raw], kinds: list[int], entry_of: list[int],
                session_of: list[int], names: dict[str, int],
                c2s_extra: list[dict[str, Any]], s2c_extra: list[dict[str, Any]],
                status_of: list[Any], start: np.ndarray, first_byte: np.ndarray,
                end: np.ndarray) -> Columns:
        name = self.name
        buf = bytearray()
        r_start: list[int] = []
        r_end: list[int] = []
        r_ts: list[float] = []
        r_dir: list[int] = []
        r_sess: list[int] = []
        r_stream: list[int] = []
        labels: list[str] = []
        extras: dict[int, dict[str, Any]] = {}
        start_l, first_l, end_l = start.tolist(), first_byte.tolist(), end.tolist()
        typed: dict[tuple[Any, ...], dict[str, Any]] = {}
        usual: dict[tuple[Any, ...], dict[str, Any]] = {}
        any_sse = False
        for c in range(0, len(raws), RUN):
            chunk = raws[c:c + RUN]
            texts = _decode_texts(b"[" + b",".join(chunk) + b"]")
            del chunk
            pieces = [t.encode() for t in texts]
            del texts
            at = len(buf)
            buf += b"".join(pieces)
            for j, piece in enumerate(pieces):
                k = c + j
                i = entry_of[k]
                kind = kinds[k]
                b = at + len(piece)
                if kind == 0:
                    r_start.append(at)
                    r_end.append(b)
                    r_ts.append(start_l[i])
                    r_dir.append(0)
                    r_sess.append(session_of[i])
                    r_stream.append(0)
                    extras[len(labels)] = c2s_extra[i]
                    labels.append(f"{name}#entry{i}")
                elif kind == 1:
                    r_start.append(at)
                    r_end.append(b)
                    r_ts.append(end_l[i])
                    r_dir.append(1)
                    r_sess.append(session_of[i])
                    r_stream.append(0)
                    extras[len(labels)] = s2c_extra[i]
                    labels.append(f"{name}#entry{i}/response")
                else:
                    found = simple_spans(piece)
                    if not found or any(t == b"endpoint" for _, _, t in found):
                        raise _HandOver
                    last = len(found) - 1
                    status = status_of[i]
                    skey = (status.__class__, status)
                    src = f"{name}#entry{i}"
                    for q, (x, y, t) in enumerate(found):
                        if x == y:
                            continue
                        if piece[x] not in _OPENS and piece[x:y].decode(
                                "utf-8", "surrogateescape").isspace():
                            continue  # priming event, keep-alive comment
                        if t is None or t == b"message":
                            extra = usual.get(skey)
                            if extra is None:
                                extra = usual[skey] = {**s2c_extra[i], "ts_estimated": True}
                        else:
                            extra = typed.get((*skey, t))
                            if extra is None:
                                extra = typed[(*skey, t)] = {
                                    **s2c_extra[i],
                                    "sse_event": t.decode("utf-8", "surrogateescape"),
                                    "ts_estimated": True}
                        r_start.append(at + x)
                        r_end.append(at + y)
                        r_ts.append(end_l[i] if q == last else first_l[i])
                        r_dir.append(1)
                        r_sess.append(session_of[i])
                        r_stream.append(1)
                        any_sse = True
                        extras[len(labels)] = extra
                        labels.append(f"{src}/event{q}")
                at = b
        return Columns(buf, np.array(r_start, dtype=np.int64),  # type: ignore[arg-type]
                       np.array(r_end, dtype=np.int64), np.array(r_ts, dtype=np.float64),
                       np.array(r_dir, dtype=np.int8), np.array(r_sess, dtype=np.int64),
                       tuple(names), np.array(r_stream, dtype=np.int64),
                       ("http", "sse") if any_sse else ("http",), labels, extras)


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    return head == "{" or head == "["
