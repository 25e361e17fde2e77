"""The order in which the table takes the records of a HAR: the times', and, for the
untimed events of a GET stream, a place decided from the table's own classification (an
answer right after the request it answers, any other in its stream's order between the
answers around it: :func:`_untimed_keys`).
:func:`_in_time_order` places the records of the entry-by-entry reader so, and
:class:`_Found` the records of a HAR read a column at a time (``_har_columns``) the same
way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..protocol.vocab import KINDS
from ._docspans import Columns, stamp_order
from ._har_kinds import Early, Joined, meaning
from ._har_texts import _HandOver
from ._spans import Spans
from .base import Record

__all__ = ["_Found", "_in_time_order"]


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
           name: str, read: bool = False, early: Early | Joined | None = None) -> _Found:
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
        # as ``_in_time_order``: an event of a GET stream answering a request sent
        # by POST right after it, any other in its stream's order (_untimed_keys)
        asked = np.flatnonzero(untimed | ((usual >= 0) & (cols.direction[usual] == 0)))
        kinds, _, _, first, coded = meaning(cols, usual[asked], name, early, lists=False)
        session = cols.session_of[usual[asked]]
        record = np.repeat(np.arange(len(asked)), np.diff(first))  # each frame's record
        c2s = cols.direction[usual[asked]] == 0
        # each frame's id key and progress token as codes (equal keys, equal codes; -1:
        # none), matched as integers
        assert coded is not None  # (meaning gives them)
        keys, toks = coded[0]
        one = not len(session) or bool(session.min() == session.max())
        width = int(max(keys.max(initial=-1), toks.max(initial=-1))) + 1
        answer_kinds = [KINDS.index("result"), KINDS.index("error")]
        has_tok = toks >= 0

        def first_naming(frames: np.ndarray, by: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """(session, key) -> the first of ``frames`` to name it by its key in ``by``
            (an id key or a progress token; no key names nothing), as the keys in order
            and the place in ``frames`` of each one's first. With one session (the usual),
            the key alone."""
            code = by[frames]
            named = np.flatnonzero(code >= 0)
            key = code[named] if one else session[record[frames[named]]] * width + code[named]
            distinct, at = np.unique(key, return_index=True)  # (at: each one's first)
            return distinct, named[at]

        asked_ts = slot_ts[asked]

        def times_of(which: np.ndarray, named: tuple[np.ndarray, np.ndarray],
                     frames: np.ndarray, by: np.ndarray) -> np.ndarray:
            """For each of the records ``which`` (of those asked), the time of the record
            of the frame ``named`` gives for its first frame's key in ``by`` (NaN: none)."""
            out = np.full(len(asked), np.nan)
            distinct, at = named
            code = by[which]
            key = code if one else session[which] * width + code
            i = np.minimum(np.searchsorted(distinct, key), max(len(distinct) - 1, 0))
            hit = (code >= 0) & (distinct[i] == key) if len(distinct) else \
                np.zeros(len(which), dtype=bool)
            out[which[hit]] = asked_ts[record[frames[at[i[hit]]]]]
            return out

        heads = first[:-1]
        head_kind, head_key, head_tok = kinds[heads], keys[heads], toks[heads]
        ev = untimed[asked]  # the untimed events among the records asked, in slot order
        # an untimed answer: the time of the request it answers (sent by POST)
        req = np.flatnonzero(c2s[record] & (kinds == KINDS.index("request")))
        answers = times_of(np.flatnonzero(ev & np.isin(head_kind, answer_kinds)),
                           first_naming(req, keys), req, head_key)
        # an untimed progress notification: the time of the request that gave its token
        told = req[has_tok[req]]
        prog = np.flatnonzero(ev & (head_kind == KINDS.index("notification"))
                              & has_tok[heads])
        progress = times_of(prog, first_naming(told, toks), told, head_tok)
        answers[prog] = progress[prog]
        # an untimed server request: the time of the POST that answered it
        rep = np.flatnonzero(c2s[record] & np.isin(kinds, answer_kinds))
        replied = times_of(np.flatnonzero(ev & (head_kind == KINDS.index("request"))),
                           first_naming(rep, keys), rep, head_key)
        key1 = np.where(np.isnan(slot_ts), np.inf, slot_ts)
        key2 = np.zeros(len(slot_ts), dtype=np.int64)
        u = asked[ev]
        k1, k2 = _untimed_keys(entry_of[u], answers[ev], replied[ev],
                               first_byte[entry_of[u]])
        key1[u], key2[u] = k1, k2
        return _Found(cols, at, recs, np.lexsort((key2, key1)))  # stable: ties in slot order


