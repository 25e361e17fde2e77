"""The violations list: every finding, linked to its frame and the related one.

A click on a finding selects its frame (``selected_seq``) and names the related frame
(``related_seq``: the request a duplicate answers, the earlier frame an id clashes with...),
which the explorer shows beside it. Each row carries the rule code, its severity and the
message; the rule's spec sentence is the row's tooltip. At most ``limit`` rows travel (the
count of the rest is said).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import pandas as pd
import traitlets

from .snapshot import StaticFallback

__all__ = ["ViolationsList", "RuleIndex", "violation_rows", "rules_by_seq"]

_STATIC = Path(__file__).parent / "static"


def _int(v: Any) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


def violation_rows(v: pd.DataFrame, limit: int = 2000) -> list[dict[str, Any]]:
    """The findings as plain dicts for the browser (strings and ints only), in seq order."""
    if v is None or not len(v):
        return []
    seq = pd.to_numeric(v["seq"], errors="coerce")
    order = np.argsort(seq.fillna(-1).to_numpy(), kind="stable")[:limit]
    part = v.iloc[order]
    rel = part["related_seq"] if "related_seq" in part else pd.Series([None] * len(part))
    spec = part["spec"] if "spec" in part else pd.Series([""] * len(part))
    return [{"rule": str(r), "severity": str(sv), "seq": _int(s), "related": _int(rs),
             "message": m if isinstance(m, str) else "", "spec": sp if isinstance(sp, str) else ""}
            for r, sv, s, rs, m, sp in zip(part["rule"].tolist(), part["severity"].tolist(),
                                           part["seq"].tolist(), rel.tolist(),
                                           part["message"].tolist(), spec.tolist(), strict=True)]


class RuleIndex:
    """The rule codes that point at each frame, looked up by seq (the flag cell's text).

    Made in one ``argsort`` of the findings' seqs; a lookup is a binary search, so a table
    window asks only for its own rows.
    """

    def __init__(self, v: pd.DataFrame | None) -> None:
        if v is None or not len(v):
            self._seq = np.zeros(0, dtype=np.int64)
            self._rule = np.zeros(0, dtype=object)
            return
        seq = pd.to_numeric(v["seq"], errors="coerce").fillna(-1).to_numpy(dtype=np.int64)
        order = np.argsort(seq, kind="stable")
        self._seq = seq[order]
        self._rule = np.asarray(v["rule"].to_numpy(dtype=object))[order]

    def get(self, seq: int, default: Any = None) -> list[str]:
        a, b = np.searchsorted(self._seq, [seq, seq + 1])
        return list(dict.fromkeys(str(r) for r in self._rule[a:b])) if b > a else \
            (default if default is not None else [])

    def __iter__(self) -> Any:
        return iter(dict.fromkeys(int(s) for s in self._seq.tolist() if s >= 0))

    def __getitem__(self, seq: int) -> list[str]:
        return self.get(seq)


def rules_by_seq(v: pd.DataFrame) -> RuleIndex:
    """The rule codes that point at each frame (``.get(seq)``), as a :class:`RuleIndex`."""
    return RuleIndex(v)


class ViolationsList(StaticFallback, anywidget.AnyWidget):
    """Findings of a trace; clicking one selects its frame and its related frame.

    The first ``limit`` findings (30) travel with the widget (a 1M-frame capture can hold
    80,000); "show more" asks for the next ``step``. Each rule's spec sentence travels once
    (``specs``), not once per finding.
    """

    _esm = _STATIC / "violations.js"
    _css = _STATIC / "violations.css"
    items: traitlets.List = traitlets.List().tag(sync=True)
    specs = traitlets.Dict().tag(sync=True)  # rule -> its spec sentence (the row's tooltip)
    total = traitlets.Int(0).tag(sync=True)
    limit = traitlets.Int(30).tag(sync=True)  # findings sent; the page's "show more" raises it
    selected_seq = traitlets.Int(None, allow_none=True).tag(sync=True)
    related_seq = traitlets.Int(None, allow_none=True).tag(sync=True)
    picked = traitlets.Int(-1).tag(sync=True)  # index of the clicked finding
    step = 500

    def __init__(self, violations: pd.DataFrame, *, limit: int = 30, **kwargs: Any) -> None:
        self._v = None  # the first fill comes below, once
        super().__init__(total=len(violations), limit=limit, **kwargs)
        self._v = violations
        self._fill()

    def _fill(self) -> None:
        rows = violation_rows(self._v, self.limit)
        specs = {r["rule"]: r.pop("spec") for r in rows}
        with self.hold_sync():
            self.specs = {k: v for k, v in specs.items() if v}
            self.items = rows

    @traitlets.observe("limit")
    def _on_limit(self, change: Any) -> None:
        if self._v is not None and change["new"] > len(self.items) and \
                len(self.items) < self.total:
            self._fill()

    def show_more(self) -> None:
        """List the next ``step`` findings (the page's "show more" button)."""
        self.limit = len(self.items) + self.step

    @traitlets.observe("picked")
    def _on_pick(self, change: Any) -> None:
        i = change["new"]
        if 0 <= i < len(self.items):
            item = self.items[i]
            with self.hold_sync():
                self.related_seq = item["related"]
                self.selected_seq = item["seq"]
