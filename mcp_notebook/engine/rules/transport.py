"""Rules the readers report from the transport: stdout noise, SSE events, unreadable
records, ambiguous pairing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..checks import KINDS, Hits, VecInput, check, hits
from ..native import extras_with

#: the members of a row's extras these rules read
_KEYS = ("ambiguous", "rule", "sse_event")


def _with(vi: VecInput, key: str) -> list[tuple[int, dict[str, Any]]]:
    """The rows whose extras hold ``key`` (one of :data:`_KEYS`), with their extras, in
    row order. One pass over the extras serves the three rules (every row of a HAR,
    recorder or Inspector capture has extras: a pass each took 0.1 to 0.5 s at 1M)."""
    found: dict[str, list[tuple[int, dict[str, Any]]]] | None = vi.cache.get(
        "transport-extras")
    if found is None:
        some = extras_with(vi.rule_extras, _KEYS)
        found = vi.cache["transport-extras"] = {k: [(i, e) for i, e in some if k in e]
                                                for k in _KEYS}
    return found[key]


def _extra(key: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        got = [(i, e.get("related_seq"), e[key]) for i, e in _with(vi, key)]
        return hits([g[0] for g in got], [-1 if g[1] is None else g[1] for g in got],
                     [v if isinstance(v, str) else "" for _, _, v in got])
    return check


def _stdout_noise(vi: VecInput) -> Hits:
    got = [(i, e.get("detail", "")) for i, e in _with(vi, "rule")
           if e.get("rule") == "stdout-noise"]
    return hits([g[0] for g in got], None, [g[1] for g in got])


def _unreadable(vi: VecInput) -> Hits:
    """Rows a reader could read as no record of its format: invalid, of no side, with no
    envelope flag (those are the message rules') and no rule the reader named."""
    rows = np.flatnonzero((vi.kind == KINDS.index("invalid")) & (vi.direction < 0)).tolist()
    got = [i for i in rows if not vi.flags.get(i) and "rule" not in vi.extra.get(i, {})]
    reasons = [None] * len(got) if vi.reason is None else vi.reason[got].tolist()
    return hits(got, None, [r or "" for r in reasons])


def _sse_event(vi: VecInput) -> Hits:
    log = KINDS.index("log")
    got = [(i, e["sse_event"]) for i, e in _with(vi, "sse_event")
           if e.get("sse_event") and e["sse_event"] != "message" and vi.kind[i] != log]
    return hits([g[0] for g in got], None, [f"an SSE {ev!r} event" for _, ev in got])

check("stdout-noise")(_stdout_noise)
check("ambiguous-pairing")(_extra("ambiguous"))
check("sse-non-message-event")(_sse_event)
check("unreadable-record")(_unreadable)
