"""The facts of the records of a HAR read a column at a time (``_har_columns``): the
extras of each entry's POST and reply, of each record, and each entry's span in time, as
``_har_entry.Entry`` and the reader make them."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["entry_extras", "extras", "spans"]


def _ms(v: np.ndarray) -> np.ndarray:
    """``_har_entry._ms`` of each value (NaN: none)."""
    with np.errstate(invalid="ignore"):
        return np.where(v > 0, v / 1000, 0.0)


def _ms1(value: float | None) -> float:
    return value / 1000 if value is not None and value > 0 else 0.0


def entry_extras(facts: list[tuple[Any, ...]], status: list[int | None],
                 incomplete: list[bool], plain: np.ndarray, texts: list[str],
                 get: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``extra`` of each entry's POST and of its reply, as object arrays (one dict
    per distinct set of facts: the table copies one per row). ``plain``: the short
    reply text of each entry, as its number in ``texts`` (-1: none)."""
    n = len(facts)
    # each status and each entry's mcp_headers numbered in the order they first come
    # (the facts are shared by the entries of the same header lists: each distinct one
    # is looked at once)
    codes = {x: k for k, x in enumerate(dict.fromkeys(status))}
    status_code = np.fromiter(map(codes.__getitem__, status), dtype=np.int64, count=n)
    mcps: dict[tuple[Any, ...], int] = {}
    firsts = dict(zip(map(id, facts), facts, strict=True))  # in the order each first comes
    mcp_of = {i: mcps.setdefault(f[2], len(mcps)) for i, f in firsts.items()}
    mcp_code = np.fromiter(map(mcp_of.__getitem__, map(id, facts)), dtype=np.int64,
                           count=n)
    inc = np.fromiter(incomplete, dtype=bool, count=n)
    key = (mcp_code * len(codes) + status_code) * 2 + inc
    kinds, first, inverse = np.unique(key, return_index=True, return_inverse=True)

    def made(k: int, text: str | None) -> dict[str, Any]:
        st = status[k]
        extra: dict[str, Any] = {"http": "POST"}
        if st is not None:
            extra["status"] = st
        if incomplete[k]:
            extra["incomplete"] = True
        if text is not None:
            extra["reply"] = text
        if facts[k][2]:
            extra["mcp_headers"] = dict(facts[k][2])
        return extra

    c2s = np.empty(len(kinds), dtype=object)
    c2s[:] = [made(k, None) for k in first.tolist()]
    c2s = c2s[inverse.reshape(-1)]
    said = np.flatnonzero(plain >= 0)  # a short reply: a fact of the POST
    if len(said):  # one dict per distinct (facts, text)
        _, at, again = np.unique(key[said] * len(texts) + plain[said], return_index=True,
                                 return_inverse=True)
        with_text = np.empty(len(at), dtype=object)
        with_text[:] = [made(k, texts[t]) for k, t in zip(
            said[at].tolist(), plain[said[at]].tolist(), strict=True)]
        c2s[said] = with_text[again.reshape(-1)]
    base = np.empty(2 * len(codes), dtype=object)
    base[:] = [{"http": h} if x is None else {"http": h, "status": x}
               for h in ("POST", "GET") for x in codes]
    return c2s, base[status_code + len(codes) * get]

def spans(start: np.ndarray, nums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Entry.span`` of every entry: its first byte and its end. ``nums``: each entry's
    time and six timings (blocked, dns, connect, send, wait, receive; NaN: none)."""
    ms = _ms(nums[:, 1:].T)
    five = ms[:5]
    # a sum of one non-zero value is that value whatever the order of the additions;
    # the others are summed as ``Entry.span`` sums them (``sum``, from 0.0)
    first = five.sum(axis=0)
    several = np.flatnonzero((five != 0).sum(axis=0) > 1)
    if len(several):
        for k in several.tolist():
            first[k] = sum((_ms1(v) for v in nums[k, 1:6].tolist()), 0.0)
    total = _ms(nums[:, 0])
    total = np.where(total != 0.0, total, first + ms[5])
    return start + first, start + total


def extras(entry: np.ndarray, sub: np.ndarray, ev: np.ndarray, type_of: np.ndarray,
           types: list[bytes], c2s_extra: np.ndarray, s2c_extra: np.ndarray,
           status: list[int | None], get: np.ndarray) -> list[dict[str, Any]]:
    """The ``extra`` of each record (one dict per distinct set of facts)."""
    c2s, s2c = c2s_extra, s2c_extra
    out = np.empty(len(entry), dtype=object)
    post = sub == 0
    out[post] = c2s[entry[post]]
    reply = ~post & ~ev
    out[reply] = s2c[entry[reply]]
    at = np.flatnonzero(ev)
    if len(at):
        # an event's: its entry's reply extra with the event's type, estimated time
        codes = {x: k for k, x in enumerate(dict.fromkeys(status))}  # as they first come
        status_code = np.fromiter(map(codes.__getitem__, status), dtype=np.int64,
                                  count=len(status))
        which = (status_code[entry[at]] * 2 + get[entry[at]]) * len(types) \
            + type_of[at]
        kinds, first = np.unique(which, return_index=True)
        made = np.empty(len(kinds), dtype=object)
        for k, (w, f) in enumerate(zip(kinds.tolist(), first.tolist(), strict=True)):
            extra = {**s2c_extra[int(entry[at[f]])]}
            t = w % len(types)
            if t:
                extra["sse_event"] = types[t].decode("utf-8", "surrogateescape")
            if not (w // len(types)) % 2:  # a POST's reply stream: times estimated
                extra["ts_estimated"] = True
            made[k] = extra
        out[at] = made[np.searchsorted(kinds, which)]
    return out.tolist()  # type: ignore[no-any-return]
