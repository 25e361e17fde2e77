"""``mcp-notebook summary``: counts, pairs, latency and violations of a capture."""

from __future__ import annotations

from .options import add_input, examples, load, not_run, not_run_line, skipped
from .output import json_text, show

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_summary(sub: Any) -> None:
    p = sub.add_parser("summary", help="counts, pairs, latency and violations of a capture",
                       **examples("summary data/everything-stdio-basics.jsonl",
                                  "summary data/demo-http.har --json",
                                  "summary data/    # every capture in the folder, one trace"))
    add_input(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def cmd_summary(args: argparse.Namespace) -> int:
    trace = load(args)
    s = trace.summary()
    if args.json:
        print(json_text({**s, "skipped": skipped(trace), "payload_free": trace.payload_free,
                         "rules_not_run": not_run(trace)}))
        return 0
    sev = s["violations"]["by_severity"]
    show(f"{s['frames']} frames in {s['sessions']} session(s), protocol "
         f"{s['protocol_version'] or 'unknown'}")
    show(f"  {s['requests']} requests, {s['notifications']} notifications, "
         f"{s['results']} results, {s['errors']} errors ({s['tool_errors']} tool errors)")
    show(f"  {s['pairs']} answered, {s['unanswered']} unanswered ({s['cancelled']} cancelled), "
         f"{s['orphans']} orphans, {s['duplicates']} duplicates")
    other = [f"{s[k]} {k}" for k in ("invalid", "stderr", "log") if s[k]]
    if other:
        show("  " + ", ".join(other) + " rows")
    show(f"  violations: {sev.get('error', 0)} error, {sev.get('warning', 0)} warning, "
         f"{sev.get('info', 0)} info")
    lat = trace.latency_by_method().head(8)
    if len(lat):
        show("  latency by method (ms):  count    p50    p90    max")
        for method, row in lat.iterrows():
            show(f"    {str(method)[:24]:<24} {int(row['count']):>5} {_ms(row['p50_ms'])} "
                 f"{_ms(row['p90_ms'])} {_ms(row['max_ms'])}")
    for note in trace.notes:
        show(f"  note: {note}")
    if trace.payload_free:
        show("  " + not_run_line(trace))
    return 0


def _ms(value: float) -> str:
    return "     -" if value != value else f"{value:>6.1f}"
