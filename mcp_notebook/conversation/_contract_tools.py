"""The contracts of ``tools/call``: its arguments against the ``inputSchema`` of that tool
in the latest ``tools/list`` answer before the call, a call of a tool the list did not
hold, and ``structuredContent`` against the tool's ``outputSchema`` (not when
``isError``). One check per rule (``contracts.CHECKS``)."""

from __future__ import annotations

from functools import partial
from itertools import repeat
from operator import is_
from typing import Any, NamedTuple

import numpy as np

from ..fast.store import ArgTexts
from ..protocol.envelope import bounded_recursion
from ._contract_lists import _latest, _state_index, _Tool
from ._contract_shapes import (
    _accepts_all,
    _batch_errors,
    _errors,
    _object_starts,
    _object_texts,
    tool_validator,
)
from ._view import Hit, View, unique_inverse


class Calls(NamedTuple):
    """The ``tools/call`` requests after a list of their scope, as columns: the call's
    frame, its tool in the latest list before it (None: not listed), the name and the raw
    arguments text (b"" when absent)."""

    seq: np.ndarray  # int64
    tool: np.ndarray  # object: dict or None
    name: np.ndarray  # object: str
    args: ArgTexts  # the arguments texts (b"" when absent)
    which: np.ndarray  # int64: the index of each call's tool in ``tools``
    tools: list[Any]  # the distinct (list, name) look-ups' tools (dict or None)

    def where(self, test: Any) -> np.ndarray:
        """The calls whose tool passes ``test`` (decided once per distinct look-up)."""
        ok = np.fromiter(map(test, self.tools), dtype=bool, count=len(self.tools))
        return np.flatnonzero(ok[self.which])


_NO_CALLS = Calls(np.empty(0, dtype=np.int64), np.empty(0, dtype=object),
                  np.empty(0, dtype=object), ArgTexts.of([]), np.empty(0, dtype=np.int64), [])


def _tool_calls(view: View) -> Calls:
    return view.memo("tool-calls", _walk_calls)  # type: ignore[no-any-return]


