"""The list walks of the contract rules: what a server listed, page by page, and the list
a frame's scope held when it was sent (a request without a cursor starts the list again).
Up to 2025-11-25 the scope is the session; in 2026-07-28 (no sessions) it is the capture
(:meth:`View.scope_array`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from ..protocol.envelope import bounded_recursion
from ._frames import _decode
from ._view import View


def listed(view: View, method: str, member: str, key: str
           ) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Walk the list answers of ``method`` in order: ``(response seq, scope, {key: item})``
    after each page (a request without a cursor starts the list again). Each distinct
    answer text is decoded once; the dicts yielded are shared: do not change them."""
    resps, scopes, states = _walk(view, method, member, key)
    yield from zip(resps, scopes, states, strict=True)


def _walk(view: View, method: str, member: str, key: str
          ) -> tuple[list[int], list[int], list[dict[str, Any]]]:
    """:func:`listed` as three lists (once per view and list): the answers' seqs in order,
    their scopes and the list after each. The answers come as arrays; only where a
    request had a cursor are pages merged one after the other (else each answer's list
    is its own items)."""
    memo: dict[tuple[str, str, str], Any] = view.__dict__.setdefault("_list_walks", {})
    got = memo.get((method, member, key))
    if got is not None:
        return got  # type: ignore[no-any-return]
    req, resp = view.answered_arrays([method], kind="result")
    order = np.argsort(resp, kind="stable")
    req, resp = req[order], resp[order]
    cursors = (view.call_flags(req) & 2 > 0).tolist()  # the call column: no Params made
    found = view.listed_members(resp.tolist(), member)
    scopes = view.scope_array(req).tolist()
    items_of: dict[bytes, dict[str, Any] | None] = view.__dict__.setdefault(
        f"_items:{method}", {})
    keyed: list[dict[str, Any] | None] = []
    with bounded_recursion():  # once for every text decoded here
        for items in found:
            if items.__class__ is bytes:  # the member's text (the list column): once per text
                one = items_of.get(items, _UNSEEN)
                if one is _UNSEEN:
                    one = items_of[items] = _keyed_text(view, items, member, key)
            else:
                one = _keyed(items, key)
            keyed.append(one)
    out_resp: list[int] = []
    out_scope: list[int] = []
    out_state: list[dict[str, Any]] = []
    if not any(cursors):  # no page follows another: each list is its answer's items
        ok = np.fromiter((one is not None for one in keyed), dtype=bool, count=len(keyed))
        at = np.flatnonzero(ok).tolist()
        out_resp = resp[ok].tolist()
        out_scope = [scopes[k] for k in at]
        out_state = [keyed[k] for k in at]  # type: ignore[misc]  # (None left out)
    else:
        state: dict[int, dict[str, Any]] = {}
        for r, cursor, one, scope in zip(resp.tolist(), cursors, keyed, scopes, strict=True):
            if one is None:
                continue
            if not cursor or scope not in state:
                state[scope] = one
            else:
                state[scope] = {**state[scope], **one}
            out_resp.append(r)
            out_scope.append(scope)
            out_state.append(state[scope])
    got = memo[(method, member, key)] = (out_resp, out_scope, out_state)
    return got


_UNSEEN: Any = object()


class Item(msgspec.Struct, dict=True):
    """One item of a list answer with only the members the contract rules read: its key
    decoded, the others kept as raw text and decoded on first :meth:`get` (a catalogue's
    descriptions and the schemas of tools nobody calls are never made into objects)."""

    def get(self, member: str, default: Any = None) -> Any:
        """The member as :meth:`dict.get` gives it (``default`` when absent, None for
        ``null``). A member the item does not keep raises AttributeError: a rule that
        reads another member adds it to the item's fields."""
        got = self.__dict__.get(member, _UNSEEN)
        if got is _UNSEEN:
            raw = getattr(self, member)
            if raw.__class__ is not msgspec.Raw:  # the key: decoded with the item
                return raw
            if not raw:
                return default
            with bounded_recursion():
                got = self.__dict__[member] = _decode(raw)  # once: its identity stays
        return got


class _Tool(Item):
    name: Any = None
    inputSchema: msgspec.Raw = msgspec.Raw()
    outputSchema: msgspec.Raw = msgspec.Raw()


class _Prompt(Item):
    name: Any = None
    arguments: msgspec.Raw = msgspec.Raw()


class _Resource(Item):
    uri: Any = None


class _Template(Item):
    uriTemplate: Any = None


