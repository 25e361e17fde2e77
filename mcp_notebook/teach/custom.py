"""Try a rule of your own next to the checker's: the rule as data, the check as a function.

A check takes a trace and yields ``(seq, related_seq, detail)`` for each frame that breaks
the rule, just like the checks behind the catalogue (``mcp_notebook.engine.rules``), but it
may use the trace's DataFrames. :func:`run_rule` turns its findings into rows shaped like
``trace.violations``; :func:`with_rule` adds them to the checker's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from ..engine.messages import message
from ..protocol.rules import Rule
from ..table import VIOLATION_COLUMNS, empty

__all__ = ["run_rule", "with_rule"]

Check = Callable[[Any], Iterable[tuple[int, "int | None", str]]]


def run_rule(trace: Any, rule: Rule, check: Check) -> pd.DataFrame:
    """The findings of ``check`` on ``trace``, as rows of ``rule`` (``trace.violations``'s columns).

    Findings outside the rule's versions (by each session's protocol version) are dropped,
    as the checker does.
    """
    from ..protocol import versions as V

    sessions = trace.frames["session"]
    rows = []
    for seq, related, detail in check(trace):
        version = V.normalise(trace.versions.get(sessions.iloc[int(seq)]))
        if version not in rule.versions:
            continue
        rows.append({"rule": rule.code, "severity": rule.severity, "seq": int(seq),
                     "related_seq": None if related is None else int(related),
                     "message": message(rule, detail), "spec": rule.cite,
                     "versions": ", ".join(rule.versions)})
    if not rows:
        return empty(VIOLATION_COLUMNS)
    col = {name: [r[name] for r in rows] for name in VIOLATION_COLUMNS}
    return pd.DataFrame({  # the dtypes of ``trace.violations`` (``table.VIOLATION_COLUMNS``)
        name: pd.Categorical(values, categories=["error", "warning", "info"])
        if name == "severity" else pd.array(values, dtype="Int64")
        if name in ("seq", "related_seq") else pd.Series(values, dtype=object)
        for name, values in col.items()})


def with_rule(trace: Any, rule: Rule, check: Check) -> pd.DataFrame:
    """``trace.violations`` plus the findings of your rule, sorted by frame."""
    mine = run_rule(trace, rule, check)
    both = pd.concat([trace.violations, mine], ignore_index=True) if len(mine) else \
        trace.violations
    return both.sort_values(["seq", "rule"], kind="stable").reset_index(drop=True)
