"""The entry-by-entry reader of a HAR: the records of each entry (its request, its JSON
reply or the events of its SSE stream, the log rows of what is not a message), their
sessions, and the order the table takes them in; for a usual HAR, those records as spans
of one buffer, unless the column path (``_har_columns``) reads the file first. How the
entries become records is described in ``har``'s docstring."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import msgspec

from ._docspans import Doc, stamp_order
from ._har_columns import columns as _columns
from ._har_entry import MCP_HEADERS
from ._har_load import _decode_entry, _Entry, _Loader, mcp_endpoints
from ._har_order import _in_time_order
from ._har_session import _endpoint, _session_from_url, _stateless
from ._har_unicode import _escaped, _sessions_checked, _unicode_checked
from ._logtext import looks_like_json
from ._spans import Spans
from ._sse import SSEEvent, parse_sse, simple_spans
from ._time import read_time
from .base import Record, refused

__all__ = ["_Reader"]


class _Reader(_Loader):
    def __init__(self, path: Path, session: str | None) -> None:
        super().__init__(path, session)
        self.old_sessions: dict[str, str] = {}  # endpoint URL (with query) -> session
        # GET-stream event -> its stream (the entry's number) and the stream's opening
        self.untimed: dict[int, tuple[int, float | None]] = {}
        #: the usual records of a typed decoding, as places in one buffer (None: records)
        self.doc: Doc | None = None
        self._checked: Callable[[Record], Record] = _unicode_checked
        #: some entry's event stream is not in the capture (:meth:`not_held`)
        self.unheld = False

    def blocks(self) -> Iterator[Record | Spans]:
        """The records of :meth:`run`, the usual ones of a typed decoding as spans of one
        buffer of their texts (in the order the table would arrange them)."""
        held = [self.mapped()]
        found = _columns(held[0], self.name, self.default, _stateless, _escaped,
                         _session_from_url, self)
        if found is not None:  # a usual HAR, read a column at a time
            yield from found.blocks(self.name)
            return
        # the column path may have read some entries (``others``): the reader starts afresh
        self.old_sessions, self.untimed, self.typed = {}, {}, False
        self._checked = _unicode_checked
        entries, problem = self.load(held)
        if entries is None or not self.typed or any(
                e.sse and (e.method != "POST" or e.sse_events is not None) for e in entries):
            # events that may have no time (a GET stream's, a stamped stream's): their
            # place is decided from what they are, by the arrange step of the records
            yield from self.run(entries, problem)
            return
        endpoints = mcp_endpoints(entries)
        self.unheld = any(map(self.not_held, entries))
        doc = self.doc = Doc(self.name)
        checked = _sessions_checked()
        skipped: list[_Entry] = []
        for e in entries:
            if not e.is_mcp(endpoints):
                skipped.append(e)
                continue
            for rec in self.entry(e):
                checked(rec)
                if rec.kind is None and rec.raw:
                    doc.text(rec.raw.encode("utf-8", "surrogateescape"), rec.ts,
                             rec.direction, rec.session or "", rec.stream, rec.source,
                             rec.extra)
                else:
                    doc.record(rec)
            e.reply = e.body = None  # the texts, once in the buffer, are let go
        del entries
        if skipped:
            doc.record(checked(self.skipped(skipped)))
        # only the events of a GET stream or of a stamped stream are left untimed
        assert not self.untimed
        yield from doc.blocks(stamp_order(doc.times()))  # in time order, as ``arrange``
        for rec in self.bad:
            yield _unicode_checked(rec)

    def others(self, raws: dict[int, bytes], post_urls: Iterable[str]
               ) -> dict[int, _Entry] | None:
        """The entries the column path does not read as columns (``raws``: their JSON, by
        number), read as :meth:`load` reads them; None when one cannot be read so, or is
        not MCP traffic (the entry-by-entry path then reads the whole document).
        ``post_urls``: the URLs of the POSTs read as columns (all of JSON bodies)."""
        out: dict[int, _Entry] = {}
        for i, raw in raws.items():
            try:
                out[i] = _Entry(i, _decode_entry(raw))
            except (msgspec.DecodeError, ValueError, TypeError, OverflowError):
                return None
        posted = {_endpoint(u) for u in set(post_urls)}
        endpoints = posted | mcp_endpoints(out.values(), fallback=not posted)
        if not all(e.is_mcp(endpoints) for e in out.values()):
            return None
        self.typed = True
        self._checked = _sessions_checked()
        return out

    def records_of(self, e: _Entry) -> list[Record]:
        """The records of one entry read by :meth:`others`, as :meth:`run` gives them
        (sessions made valid Unicode)."""
        return [self._checked(rec) for rec in self.entry(e)]

    def skipped(self, skipped: list[_Entry]) -> Record:
        urls = sorted({f"{e.method} {_endpoint(e.url)}" for e in skipped})
        return Record(raw=f"{len(skipped)} HAR entries are not MCP traffic and were "
                      f"left out: {', '.join(urls[:5])}" + (" ..." if len(urls) > 5
                                                            else ""),
                      session=self.default, stream="http", source=self.name,
                      kind="log", extra={"skipped_entries": [e.index for e in skipped]})

    def run(self, entries: list[_Entry] | None = None, problem: str | None = None
            ) -> Iterator[Record]:
        if entries is None and problem is None:
            entries, problem = self.load()
        if entries is None:
            yield Record(raw="", session=self.default, stream="http", source=self.name,
                         kind="invalid", reason=problem)
            return
        endpoints = mcp_endpoints(entries)
        self.unheld = any(map(self.not_held, entries))
        out: list[Record] = []
        skipped: list[_Entry] = []
        for e in entries:
            if e.is_mcp(endpoints):
                out.extend(self.entry(e))
                e.reply = None  # an SSE body, once its events are records, is let go
            else:
                skipped.append(e)
        del entries
        if skipped:
            out.append(self.skipped(skipped))
        untimed = self.untimed

        def arrange(records: list[Record], meaning: Any) -> list[Record]:
            return _in_time_order(records, untimed, meaning)

        # msgspec refuses a lone surrogate, so the texts of a typed decoding need no check;
        # a session named by the caller still does (once per name)
        checked = _sessions_checked() if self.typed else _unicode_checked
        for rec in out:  # in file order; the table puts them in time order (``arrange``)
            rec.arrange = arrange
            yield checked(rec)
        for rec in self.bad:
            yield _unicode_checked(rec)

    # -- one entry -------------------------------------------------------------------------

    def session_of(self, e: _Entry) -> str:
        header = e.session_header()
        if header:
            return header
        if e.method == "POST" and _stateless(e.req_headers.get("mcp-protocol-version")):
            return f"{self.default} entry {e.index}"
        if e.url in self.old_sessions:
            return self.old_sessions[e.url]
        return _session_from_url(e.url) or self.default

    #: the member an entry's start time is read from (``ts_error`` names it)
    STAMP = "startedDateTime"

    def heading(self, e: _Entry) -> tuple[str, str, dict[str, Any]]:
        """``(source, session, extra)`` of the records of an entry: the HTTP facts every
        one of them carries."""
        base: dict[str, Any] = {"http": e.method}
        if e.status is not None:
            base["status"] = e.status
        if e.ts_error:
            base["ts_error"] = f"{self.STAMP}: {e.ts_error}"
        return f"{self.name}#entry{e.index}", self.session_of(e), base

    def not_held(self, e: _Entry) -> bool:
        """Whether the entry is an event stream the capture does not hold (no body and no
        stamped events: a browser's HAR keeps none of a stream's)."""
        return e.sse and not e.reply and e.sse_events is None

    def entry(self, e: _Entry) -> Iterator[Record]:
        """The records of an entry (:meth:`records`). Where the capture lacks some event
        stream (:attr:`unheld`), what the client POSTed may answer a request made on such a
        stream (``extra["request_not_held"]``), and, where the reply held no message, has
        its answer, if any, on one (``extra["answer_not_held"]``). These are facts of the
        capture, not of the messages (the reader does not classify them): the rules read
        them where they matter, ``orphan-response`` on a response, ``unanswered-request``
        on a request, and do not report those."""
        if not self.unheld or e.method != "POST" or e.body is None:
            yield from self.records(e)
            return
        recs = list(self.records(e))
        # its reply holds messages: JSON, or an event stream the capture holds (read from
        # the entry: the reader's document may take a stream's events without records)
        reply = e.reply.strip() if e.reply else ""
        replied = bool(reply) and (e.sse or looks_like_json(reply))
        for r in recs:
            if r.direction != "c2s" or r.kind is not None:
                continue
            r.extra["request_not_held"] = True
            if not replied:
                r.extra["answer_not_held"] = True
        yield from recs

    def records(self, e: _Entry) -> Iterator[Record]:
        src, session, base = self.heading(e)
        failed = e.status is not None and e.status >= 400
        text = e.reply if e.reply and not e.reply.isspace() else None  # strip: a copy
        said = refused(e.status, "www-authenticate" in e.resp_headers)
        if e.method == "POST" and said and not e.sse:
            yield from self.refused_records(e, session, src, base, text, said)
            return
        note = e.proxy_error
        aborted = e.aborted
        unreachable = isinstance(note, str) and not aborted  # the 502 body is the proxy's
        # a short non-JSON reply to a POST ("Accepted") is a fact about the request
        plain = text is not None and not e.sse and not looks_like_json(text) and not unreachable
        if e.method == "POST":
            extra = dict(base)
            if e.incomplete:
                extra["incomplete"] = True  # the capture stopped before the reply ended
            if plain and not failed:
                extra["reply"] = text[:200] if text else text
            mcp = {k: v for k in MCP_HEADERS if (v := e.req_headers.get(k)) is not None}
            if mcp:  # the headers 2026-07-28 requires to match the body (conversation rules)
                extra["mcp_headers"] = mcp
            if e.body is None:
                yield Record(raw="", ts=e.start, direction="c2s", session=session,
                             stream="http", source=src, kind="invalid", extra=extra,
                             reason="a POST whose body the HAR does not hold")
            else:
                yield self.truncated(Record(raw=e.body, ts=e.start, direction="c2s",
                                            session=session, stream="http", source=src,
                                            extra=extra), e.post_truncated)
        if isinstance(note, str):  # the recording proxy's own note on this exchange
            yield Record(raw=note, ts=e.end, session=session, stream="http", source=src,
                         kind="log", extra={**base, "proxy_error": note,
                                            **({"aborted": aborted} if aborted else {})})
            if unreachable:
                return
        if e.sse:
            yield from self.events(e, session, src, base, failed)
        elif text is not None and not (plain and not failed and e.method == "POST"):
            extra = dict(base)
            rec = Record(raw=text, ts=e.end, direction="s2c", session=session,
                         stream="http", source=f"{src}/response", extra=extra)
            if failed:
                extra["transport_error"] = e.status
            if plain:
                rec.kind, rec.direction = "log", None
            yield self.truncated(rec, e.content_truncated)
        elif e.method != "POST":
            line = f"{e.method} {e.url} -> {e.status}"
            if e.method == "GET" and e.status == 200:
                line += " (stream body not captured)"
            yield Record(raw=line, ts=e.start, session=session, stream="http", source=src,
                         kind="log", extra=dict(base))

    @staticmethod
    def refused_records(e: _Entry, session: str, src: str, base: dict[str, Any],
                        text: str | None, said: str) -> Iterator[Record]:
        """A POST answered by an authorization challenge (``said``: why, from
        :func:`.base.refused`): its message never reached MCP, so it is no frame (no
        request left unanswered, none in flight when the client sends it again once
        authorized). The body and the reply are ``log`` rows that say so."""
        yield Record(raw=e.body or "", ts=e.start, session=session, stream="http", source=src,
                     kind="log", reason=f"refused by the server ({said})",
                     extra={**base, "refused": said})
        if text is not None:
            yield Record(raw=text, ts=e.end, session=session, stream="http",
                         source=f"{src}/response", kind="log",
                         extra={**base, "transport_error": e.status})

    @staticmethod
    def truncated(rec: Record, size: Any) -> Record:
        if size:
            rec.kind = "invalid"
            rec.reason = (f"the capture kept only the first part of this body (full size "
                          f"{size} bytes)")
            rec.extra["truncated_bytes"] = size
        return rec

    def events(self, e: _Entry, session: str, src: str, base: dict[str, Any],
               failed: bool) -> Iterator[Record]:
        stamped = e.sse_events
        if self.doc is not None and e.method == "POST" and e.reply and not (
                isinstance(stamped, list) and all(isinstance(x, dict) for x in stamped)) \
                and self.doc_events(e, session, src, base, failed):
            return
        start = e.first_byte if e.first_byte is not None else e.start
        if isinstance(stamped, list) and all(isinstance(x, dict) for x in stamped):
            events = [_from_proxy(i, x) for i, x in enumerate(stamped)]
            read = [read_time(x.get("t"), numbers=False) for x in stamped]
            times: list[float | None] = [t for t, _ in read]
            problems = [p for _, p in read]
            estimated = False
        else:
            events = parse_sse(e.reply or "")
            estimated = e.method == "POST"
            if estimated:  # the reply stream of one POST: bounded by the entry's timings
                times = [e.first_byte] * len(events)
                if events:
                    times[-1] = e.end
            else:  # a GET stream's events may arrive at any time while it is open
                times = [None] * len(events)
            problems = [None] * len(events)
        if not e.reply and not events:
            yield Record(raw=f"{e.method} {e.url} -> {e.status} (stream body not captured)",
                         ts=e.start, session=session, stream="http", source=src, kind="log",
                         extra=dict(base))
            return
        for ev, ts, problem in zip(events, times, problems, strict=True):
            if ev.event == "endpoint":  # 2024-11-05: where to POST, naming the session
                try:
                    url = urljoin(e.url, (ev.data or "").strip())
                except ValueError:  # a URL that cannot be parsed: taken as written
                    url = (ev.data or "").strip()
                session = _session_from_url(url) or url
                self.old_sessions[url] = session
                if ts is None and ev.index == 0:
                    ts = e.first_byte  # sent as the stream opens
                yield Record(raw=ev.data or "", ts=ts, session=session, stream="sse",
                             source=f"{src}/event{ev.index}", kind="log",
                             extra={**base, "sse_event": "endpoint", "endpoint": url})
                continue
            if ev.empty:
                continue  # priming event, keep-alive comment, retry hint
            extra = dict(base)
            if ev.id is not None:
                extra["event_id"] = ev.id
            if ev.event not in (None, "message"):
                extra["sse_event"] = ev.event
            if not ev.complete:
                extra["sse_incomplete"] = True
            if estimated:
                extra["ts_estimated"] = True
            if problem:
                extra["ts_error"] = f"_sseEvents[{ev.index}].t: {problem}"
            if failed:
                extra["transport_error"] = e.status
            rec = Record(raw=ev.data or "", ts=ts, direction="s2c", session=session,
                         stream="sse", source=f"{src}/event{ev.index}", extra=extra)
            if ts is None and not estimated:
                self.untimed[id(rec)] = (e.index, start)
            yield rec

    def doc_events(self, e: _Entry, session: str, src: str, base: dict[str, Any],
                   failed: bool) -> bool:
        """The events of a POST's reply stream made only of usual events (as
        :func:`parse_sse` reads them), straight into the reader's :class:`Doc` as places
        in the body's bytes: the records :meth:`events` makes, with no event or record
        object. False (nothing added) for any other body."""
        body = (e.reply or "").encode("utf-8", "surrogateescape")
        found = simple_spans(body)
        if not found or any(t == b"endpoint" for _, _, t in found):
            return False
        doc = self.doc
        assert doc is not None
        add = doc.text
        view = memoryview(body)
        session = _escaped(session)
        usual = dict(base)
        usual["ts_estimated"] = True
        if failed:
            usual["transport_error"] = e.status
        typed: dict[bytes, dict[str, Any]] = {}
        last = len(found) - 1
        first, end = e.first_byte, e.end
        for i, (a, b, t) in enumerate(found):
            if a == b:
                continue
            if body[a] not in _OPENS:  # not a JSON object or array: blank only?
                data = body[a:b].decode("utf-8", "surrogateescape")
                if data.isspace():
                    continue  # priming event, keep-alive comment
            if t is None or t == b"message":
                extra = usual
            else:
                extra = typed.get(t)  # type: ignore[assignment]
                if extra is None:
                    kind = t.decode("utf-8", "surrogateescape")
                    extra = typed[t] = {**base, "sse_event": kind, "ts_estimated": True}
                    if failed:
                        extra["transport_error"] = e.status
            add(view[a:b], end if i == last else first, "s2c", session, "sse",
                f"{src}/event{i}", extra)
        return True


#: the first bytes of an event's data that cannot be blank
_OPENS = frozenset(b"{[")


def _from_proxy(index: int, x: dict[str, Any]) -> SSEEvent:
    data = x.get("data")
    retry = x.get("retry")
    return SSEEvent(index, data if isinstance(data, str) else None,
                    x.get("event") if isinstance(x.get("event"), str) else None,
                    x.get("id") if isinstance(x.get("id"), str) else None,
                    int(retry) if isinstance(retry, str) and retry.isdigit() else None,
                    complete=not x.get("_unterminated"),
                    comment=x.get("comment") if isinstance(x.get("comment"), str) else None)
