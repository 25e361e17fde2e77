"""Pairing with numpy: the same rows and findings as :func:`mcp_notebook.core.pairing.pair`.

Sans-IO: plain arrays in (one entry per frame, in capture order), arrays out.

Requests and responses are keyed by ``(session, requester, id key)`` as integer codes and
sorted by ``(key, seq)``. In that order the reference walk reduces to counts within each
key group: the requests still open before an event are the requests so far less the
responses that found one open (a running sum, floored at zero by its running minimum). A
response pairs when one is open, and the k-th response that pairs answers the k-th
request (first in, first out); otherwise it is a duplicate of the last request of the
group (all were answered), or an orphan when the group has no earlier request. A request
is "in flight" when one is open before it, "reused" when the group has an earlier
request. Progress notifications are matched to the last request that carried their
token. Cancels, orphans' id-type twins and the messages of findings are few and done in
Python; so is the rare group where a cancel meets an id reused in flight (the order of
answers then depends on which requests were cancelled): its events are walked as the
reference walks them.

Where the C extension is built (:mod:`mcp_notebook.fast.native`), the reference walk
itself runs there, on the same integer codes, in one pass (``csrc/pair.h``); the numpy
walk above is the path without it, and the tests hold both to the reference.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

import numpy as np
import pandas as pd

from ..fast import native as _native
from .pairing import _digits_twin

__all__ = ["PairTable", "pair_arrays", "OUTCOMES", "FINDINGS"]

OUTCOMES = ("result", "error", "tool_error", "unanswered", "cancelled", "orphan", "duplicate")
_O = {o: i for i, o in enumerate(OUTCOMES)}
# the pairing findings, numbered as the C walk reports them
FINDINGS = ("request-id-in-flight", "request-id-reused", "response-after-cancel",
            "duplicate-response", "id-type-mismatch", "orphan-response", "cancel-initialize",
            "cancel-after-response", "cancel-unknown-request", "progress-not-increasing",
            "progress-after-response", "progress-unknown-token")
REQUEST, NOTIFICATION, RESULT, ERROR = 0, 1, 2, 3
_CANCEL = "notifications/cancelled"
_PROGRESS = "notifications/progress"


@dataclass
class PairTable:
    """Pair rows (in the reference order) and findings (by seq), as arrays."""

    request_seq: np.ndarray  # int64, -1: none
    response_seq: np.ndarray  # int64, -1: none
    session: np.ndarray  # int32 session codes
    requester: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    id_key: np.ndarray  # object
    method: np.ndarray  # int32 method codes, -1 none
    outcome: np.ndarray  # int8 index into OUTCOMES
    cancel_seq: np.ndarray  # int64, -1: none
    progress_count: np.ndarray  # int64
    findings: list[tuple[int, str, int | None, str]]  # (seq, rule, related_seq, detail)

    def __len__(self) -> int:
        return len(self.request_seq)


def _opp(d: np.ndarray) -> np.ndarray:
    out = d.copy()
    out[d == 0] = 1
    out[d == 1] = 0
    return out


def _sorted_groups(key: np.ndarray, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order of events by (key, seq), and whether each sorted event starts its group.

    ``seq`` is ascending already, so a stable sort by key keeps it within each group."""
    order = np.argsort(key, kind="stable").astype(np.int32)
    k = key[order]
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    return order, first


def _last_before(mark: np.ndarray, first: np.ndarray) -> np.ndarray:
    """For each sorted event, the sorted index of the last marked event strictly before it in
    its group (-1 if none)."""
    n = len(mark)
    pos = np.arange(n, dtype=np.int32)
    incl = np.where(mark, pos, np.int32(-1))
    if n:
        np.maximum.accumulate(incl, out=incl)
    start = np.where(first, pos, np.int32(0))
    del pos
    if n:
        np.maximum.accumulate(start, out=start)
    before = np.full(n, -1, dtype=np.int32)
    if n > 1:
        before[1:] = incl[:-1]
    before[before < start] = -1
    return before


