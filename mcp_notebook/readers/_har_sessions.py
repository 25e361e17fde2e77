"""The sessions of the records of a HAR read a column at a time (``_har_columns``), as
the entry-by-entry reader names them (``_Reader.session_of`` and ``events``): by the
entry's session header; else, for a request of the stateless revision, an exchange of
its own; else by its URL (the session an earlier ``endpoint`` event gave that URL, or
the URL's ``sessionId``, or the default). A GET stream's ``endpoint`` event names the
session of the events after it and of the requests to that URL after it.

The reader walks the entries one by one. Here, where no entry is read one by one, the
entries between two that carry ``endpoint`` events name their sessions by the same
rules from the same facts, so each distinct (facts, URL, GET) of such a run is looked at
once, in file order (the sessions are coded in the order they first come, as entry by
entry): ``tests/readers/test_har_columns.py`` holds the two equal.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import numpy as np

from .base import Record

__all__ = ["sessions"]


def sessions(c: Any, facts: list[tuple[Any, ...]], urls: list[str], get: np.ndarray,
             endpoints: dict[int, list[tuple[int, str]]], entry: np.ndarray,
             sub: np.ndarray, status: list[int | None], first_byte: np.ndarray
             ) -> tuple[np.ndarray, tuple[str, ...], list[tuple[int, int, Record]]]:
    """The session of each record (``entry``, ``sub``: its entry and place, in file
    order) as codes, the names (made valid Unicode, in the order they first come), and
    the endpoint events' records (each with its entry and its place in the stream).
    ``c``: the column reader (its ``reader``, ``entries`` read one by one, ``escaped``,
    ``default``, ``session_from_url`` and ``name``)."""
    url_sessions: dict[str, str] = {}
    # an endpoint URL (with query) -> its session (the reader's, for the entries it
    # reads one by one)
    old: dict[str, str] = c.reader.old_sessions if c.entries else {}
    read = c.entries
    names: dict[str, int] = {}  # a session as valid Unicode -> its code
    codes: dict[str, int] = {}  # a session -> its code
    others: list[tuple[int, int, Record]] = []
    switch: dict[int, list[tuple[int, int]]] = {}  # GET entry -> (event, code) changes

    def code_of(session: str) -> int:
        code = codes.get(session)
        if code is None:
            named = c.escaped(session)
            code = names.get(named)
            if code is None:
                code = names[named] = len(names)
            codes[session] = code
        return code

    def session_of(i: int, f: tuple[Any, ...], is_get: bool) -> str:
        session = f[0]
        if session is None:
            url = urls[i]
            if f[1] and not is_get:
                session = f"{c.default} entry {i}"
            elif url in old:
                session = old[url]
            else:
                session = url_sessions.get(url)
                if session is None:
                    session = url_sessions[url] = c.session_from_url(url) or c.default
        return session  # type: ignore[no-any-return]

    def endpoint_events(i: int) -> None:
        for q, data in endpoints[i]:
            try:
                url = urljoin(urls[i], data.strip())
            except ValueError:  # a URL that cannot be parsed: taken as written
                url = data.strip()
            session = c.session_from_url(url) or url
            old[url] = session
            switch.setdefault(i, []).append((q, code_of(session)))
            st = status[i]
            base: dict[str, Any] = {"http": "GET"} if st is None else \
                {"http": "GET", "status": st}
            others.append((i, q, Record(
                raw=data, ts=float(first_byte[i]) if q == 0 else None,
                session=c.escaped(session), stream="sse",
                source=f"{c.name}#entry{i}/event{q}", kind="log",
                extra={**base, "sse_event": "endpoint", "endpoint": url})))

    firsts = dict(zip(map(id, facts), facts, strict=True))  # the distinct facts, in order
    ent = np.asarray(entry, dtype=np.int64)
    if not read and not endpoints and all(f[0] is not None for f in firsts.values()):
        # every entry names its session by a header: each distinct facts looked at
        # once, the sessions coded in the order they first come, as below
        code_by = {i: code_of(f[0]) for i, f in firsts.items()}
        out = np.fromiter(map(code_by.__getitem__, map(id, facts)), dtype=np.int64,
                          count=len(facts))[ent]
        return out, tuple(names), others
    getl = get.tolist()
    if read:  # entries read by the reader, in file order (its endpoint events too)
        by_entry: list[int] = []
        for i, f in enumerate(facts):
            if i in read:
                others.extend((i, q, rec) for q, rec in enumerate(c.reader.records_of(
                    read[i])))
                by_entry.append(-1)
                continue
            by_entry.append(code_of(session_of(i, f, getl[i])))
            if i in endpoints:
                endpoint_events(i)
        by = np.array(by_entry, dtype=np.int64)
    else:
        by = _by_runs(facts, firsts, urls, get, sorted(endpoints),
                      lambda i: code_of(session_of(i, facts[i], getl[i])),
                      endpoint_events)
    out = by[ent]
    if switch:  # the events after an endpoint event: its session
        # the records are in entry order: each GET's are one run of them; within
        # it, a later endpoint event's session wins, as it is applied after
        sb = np.asarray(sub, dtype=np.int64)
        for i, changes in switch.items():
            lo, hi = np.searchsorted(ent, (i, i + 1)).tolist()
            event = sb[lo:hi] - 1  # -1: the request (sub 0), never switched
            run = out[lo:hi]
            for q, code in changes:
                run[event > q] = code
    return out, tuple(names), others


def _by_runs(facts: list[tuple[Any, ...]], firsts: dict[int, tuple[Any, ...]],
             urls: list[str], get: np.ndarray, points: list[int], code: Any,
             endpoint_events: Any) -> np.ndarray:
    """The session code of each entry, ``code(i)`` called once for the first entry of
    each distinct (facts, URL, GET) of each run of entries up to one with endpoint
    events (``points``, whose ``endpoint_events`` are read after the codes of its run:
    after the entry's own, as entry by entry), in file order; a stateless request
    (its own exchange) is its own."""
    n = len(facts)
    fcode = {i: k for k, i in enumerate(firsts)}
    f_of = np.fromiter(map(fcode.__getitem__, map(id, facts)), dtype=np.int64, count=n)
    ucode = {u: k for k, u in enumerate(dict.fromkeys(urls))}
    u_of = np.fromiter(map(ucode.__getitem__, urls), dtype=np.int64, count=n)
    alone = np.fromiter((f[1] for f in firsts.values()), dtype=bool,
                        count=len(firsts))[f_of] & ~get
    run = np.searchsorted(np.asarray(points, dtype=np.int64), np.arange(n), side="left")
    # (run, facts, URL, GET) numbered a pair at a time (no product can overflow)
    key = np.unique(run * len(firsts) + f_of, return_inverse=True)[1].reshape(-1)
    key = np.unique(key * len(ucode) + u_of, return_inverse=True)[1].reshape(-1) * 2 + get
    top = int(key.max()) + 1 if n else 0
    key[alone] = top + np.flatnonzero(alone)  # each its own
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    got = np.empty(len(first), dtype=np.int64)
    order = np.argsort(first, kind="stable")
    p = 0
    for k, i in zip(order.tolist(), first[order].tolist(), strict=True):
        while p < len(points) and points[p] < i:
            endpoint_events(points[p])
            p += 1
        got[k] = code(i)
    for i in points[p:]:
        endpoint_events(i)
    return got[inverse.reshape(-1)]
