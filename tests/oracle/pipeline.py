"""The reference pipeline, kept whole: readers + ``collect`` + the pure-Python walk and checks.

This is how ``mn.load`` and ``Trace`` worked before the fast paths (record by record,
lists, ``pairing.pair``, ``checks.run``). The equivalence tests compare the three
DataFrames of the fast paths with the ones built here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from mcp_notebook import readers
from mcp_notebook.engine.walks import infer, pair
from mcp_notebook.protocol import versions as V
from mcp_notebook.protocol.envelope import bounded_recursion
from mcp_notebook.table import VIOLATION_COLUMNS, Columns, collect, empty

from . import checks
from .tables import frames_frame, pairs_frame

__all__ = ["reference_columns", "reference_tables", "materialised", "comparable"]


def reference_columns(paths: list[Path], fmt: str = "auto", **opts: Any) -> Columns:
    """Columns of the files, read record by record, directions inferred as before."""
    cols = Columns()
    for path in paths:
        with bounded_recursion():
            collect(readers.read(path, format=fmt, **opts), cols)
    if any(d is None for d, k in zip(cols.direction, cols.kind, strict=True)
           if k in ("request", "notification", "result", "error")):
        cols.direction = infer(cols.kind, cols.session, cols.id_key, cols.method,
                               cols.direction, cols.batch)
    return cols


def reference_tables(c: Columns, version: str | None = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(frames, pairs, violations)`` of the reference Trace (lazy text read: the info
    column as plain objects)."""
    frames = frames_frame(c)
    rows, findings = pair(range(len(c)), c.session, c.direction, c.kind, c.id_key, c.method,
                          c.is_tool_error, c.ref, c.progress)
    pairs = pairs_frame(rows, frames, c)
    found = checks.session_versions(c.kind, c.session, c.direction, c.method, c.version, rows,
                                    version)
    versions = {s: V.normalise(found.get(s)) if s in found else V.DEFAULT
                for s in dict.fromkeys(c.session)}
    ci = checks.CheckInput(
        kind=c.kind, session=c.session, direction=c.direction, id_key=c.id_key,
        method=c.method, error_code=c.error_code, flags=c.flags, raw=c.raw, batch=c.batch,
        pairs=rows, findings=findings, versions=versions, extra=c.extra, reason=c.reason)
    hits = checks.run(ci)
    if not hits:
        return materialised(frames), pairs, empty(VIOLATION_COLUMNS)

    def message(rule: Any, detail: str) -> str:
        return f"{rule.title}: {detail}. {rule.advice}" if detail else \
            f"{rule.title}. {rule.advice}"

    violations = pd.DataFrame({
        "rule": pd.Series([r.code for r, *_ in hits], dtype=object),
        "severity": pd.Categorical([r.severity for r, *_ in hits],
                                   categories=["error", "warning", "info"]),
        "seq": pd.array([s for _, s, _, _ in hits], dtype="Int64"),
        "related_seq": pd.array([rel for _, _, rel, _ in hits], dtype="Int64"),
        "message": pd.Series([message(r, d) for r, _, _, d in hits], dtype=object),
        "spec": pd.Series([r.cite for r, *_ in hits], dtype=object),
        "versions": pd.Series([", ".join(r.versions) for r, *_ in hits], dtype=object),
    })
    return materialised(frames), pairs, violations


def materialised(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with lazy text columns read into plain object columns."""
    out = df.copy()
    for col in out.columns:
        if str(out[col].dtype) == "lazytext":
            out[col] = pd.Series(out[col].to_numpy(dtype=object), index=out.index, dtype=object)
    return out


def comparable(violations: pd.DataFrame) -> pd.DataFrame:
    """The engine's violations of the rules the oracle checks (a rule added since the
    oracle was frozen is held by its rows of the rule table)."""
    keep = violations["rule"].isin(list(checks.CHECKS))
    return violations if keep.all() else violations[keep].reset_index(drop=True)