def pair_arrays(kind: np.ndarray, session: np.ndarray, direction: np.ndarray,
                id_key: np.ndarray, id_code: np.ndarray, id_uniques: Sequence[Any],
                method: np.ndarray, method_cats: Sequence[Any],
                is_tool_error: np.ndarray, ref: Any, progress: Any,
                skip: Sequence[int] = (), id_index: dict[Any, int] | None = None) -> PairTable:
    """Pair the frames (see the module docstring); ``skip`` frames take no part.

    ``id_code`` numbers the distinct id keys (``id_uniques``; -1: no id); ``id_index``,
    when given, maps each of them to its code. ``ref`` and ``progress`` are the few frames
    that have them: objects with ``rows`` (ascending) and ``values`` arrays
    (:class:`mcp_notebook.fast.store.Sparse`).
    """
    cancel_code = _index(method_cats, _CANCEL)
    progress_code = _index(method_cats, _PROGRESS)
    init_code = _index(method_cats, "initialize")
    native = _native.native
    if native is not None and (not len(session) or int(session.max()) < (1 << 29) - 1):
        return _pair_native(native, kind, session, direction, id_key, id_code, id_uniques,
                            method, is_tool_error, ref, progress, skip,
                            (cancel_code, progress_code, init_code), id_index)
    cancels: tuple[list[int], list[str]] = ([], [])
    if cancel_code >= 0:
        rrows = ref.rows
        csel = (kind[rrows] == NOTIFICATION) & (method[rrows] == cancel_code)
        cancels = (rrows[csel].tolist(), ref.values[csel].tolist())
    st = _pair_core(kind, session, direction, id_key, id_code, id_uniques, is_tool_error, skip,
                    cancels, method, init_code, ref)
    findings = st.findings
    req_rows, response_seq, outcome = st.req_rows, st.response_seq, st.outcome
    # -- cancels (few): walk them in order (those of the walked groups are done) ---------------
    cancel_seq, in_walk = st.cancel_seq, st.in_walk
    cancelled_before = np.full(len(req_rows), -1, dtype=np.int64)  # last cancel while pending
    lookup, row_of = st.lookup, st.row_of
    for s, rk in zip(*cancels, strict=True):
        d = int(direction[s])
        if lookup.group(int(session[s]), d, rk) in st.walked:
            continue
        pend = lookup.pending(int(session[s]), d, rk, s)
        if pend >= 0:
            row = row_of(pend)
            cancel_seq[row] = s
            cancelled_before[row] = s
            if method[pend] == init_code and init_code >= 0:
                findings.append((s, "cancel-initialize", pend,
                                 _detail("cancel-initialize", s, id_key, kind, ref)))
            continue
        done = lookup.done(int(session[s]), d, rk, s)
        if done >= 0:
            row = row_of(done)
            if cancel_seq[row] < 0:
                cancel_seq[row] = s
            findings.append((s, "cancel-after-response", done,
                             _detail("cancel-after-response", s, id_key, kind, ref)))
        else:
            findings.append((s, "cancel-unknown-request", None,
                             _detail("cancel-unknown-request", s, id_key, kind, ref)))
    dup_req, dup_seq = st.dup_req, st.dup_seq
    st.lookup = lookup = None
    was_cancelled = (cancelled_before >= 0) & ~in_walk
    outcome[was_cancelled] = _O["cancelled"]
    for row in np.flatnonzero(was_cancelled & (response_seq >= 0)).tolist():
        s = int(response_seq[row])
        findings.append((s, "response-after-cancel", int(cancelled_before[row]),
                         _detail("response-after-cancel", s, id_key, kind, ref)))
    del cancelled_before, was_cancelled
    # -- progress ---------------------------------------------------------------------------
    progress_count = np.zeros(len(req_rows), dtype=np.int64)
    if progress_code >= 0:
        _progress(kind, session, direction, method, progress_code, ref, progress, req_rows,
                  response_seq, progress_count, findings)
    # -- the rows, in the reference order ---------------------------------------------------
    orphan_seq = st.orphan_seq
    extra_seq = np.concatenate([dup_seq, orphan_seq])
    rorder = np.argsort(np.concatenate([req_rows, extra_seq]), kind="stable")
    n_dup, n_orph = len(dup_seq), len(orphan_seq)
    e_req = np.concatenate([dup_req, np.full(n_orph, -1, dtype=np.int64)])
    e_requester = np.concatenate([direction[dup_req], _opp(direction[orphan_seq])])
    e_method = np.concatenate([method[dup_req], np.full(n_orph, -1, dtype=np.int32)])
    e_outcome = np.concatenate([np.full(n_dup, _O["duplicate"], dtype=np.int8),
                                np.full(n_orph, _O["orphan"], dtype=np.int8)])
    findings.sort(key=lambda f: f[0])
    return PairTable(
        request_seq=np.concatenate([req_rows, e_req])[rorder],
        response_seq=np.concatenate([response_seq, extra_seq])[rorder],
        session=np.concatenate([session[req_rows], session[extra_seq]])[rorder],
        requester=np.concatenate([direction[req_rows], e_requester]).astype(np.int8)[rorder],
        id_key=np.concatenate([id_key[req_rows], id_key[extra_seq]])[rorder],
        method=np.concatenate([method[req_rows], e_method]).astype(np.int32)[rorder],
        outcome=np.concatenate([outcome, e_outcome])[rorder],
        cancel_seq=np.concatenate([cancel_seq, np.full(len(extra_seq), -1, np.int64)])[rorder],
        progress_count=np.concatenate([progress_count, np.zeros(len(extra_seq), np.int64)]
                                      )[rorder],
        findings=findings)


