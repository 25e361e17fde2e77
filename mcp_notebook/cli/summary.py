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
    way = p.add_mutually_exclusive_group()
    way.add_argument("--stream", action="store_true",
                     help="read the file in chunks, in bounded memory (mn.summarize); "
                          "the default for one NDJSON or tap file of 256 MB or more")
    way.add_argument("--no-stream", action="store_true",
                     help="load the whole capture, whatever its size")


def cmd_summary(args: argparse.Namespace) -> int:
    if _streams(args):
        return _cmd_stream(args)
    trace = load(args)
    s = trace.summary()
    if args.json:
        print(json_text({**s, "skipped": skipped(trace), "payload_free": trace.payload_free,
                         "rules_not_run": not_run(trace)}))
        return 0
    _show_counts(s)
    _show_latency(list(trace.latency_by_method().head(8).iterrows()))
    for note in trace.notes:
        show(f"  note: {note}")
    if trace.payload_free:
        show("  " + not_run_line(trace))
    return 0


def _show_counts(s: dict[str, Any], blank_lines: int = 0) -> None:
    """The lines of counts and findings of a summary (``Trace.summary`` or
    ``mn.summarize``'s); a streamed one counts its blank lines too."""
    sev = s["violations"]["by_severity"]
    show(f"{s['frames']} frames in {s['sessions']} session(s), protocol "
         f"{s['protocol_version'] or 'unknown'}")
    show(f"  {s['requests']} requests, {s['notifications']} notifications, "
         f"{s['results']} results, {s['errors']} errors ({s['tool_errors']} tool errors)")
    show(f"  {s['pairs']} answered, {s['unanswered']} unanswered ({s['cancelled']} cancelled), "
         f"{s['orphans']} orphans, {s['duplicates']} duplicates")
    other = [f"{s[k]} {k}" for k in ("invalid", "stderr", "log") if s[k]]
    blank = f"{blank_lines} blank lines" if blank_lines else ""
    if other or blank:
        show("  " + ", ".join([", ".join(other) + " rows"] * bool(other) + [blank] * bool(blank)))
    show(f"  violations: {sev.get('error', 0)} error, {sev.get('warning', 0)} warning, "
         f"{sev.get('info', 0)} info")


def _show_latency(rows: list[tuple[Any, Any]]) -> None:
    """The latency table: ``(method, row)`` with ``count``, ``p50_ms``, ``p90_ms``,
    ``max_ms``, the busiest first."""
    if rows:
        show("  latency by method (ms):  count    p50    p90    max")
        for method, row in rows:
            show(f"    {str(method)[:24]:<24} {int(row['count']):>5} {_ms(row['p50_ms'])} "
                 f"{_ms(row['p90_ms'])} {_ms(row['max_ms'])}")


def _ms(value: float | None) -> str:
    return "     -" if value is None or value != value else f"{value:>6.1f}"


def _streams(args: argparse.Namespace) -> bool:
    """Whether to summarize in streaming mode: ``--stream``, or one large line file."""
    import os

    if args.no_stream or len(args.files) != 1 or args.files[0] == "-":
        return bool(args.stream)
    if args.stream:
        return True
    from ..stream import STREAM_MIN_BYTES, streamable

    path = args.files[0]
    try:
        big = os.path.isfile(path) and os.path.getsize(path) >= STREAM_MIN_BYTES
    except OSError:
        return False
    return big and streamable(path, args.format) is None


def _cmd_stream(args: argparse.Namespace) -> int:
    """The summary by :func:`mcp_notebook.summarize`: same counts and JSON keys, the
    frames table never built; the output says it was streamed and which rules did not run."""
    from ..readers import CaptureError
    from ..stream import summarize

    if len(args.files) != 1 or args.files[0] == "-":
        raise CaptureError("--stream reads one capture file: name it (not a folder, several "
                           "files or stdin)")
    s = summarize(args.files[0], args.format, version=args.protocol_version, stream=True)
    info = s["streaming"]
    if args.json:
        out = {k: v for k, v in s.items() if k not in ("latency", "examples",
                                                        "invalid_examples", "streaming")}
        print(json_text({**out, "skipped": [], "payload_free": False,
                         "rules_not_run": info["rules_not_run"], "streaming": info,
                         "latency": s["latency"], "examples": s["examples"],
                         "invalid_examples": s["invalid_examples"]}))
        return 0
    _show_counts(s, blank_lines=s["blank_lines"])
    _show_latency(sorted(s["latency"].items(), key=lambda kv: -kv[1]["count"])[:8])
    show(f"  streamed in {info['chunks']} chunk(s) of {info['chunk_bytes'] >> 20 or 1} MiB "
         "(bounded memory, no frames table); not run in streaming mode: "
         f"{len(info['rules_not_run'])} conversation rule(s) "
         f"({', '.join(info['rules_not_run'])}); `check` loads the capture whole for them")
    return 0
