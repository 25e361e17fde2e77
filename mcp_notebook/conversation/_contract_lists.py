"""The list walks of the contract rules: what a server listed, page by page, and the list
a frame's scope held when it was sent (a request without a cursor starts the list again).
Up to 2025-11-25 the scope is the session; in 2026-07-28 (no sessions) it is the capture
(:meth:`View.scope_array`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._view import View


def listed(view: View, method: str, member: str, key: str
           ) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Walk the list answers of ``method`` in order: ``(response seq, scope, {key: item})``
    after each page (a request without a cursor starts the list again). Each distinct
    answer text is decoded once; the dicts yielded are shared: do not change them."""
    state: dict[int, dict[str, Any]] = {}
    pairs = sorted(view.answered([method], kind="result"), key=lambda p: p[1])
    reqs = np.asarray([p[0] for p in pairs], dtype=np.int64)
    cursors = (view.call_flags(reqs) & 2 > 0).tolist()  # the call column: no Params made
    found = view.listed_members([p[1] for p in pairs], member)
    scopes = view.scope_array(reqs).tolist()
    items_of: dict[bytes, dict[str, Any] | None] = view.__dict__.setdefault(
        f"_items:{method}", {})
    for (_, resp), cursor, items, scope in zip(pairs, cursors, found, scopes, strict=True):
        if items.__class__ is bytes:  # the member's text (the list column): once per text
            got = items_of.get(items, _UNSEEN)
            if got is _UNSEEN:
                got = items_of[items] = _keyed(view.parsed(items), key)
        else:
            got = _keyed(items, key)
        if got is None:
            continue
        if not cursor or scope not in state:
            state[scope] = got
        else:
            state[scope] = {**state[scope], **got}
        yield resp, scope, state[scope]


_UNSEEN: Any = object()


def _keyed(items: Any, key: str) -> dict[str, Any] | None:
    """A list member's items by their ``key`` (None: the member is no list)."""
    if not isinstance(items, list):
        return None
    return {item[key]: item for item in items
            if isinstance(item, dict) and isinstance(item.get(key), str)}


Lists = dict[int, tuple[list[int], list[dict[str, Any]]]]


def _latest(view: View, method: str, member: str, key: str) -> Lists:
    """scope -> (answer seqs, the list after each), for :func:`_at`."""
    out: Lists = {}
    for resp, scope, items in listed(view, method, member, key):
        seqs, states = out.setdefault(scope, ([], []))
        seqs.append(resp)
        states.append(items)
    return out


def _at(lists: Lists, scope: int, seq: int) -> dict[str, Any] | None:
    """The list of ``scope`` as the latest answer before ``seq`` left it (None: none yet)."""
    got = lists.get(scope)
    if got is None:
        return None
    i = bisect_right(got[0], seq) - 1
    return got[1][i] if i >= 0 else None


def _state_index(lists: Lists, scopes: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """For each frame, the index of the list its scope's latest answer before it left, in
    the states of ``lists`` end to end (-1: none yet): :func:`_at` of many frames at once."""
    out = np.full(len(seqs), -1, dtype=np.int64)
    base = 0
    for scope, (answers, states) in lists.items():
        where = np.flatnonzero(scopes == scope)
        if len(where):
            idx = np.searchsorted(np.asarray(answers, dtype=np.int64), seqs[where],
                                  side="right") - 1
            out[where] = np.where(idx >= 0, idx + base, -1)
        base += len(states)
    return out



def _latest_at(view: View, lists: Lists, rows: np.ndarray) -> list[dict[str, Any] | None]:
    """For each of ``rows``, the list its scope's latest answer before it left (None:
    none yet): :func:`_at` of many frames at once."""
    if not lists:
        return [None] * len(rows)
    flat: list[dict[str, Any] | None] = [s for _, states in lists.values() for s in states]
    flat.append(None)  # index -1: none yet
    at = _state_index(lists, view.scope_array(rows), rows)
    return [flat[k] for k in at.tolist()]


def _latest_codes(view: View, lists: Lists, rows: np.ndarray
                  ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:func:`_latest_at` as codes: for each of ``rows`` the code of its list among the
    distinct list objects (sessions whose servers answered alike share one), and those
    lists; code 0 is None (no list yet)."""
    if not lists or not len(rows):
        return np.zeros(len(rows), dtype=np.int64), [None]
    flat = [s for _, states in lists.values() for s in states]
    ident: dict[int, int] = {}
    code = np.asarray([ident.setdefault(id(s), len(ident) + 1) for s in flat] + [0],
                      dtype=np.int64)  # index -1 (none yet): the last, code 0
    reps: list[dict[str, Any] | None] = [None, *{id(s): s for s in flat}.values()]
    return code[_state_index(lists, view.scope_array(rows), rows)], reps