def _pair_native(native: Any, kind: np.ndarray, session: np.ndarray, direction: np.ndarray,
                 id_key: np.ndarray, id_code: np.ndarray, id_uniques: Sequence[Any],
                 method: np.ndarray, is_tool_error: np.ndarray, ref: Any, progress: Any,
                 skip: Sequence[int], codes: tuple[int, int, int],
                 id_index: dict[Any, int] | None) -> PairTable:
    """The reference walk in C (``_native.pair``); the texts of its findings made here."""
    n = len(kind)
    skip_mask = None
    if len(skip):
        skip_mask = np.zeros(n, dtype=bool)
        skip_mask[np.asarray(list(skip), dtype=np.int64)] = True
    uniq = id_uniques if isinstance(id_uniques, list) else list(id_uniques)
    c = np.ascontiguousarray
    got = native.pair(
        c(kind, np.int8), c(session, np.int32), c(direction, np.int8), c(id_code, np.int32),
        c(is_tool_error, bool), c(method, np.int32), skip_mask, c(ref.rows, np.int64),
        ref.values.tolist(), c(progress.rows, np.int64), c(progress.values, np.float64),
        uniq, (-2, *codes), _digits_twin, id_index)  # -2: the code of "null" found in C
    i64, i32, i8 = np.int64, np.int32, np.int8
    key_seq = np.frombuffer(got[8], i64)
    findings: list[tuple[int, str, int | None, str]] = []
    fv = np.frombuffer(got[9], i64).reshape(-1, 3).tolist()
    fx = np.frombuffer(got[10], np.float64).reshape(-1, 2).tolist()
    for (s, rule, rel), (a, b) in zip(fv, fx, strict=True):
        findings.append((s, FINDINGS[rule], rel if rel >= 0 else None,
                         _detail(FINDINGS[rule], s, id_key, kind, ref, a, b)))
    return PairTable(
        request_seq=np.frombuffer(got[0], i64), response_seq=np.frombuffer(got[1], i64),
        session=np.frombuffer(got[2], i32), requester=np.frombuffer(got[3], i8),
        id_key=id_key[key_seq], method=np.frombuffer(got[4], i32),
        outcome=np.frombuffer(got[5], i8), cancel_seq=np.frombuffer(got[6], i64),
        progress_count=np.frombuffer(got[7], i64), findings=findings)


def _detail(name: str, s: int, id_key: Any = None, kind: Any = None, ref: Any = None,
            a: float = 0.0, b: float = 0.0) -> str:
    """The text of pairing finding ``name`` on frame ``s``, as
    :func:`mcp_notebook.core.pairing.pair` words it (both walks here write it so): from the
    frame's id key, kind or ref, or the progress values ``a`` (after ``b``)."""
    if name == "request-id-in-flight":
        return f"id {id_key[s]} is still in flight"
    if name == "request-id-reused":
        return f"id {id_key[s]} was used before in this session"
    if name == "response-after-cancel":
        return (f"a {'error' if kind[s] == ERROR else 'result'} for id {id_key[s]} "
                "after it was cancelled")
    if name == "duplicate-response":
        return f"a second response for id {id_key[s]}"
    if name == "id-type-mismatch":
        return f"response id {id_key[s]} but the request id was {_digits_twin(id_key[s])}"
    if name == "orphan-response":
        return f"no request with id {id_key[s]} from this side"
    if name == "cancel-initialize":
        return "initialize was cancelled"
    if name == "cancel-after-response":
        return f"request {ref.get(s)} had already been answered"
    if name == "cancel-unknown-request":
        return f"no request {ref.get(s)} from this side is known"
    if name == "progress-not-increasing":
        return f"progress {a:g} after {b:g}"
    if name == "progress-after-response":
        return f"progress for token {ref.get(s)} after the response"
    return f"no request in flight carries token {ref.get(s)}"


