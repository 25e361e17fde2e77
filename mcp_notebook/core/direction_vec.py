"""Direction inference with numpy: the same answer as :func:`mcp_notebook.core.direction.infer`.

Sans-IO. Both sides' requests and responses are grouped by ``(session, id key)``; in each
group, in capture order:

- a request whose method has a known direction (or whose direction is given) keeps it;
  one of unknown direction is ``c2s`` unless an earlier request of the group is ``c2s``
  (and an earlier unknown one always was, or made a ``c2s`` appear);
- a response of unknown direction answers the last request still open in its group (a
  stack): when the event just before it is a request, that request; groups where a
  response follows a response are walked in Python, exactly as the reference does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..fast import native as _native
from .versions import direction_of

__all__ = ["infer_codes"]

REQUEST, NOTIFICATION, RESULT, ERROR = 0, 1, 2, 3


def _method_dirs(cats: Sequence[Any]) -> np.ndarray:
    """Per method code (+1 slot for none): 0 c2s, 1 s2c, -1 both/unknown."""
    out = np.full(len(cats) + 1, -1, dtype=np.int8)
    for i, m in enumerate(cats):
        d = direction_of(m or "")
        out[i] = 0 if d == "c2s" else 1 if d == "s2c" else -1
    return out


def infer_codes(kind: np.ndarray, session: np.ndarray, id_code: np.ndarray, method: np.ndarray,
                method_cats: Sequence[Any], given: np.ndarray) -> np.ndarray:
    """Direction codes (0 c2s, 1 s2c, -1 none) with the unknown ones of messages filled in.

    ``id_code`` numbers the distinct id keys (-1: no id). Where the C extension is built,
    the reference walk runs there (``csrc/pair.h``); this numpy form is the path without
    it, and the one for a session that keeps more than 64 requests of one id unanswered.
    """
    native = _native.native
    if native is not None and (not len(session) or int(session.max()) < (1 << 29) - 1):
        c = np.ascontiguousarray
        got = native.directions(c(kind, np.int8), c(session, np.int32), c(id_code, np.int32),
                                c(method, np.int32), _method_dirs(method_cats),
                                c(given, np.int8))
        if got is not None:
            return np.frombuffer(got, dtype=np.int8)
    out = given.astype(np.int8, copy=True)
    is_req = kind == REQUEST
    is_note = kind == NOTIFICATION
    unknown_dir = out < 0
    mdir = _method_dirs(method_cats)[method]  # method code -1 picks the "none" slot
    # notifications: the method's direction, else c2s
    sel = is_note & unknown_dir
    out[sel] = np.where(mdir[sel] >= 0, mdir[sel], 0)
    # requests with a known method direction
    sel = is_req & unknown_dir & (mdir >= 0)
    out[sel] = mdir[sel]
    unresolved = is_req & unknown_dir & (mdir < 0)
    pops = ((kind == RESULT) | (kind == ERROR)) & unknown_dir
    ev = np.flatnonzero(is_req | pops)
    if not len(ev):
        return out
    idc = id_code[ev].astype(np.int64)
    width = int(id_code.max()) + 2 if len(id_code) else 1
    idc[idc < 0] = width - 1  # a missing key is a key of its own
    key = session[ev].astype(np.int64) * width + idc
    order = np.argsort(key, kind="stable")  # ev is ascending: stable keeps it in each group
    s_seq = ev[order]
    k = key[order]
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    s_req = is_req[s_seq]
    # unknown requests: c2s unless the group had a c2s (or an unknown) request before
    mark = s_req & ((out[s_seq] == 0) | unresolved[s_seq])
    before = _any_before(mark, first)
    u = unresolved[s_seq]
    out[s_seq[u]] = np.where(before[u], 1, 0)
    # responses: the previous event of the group is a request -> answer it
    s_pop = ~s_req
    prev_req = np.zeros(len(k), dtype=bool)
    prev_req[1:] = s_req[:-1] & ~first[1:]
    simple = s_pop & prev_req
    idx = np.flatnonzero(simple)
    out[s_seq[idx]] = 1 - out[s_seq[idx - 1]]
    hard = s_pop & ~prev_req
    if hard.any():
        gid = np.cumsum(first) - 1
        for g in np.unique(gid[hard]).tolist():
            lo = int(np.searchsorted(gid, g, side="left"))
            hi = int(np.searchsorted(gid, g, side="right"))
            stack: list[int] = []
            for i in range(lo, hi):
                s = int(s_seq[i])
                if s_req[i]:
                    stack.append(int(out[s]))
                else:
                    out[s] = 1 - stack.pop() if stack else 1
    return out


def _any_before(mark: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Whether a marked event comes strictly before each event in its group."""
    n = len(mark)
    idx = np.where(mark, np.arange(n), -1)
    incl = np.maximum.accumulate(idx)
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    prev = np.full(n, -1, dtype=np.int64)
    prev[1:] = incl[:-1]
    return prev >= start
