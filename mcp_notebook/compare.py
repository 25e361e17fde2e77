"""``mn.diff``: what changed between two captures (two runs, two server versions).

(The module is ``compare``: a submodule named ``diff`` would shadow the function on import.)

Tools, prompts, resources and resource templates are read from the latest complete listing
(``tools/list`` ... and the pages that follow it by cursor) in each session; capabilities,
protocol version and server info from ``initialize``; latency, outcomes and violations from
the trace's own tables. Each difference is one row of ``result.changes`` with a severity, so
CI can fail on it as ``mcp-notebook check`` does (``diff_main``).

>>> import mcp_notebook as mn
>>> d = mn.diff(mn.sample_path("everything-stdio-basics"), mn.sample_path("everything-stdio-basics"))
>>> d.failing("info").empty
True
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Diff", "Threshold", "diff", "diff_main", "parse_threshold"]

SEVERITIES = ("error", "warning", "info")
CHANGE_COLUMNS = ["area", "item", "change", "detail", "a", "b", "severity", "session_a",
                  "session_b"]

#: listing method -> (kind, result key, item key, fields compared, severity of a change)
CATALOGS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "tools/list": ("tool", "tools", "name",
                   {"inputSchema": "warning", "outputSchema": "warning",
                    "description": "info", "title": "info", "annotations": "info"}),
    "prompts/list": ("prompt", "prompts", "name",
                     {"arguments": "warning", "description": "info", "title": "info"}),
    "resources/list": ("resource", "resources", "uri",
                       {"mimeType": "warning", "name": "info", "description": "info",
                        "title": "info"}),
    "resources/templates/list": ("resource template", "resourceTemplates", "uriTemplate",
                                 {"mimeType": "warning", "name": "info",
                                  "description": "info", "title": "info"}),
}


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


# -- what one session says about its server -----------------------------------------------

@dataclass
class _Side:
    trace: Any
    session: Any
    server: str | None = None
    init: dict[str, Any] = field(default_factory=dict)


def _pairs_of(t: Any, session: Any) -> pd.DataFrame:
    p = t.pairs
    if session is None and p["session"].isna().all():
        return p
    return p[p["session"] == session]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _result(t: Any, seq: Any) -> dict[str, Any]:
    msg = t.message(int(seq)) if pd.notna(seq) else None
    res = msg.get("result") if isinstance(msg, dict) else None
    return res if isinstance(res, dict) else {}


def _server_info(t: Any, session: Any) -> tuple[str | None, dict[str, Any]]:
    p = _pairs_of(t, session)
    init = p[(p["method"] == "initialize") & (p["outcome"] == "result")]
    if init.empty:
        init = p[(p["method"] == "server/discover") & (p["outcome"] == "result")]
    if init.empty:
        return None, {}
    res = _result(t, init["response_seq"].iloc[-1])
    if (init["method"] == "initialize").any():  # what the trace says of its peers
        return t.peers().get(session, {}).get("server_name"), res
    name = _dict(res.get("serverInfo")).get("name")  # 2026-07-28: server/discover
    return (name if isinstance(name, str) else None), res


def _sides(t: Any) -> list[_Side]:
    out = []
    for s in t.sessions():
        name, init = _server_info(t, s)
        out.append(_Side(t, s, name, init))
    return out


def match_sessions(a: Any, b: Any, session_a: Any = None, session_b: Any = None
                   ) -> list[tuple[_Side, _Side]]:
    """Sessions of ``a`` and ``b`` paired by server name and position (or as the user says)."""
    sa, sb = _sides(a), _sides(b)
    if session_a is not None or session_b is not None:
        def pick(sides: list[_Side], name: Any, label: str) -> _Side:
            if name is None:
                if len(sides) != 1:
                    raise ValueError(f"trace {label} has {len(sides)} sessions: name one")
                return sides[0]
            for s in sides:
                if str(s.session) == str(name):
                    return s
            known = ", ".join(str(s.session) for s in sides)
            raise ValueError(f"no session {name!r} in trace {label}; known: {known}")
        return [(pick(sa, session_a, "a"), pick(sb, session_b, "b"))]
    if len(sa) == 1 and len(sb) == 1:  # one each: the same server, whatever its name
        return [(sa[0], sb[0])]
    pairs: list[tuple[_Side, _Side]] = []
    for name in dict.fromkeys(s.server for s in sa):
        left = [s for s in sa if s.server == name]
        right = [s for s in sb if s.server == name]
        pairs.extend(zip(left, right, strict=False))
    if not pairs:  # no server name in common: by position
        pairs = list(zip(sa, sb, strict=False))
    return pairs


# -- catalogues -----------------------------------------------------------------------------

def catalog(t: Any, session: Any, method: str) -> dict[str, dict[str, Any]] | None:
    """The items of the latest complete listing of ``method`` in a session, by key.

    A listing starts with a request without ``cursor`` and goes on over the pages asked
    for with one. None when the session never listed.
    """
    _, key_name, key, _ = CATALOGS[method]
    p = _pairs_of(t, session)
    p = p[(p["method"] == method) & (p["requester"] == "c2s") & (p["outcome"] == "result")]
    if p.empty:
        return None
    pages: list[list[Any]] = []
    for req, resp in zip(p["request_seq"], p["response_seq"], strict=True):
        msg = t.message(int(req)) or {}
        params = msg.get("params") if isinstance(msg, dict) else None
        cursor = params.get("cursor") if isinstance(params, dict) else None
        items = _result(t, resp).get(key_name)
        if cursor is None or not pages:
            pages.append([])
        pages[-1].extend(items if isinstance(items, list) else [])
    return {str(item.get(key)): item for item in pages[-1] if isinstance(item, dict)}


def _text(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _json_changes(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ: ``"properties.x added"``, ``"required: +y -z"``..."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            here = f"{path}.{k}" if path else str(k)
            if k not in b:
                out.append(f"{here} removed")
            elif k not in a:
                out.append(f"{here} added")
            else:
                out.extend(_json_changes(a[k], b[k], here))
        return out
    if (isinstance(a, list) and isinstance(b, list) and path.endswith("required")
            and all(isinstance(x, str) for x in a + b)):
        plus, minus = sorted(set(b) - set(a)), sorted(set(a) - set(b))
        if not plus and not minus:
            return []
        return [f"{path}: " + " ".join([*(f"+{x}" for x in plus), *(f"-{x}" for x in minus)])]
    return [] if _text(a) == _text(b) else [f"{path or 'value'} changed"]


def _schema_detail(a: Any, b: Any, limit: int = 6) -> str:
    """The paths where two JSON Schemas differ, the first ``limit`` of them."""
    parts = _json_changes(a if a is not None else {}, b if b is not None else {})
    more = f" (+{len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more or "schema changed"


def _short(value: Any, width: int = 60) -> str:
    text = "none" if value is None else _text(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _catalog_rows(a: _Side, b: _Side) -> list[dict[str, Any]]:
    rows = []
    for method, (kind, _, _, fields) in CATALOGS.items():
        ca, cb = catalog(a.trace, a.session, method), catalog(b.trace, b.session, method)
        if ca is None or cb is None:  # not listed on one side: nothing to compare
            continue
        for name in sorted(set(ca) | set(cb)):
            if name not in cb:
                rows.append(dict(area=kind, item=name, change="removed", detail=f"{kind} removed",
                                 a=_text(ca[name]), b="", severity="error"))
            elif name not in ca:
                rows.append(dict(area=kind, item=name, change="added", detail=f"{kind} added",
                                 a="", b=_text(cb[name]), severity="info"))
            else:
                for f, severity in fields.items():
                    va, vb = ca[name].get(f), cb[name].get(f)
                    if _text(va) == _text(vb):
                        continue
                    detail = (_schema_detail(va, vb) if f.endswith("Schema")
                              else f"{_short(va)} -> {_short(vb)}")
                    rows.append(dict(area=kind, item=name, change=f"{f} changed",
                                     detail=detail, a=_text(va), b=_text(vb),
                                     severity=severity))
    return rows


def _server_rows(a: _Side, b: _Side) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    ia, ib = a.init, b.init
    if not ia or not ib:
        return rows
    va, vb = ia.get("protocolVersion"), ib.get("protocolVersion")
    if va != vb:
        rows.append(dict(area="protocol", item="protocolVersion", change="changed",
                         detail=f"{va} -> {vb}", a=_text(va), b=_text(vb), severity="warning"))
    sa, sb = _dict(ia.get("serverInfo")), _dict(ib.get("serverInfo"))
    for k in sorted(set(sa) | set(sb)):
        if _text(sa.get(k)) != _text(sb.get(k)):
            rows.append(dict(area="server", item=k, change="changed",
                             detail=f"{sa.get(k)} -> {sb.get(k)}", a=_text(sa.get(k)),
                             b=_text(sb.get(k)), severity="info"))
    ca, cb = _dict(ia.get("capabilities")), _dict(ib.get("capabilities"))
    for k in sorted(set(ca) | set(cb)):
        if k not in cb:
            change, severity = "removed", "warning"
        elif k not in ca:
            change, severity = "added", "info"
        elif _text(ca[k]) != _text(cb[k]):
            change, severity = "changed", "info"
        else:
            continue
        rows.append(dict(area="capability", item=k, change=change,
                         detail=f"capability {k} {change}", a=_text(ca.get(k)),
                         b=_text(cb.get(k)), severity=severity))
    return rows


# -- latency and outcomes -------------------------------------------------------------------

def _answered(p: pd.DataFrame) -> pd.DataFrame:
    return p[p["request_seq"].notna() & ~p["outcome"].isin(["duplicate", "orphan"])]


def latency_table(a: _Side, b: _Side) -> pd.DataFrame:
    """Per method: count, p50 and p95 (ms) on each side."""
    out = {}
    for label, side in (("a", a), ("b", b)):
        p = _answered(_pairs_of(side.trace, side.session))
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


def outcome_table(a: _Side, b: _Side) -> pd.DataFrame:
    """Per method: requests, errors, tool errors, unanswered and the error rates on each side."""
    out = {}
    for label, side in (("a", a), ("b", b)):
        p = _answered(_pairs_of(side.trace, side.session))
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


def _latency_rows(table: pd.DataFrame, p50: Threshold, p95: Threshold, min_ms: float
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


def _outcome_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
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


def violation_table(a: _Side, b: _Side) -> pd.DataFrame:
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


def _violation_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
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


# -- the result ----------------------------------------------------------------------------

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
                "sessions": [{"a": _plain(x), "b": _plain(y)} for x, y in self.sessions],
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


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int)) else str(value)


def _as_trace(x: Any) -> tuple[Any, str]:
    if isinstance(x, (str, os.PathLike)):
        from . import load  # through the package (see collection._load_fn)

        return load(x), os.path.basename(os.fspath(x))
    names = getattr(x, "paths", None) or []
    return x, (os.path.basename(names[0]) if names else "trace")


def _unmatched(t: Any, taken: list[Any], label: str) -> list[dict[str, Any]]:
    other = "b" if label == "a" else "a"
    return [dict(area="session", item=str(x.session), change=f"only in {label}",
                 detail=f"no session of {other} matched it (server {x.server})",
                 a=str(x.session) if label == "a" else "", b=str(x.session) if label == "b" else "",
                 severity="info", **{f"session_{label}": _plain(x.session),
                                     f"session_{other}": None})
            for x in _sides(t) if x.session not in taken]


def diff(a: Any, b: Any, *, p50: Threshold | str = DEFAULT_P50,
         p95: Threshold | str = DEFAULT_P95, min_ms: float = 1.0,
         session_a: Any = None, session_b: Any = None) -> Diff:
    """Compare two captures (Traces or paths): ``b`` is the new one.

    Parameters
    ----------
    p50, p95
        Latency rise per method that counts, and its severity: ``"+20%:warning"``
        (the p50 default), ``"+50%:error"`` (the p95 default) or ``"off"``.
    min_ms
        Rises smaller than this many milliseconds are noise, whatever their percentage.
    session_a, session_b
        Compare these two sessions; by default sessions are matched by server name and
        position (one session on each side: those two).
    """
    ta, name_a = _as_trace(a)
    tb, name_b = _as_trace(b)
    p50 = parse_threshold(p50) if isinstance(p50, str) else p50
    p95 = parse_threshold(p95) if isinstance(p95, str) else p95
    matched = match_sessions(ta, tb, session_a, session_b)
    rows: list[dict[str, Any]] = []
    lat, out, vio = [], [], []
    for sa, sb in matched:
        pair_rows = _server_rows(sa, sb) + _catalog_rows(sa, sb)
        lt, ot, vt = latency_table(sa, sb), outcome_table(sa, sb), violation_table(sa, sb)
        pair_rows += _latency_rows(lt, p50, p95, min_ms) + _outcome_rows(ot)
        pair_rows += _violation_rows(vt)
        for r in pair_rows:
            r.update(session_a=_plain(sa.session), session_b=_plain(sb.session))
        rows += pair_rows
        keys = {"session_a": _plain(sa.session), "session_b": _plain(sb.session)}
        lat.append(lt.assign(**keys))
        out.append(ot.assign(**keys))
        vio.append(vt.assign(**keys))
    if session_a is None and session_b is None:  # sessions no match took, on either side
        rows += _unmatched(ta, [x.session for x, _ in matched], "a")
        rows += _unmatched(tb, [y.session for _, y in matched], "b")
    changes = pd.DataFrame(rows, columns=CHANGE_COLUMNS).astype(object)
    if matched:
        latency, outcomes, violations = pd.concat(lat), pd.concat(out), pd.concat(vio)
    else:
        latency = outcomes = violations = pd.DataFrame()
    return Diff(changes, latency, outcomes, violations,
                [(_plain(x.session), _plain(y.session)) for x, y in matched], (name_a, name_b))


def diff_main(argv: list[str] | None = None, epilog: str | None = None) -> int:
    """``mcp-notebook diff A B``: exit 0 nothing at or above ``--fail-on``, 1 some, 2 unreadable."""
    import argparse
    import sys

    from .readers import CaptureError

    ap = argparse.ArgumentParser(
        prog="mcp-notebook diff", description="What changed from capture A to capture B.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog or "exit codes: 0 no change at or above --fail-on; 1 some; 2 an input "
                         "is unreadable")
    ap.add_argument("a", help="the old capture")
    ap.add_argument("b", help="the new capture")
    ap.add_argument("--json", action="store_true", help="print the diff as JSON")
    ap.add_argument("--fail-on", choices=SEVERITIES, default="error",
                    help="exit 1 when a change is at or above this severity (default error)")
    ap.add_argument("--p50", default="+20%:warning",
                    help="p50 latency rise per method that counts (default +20%%:warning)")
    ap.add_argument("--p95", default="+50%:error",
                    help="p95 latency rise per method that counts (default +50%%:error)")
    ap.add_argument("--min-ms", type=float, default=1.0,
                    help="ignore latency rises under this many ms (default 1)")
    ap.add_argument("--session-a", help="compare this session of A ...")
    ap.add_argument("--session-b", help="... with this session of B")
    args = ap.parse_args(argv)
    try:
        p50, p95 = parse_threshold(args.p50), parse_threshold(args.p95)
    except ValueError as exc:
        ap.error(str(exc))
    try:
        d = diff(args.a, args.b, p50=p50, p95=p95, min_ms=args.min_ms,
                 session_a=args.session_a, session_b=args.session_b)
    except CaptureError as exc:
        print(f"mcp-notebook diff: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a session that is not there
        print(f"mcp-notebook diff: {exc}", file=sys.stderr)
        return 2
    failing = d.failing(args.fail_on)
    if args.json:
        print(json.dumps({**d.to_dict(), "fail_on": args.fail_on, "failing": int(len(failing))},
                         indent=2, default=str))
    else:
        print(d.text())
        print(f"{len(failing)} change(s) at or above {args.fail_on}")
    return 1 if len(failing) else 0