@dataclass
class _Core:
    """What the request/response walk leaves for the cancels, the progress and the rows."""

    req_rows: np.ndarray
    response_seq: np.ndarray
    outcome: np.ndarray
    dup_req: np.ndarray
    dup_seq: np.ndarray
    orphan_seq: np.ndarray
    findings: list[tuple[int, str, int | None, str]]
    lookup: Any
    walked: set[int]  # the groups walked as the reference walks them
    cancel_seq: np.ndarray
    in_walk: np.ndarray  # the request rows of those groups

    def row_of(self, seq: int) -> int:
        """The request row of a request's seq."""
        return int(np.searchsorted(self.req_rows, seq))


def _pair_core(kind: np.ndarray, session: np.ndarray, direction: np.ndarray, id_key: np.ndarray,
               id_code: np.ndarray, id_uniques: Sequence[Any], is_tool_error: np.ndarray,
               skip: Sequence[int], cancels: tuple[list[int], list[str]], method: np.ndarray,
               init_code: int, ref: Any) -> _Core:
    is_req = kind == REQUEST
    is_resp = (kind == RESULT) | (kind == ERROR)
    if len(skip):
        is_resp[np.asarray(list(skip), dtype=np.int64)] = False
    null_code = _index(id_uniques, "null")
    null_id = is_resp & ((id_code < 0) | (id_code == null_code))
    # -- the key codes: (session, requester, id key), sorted by (key, seq) ------------------
    ev = np.flatnonzero(is_req | (is_resp & ~null_id)).astype(np.int32)
    del is_resp
    width = len(id_uniques) + 1
    # (session, requester, id) as one integer; int32 when it fits (half the sorting memory)
    top = (int(session.max(initial=0)) + 1) * 3 * width + width
    kt = np.int32 if top < 1 << 31 else np.int64
    req_dir: Any = np.where(is_req[ev], direction[ev], _opp(direction[ev])).astype(kt)
    key: Any = session[ev].astype(kt)
    key *= 3
    req_dir += 1
    key += req_dir
    del req_dir
    key *= width
    key += id_code[ev]
    order, first = _sorted_groups(key, ev)
    s_seq = ev[order]
    del ev
    s_req = is_req[s_seq]
    last_req = _last_before(s_req, first)
    gid = np.cumsum(first, dtype=np.int32) - 1  # the group of each sorted event
    # whether a request is open just before each event and just after it. In a group
    # whose requests and responses alternate (nearly all), that is whether the event
    # before is a request, and whether the event is one; the other groups are counted.
    prev_is_req = np.zeros(len(order), dtype=bool)
    prev_is_req[1:] = s_req[:-1] & ~first[1:]
    is_open, open_after = prev_is_req, s_req.copy()
    odd = np.flatnonzero((s_req == prev_is_req) & ~first)  # a request after one, a response
    target = np.arange(-1, len(order) - 1, dtype=np.int32)  # the request a response answers
    if len(odd):
        bad = np.zeros(int(gid[-1]) + 1, dtype=bool)
        bad[gid[odd]] = True
        sub = np.flatnonzero(bad[gid])
        del bad
        before, after = _open_counts(s_req[sub], first[sub])
        is_open[sub] = before > 0
        open_after[sub] = after > 0
        target[sub] = sub[_fifo_targets(s_req[sub], first[sub], before > 0)]
        del sub, before, after
    del odd, prev_is_req
    # requests: rows in request order
    req_rows = np.flatnonzero(is_req)
    del is_req
    response_seq = np.full(len(req_rows), -1, dtype=np.int64)
    outcome = np.full(len(req_rows), _O["unanswered"], dtype=np.int8)
    # responses that pair: the k-th of a group that finds a request open answers the
    # group's k-th request (first in, first out)
    pi = np.flatnonzero(~s_req & is_open)
    if len(pi):
        answered = np.searchsorted(req_rows, s_seq[target[pi]])
        resp_seq = s_seq[pi]
        response_seq[answered] = resp_seq
        outcome[answered] = np.where(kind[resp_seq] == ERROR, _O["error"],
                                     np.where(is_tool_error[resp_seq], _O["tool_error"],
                                              _O["result"]))
        del answered, resp_seq
    del pi, target
    findings: list[tuple[int, str, int | None, str]] = []
    in_flight = s_req & is_open
    orphans = np.flatnonzero(~s_req & (last_req < 0))
    twins = [_digits_twin(id_key[s]) for s in s_seq[orphans].tolist()]
    lookup = _Lookup(key[order], s_seq, s_req, last_req, open_after, first, id_uniques,
                     width, {*twins, *cancels[1]} - {None})
    del key, first
    # the groups where a cancel meets an id reused in flight: walked as the reference walks
    # them (their answers, cancels and findings, but orphans)
    cancel_seq = np.full(len(req_rows), -1, dtype=np.int64)
    in_walk = np.zeros(len(req_rows), dtype=bool)
    walked: dict[int, list[int]] = {}
    if cancels[0] and in_flight.any():
        flying = set(np.unique(gid[in_flight]).tolist())
        for s, rk in zip(*cancels, strict=True):
            g = lookup.group(int(session[s]), int(direction[s]), rk)
            if g is not None and g in flying:
                walked.setdefault(g, []).append(s)
    not_walked = np.ones(len(s_seq), dtype=bool)
    dups: list[tuple[np.ndarray, np.ndarray]] = []
    for g in sorted(walked):
        lo, hi = lookup.bounds(g)
        not_walked[lo:hi] = False
        dups.append(_walk_group(lookup, g, walked[g], kind, method, init_code, is_tool_error,
                                id_key, ref, req_rows, response_seq, outcome, cancel_seq,
                                in_walk, findings))
    # the groups not walked: in-flight and reused requests (the latest request before is
    # the latest open one, or the last answered), duplicates
    for i in np.flatnonzero(in_flight & not_walked).tolist():
        s = int(s_seq[i])
        findings.append((s, "request-id-in-flight", int(s_seq[last_req[i]]),
                         _detail("request-id-in-flight", s, id_key)))
    for i in np.flatnonzero(s_req & ~is_open & (last_req >= 0) & not_walked).tolist():
        s = int(s_seq[i])
        findings.append((s, "request-id-reused", int(s_seq[last_req[i]]),
                         _detail("request-id-reused", s, id_key)))
    # duplicates: one extra row each, and a finding
    di = np.flatnonzero(~s_req & ~is_open & (last_req >= 0) & not_walked)
    del is_open, in_flight, not_walked
    dup_req = s_seq[last_req[di]].astype(np.int64)
    dup_seq = s_seq[di].astype(np.int64)
    first_resp = response_seq[np.searchsorted(req_rows, dup_req)]
    for q, s in zip(first_resp.tolist(), dup_seq.tolist(), strict=True):
        findings.append((s, "duplicate-response", q, _detail("duplicate-response", s, id_key)))
    del di, first_resp
    if dups:
        dup_req = np.concatenate([dup_req, *(d[0] for d in dups)])
        dup_seq = np.concatenate([dup_seq, *(d[1] for d in dups)])
        o = np.argsort(dup_seq, kind="stable")
        dup_req, dup_seq = dup_req[o], dup_seq[o]
    # orphans: keyed ones get a finding (id-type-mismatch when the twin id is in flight)
    for i, twin in zip(orphans.tolist(), twins, strict=True):
        s = int(s_seq[i])
        pend = lookup.pending(int(session[s]), int(_opp(direction[s:s + 1])[0]), twin, s) \
            if twin is not None else -1
        if pend >= 0:
            findings.append((s, "id-type-mismatch", pend, _detail("id-type-mismatch", s, id_key)))
        else:
            findings.append((s, "orphan-response", None, _detail("orphan-response", s, id_key)))
    orphan_seq = np.sort(np.concatenate([s_seq[orphans], np.flatnonzero(null_id)]))
    return _Core(req_rows=req_rows, response_seq=response_seq, outcome=outcome,
                 dup_req=dup_req, dup_seq=dup_seq, orphan_seq=orphan_seq, findings=findings,
                 lookup=lookup, walked=set(walked), cancel_seq=cancel_seq, in_walk=in_walk)