#: (member, key) -> a decoder of that member's text into typed items
_TYPED = {(member, key): msgspec.json.Decoder(list[cls]) for member, key, cls in (  # type: ignore[valid-type]
    ("tools", "name", _Tool), ("prompts", "name", _Prompt), ("resources", "uri", _Resource),
    ("resourceTemplates", "uriTemplate", _Template))}


def _keyed_text(view: View, text: bytes, member: str, key: str) -> dict[str, Any] | None:
    """A list member's text as its items by ``key``: typed :class:`Item` objects where the
    member is a list of objects, else (an item that is no object, a text that does not
    decode) the general way, the decoded items as :func:`_keyed` keeps them."""
    dec = _TYPED.get((member, key))
    if dec is not None:
        try:  # (the caller bounds the recursion: :func:`_walk`, once for all texts)
            items = dec.decode(text)
        except (msgspec.DecodeError, RecursionError):  # (a ValidationError is one)
            pass
        else:
            keys = list(map(_KEY_OF[key], items))
            if set(map(type, keys)) <= _STR:  # every key a str: the dict made in C
                return dict(zip(keys, items, strict=True))
            return {k: item for k, item in zip(keys, items, strict=True) if k.__class__ is str}
    return _keyed(view.parsed(text), key)


#: the key member of a typed item, read without a Python function per item
_KEY_OF = {key: attrgetter(key) for key in ("name", "uri", "uriTemplate")}
_STR = {str}


def _keyed(items: Any, key: str) -> dict[str, Any] | None:
    """A list member's items by their ``key`` (None: the member is no list)."""
    if not isinstance(items, list):
        return None
    return {item[key]: item for item in items
            if isinstance(item, dict) and isinstance(item.get(key), str)}


Lists = dict[int, tuple[list[int], list[dict[str, Any]]]]


def _latest(view: View, method: str, member: str, key: str) -> Lists:
    """scope -> (answer seqs, the list after each), for :func:`_at`."""
    resps, scopes, states = _walk(view, method, member, key)
    out: Lists = {}
    if not resps:
        return out
    sc = np.asarray(scopes, dtype=np.int64)
    order = np.argsort(sc, kind="stable")  # by scope, each scope's answers in order
    ss = sc[order]
    starts = np.flatnonzero(np.concatenate(([True], ss[1:] != ss[:-1])))
    bounds = np.append(starts, len(ss)).tolist()
    # the answers and lists in scope order once, each scope's a slice of them (a capture
    # of thousands of sessions: no array taken and listed per scope)
    by_scope = order.tolist()
    rs = np.asarray(resps, dtype=np.int64)[order].tolist()
    st = [states[k] for k in by_scope]
    scope_of = ss[starts].tolist()
    # the scopes in the order of their first answer
    for g in np.argsort(order[starts], kind="stable").tolist():
        a, b = bounds[g], bounds[g + 1]
        out[scope_of[g]] = (rs[a:b], st[a:b])
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
    the states of ``lists`` end to end (-1: none yet): :func:`_at` of many frames at once.

    One search of every frame among every answer, not one pass over the frames per scope
    (a capture of thousands of sessions): the answers keyed by (rank of their scope in
    ``lists``, seq), ascending as ``lists`` holds them, the frames by the same key; the
    latest answer at or before a frame's key is its list when it is of the frame's scope.
    """
    out = np.full(len(seqs), -1, dtype=np.int64)
    if not lists or not len(seqs):
        return out
    seqs = np.asarray(seqs, dtype=np.int64)
    answers = [np.asarray(a, dtype=np.int64) for a, _ in lists.values()]
    a_rank = np.repeat(np.arange(len(answers), dtype=np.int64), [len(a) for a in answers])
    a_seq = np.concatenate(answers)
    width = int(max(a_seq.max(initial=0), seqs.max())) + 1
    keys = np.asarray(list(lists), dtype=np.int64)  # the scopes, by rank
    by_key = np.argsort(keys, kind="stable")
    pos = np.minimum(np.searchsorted(keys[by_key], scopes), len(keys) - 1)
    rank = np.where(keys[by_key][pos] == scopes, by_key[pos], -1)
    listed = np.flatnonzero(rank >= 0)  # frames whose scope has answers
    at = np.searchsorted(a_rank * width + a_seq, rank[listed] * width + seqs[listed],
                         side="right") - 1
    ok = (at >= 0) & (a_rank[np.maximum(at, 0)] == rank[listed])
    out[listed[ok]] = at[ok]
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
