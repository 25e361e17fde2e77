"""The order in which the table takes the records of a HAR: the times', and, for the
untimed events of a GET stream, a place decided from the table's own classification (an
answer right after the request it answers, any other at its stream's opening).
:func:`_in_time_order` places the records of the entry-by-entry reader so, and
:class:`_Found` the records of a HAR read a column at a time (``_har_columns``) the same
way."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from ..protocol.vocab import KINDS
from ._docspans import Columns, stamp_order
from ._har_kinds import Early, meaning
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
           name: str, read: bool = False, early: Early | None = None) -> _Found:
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
        # by POST right after it, any other at the opening of its stream
        asked = np.flatnonzero(untimed | ((usual >= 0) & (cols.direction[usual] == 0)))
        kinds, id_key, first = meaning(cols, usual[asked], name, early)
        session = cols.session_of[usual[asked]]
        record = np.repeat(np.arange(len(asked)), np.diff(first))  # each frame's record
        c2s = cols.direction[usual[asked]] == 0
        # each request sent: (session, id key) -> the first to name it (the pairs given
        # in reverse, the first of each wins); no id key names nothing. With one
        # session (the usual), the id key alone
        req = np.flatnonzero(c2s[record] & (kinds == KINDS.index("request")))
        keys = np.fromiter(id_key, dtype=object, count=len(id_key))
        one = not len(session) or bool(session.min() == session.max())
        req_at = req[::-1]
        sent: dict[Any, int] = dict(zip(
            keys[req_at].tolist() if one else
            zip(session[record[req_at]].tolist(), keys[req_at].tolist(), strict=True),
            range(len(req) - 1, -1, -1), strict=True))
        for s in [None] if one else set(session[record[req]].tolist()):
            sent.pop(None if one else (s, None), None)
        key1 = np.where(np.isnan(slot_ts), np.inf, slot_ts)
        key2 = np.zeros(len(slot_ts), dtype=np.int64)
        key1[untimed] = first_byte[entry_of[untimed]]
        heads = first[:-1]
        answer = untimed[asked] & np.isin(kinds[heads], [KINDS.index("result"),
                                                         KINDS.index("error")])
        ans = np.flatnonzero(answer)
        asking = keys[heads[ans]].tolist() if one else zip(
            session[ans].tolist(), keys[heads[ans]].tolist(), strict=True)
        got = np.fromiter(map(sent.get, asking, repeat(-1)), dtype=np.int64, count=len(ans))
        found = got >= 0
        if found.any():
            placed_at = asked[ans[found]]
            key1[placed_at] = slot_ts[asked][record[req]][got[found]]
            key2[placed_at] = 1
        return _Found(cols, at, recs, np.lexsort((key2, key1)))  # stable: ties in slot order


inf = float("inf")


def _in_time_order(records: list[Record], untimed: dict[int, float | None],
                   meaning: Any = None) -> list[Record]:
    """Sort by time, stably; place events of a GET stream that have no time causally.

    Such an event that answers a request sent by POST goes right after that request;
    any other (a server request or notification) at the opening of its stream, before
    the POSTs that answer it. The event keeps ``ts`` None: only its place is inferred.
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
    for r in records:
        if r.direction == "c2s" and r.kind is None and r.ts is not None:
            for env in r.frames or ():
                if env.kind == "request" and env.id_key is not None:
                    sent.setdefault((r.session, env.id_key), r.ts)
    def place(r: Record) -> tuple[float, int]:
        if r.ts is not None:
            return r.ts, 0
        if id(r) not in untimed:
            return inf, 0
        env = r.frames[0] if r.frames else None
        if env is not None and env.kind in ("result", "error") and (r.session, env.id_key) in sent:
            return sent[(r.session, env.id_key)], 1  # just after its request
        start = untimed[id(r)]
        return (start if start is not None else inf), 0

    keyed = [(place(r), i, r) for i, r in enumerate(records)]
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [r for _, _, r in keyed]
