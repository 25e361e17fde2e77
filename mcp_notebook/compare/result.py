"""The result of :func:`~mcp_notebook.compare.diff`: the changes, the tables, a report."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .sessions import plain
from .tables import SEVERITIES


class Diff:
    """What changed from ``a`` to ``b``: ``changes`` (one row per difference) and the tables."""

    def __init__(self, changes: pd.DataFrame, latency: pd.DataFrame, outcomes: pd.DataFrame,
                 violations: pd.DataFrame, sessions: list[tuple[Any, Any]],
                 names: tuple[str, str]) -> None:
        self.changes = changes
        self.latency = latency
        self.outcomes = outcomes
        self.violations = violations
        self.sessions = sessions
        self.names = names

    def _area(self, *areas: str) -> pd.DataFrame:
        return self.changes[self.changes["area"].isin(areas)].reset_index(drop=True)

    @property
    def tools(self) -> pd.DataFrame:
        """Tools added, removed or changed (inputSchema, outputSchema, description...)."""
        return self._area("tool")

    @property
    def prompts(self) -> pd.DataFrame:
        return self._area("prompt")

    @property
    def resources(self) -> pd.DataFrame:
        """Resources and resource templates added, removed or changed."""
        return self._area("resource", "resource template")

    @property
    def server(self) -> pd.DataFrame:
        """Protocol version, server info and capabilities that changed."""
        return self._area("protocol", "server", "capability")

    def failing(self, fail_on: str = "error") -> pd.DataFrame:
        """The changes at or above ``fail_on``."""
        level = SEVERITIES.index(fail_on)
        keep = self.changes["severity"].map(lambda s: SEVERITIES.index(s) <= level)
        return self.changes[keep.astype(bool)].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (``mcp-notebook diff --json``)."""
        def records(df: pd.DataFrame, index: str | None = None) -> list[dict[str, Any]]:
            d = df.reset_index() if index else df
            d = d.astype(object).where(pd.notna(d), None)
            return [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()}
                    for r in d.to_dict("records")]
        by = self.changes["severity"].value_counts()
        return {"a": self.names[0], "b": self.names[1],
                "sessions": [{"a": plain(x), "b": plain(y)} for x, y in self.sessions],
                "counts": {s: int(by.get(s, 0)) for s in SEVERITIES},
                "changes": records(self.changes),
                "latency": records(self.latency, "method"),
                "outcomes": records(self.outcomes, "method"),
                "violations": records(self.violations, "rule")}

    def text(self) -> str:
        """A plain-text report, most severe first."""
        by = self.changes["severity"].value_counts()
        lines = [f"diff {self.names[0]} -> {self.names[1]}: "
                 + ", ".join(f"{int(by.get(s, 0))} {s}" for s in SEVERITIES)]
        if len(self.sessions) != 1 or self.sessions[0][0] != self.sessions[0][1]:
            lines.append("sessions: " + ", ".join(f"{x} -> {y}" for x, y in self.sessions))
        order = {s: i for i, s in enumerate(SEVERITIES)}
        rows = self.changes.assign(_o=self.changes["severity"].map(order)).sort_values(
            ["_o", "area", "item"], kind="stable")
        for r in rows.itertuples():
            lines.append(f"  {r.severity:<7}  {r.area:<17} {r.item}: {r.change} — {r.detail}")
        if rows.empty:
            lines.append("  no changes")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        import html
        head = html.escape(self.text().splitlines()[0])
        return f"<div class='mcp-diff'><b>{head}</b>{self.changes.to_html(index=False)}</div>"