def _fifo_targets(s_req: np.ndarray, first: np.ndarray, is_open: np.ndarray) -> np.ndarray:
    """For each sorted event, the index of the request a response answers when it finds
    one open (first in, first out: the k-th such response of a group answers the group's
    k-th request); other entries are meaningless."""
    paired = ~s_req & is_open
    gid = np.cumsum(first, dtype=np.int64) - 1
    starts = np.flatnonzero(first)
    n_paired = np.cumsum(paired, dtype=np.int64)
    n_reqs = np.cumsum(s_req, dtype=np.int64)
    # the paired responses and the requests before each group (the counts at its first
    # event, less that event itself)
    p_before = (n_paired - paired)[starts][gid]
    r_before = (n_reqs - s_req)[starts][gid]
    rank = np.maximum(n_paired - 1 - p_before, 0)
    req_pos = np.flatnonzero(s_req)
    if not len(req_pos):
        return np.zeros(len(s_req), dtype=np.int64)
    return req_pos[np.minimum(r_before + rank, len(req_pos) - 1)]


def _open_counts(s_req: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each sorted event, how many requests of its group are open just before it and
    just after it: requests so far less the responses that found one open.

    The sum of +1 per request and -1 per response, within the group, is the open count
    less the responses that found none; those are minus the running minimum of the sum
    (floored at 0)."""
    n = len(s_req)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    step = np.where(s_req, 1, -1).astype(np.int64)
    total = np.cumsum(step)
    gid = np.cumsum(first, dtype=np.int64) - 1
    total -= (total - step)[first][gid]  # the sum within the group
    # a running minimum per group: each earlier group lifted above every later one
    lift = (int(gid[-1]) - gid) * (2 * n + 2)
    low = np.minimum.accumulate(total + lift) - lift
    after = total - np.minimum(low, 0)
    before = np.zeros(n, dtype=np.int64)
    before[1:] = after[:-1]
    before[first] = 0
    return before, after


def _walk_group(lookup: _Lookup, g: int, cancel_seqs: list[int], kind: np.ndarray,
                method: np.ndarray, init_code: int, is_tool_error: np.ndarray, id_key: Any,
                ref: Any, req_rows: np.ndarray, response_seq: np.ndarray, outcome: np.ndarray,
                cancel_seq: np.ndarray, in_walk: np.ndarray,
                findings: list) -> tuple[np.ndarray, np.ndarray]:
    """The reference walk over one key group and the cancels that name it (a group where
    a cancel meets an id reused in flight): its rows' answers, outcomes and cancels, the
    findings of its requests, responses and cancels (not its orphans), and its duplicates
    (request seq, seq). The latest open request after each event is noted in ``lookup``
    (for the id-type twins of orphans)."""
    lo, hi = lookup.bounds(g)
    events = [(int(q), bool(r)) for q, r in zip(lookup.sseq[lo:hi].tolist(),
                                                 lookup.sreq[lo:hi].tolist(), strict=True)]
    events += [(c, False) for c in cancel_seqs]
    events.sort()
    cset = set(cancel_seqs)
    live: deque[int] = deque()
    cancelled: deque[int] = deque()
    done = -1
    dups: tuple[list[int], list[int]] = ([], [])
    at: tuple[list[int], list[int]] = ([], [])  # event seq, latest open request seq after it

    def latest_open() -> int:
        if live and cancelled:
            return max(live[-1], cancelled[-1])
        return live[-1] if live else cancelled[-1] if cancelled else -1

    for s, is_request in events:
        if is_request:
            row = int(np.searchsorted(req_rows, s))
            fly = latest_open()
            if fly >= 0:
                findings.append((s, "request-id-in-flight", int(req_rows[fly]),
                                 _detail("request-id-in-flight", s, id_key)))
            elif done >= 0:
                findings.append((s, "request-id-reused", int(req_rows[done]),
                                 _detail("request-id-reused", s, id_key)))
            in_walk[row] = True
            response_seq[row] = -1
            outcome[row] = _O["unanswered"]
            live.append(row)
        elif s in cset:
            if live or cancelled:
                if live:
                    row = live.popleft()
                    cancelled.append(row)
                else:
                    row = cancelled[0]
                outcome[row] = _O["cancelled"]
                cancel_seq[row] = s
                if init_code >= 0 and method[req_rows[row]] == init_code:
                    findings.append((s, "cancel-initialize", int(req_rows[row]),
                                     _detail("cancel-initialize", s, id_key, kind, ref)))
            elif done >= 0:
                if cancel_seq[done] < 0:
                    cancel_seq[done] = s
                findings.append((s, "cancel-after-response", int(req_rows[done]),
                                 _detail("cancel-after-response", s, id_key, kind, ref)))
            else:
                findings.append((s, "cancel-unknown-request", None,
                                 _detail("cancel-unknown-request", s, id_key, kind, ref)))
        elif live or cancelled:
            row = live.popleft() if live else cancelled.popleft()
            response_seq[row] = s
            if outcome[row] == _O["cancelled"]:
                findings.append((s, "response-after-cancel", int(cancel_seq[row]),
                                 _detail("response-after-cancel", s, id_key, kind, ref)))
            else:
                outcome[row] = (_O["error"] if kind[s] == ERROR else
                                _O["tool_error"] if is_tool_error[s] else _O["result"])
            done = row
        elif done >= 0:  # (a response before any request is an orphan: found already)
            findings.append((s, "duplicate-response", int(response_seq[done]),
                             _detail("duplicate-response", s, id_key)))
            dups[0].append(int(req_rows[done]))
            dups[1].append(s)
        fly = latest_open()
        at[0].append(s)
        at[1].append(int(req_rows[fly]) if fly >= 0 else -1)
    lookup.walked[g] = at
    return np.asarray(dups[0], dtype=np.int64), np.asarray(dups[1], dtype=np.int64)


def _index(cats: Sequence[Any], value: str) -> int:
    try:
        return list(cats).index(value)
    except ValueError:
        return -1


class _Lookup:
    """The state of one key group at a time: whether a request is open under it (and the
    latest request), or the last answered one."""

    def __init__(self, skey: np.ndarray, sseq: np.ndarray, sreq: np.ndarray,
                 last_req: np.ndarray, open_after: np.ndarray, first: np.ndarray,
                 uniq: Sequence[Any], width: int, wanted: set[Any]) -> None:
        self.skey, self.sseq, self.sreq, self.last_req = skey, sseq, sreq, last_req
        self.open_after = open_after
        self.starts = np.flatnonzero(first)
        # walked group -> (event seqs, the latest open request after each; -1: none)
        self.walked: dict[int, tuple[list[int], list[int]]] = {}
        self.width = width
        # id key -> code, for the few keys that will be looked up (the scan of every key
        # runs in C: map and compress)
        found = compress(range(len(uniq)), map(wanted.__contains__, uniq)) if wanted else ()
        self.code = {uniq[i]: i for i in found}

    def _range(self, sess: int, d: int, idk: str) -> tuple[int, int]:
        c = self.code.get(idk)
        if c is None:
            return 0, 0
        # scalars of the arrays' own types: numpy would otherwise cast the whole array
        k = self.skey.dtype.type((sess * 3 + (d + 1)) * self.width + c)
        lo = int(np.searchsorted(self.skey, k, side="left"))
        hi = int(np.searchsorted(self.skey, k, side="right"))
        return lo, hi

    def group(self, sess: int, d: int, idk: str) -> int | None:
        """The group number of the key (None: no event has it)."""
        lo, hi = self._range(sess, d, idk)
        return int(np.searchsorted(self.starts, lo)) if hi > lo else None

    def bounds(self, g: int) -> tuple[int, int]:
        """The sorted indexes of group ``g``'s events."""
        hi = int(self.starts[g + 1]) if g + 1 < len(self.starts) else len(self.sseq)
        return int(self.starts[g]), hi

    def _last(self, sess: int, d: int, idk: str, s: int) -> int:
        """Sorted index of the group's last event before ``s`` (-1: none)."""
        lo, hi = self._range(sess, d, idk)
        p = lo + int(np.searchsorted(self.sseq[lo:hi], self.sseq.dtype.type(s),
                                     side="left")) - 1
        return p if p >= lo else -1

    def pending(self, sess: int, d: int, idk: str, s: int) -> int:
        """Seq of the latest request under the key at time ``s`` when one is open then (-1:
        none open). (Outside a walked group, a cancelled request is answered in its turn,
        so the open ones are the latest requests.)"""
        if self.walked:
            g = self.group(sess, d, idk)
            if g in self.walked:
                seqs, fly = self.walked[g]
                i = bisect_left(seqs, s) - 1
                return fly[i] if i >= 0 else -1
        p = self._last(sess, d, idk, s)
        if p < 0 or self.open_after[p] <= 0:
            return -1
        q = p if self.sreq[p] else self.last_req[p]
        return int(self.sseq[q])

    def done(self, sess: int, d: int, idk: str, s: int) -> int:
        """Seq of the last answered request under the key at ``s`` (when none is open)."""
        p = self._last(sess, d, idk, s)
        if p < 0 or self.open_after[p] > 0:
            return -1
        q = p if self.sreq[p] else self.last_req[p]
        return int(self.sseq[q]) if q >= 0 else -1


def _progress(kind: np.ndarray, session: np.ndarray, direction: np.ndarray, method: np.ndarray,
              progress_code: int, ref: Any, progress: Any, req_rows: np.ndarray,
              response_seq: np.ndarray, progress_count: np.ndarray, findings: list) -> None:
    rows = ref.rows
    if not len(rows):
        return
    toks = ref.values
    k = kind[rows]
    is_tr = k == REQUEST
    is_p = (k == NOTIFICATION) & (method[rows] == progress_code)
    sel = is_tr | is_p
    rows, toks, is_tr = rows[sel], toks[sel], is_tr[sel]
    if not is_tr.any() and not len(rows):
        return
    tdir = np.where(is_tr, direction[rows], _opp(direction[rows])).astype(np.int64)
    tc, tuniq = pd.factorize(toks)
    tkey = (session[rows].astype(np.int64) * 3 + (tdir + 1)) * (len(tuniq) + 1) + tc
    del tc, tuniq, tdir
    order, first = _sorted_groups(tkey, rows)
    del tkey
    s_rows = rows[order]
    s_tr = is_tr[order]
    del rows, toks, is_tr, order
    last = _last_before(s_tr, first)
    del first
    p_idx = np.flatnonzero(~s_tr)
    p_seq = s_rows[p_idx]
    q = last[p_idx]
    unknown = q < 0
    for s in p_seq[unknown].tolist():
        findings.append((s, "progress-unknown-token", None,
                         _detail("progress-unknown-token", s, ref=ref)))
    p_idx, p_seq, q = p_idx[~unknown], p_seq[~unknown], q[~unknown]
    row = np.searchsorted(req_rows, s_rows[q])
    rs = response_seq[row]
    after = (rs >= 0) & (rs < p_seq)
    for s, r in zip(p_seq[after].tolist(), rs[after].tolist(), strict=True):
        findings.append((s, "progress-after-response", r,
                         _detail("progress-after-response", s, ref=ref)))
    c_row, c_seq = row[~after], p_seq[~after]
    del row, rs, q, p_idx, s_rows, last
    if not len(c_row):
        return
    progress_count += np.bincount(c_row, minlength=len(progress_count))
    c_val = progress.at(c_seq, np.nan).astype(np.float64)
    # per request row, in seq order: each value against the last known value before it
    o = np.lexsort((c_seq, c_row))
    c_row, c_seq, c_val = c_row[o], c_seq[o], c_val[o]
    grp = np.ones(len(c_row), dtype=bool)
    grp[1:] = c_row[1:] != c_row[:-1]
    known = ~np.isnan(c_val)
    prev = _last_before(known, grp)
    hit = known & (prev >= 0)
    hit[hit] = c_val[hit] <= c_val[prev[hit]]
    for i in np.flatnonzero(hit).tolist():
        findings.append((int(c_seq[i]), "progress-not-increasing", int(req_rows[c_row[i]]),
                         _detail("progress-not-increasing", 0, a=float(c_val[i]),
                                 b=float(c_val[prev[i]]))))
