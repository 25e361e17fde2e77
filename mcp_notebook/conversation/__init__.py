"""The conversation checker: what the messages say, one level above the envelope.

Argument shapes against the official schema of the negotiated version, negotiated
capabilities both ways, tool/prompt/resource contracts within a session, error semantics,
payload size, the 2026-07-28 patterns and the conformance suite's requirement ids. One
module per rule family; each rule is a :class:`~mcp_notebook.protocol.rules.Rule` row next to
its check. The catalogue takes :data:`RULES`; the column checker takes
:data:`VEC_CHECKS` (``code -> check(vi) -> (seq, related, details)``).

>>> import mcp_notebook as mn
>>> from mcp_notebook import conversation
>>> t = mn.load(mn.sample_path("demo-stdio"))
>>> [f.rule for f in conversation.check(t) if f.rule.startswith("schema-")]
[]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ..engine.gcpause import gc_paused
from ..protocol import rules as _rules  # noqa: F401 - first: the catalogue imports this package
from ._listinput import ListInput
from ._view import Hit, view_of
from .catalogue import CHECKS as _CHECKS
from .catalogue import CODES, RULES
from .rev2026 import calls

__all__ = ["RULES", "VEC_CHECKS", "REF_CHECKS", "CODES", "Finding", "check", "pointers", "DEEP",
           "PARTIAL", "deep", "deferred", "calls"]


#: the rules ``t.violations`` leaves out on a capture of more messages than the limit
#: (None: no limit; absent: always run). By default the schema rules (and the error-code
#: rule built on them) are left out, at every size: they validate every message against the
#: official schema, computed when asked (:func:`check`, :func:`deep`, ``mcp-notebook
#: check``). So is the schema validation of ``tools/call`` arguments that are objects:
#: ``tool-arguments-schema`` (and ``tool-input-error-as-protocol-error``, built on it) are
#: :data:`PARTIAL`: ``t.violations`` keeps their structural part (arguments that are no
#: object, validated against the tool's schema) and the rest is validated when asked. Every other conversation rule runs in
#: ``t.violations`` at any size; a user may opt out of one on large captures by adding it
#: here, e.g. ``DEEP["resource-not-listed"] = 200_000`` (``"capability-conditions"``: the
#: capability rows with a condition on the params: tool-enabled sampling, URL elicitation,
#: a task), or bring the whole argument validation back with
#: ``DEEP.pop("tool-arguments-schema")``.
DEEP: dict[str, int | None] = {"schema-params": 0, "schema-result": 0, "invalid-params-code": 0,
                               "tool-arguments-schema": 0,
                               "tool-input-error-as-protocol-error": 0}
#: the rules of :data:`DEEP` that, when left out, still run their cheap structural part:
#: the tools/call arguments that are no object (and the error answers to those calls)
PARTIAL = frozenset({"tool-arguments-schema", "tool-input-error-as-protocol-error"})
_DEFAULT_DEEP = dict(DEEP)


def deferred(code: str, messages: int) -> bool:
    """Whether ``t.violations`` leaves rule ``code`` out on a capture of ``messages``."""
    limit = DEEP.get(code)
    return code in DEEP and limit is not None and messages > limit


class Finding(NamedTuple):
    """A conversation finding: the rule, its frame, a related frame, the detail and the JSON
    pointer of the failing member (None when the finding is about no one member)."""

    rule: str
    severity: str
    seq: int
    related_seq: int | None
    detail: str
    pointer: str | None


@contextmanager
def deep() -> Iterator[None]:
    """Within the block, ``t.violations`` runs the deep (schema) rules at any size, as
    ``mcp-notebook check`` does."""
    old = dict(DEEP)
    DEEP.update(dict.fromkeys(DEEP))
    try:
        yield
    finally:
        DEEP.update(old)


def _skipped(vi: Any, code: str) -> bool:
    if code not in DEEP or vi.__dict__.get("_conversation_deep"):
        return False
    return deferred(code, int(np.count_nonzero(vi.kind <= 3)))


def _vec(code: str) -> Callable[[Any], tuple[np.ndarray, np.ndarray, list[str]]]:
    fn = _CHECKS[code]

    def check(vi: Any) -> tuple[np.ndarray, np.ndarray, list[str]]:
        if _skipped(vi, code) and code not in PARTIAL:
            hits: list[Hit] = []
        else:
            view = view_of(vi)
            view.light = _skipped(vi, "capability-conditions")
            view.shallow_arguments = _skipped(vi, "tool-arguments-schema")
            with gc_paused():
                hits = fn(view)
            view.__dict__.setdefault("found", {})[code] = hits
        return _columns_of(hits)
    check.__doc__ = fn.__doc__
    return check


def _columns_of(hits: list[Hit]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The frames, related frames (-1: none) and details of ``hits`` as columns."""
    seq = np.asarray([h.seq for h in hits], dtype=np.int64)
    rel = np.asarray([-1 if h.related is None else h.related for h in hits], dtype=np.int64)
    return seq, rel, [h.detail for h in hits]


VEC_CHECKS = {code: _vec(code) for code in _CHECKS}


def _ref(code: str) -> Callable[[Any], Iterator[tuple[int, int | None, str]]]:
    vec = VEC_CHECKS[code]

    def check(ci: Any) -> Iterator[tuple[int, int | None, str]]:
        li = ci.__dict__.get("_conversation_input")
        if li is None:
            li = ci.__dict__["_conversation_input"] = ListInput(ci)
        seq, rel, det = vec(li)
        for s, r, d in zip(seq.tolist(), rel.tolist(), det, strict=True):
            yield s, (None if r < 0 else r), d
    return check


#: the same checks for the reference checker (the list-based oracle under tests), on its plain lists
REF_CHECKS = {code: _ref(code) for code in _CHECKS}


def check(trace: Any, deep: bool = True) -> list[Finding]:
    """Every conversation finding of a trace, deep rules included (``deep=False``: as
    ``t.violations`` runs them), with its pointer; sorted by frame."""
    from ..engine.checks import run_vec

    vi = trace._check_input(trace.versions)
    if deep:
        vi.__dict__["_conversation_deep"] = True
    found = run_vec(vi, RULES)
    view = view_of(vi)
    pointers = {(code, h.seq, h.detail): h.pointer
                for code, hits in view.__dict__.get("found", {}).items() for h in hits}
    return [Finding(r.code, r.severity, seq, rel, detail, pointers.get((r.code, seq, detail)))
            for r, seq, rel, detail in found]


def pointers(trace: Any) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """The JSON pointer of each finding of ``t.violations`` that names one member:
    ``{(rule, seq): [(detail, pointer), ...]}`` (the detail is part of the row's message).

    ``t.violations`` has no pointer column; this runs the conversation rules as it does
    (``check(trace, deep=False)``), for a view that marks the member in a frame's tree.
    """
    out: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for f in check(trace, deep=False):
        if f.pointer is not None:
            out.setdefault((f.rule, f.seq), []).append((f.detail, f.pointer))
    return out


def _register() -> None:
    """Put the conversation rules in the catalogue and their checks in the engine's
    registry (the catalogue imports this package when it is first read: see
    :data:`mcp_notebook.protocol.rules.EXTENSIONS`)."""
    from ..engine import checks as engine

    len(_rules.RULES)  # the engine's rule modules first: one order, however this loads
    for r in RULES:
        _rules.RULES.register(r)
    engine.CHECKS.update(VEC_CHECKS)


_register()
