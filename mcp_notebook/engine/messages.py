"""The message of each finding, as the violations table words it: the rule's title, the
finding's detail and the rule's advice (:func:`message`).

:func:`messages` words every finding of a run at once: a capture can hold a hundred
thousand findings, most of them of one or two rules (a capture of ids above 2^53, calls of
a tool its server did not list), so each rule's details are taken together, each distinct
detail is worded once and the findings that share it share its message (one string, as
the per-finding look-up before it made them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["message", "messages"]


def message(rule: Any, detail: str) -> str:
    """The message of one finding of ``rule`` (a :class:`~mcp_notebook.protocol.rules.Rule`):
    ``"<title>: <detail>. <advice>"``, or ``"<title>. <advice>"`` without a detail."""
    return f"{rule.title}: {detail}. {rule.advice}" if detail else f"{rule.title}. {rule.advice}"


def messages(rules: Sequence[Any], rule: np.ndarray, detail: Sequence[str]) -> np.ndarray:
    """:func:`message` of each finding (an object array in the findings' order): finding
    ``k`` is of ``rules[rule[k]]`` with ``detail[k]``.

    Per rule (one stable sort of the rule indexes): its details in their order, their
    distinct values by one ``dict.fromkeys``, one message made for each, and the findings'
    messages looked up in that table; where every detail of the rule is distinct (ids,
    pointers) the messages are made straight from the details, with no table to look up.
    """
    n = len(rule)
    out = np.empty(n, dtype=object)
    if not n:
        return out
    dets = np.empty(n, dtype=object)
    dets[:] = detail  # (a list of str: no numpy str dtype guessed)
    order = np.argsort(rule, kind="stable")  # by rule, each rule's findings in order
    bounds = np.concatenate(([0], np.cumsum(np.bincount(rule, minlength=len(rules))))).tolist()
    for k, r in enumerate(rules):
        at = order[bounds[k]:bounds[k + 1]]
        if not len(at):
            continue
        mine = dets[at].tolist()
        table: dict[str, Any] = dict.fromkeys(mine)
        head, tail = f"{r.title}: ", f". {r.advice}"
        if len(table) == len(mine) and "" not in table:  # every detail its own message
            out[at] = [head + d + tail for d in mine]
            continue
        for d in table:
            table[d] = head + d + tail if d else message(r, "")
        out[at] = list(map(table.__getitem__, mine))
    return out
