"""``mcp-notebook check``: every rule over a capture; exit 1 on findings at ``--fail-on``."""

from __future__ import annotations

import sys

from .options import SEVERITIES, add_input, examples, load, not_run, not_run_line, skipped
from .output import error, json_text, show

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_check(sub: Any) -> None:
    p = sub.add_parser("check", help="check every envelope rule; exit 1 on findings",
                       **examples("check data/broken-duplicate-response.jsonl    # exit 1",
                                  "check data/demo-http.har --fail-on info --all --spec"
                                  "    # exit 1",
                                  "check data/demo-stdio.jsonl --json --protocol-version "
                                  "2025-06-18",
                                  "check data/broken-duplicate-response.jsonl --report sarif"
                                  "    # exit 1",
                                  "check data/broken-duplicate-response.jsonl --report github"
                                  "    # exit 1"))
    add_input(p)
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--report", choices=("text", "sarif", "junit", "github"), default="text",
                   help="print the findings for CI: SARIF 2.1.0, JUnit XML or GitHub "
                        "annotations (--format sarif|junit|github means the same, as no "
                        "capture format has those names)")
    p.add_argument("--fail-on", choices=SEVERITIES, default="error",
                   help="lowest severity that makes the exit code 1 (default: error)")
    p.add_argument("--all", action="store_true", help="list findings below --fail-on too")
    p.add_argument("--spec", action="store_true", help="print the spec sentence of each")


def cmd_check(args: argparse.Namespace) -> int:
    from .. import conversation
    from ..report_formats import FORMATS as REPORTS
    from ..report_formats import write_findings

    if args.format in REPORTS:  # `check --format github`: a report, not a capture format
        if args.report not in ("text", args.format):
            error(f"--format {args.format} asks for the {args.format} report and "
                  f"--report {args.report} for another: give one of them")
            return 2
        args.report, args.format = args.format, "auto"
    trace = load(args)
    with conversation.deep():  # check runs every rule, the schema ones at any size
        v = trace.violations
    level = SEVERITIES.index(args.fail_on)
    failing = v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
    args.status = 1 if len(failing) else 0  # kept if the output pipe closes early
    if args.report != "text":
        write_findings(trace, args.report, sys.stdout, fail_on=args.fail_on)  # as it goes
        return int(args.status)
    if args.json:
        rows = []
        for row in v.itertuples(index=False):
            rows.append({"rule": row.rule, "severity": str(row.severity),
                         "seq": _int(row.seq), "related_seq": _int(row.related_seq),
                         "source": _where(trace, row.seq),
                         "message": row.message, "spec": row.spec, "versions": row.versions})
        print(json_text({"fail_on": args.fail_on, "failing": int(len(failing)),
                         "protocol_version": trace.protocol_version, "violations": rows,
                         "skipped": skipped(trace), "notes": _notes(trace),
                         "payload_free": trace.payload_free,
                         "rules_not_run": not_run(trace)}))
    else:
        shown = v if args.all else v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
        for row in shown.itertuples(index=False):
            where = _where(trace, row.seq) or "(trace)"
            show(f"{where}: {row.severity}: [{row.rule}] {row.message}")
            if args.spec:
                show(f"    spec: {row.spec}")
        for line in skipped(trace):  # before the count, which stays the last line
            show(line)
        for note in _notes(trace):
            show(f"note: {note}")
        if trace.payload_free:
            show(not_run_line(trace))
        counts = v["severity"].astype(str).value_counts()
        show(f"{len(v)} finding(s): " + ", ".join(f"{int(counts.get(s, 0))} {s}"
                                                  for s in SEVERITIES)
             + f"; {len(failing)} at or above {args.fail_on}"
             + ("" if args.all or len(shown) == len(v) else " (--all shows the rest)"))
    return int(args.status)


def _notes(trace: Any) -> list[str]:
    """The trace's notes but the skipped files (said on their own lines): what the capture
    lacks or could not read, which bears on what is found (a request whose answer is on a
    stream the capture does not hold is not reported unanswered, say)."""
    said = set(skipped(trace))
    return [n for n in trace.notes if n not in said]


def _missing(value: Any) -> bool:
    """``None``, NaN or pandas' ``NA`` (whose truth value raises: never compare it)."""
    import pandas as pd  # loaded already by the trace; not at import (``record`` needs none)

    return bool(pd.isna(value))


def _int(value: Any) -> int | None:
    """An ``Int64`` cell as a JSON value: ``<NA>`` (no related frame) is ``None``."""
    return None if _missing(value) else int(value)


def _where(trace: Any, seq: Any) -> str | None:
    """The ``file:line`` of frame ``seq`` (``None`` for a finding about no one frame)."""
    return None if _missing(seq) else str(trace.frames["source"].iat[int(seq)])