def _untimed_keys(stream: np.ndarray, answers: np.ndarray, replied: np.ndarray,
                  opening: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The places of the untimed events of GET streams, given in file order (``stream``:
    the stream of each; a stream's events are together, in the order it sent them), as
    ``(key1, key2)`` to sort with the timed records (their time, 0), ties in file order.

    An event that answers a request sent by POST (``answers``: that request's time, NaN
    for any other event; a progress notification answers the request that gave its
    token) goes right after the request (key2 1), or after an answer before it in its
    stream that goes later (the stream sent them in this order). Any other event keeps its
    place in its stream: just before the next answer of its stream (at that answer's
    key), after the last one where none follows, at the stream's ``opening`` (key2 0) in
    a stream with no answer placed. A server request the client answered by a POST
    (``replied``: that POST's time, NaN none) comes no later than just before it (key2
    -1). A server's progress and notifications so stay between the request they follow
    and the answer after them, as the stream sent them."""
    m = len(stream)
    key2 = np.ones(m, dtype=np.int8)
    if not m:
        return answers.astype(np.float64, copy=True), key2
    anchored = ~np.isnan(answers)
    # an answer is sent after those before it in its stream: no earlier than theirs
    lb = np.where(anchored, answers, -np.inf)
    cuts = np.flatnonzero(np.diff(stream)) + 1
    for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), m], strict=True):
        np.maximum.accumulate(lb[a:b], out=lb[a:b])
    answers = np.where(anchored, lb, np.nan)
    key1 = answers.copy()
    at = np.arange(m)
    nxt = np.minimum.accumulate(np.where(anchored, at, m)[::-1])[::-1]
    prv = np.maximum.accumulate(np.where(anchored, at, -1))
    has_next = (nxt < m) & (stream[np.minimum(nxt, m - 1)] == stream)
    has_prev = (prv >= 0) & (stream[np.maximum(prv, 0)] == stream)
    free = ~anchored
    sel = free & has_next
    key1[sel] = answers[nxt[sel]]
    sel = free & ~has_next & has_prev
    key1[sel] = answers[prv[sel]]
    sel = free & ~has_next & ~has_prev
    key1[sel] = opening[sel]
    key2[sel] = 0
    with np.errstate(invalid="ignore"):
        bound = free & (replied <= key1)  # (NaN: no reply, never)
    key1[bound] = replied[bound]
    key2[bound] = -1
    return key1, key2


inf = float("inf")


def _in_time_order(records: list[Record], untimed: dict[int, tuple[int, float | None]],
                   meaning: Any = None) -> list[Record]:
    """Sort by time, stably; place events of a GET stream that have no time causally.

    ``untimed``: each such event's stream (its entry's number) and the stream's opening.
    An event that answers a request sent by POST goes right after that request; any
    other keeps its place in its stream, just before the next answer of the stream
    (after the last, where none follows; at the stream's opening where the stream has no
    answer placed), and a server request comes before the POST that answers it
    (:func:`_untimed_keys`). The event keeps ``ts`` None: only its place is inferred.
    What a frame is (``frames``) the table decides (``meaning``), for the records whose
    place it decides: the timed client messages and the untimed events, when there are
    untimed events; with none, the order is the times' alone.
    """
    if not untimed:
        return sorted(records, key=lambda r: inf if r.ts is None else r.ts)
    asked = [r for r in records if id(r) in untimed or (
        r.direction == "c2s" and r.kind is None and r.ts is not None)]
    if meaning is not None:
        meaning(asked)
    sent: dict[tuple[object, str | None], float] = {}
    told: dict[tuple[object, str | None], float] = {}  # progress tokens given
    replies: dict[tuple[object, str | None], float] = {}
    for r in records:
        if r.direction == "c2s" and r.kind is None and r.ts is not None:
            for env in r.frames or ():
                if env.kind == "request" and env.ref is not None:
                    told.setdefault((r.session, env.ref), r.ts)
                if env.id_key is None:
                    continue
                if env.kind == "request":
                    sent.setdefault((r.session, env.id_key), r.ts)
                elif env.kind in ("result", "error"):
                    replies.setdefault((r.session, env.id_key), r.ts)
    events = [r for r in records if id(r) in untimed]  # in file order: each stream's in order
    answers = np.full(len(events), np.nan)
    replied = np.full(len(events), np.nan)
    for k, r in enumerate(events):
        if not r.frames:
            continue
        head = r.frames[0]
        if head.kind in ("result", "error") and (r.session, head.id_key) in sent:
            answers[k] = sent[(r.session, head.id_key)]
        elif head.kind == "request" and (r.session, head.id_key) in replies:
            replied[k] = replies[(r.session, head.id_key)]
        elif head.method == "notifications/progress" and (r.session, head.ref) in told:
            answers[k] = told[(r.session, head.ref)]
    stream = np.array([untimed[id(r)][0] for r in events], dtype=np.int64)
    opening = np.array([inf if (o := untimed[id(r)][1]) is None else o for r in events],
                       dtype=np.float64)
    k1, k2 = _untimed_keys(stream, answers, replied, opening)
    placed = {id(r): (a, b) for r, a, b in zip(events, k1.tolist(), k2.tolist(), strict=True)}

    def place(r: Record) -> tuple[float, int]:
        if r.ts is not None:
            return r.ts, 0
        return placed.get(id(r), (inf, 0))

    keyed = [(place(r), i, r) for i, r in enumerate(records)]
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [r for _, _, r in keyed]
