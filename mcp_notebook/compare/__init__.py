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
from typing import Any

import pandas as pd

# CATALOGS, catalog, match_sessions and the tables were the module's names before it became
# a package: they stay importable from here
from .catalogs import CATALOGS, catalog, catalog_rows, server_rows  # noqa: F401
from .result import Diff
from .sessions import match_sessions, plain, unmatched
from .tables import (
    DEFAULT_P50,
    DEFAULT_P95,
    SEVERITIES,
    Threshold,
    latency_rows,
    latency_table,
    outcome_rows,
    outcome_table,
    parse_threshold,
    violation_rows,
    violation_table,
)

__all__ = ["Diff", "Threshold", "diff", "diff_main", "parse_threshold"]

CHANGE_COLUMNS = ["area", "item", "change", "detail", "a", "b", "severity", "session_a",
                  "session_b"]


def _as_trace(x: Any) -> tuple[Any, str]:
    if isinstance(x, (str, os.PathLike)):
        from .. import load  # through the package (see collection._load_fn)

        return load(x), os.path.basename(os.fspath(x))
    names = getattr(x, "paths", None) or []
    return x, (os.path.basename(names[0]) if names else "trace")


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
        pair_rows = server_rows(sa, sb) + catalog_rows(sa, sb)
        lt, ot, vt = latency_table(sa, sb), outcome_table(sa, sb), violation_table(sa, sb)
        pair_rows += latency_rows(lt, p50, p95, min_ms) + outcome_rows(ot)
        pair_rows += violation_rows(vt)
        for r in pair_rows:
            r.update(session_a=plain(sa.session), session_b=plain(sb.session))
        rows += pair_rows
        keys = {"session_a": plain(sa.session), "session_b": plain(sb.session)}
        lat.append(lt.assign(**keys))
        out.append(ot.assign(**keys))
        vio.append(vt.assign(**keys))
    if session_a is None and session_b is None:  # sessions no match took, on either side
        rows += unmatched(ta, [x.session for x, _ in matched], "a")
        rows += unmatched(tb, [y.session for _, y in matched], "b")
    changes = pd.DataFrame(rows, columns=CHANGE_COLUMNS).astype(object)
    if matched:
        latency, outcomes, violations = pd.concat(lat), pd.concat(out), pd.concat(vio)
    else:
        latency = outcomes = violations = pd.DataFrame()
    return Diff(changes, latency, outcomes, violations,
                [(plain(x.session), plain(y.session)) for x, y in matched], (name_a, name_b))


def diff_main(argv: list[str] | None = None, epilog: str | None = None) -> int:
    """``mcp-notebook diff A B``: exit 0 nothing at or above ``--fail-on``, 1 some, 2 unreadable."""
    import argparse
    import sys

    from ..readers import CaptureError

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
