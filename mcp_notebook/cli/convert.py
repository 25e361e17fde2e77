"""``mcp-notebook convert``: the frames (or pairs, violations) as parquet, csv or tap jsonl."""

from __future__ import annotations

import os
import sys

from .options import add_input, default_out, examples, load
from .output import error, safe, show

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any


def add_convert(sub: Any) -> None:
    p = sub.add_parser("convert", help="write the frames as parquet, csv or tap jsonl",
                       **examples("convert data/demo-http.har --to parquet"
                                  "    # writes data/demo-http.parquet",
                                  "convert data/demo-stdio.jsonl --to jsonl"
                                  "    # writes data/demo-stdio.converted.jsonl",
                                  "convert data/ --to csv --out all-frames.csv"))
    add_input(p, many=True)
    p.add_argument("--to", choices=("parquet", "csv", "jsonl"), required=True)
    p.add_argument("--out", "-o", metavar="FILE",
                   help="output file, never an input (default: beside the first input, "
                        "named after it: X.parquet, X.csv, X.converted.jsonl; X.pairs.parquet "
                        "for --table pairs)")
    p.add_argument("--table", choices=("frames", "pairs", "violations"), default="frames",
                   help="the table to write (default: frames; jsonl holds frames only)")


def cmd_convert(args: argparse.Namespace) -> int:
    from pathlib import Path  # here: the record path does not import pathlib

    from ..export import OutputError, is_stream, refuse_inputs, write

    tail = args.to if args.table == "frames" else f"{args.table}.{args.to}"
    out = Path(args.out) if args.out else default_out(Path(args.files[0]), tail)
    if out is None:
        error(f"cannot name an output for {args.files[0]}: give one with --out FILE")
        return 2
    try:  # before loading: refuse at once, and whatever `load` would read
        refuse_inputs(out, args.files)
    except OutputError as exc:
        error(str(exc))
        return 2
    if args.to == "jsonl" and args.table != "frames":
        error(f"--to jsonl writes frames only; write {args.table} as parquet or csv")
        return 2
    trace = load(args)
    stream = is_stream(out)
    try:
        write(trace, out, args.to, args.table)
    except OutputError as exc:
        error(str(exc))
        return 2
    except ImportError as exc:  # parquet without pyarrow: the message says what to install
        error(str(exc))
        return 2
    except BrokenPipeError:
        raise  # piped into head: stop quietly
    except OSError as exc:
        error(f"cannot write {out}: {exc.strerror or exc}"
              + ("" if stream else " (nothing was written)"))
        return 2
    n = len(getattr(trace, args.table))
    message = f"wrote {n} {args.table} to {out}"
    if stream and _is_stdout(out):  # the frames went to stdout: keep it theirs
        print(safe(message), file=sys.stderr)
    else:
        show(message)
    return 0


def _is_stdout(path: Path) -> bool:
    try:
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
