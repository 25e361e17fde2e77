"""``mcp-notebook export``: payload-free boundary events, OpenTelemetry, Perfetto or HAR."""

from __future__ import annotations

from .options import add_input, default_out, examples, load
from .output import error, show

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_export(sub: Any) -> None:
    p = sub.add_parser("export", help="payload-free events, OpenTelemetry, Perfetto or HAR",
                       **examples("export data/demo-http.har --boundary -o events.jsonl",
                                  "export data/demo-stdio.jsonl --otlp spans.json",
                                  "export data/demo-stdio.jsonl --perfetto demo.pftrace",
                                  "export data/demo-sse.har --har copy.har",
                                  "export data/demo-stdio.jsonl --har x.har    # exit 2"))
    add_input(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--boundary", action="store_true",
                      help="one event per operation, no payload text (-o .jsonl or .parquet)")
    what.add_argument("--otlp", metavar="FILE.json", help="OTLP/JSON spans, one per request")
    what.add_argument("--perfetto", metavar="FILE.pftrace",
                      help="a Perfetto trace (ui.perfetto.dev opens it): a track per session "
                           "and side, a slice per request, flows, violations")
    what.add_argument("--har", metavar="FILE.har",
                      help="HAR 1.2 of a capture of MCP over HTTP (loads back to the same frames)")
    p.add_argument("--out", "-o", metavar="FILE",
                   help="with --boundary: the file (default: X.events.jsonl beside the input)")
    p.add_argument("--metrics", metavar="FILE.json",
                   help="with --otlp: the duration histograms as OTLP/JSON metrics too")


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..export import OutputError, refuse_inputs

    if args.boundary:
        out = Path(args.out) if args.out else default_out(Path(args.files[0]), "events.jsonl")
        if out is None or out.suffix not in (".jsonl", ".parquet"):
            error(f"name the events file .jsonl or .parquet, not {out}")
            return 2
    else:
        out = Path(args.otlp or args.perfetto or args.har)
    try:
        refuse_inputs(out, args.files)
    except OutputError as exc:
        error(str(exc))
        return 2
    trace = load(args)
    if args.boundary:
        from ..boundary import stream_boundary

        n = stream_boundary(trace, out)  # written as it goes, a chunk at a time
        show(f"wrote {n} operations to {out} (no payload text)")
    elif args.otlp:
        from ..otlp import write_otlp

        write_otlp(trace, out, metrics=args.metrics)
        show(f"wrote {trace.pairs['request_seq'].dropna().nunique()} spans to {out}")
    elif args.perfetto:
        held = trace.to_perfetto(out)
        show(f"wrote {out}: " + ", ".join(f"{n} {k}" for k, n in held.items()))
    else:
        from ..har_out import NotHTTPTraffic

        try:
            trace.to_har(out)
        except NotHTTPTraffic as exc:
            error(str(exc))
            return 2
        show(f"wrote {len(trace.frames)} frames to {out} as HAR 1.2")
    return 0