def _walk_calls(view: View) -> Calls:
    """:class:`Calls` of the view; calls before any list of their scope are left out, and
    so are calls whose name is no string. Each call's tool is looked up once per distinct
    (list, name) pair."""
    lists = _latest(view, "tools/list", "tools", "name")
    if not lists:
        return _NO_CALLS
    calls = view.row_array(["tools/call"], (0,))
    at = _state_index(lists, view.scope_array(calls), calls)
    keep = np.flatnonzero(at >= 0)
    if not len(keep):
        return _NO_CALLS
    flat = [state for _, states in lists.values() for state in states]
    # the states by identity: sessions whose servers answered alike share one
    ident: dict[int, int] = {}
    shared = np.asarray([ident.setdefault(id(s), len(ident)) for s in flat], dtype=np.int64)
    reps = list({id(s): s for s in flat}.values())
    codes, distinct, args = view.call_codes(calls[keep])  # codes of the names: no tuples
    if (codes < 0).any():  # a name that is absent or no string
        named = codes >= 0
        keep, codes, args = keep[named], codes[named], args[named]
    if not len(distinct):
        return _NO_CALLS
    table = np.empty(len(distinct), dtype=object)
    table[:] = distinct
    names = table[codes]
    pair = shared[at[keep]] * len(distinct) + codes
    uniq, which = unique_inverse(pair)
    tools = np.empty(len(uniq), dtype=object)
    # each look-up's list and name, then dict.get of each (no Python function per look-up)
    states = map(reps.__getitem__, (uniq // len(distinct)).tolist())
    wanted = map(distinct.__getitem__, (uniq % len(distinct)).tolist())
    tools[:] = list(map(dict.get, states, wanted))
    return Calls(calls[keep], tools[which], names, args, which, tools.tolist())


def _arguments(view: View) -> list[Hit]:
    with bounded_recursion():
        return _arguments_of(view)


def _arguments_of(view: View) -> list[Hit]:
    calls = _tool_calls(view)
    # one compiled validator per distinct schema text (decided once per distinct tool
    # look-up): its calls validated as one batch
    groups: dict[int, tuple[int, Any, bool]] = {}  # id(validator) -> (group, schema, every)
    of_schema: dict[int, int] = {}  # id(schema) -> group (-1: no validator)
    group_of = np.full(len(calls.tools), -1, dtype=np.int64)
    judged = np.ones(len(calls.seq), dtype=bool)
    if view.shallow_arguments:  # the structural part only: arguments that are no object
        judged = ~_object_starts(calls.args)
    for j in np.unique(calls.which[judged]).tolist():  # only tools with calls to judge
        tool = calls.tools[j]
        if tool is None:
            continue
        schema = tool.get("inputSchema")
        g = of_schema.get(id(schema))  # the lists keep the schemas: their ids stay theirs
        if g is None:
            v = tool_validator(schema)
            if v is None:
                g = -1
            else:
                g = groups.setdefault(id(v), (len(groups), schema, _accepts_all(schema)))[0]
            of_schema[id(schema)] = g
        group_of[j] = g
    per_call = np.where(judged, group_of[calls.which], -1)
    order = np.argsort(per_call, kind="stable")  # by group, each in call order
    bounds = np.searchsorted(per_call[order], np.arange(len(groups) + 1))
    found: list[tuple[int, Hit]] = []
    for g, schema, every in groups.values():
        idx = order[bounds[g]:bounds[g + 1]]
        if every:  # only a call whose arguments are no object can fail
            idx = idx[~_object_texts(calls.args[idx])]
        if not len(idx):
            continue
        raws = calls.args[idx].tolist()
        idx = idx.tolist()
        for i, errors in zip(idx, _batch_errors(schema, raws, "/params/arguments"), strict=True):
            if errors:
                seq, name = int(calls.seq[i]), calls.name[i]
                ptr, what = errors[0]
                more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                found.append((i, Hit(seq, view.response_of.get(seq),
                                     f"{name} at {ptr}: {what}{more}", ptr)))
    found.sort(key=lambda x: x[0])
    return [h for _, h in found]


def _not_listed(view: View) -> list[Hit]:
    calls = _tool_calls(view)
    at = calls.where(partial(is_, None))
    # the detail once per name (a capture of many calls names few tools)
    names = calls.name[at].tolist()
    detail: dict[str, Any] = dict.fromkeys(names)
    for n in detail:
        detail[n] = f"{n!r} was not in the latest tools/list"
    return list(map(Hit, calls.seq[at].tolist(), repeat(None), map(detail.__getitem__, names)))


def _declares_output(tool: Any) -> bool:
    """Whether a listed tool declares an ``outputSchema`` (``tool.get("outputSchema") is
    not None``): for a typed item from the text of the member, which only the tools whose
    results are judged have decoded (absent or ``null``: none)."""
    if tool.__class__ is _Tool:
        raw = tool.outputSchema
        return len(raw) > 0 and bytes(raw) != b"null"
    return bool(tool) and tool.get("outputSchema") is not None


def _output(view: View) -> list[Hit]:
    out: list[Hit] = []
    seen: dict[int, Any] = {}
    tc = _tool_calls(view)
    at = tc.where(_declares_output)
    calls = [(seq, tool, name, view.response_of[seq]) for seq, tool, name in
             zip(tc.seq[at].tolist(), tc.tool[at].tolist(), tc.name[at].tolist(), strict=True)
             if seq in view.response_of]
    view.prefetch([c[3] for c in calls])
    for seq, tool, name, resp in calls:
        result = view.result(resp)
        if result is None or result.get("isError") is True or \
                result.get("resultType") == "input_required":
            continue
        if "structuredContent" not in result:
            out.append(Hit(resp, seq, f"{name} declares an outputSchema but the result has "
                           "no structuredContent", "/result"))
            continue
        v = tool_validator(tool.get("outputSchema"), seen)
        errors = _errors(v, result["structuredContent"], "/result/structuredContent") if v else []
        if errors:
            ptr, what = errors[0]
            out.append(Hit(resp, seq, f"{name} at {ptr}: {what}", ptr))
    return out
