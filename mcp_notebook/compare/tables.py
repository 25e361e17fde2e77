"""Latency, outcomes and violations per method or rule on each side, and the changes in them
that count (:class:`Threshold`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .sessions import Side, pairs_of

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Threshold:
    """A latency rise that counts: ``rise`` is a fraction (0.2 = +20 %), None is off."""

    rise: float | None
    severity: str = "warning"


def parse_threshold(text: str) -> Threshold:
    """``"+20%:warning"``, ``"50%"`` (warning), ``"0.5:error"`` or ``"off"``.

    >>> parse_threshold("+20%:error")
    Threshold(rise=0.2, severity='error')
    """
    text = text.strip()
    if text.lower() in ("off", "none", ""):
        return Threshold(None)
    value, _, severity = text.partition(":")
    severity = severity.strip() or "warning"
    if severity not in SEVERITIES:
        raise ValueError(f"threshold {text!r}: severity must be one of {', '.join(SEVERITIES)}")
    m = re.fullmatch(r"\+?\s*([0-9]*\.?[0-9]+)\s*(%?)", value.strip())
    if not m:
        raise ValueError(f"threshold {text!r}: write it as +20%:warning, 0.2:error or off")
    rise = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
    return Threshold(rise, severity)


DEFAULT_P50 = Threshold(0.20, "warning")
DEFAULT_P95 = Threshold(0.50, "error")


def _answered(p: pd.DataFrame) -> pd.DataFrame:
    return p[p["request_seq"].notna() & ~p["outcome"].isin(["duplicate", "orphan"])]


def latency_table(a: Side, b: Side) -> pd.DataFrame:
    """Per method: count, p50 and p95 (ms) on each side."""
    out = {}
    for label, side in (("a", a), ("b", b)):
        p = _answered(pairs_of(side.trace, side.session))
        p = p[p["latency"].notna()]
        ms = p["latency"].dt.total_seconds().to_numpy() * 1000.0
        g = pd.DataFrame({"method": p["method"].astype(object).fillna("?").to_numpy(), "ms": ms})
        grouped = g.groupby("method")["ms"]
        out[label] = pd.DataFrame({f"count_{label}": grouped.size(),
                                   f"p50_{label}": grouped.quantile(0.5),
                                   f"p95_{label}": grouped.quantile(0.95)})
    table = out["a"].join(out["b"], how="outer").rename_axis("method")
    for q in ("p50", "p95"):
        table[f"{q}_shift"] = (table[f"{q}_b"] - table[f"{q}_a"]) / table[f"{q}_a"]
    return table.sort_index()


def outcome_table(a: Side, b: Side) -> pd.DataFrame:
    """Per method: requests, errors, tool errors, unanswered and the error rates on each side."""
    out = {}
    for label, side in (("a", a), ("b", b)):
        p = _answered(pairs_of(side.trace, side.session))
        g = pd.DataFrame({"method": p["method"].astype(object).fillna("?").to_numpy(),
                          "error": (p["outcome"] == "error").to_numpy(),
                          "tool_error": (p["outcome"] == "tool_error").to_numpy(),
                          "answered": p["response_seq"].notna().to_numpy()})
        grouped = g.groupby("method")
        t = pd.DataFrame({f"requests_{label}": grouped.size(),
                          f"errors_{label}": grouped["error"].sum(),
                          f"tool_errors_{label}": grouped["tool_error"].sum(),
                          f"answered_{label}": grouped["answered"].sum()})
        answered = t[f"answered_{label}"].where(t[f"answered_{label}"] > 0)
        t[f"error_rate_{label}"] = (t[f"errors_{label}"] + t[f"tool_errors_{label}"]) / answered
        out[label] = t
    return out["a"].join(out["b"], how="outer").rename_axis("method").sort_index()


def latency_rows(table: pd.DataFrame, p50: Threshold, p95: Threshold, min_ms: float
                  ) -> list[dict[str, Any]]:
    rows = []
    for method, r in table.iterrows():
        for q, th in (("p50", p50), ("p95", p95)):
            va, vb = r[f"{q}_a"], r[f"{q}_b"]
            if th.rise is None or pd.isna(va) or pd.isna(vb) or vb - va < min_ms:
                continue
            shift = (vb - va) / va if va > 0 else np.inf
            if shift > th.rise:
                rows.append(dict(area="latency", item=method, change=f"{q} up",
                                 detail=f"{q} {va:.1f} ms -> {vb:.1f} ms ({shift:+.0%}, "
                                        f"threshold +{th.rise:.0%})",
                                 a=f"{va:.3f}", b=f"{vb:.3f}", severity=th.severity))
    return rows


def outcome_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for method, r in table.iterrows():
        na, nb = r["requests_a"], r["requests_b"]
        if pd.isna(na) or pd.isna(nb):
            rows.append(dict(area="method", item=method,
                             change="gone" if pd.isna(nb) else "new",
                             detail=("no longer called" if pd.isna(nb) else "called only in b"),
                             a="" if pd.isna(na) else str(int(na)),
                             b="" if pd.isna(nb) else str(int(nb)), severity="info"))
            continue
        ea, eb = r["error_rate_a"], r["error_rate_b"]
        if pd.isna(ea) or pd.isna(eb) or ea == eb:
            continue
        if eb > ea:
            change, severity = "errors up", "error" if ea == 0 else "warning"
        else:
            change, severity = "errors down", "info"
        rows.append(dict(area="outcome", item=method, change=change,
                         detail=f"error rate {ea:.0%} -> {eb:.0%} (errors {int(r['errors_a'])}"
                                f"+{int(r['tool_errors_a'])} tool -> {int(r['errors_b'])}"
                                f"+{int(r['tool_errors_b'])} tool)",
                         a=f"{ea:.4f}", b=f"{eb:.4f}", severity=severity))
    return rows


def violation_table(a: Side, b: Side) -> pd.DataFrame:
    """Per rule: its severity and findings on each side."""
    counts = {}
    sev: dict[str, str] = {}
    for label, side in (("a", a), ("b", b)):
        v = side.trace.violations
        if not (side.session is None and len(side.trace.sessions()) <= 1):
            f = side.trace.frames
            seqs = set(f.loc[f["session"] == side.session, "seq"])
            v = v[v["seq"].isin(seqs)]
        counts[label] = v["rule"].value_counts()
        sev.update(dict(zip(v["rule"], v["severity"].astype(str), strict=True)))
    rules = sorted(set(counts["a"].index) | set(counts["b"].index))
    return pd.DataFrame({"severity": [sev[r] for r in rules],
                         "count_a": [int(counts["a"].get(r, 0)) for r in rules],
                         "count_b": [int(counts["b"].get(r, 0)) for r in rules]},
                        index=pd.Index(rules, name="rule"))


def violation_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for rule, r in table.iterrows():
        if r["count_a"] == 0:
            rows.append(dict(area="violation", item=rule, change="new",
                             detail=f"{r['count_b']} new finding(s)", a="0",
                             b=str(r["count_b"]), severity=r["severity"]))
        elif r["count_b"] == 0:
            rows.append(dict(area="violation", item=rule, change="gone",
                             detail=f"{r['count_a']} finding(s) gone", a=str(r["count_a"]),
                             b="0", severity="info"))
    return rows

