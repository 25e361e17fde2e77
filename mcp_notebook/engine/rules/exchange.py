"""Rules of requests and their answers: the pairing walk's findings, unanswered requests,
answered notifications."""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress

import numpy as np

from ..checks import DIRS, NONE, Hits, VecInput, check, hits
from ..pairing import OUTCOMES


def _by_rule(vi: VecInput) -> dict[str, list[tuple[int, str, int | None, str]]]:
    """The pairing walk's findings by rule, in order: one pass for all the rules (a
    capture can hold hundreds of thousands of them)."""
    got: dict[str, list[tuple[int, str, int | None, str]]] | None = vi.cache.get(
        "pair-findings")
    if got is None:
        got = vi.cache["pair-findings"] = {}
        for f in vi.pairs.findings:
            mine = got.get(f[1])
            if mine is None:
                mine = got[f[1]] = []
            mine.append(f)
    return got


#: the extras by which a reader says what its capture cannot hold: on a request, that its
#: answer would come on a stream the capture does not keep (``unanswered-request`` and
#: ``unanswered-after-close`` do not report it); on a response, that the request it answers
#: may have come on such a stream (``orphan-response`` does not report it)
ANSWER_NOT_HELD, REQUEST_NOT_HELD = "answer_not_held", "request_not_held"


def not_held(vi: VecInput, key: str) -> set[int]:
    """The rows whose extra says ``key`` (:data:`ANSWER_NOT_HELD` or
    :data:`REQUEST_NOT_HELD`)."""
    got: set[int] | None = vi.cache.get(key)
    if got is None:
        from ..native import extras_with

        got = vi.cache[key] = {seq for seq, e in extras_with(vi.rule_extras, (key,))
                               if e[key]}
    return got


def _finding(code: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        got = _by_rule(vi).get(code, [])
        if code == "orphan-response" and got and (skip := not_held(vi, REQUEST_NOT_HELD)):
            got = [f for f in got if f[0] not in skip]
        return hits([f[0] for f in got], [-1 if f[2] is None else f[2] for f in got],
                     [f[3] for f in got])
    return check


def _notification_answered(vi: VecInput) -> Hits:
    p = vi.pairs
    codes = vi.method_codes(lambda m: m.startswith("notifications/"))
    sel = np.flatnonzero((p.request_seq >= 0) & vi.method_in(codes, p.method))
    dup = p.outcome[sel] == OUTCOMES.index("duplicate")
    seq, rel, det = [], [], []
    dups_of: dict[int, list[int]] = {}
    for i in sel[dup].tolist():
        dups_of.setdefault(int(p.request_seq[i]), []).append(int(p.response_seq[i]))
    for i in sel.tolist():
        q, m = int(p.request_seq[i]), vi.name(int(p.method[i]))
        if p.outcome[i] == OUTCOMES.index("duplicate"):
            responses = [int(p.response_seq[i])]
        else:
            first = [int(p.response_seq[i])] if p.response_seq[i] >= 0 else []
            responses = first + sorted(dups_of.get(q, []))
        for s in responses:
            seq.append(s)
            rel.append(q)
            det.append(f"a response to {m}")
    return hits(seq, rel, det)


def _unanswered(after_close: bool) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        p = vi.pairs
        # (the requests whose requester is at fault: see the reference)
        owed = vi.method_codes(lambda m: m == "subscriptions/listen"
                               or m.startswith("notifications/"))
        sel = np.flatnonzero((p.outcome == OUTCOMES.index("unanswered")) & (p.request_seq >= 0)
                             & ~vi.method_in(owed, p.method))
        if len(sel):
            sel = sel[p.id_key[sel] != "null"]
        reused = [f[0] for f in p.findings if f[1] == "request-id-in-flight"]
        if reused and len(sel):
            sel = sel[~np.isin(p.request_seq[sel], np.asarray(reused, dtype=np.int64))]
        if len(sel) and (skip := not_held(vi, ANSWER_NOT_HELD)):
            sel = sel[~np.isin(p.request_seq[sel], np.fromiter(skip, dtype=np.int64,
                                                               count=len(skip)))]
        closes = vi.peer_closed
        why: list[tuple[int, str] | None] = [None] * len(sel)
        if closes and len(sel):
            why = [closes.closed(vi.session_of(int(p.session[i])), DIRS[p.requester[i] + 1],
                                 int(p.request_seq[i])) for i in sel.tolist()]
            keep = np.fromiter((w is not None for w in why), dtype=bool, count=len(sel))
            if not after_close:
                keep = ~keep
            sel = sel[keep]
            why = list(compress(why, keep.tolist()))
        elif after_close:
            return hits(NONE)
        if after_close:
            return hits(p.request_seq[sel], [w[0] for w in why],  # type: ignore[index]
                         [unanswered_after_close(vi.name(int(p.method[i])),
                                                            p.id_key[i], w[1])  # type: ignore[index]
                          for i, w in zip(sel.tolist(), why, strict=True)])
        return hits(p.request_seq[sel], None,
                     [f"{vi.name(int(p.method[i]))} id {p.id_key[i]} got no response"
                      for i in sel.tolist()])
    return check


def unanswered_after_close(method: object, id_key: object, what: str) -> str:
    return f"{method} id {id_key} got no response: {what} before this request; no answer could come"


#: rules found by the pairing walk (its findings carry the code)
FINDING_RULES = (
    "id-type-mismatch", "request-id-reused", "request-id-in-flight", "duplicate-response",
    "orphan-response", "response-after-cancel", "cancel-after-response",
    "cancel-unknown-request", "cancel-initialize", "progress-unknown-token",
    "progress-after-response", "progress-not-increasing")
for _code in FINDING_RULES:
    check(_code)(_finding(_code))
check("unanswered-request")(_unanswered(False))
check("unanswered-after-close")(_unanswered(True))
check("notification-answered")(_notification_answered)
