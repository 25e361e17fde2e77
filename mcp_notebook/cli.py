"""``mcp-notebook``: summary, check, convert, rules, formats, and the capture tools.

Exit codes: 0 fine; 1 ``check`` found violations at or above ``--fail-on``; 2 the input
cannot be read (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence

from . import __version__

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# Nothing heavy at import: the console script imports this module for ``record`` too (the
# stdio tap, standard library only), so the readers, rules and pandas load where used.

__all__ = ["main"]

SEVERITIES = ("error", "warning", "info")


def _load(args: argparse.Namespace) -> Any:
    from .load import load

    return load(args.files, format=args.format, version=args.protocol_version)


def _add_input(p: argparse.ArgumentParser, many: bool = True) -> None:
    from .readers import formats

    p.add_argument("files", nargs="+" if many else 1, metavar="FILE",
                   help="capture file(s) or folder(s); plain or .gz")
    p.add_argument("--format", default="auto",
                   help=f"capture format: auto (sniff) or one of {', '.join(formats())}")
    p.add_argument("--protocol-version", default=None, metavar="VERSION",
                   help="check against this MCP version instead of the negotiated one")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _show(text: str) -> None:
    """Print text from a trace for a terminal: control characters (escape sequences a
    hostile capture could carry) as ``\\xNN``, undecodable bytes as ``\\udcNN``."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    print(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def cmd_summary(args: argparse.Namespace) -> int:
    trace = _load(args)
    s = trace.summary()
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    sev = s["violations"]["by_severity"]
    _show(f"{s['frames']} frames in {s['sessions']} session(s), protocol "
          f"{s['protocol_version'] or 'unknown'}")
    _show(f"  {s['requests']} requests, {s['notifications']} notifications, "
          f"{s['results']} results, {s['errors']} errors ({s['tool_errors']} tool errors)")
    _show(f"  {s['pairs']} answered, {s['unanswered']} unanswered ({s['cancelled']} cancelled), "
          f"{s['orphans']} orphans, {s['duplicates']} duplicates")
    other = [f"{s[k]} {k}" for k in ("invalid", "stderr", "log") if s[k]]
    if other:
        _show("  " + ", ".join(other) + " rows")
    _show(f"  violations: {sev.get('error', 0)} error, {sev.get('warning', 0)} warning, "
          f"{sev.get('info', 0)} info")
    lat = trace.latency_by_method().head(8)
    if len(lat):
        _show("  latency by method (ms):  count    p50    p90    max")
        for method, row in lat.iterrows():
            _show(f"    {str(method)[:24]:<24} {int(row['count']):>5} {_ms(row['p50_ms'])} "
                  f"{_ms(row['p90_ms'])} {_ms(row['max_ms'])}")
    for note in trace.notes:
        _show(f"  note: {note}")
    return 0


def _ms(value: float) -> str:
    return "     -" if value != value else f"{value:>6.1f}"


def cmd_check(args: argparse.Namespace) -> int:
    trace = _load(args)
    v = trace.violations
    level = SEVERITIES.index(args.fail_on)
    failing = v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
    if args.json:
        rows = []
        for row in v.itertuples(index=False):
            rows.append({"rule": row.rule, "severity": str(row.severity),
                         "seq": _int(row.seq), "related_seq": _int(row.related_seq),
                         "source": trace.frames["source"].iat[int(row.seq)],
                         "message": row.message, "spec": row.spec, "versions": row.versions})
        print(json.dumps({"fail_on": args.fail_on, "failing": int(len(failing)),
                          "protocol_version": trace.protocol_version,
                          "violations": rows}, indent=2))
    else:
        shown = v if args.all else v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
        for row in shown.itertuples(index=False):
            where = trace.frames["source"].iat[int(row.seq)]
            _show(f"{where}: {row.severity}: [{row.rule}] {row.message}")
            if args.spec:
                _show(f"    spec: {row.spec}")
        counts = v["severity"].astype(str).value_counts()
        _show(f"{len(v)} finding(s): " + ", ".join(f"{int(counts.get(s, 0))} {s}"
                                                   for s in SEVERITIES)
              + f"; {len(failing)} at or above {args.fail_on}"
              + ("" if args.all or len(shown) == len(v) else " (--all shows the rest)"))
    return 1 if len(failing) else 0


def _int(value: Any) -> int | None:
    return None if value is None or value != value or str(value) == "<NA>" else int(value)


def cmd_convert(args: argparse.Namespace) -> int:
    from .export import write

    trace = _load(args)
    from pathlib import Path  # here: the record path does not import pathlib

    tail = args.to if args.table == "frames" else f"{args.table}.{args.to}"
    out = Path(args.out) if args.out else Path(args.files[0]).with_suffix("." + tail)
    if args.to == "jsonl" and args.table != "frames":
        print(f"mcp-notebook: --to jsonl writes frames only; write {args.table} as parquet "
              "or csv", file=sys.stderr)
        return 2
    try:
        write(trace, out, args.to, args.table)
    except ImportError as exc:  # parquet without pyarrow: the message says what to install
        print(f"mcp-notebook: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(getattr(trace, args.table))} {args.table} to {out}")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    from .core.rules import RULES

    if args.json:
        print(json.dumps([{"code": r.code, "severity": r.severity, "versions": list(r.versions),
                           "title": r.title, "spec": r.spec, "source": r.source,
                           "advice": r.advice} for r in RULES], indent=2))
    else:
        for r in RULES:
            print(f"{r.code:<26} {r.severity:<8} {r.title}")
    return 0


def cmd_formats(args: argparse.Namespace) -> int:
    from .readers import formats

    for name, description in formats().items():
        print(f"{name:<16} {description}")
    return 0


def cmd_notebooks(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .bundled import copy_notebooks

    dest = Path(args.dest)
    written = copy_notebooks(dest, solutions=not args.no_solutions, overwrite=args.force)
    kept = "" if args.force else " (files already there are kept; --force replaces them)"
    print(f"wrote {len(written)} file(s) to {dest}{kept}")
    print(f"next: jupyter lab {dest}")
    return 0


def _lab_command(path: Path, extra: str = "") -> list[str]:
    import shlex

    root = hasattr(os, "geteuid") and os.geteuid() == 0  # Jupyter refuses root without it
    return [sys.executable, "-m", "jupyterlab", *(["--allow-root"] if root else []),
            *shlex.split(extra), str(path)]


def cmd_open(args: argparse.Namespace) -> int:
    import subprocess
    from importlib.util import find_spec
    from pathlib import Path

    from .notebook import analysis, resolve_capture, write

    try:
        path, _ = resolve_capture(args.capture)
    except FileNotFoundError as exc:
        print(f"mcp-notebook: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(path.stem + ".ipynb")
    if out.exists() and not args.force:
        print(f"{out} exists: kept as it is (--force writes it anew)")
    else:
        write(analysis(args.capture, notebook=out), out)
        print(f"wrote {out}")
    if args.no_lab:
        return 0
    if find_spec("jupyterlab") is None:
        print("mcp-notebook: JupyterLab is not installed: pip install jupyterlab "
              f"(or open {out} in any Jupyter front end)", file=sys.stderr)
        return 2
    try:
        return subprocess.call(_lab_command(out, args.lab_args))
    except KeyboardInterrupt:
        return 0


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[..., int]]]:
    parser = argparse.ArgumentParser(
        prog="mcp-notebook",
        description="See and check captured MCP (JSON-RPC) traffic.",
        epilog="exit codes: 0 ok; 1 check found violations at or above --fail-on; "
               "2 input cannot be read")
    parser.add_argument("--version", action="version", version=f"mcp-notebook {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[..., int]] = {}

    p = sub.add_parser("summary", help="counts, pairs, latency and violations of a capture")
    _add_input(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    handlers["summary"] = cmd_summary

    p = sub.add_parser("check", help="check every envelope rule; exit 1 on findings")
    _add_input(p)
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--fail-on", choices=SEVERITIES, default="error",
                   help="lowest severity that makes the exit code 1 (default: error)")
    p.add_argument("--all", action="store_true", help="list findings below --fail-on too")
    p.add_argument("--spec", action="store_true", help="print the spec sentence of each")
    handlers["check"] = cmd_check

    p = sub.add_parser("convert", help="write the frames as parquet, csv or tap jsonl")
    _add_input(p, many=True)
    p.add_argument("--to", choices=("parquet", "csv", "jsonl"), required=True)
    p.add_argument("--out", "-o", help="output file (default: next to the input)")
    p.add_argument("--table", choices=("frames", "pairs", "violations"), default="frames",
                   help="the table to write (default: frames; jsonl holds frames only)")
    handlers["convert"] = cmd_convert

    p = sub.add_parser("rules", help="list the rule catalogue")
    p.add_argument("--json", action="store_true")
    handlers["rules"] = cmd_rules

    p = sub.add_parser("formats", help="list the capture formats")
    handlers["formats"] = cmd_formats

    p = sub.add_parser("notebooks", help="copy the tutorial notebooks into a folder",
                       description="Copy the tutorial notebooks and their solutions into "
                                   "DEST, ready for `jupyter lab DEST`; they read the "
                                   "bundled traces wherever they are.")
    p.add_argument("dest", metavar="DEST", help="the folder (made if missing)")
    p.add_argument("--no-solutions", action="store_true", help="leave out solutions/")
    p.add_argument("--force", action="store_true", help="replace files already in DEST")
    handlers["notebooks"] = cmd_notebooks

    p = sub.add_parser("open", help="write an analysis notebook for a capture, open JupyterLab",
                       description="Write a notebook that loads CAPTURE and walks a "
                                   "debugging checklist (JSON-RPC 2.0, ids, errors and "
                                   "isError, methods and capabilities, findings with their "
                                   "spec sentences, latency, redaction), then start "
                                   "JupyterLab on it.")
    p.add_argument("capture", metavar="CAPTURE",
                   help="a capture file or folder, or a bundled trace name (e.g. demo-stdio)")
    p.add_argument("--out", "-o", metavar="FILE.ipynb",
                   help="the notebook to write (default: CAPTURE's name .ipynb, here)")
    p.add_argument("--no-lab", action="store_true", help="write the notebook only")
    p.add_argument("--force", action="store_true", help="overwrite an existing notebook")
    p.add_argument("--lab-args", default="", metavar="'OPTIONS'",
                   help="options for JupyterLab, e.g. --lab-args='--port 8890 --no-browser'")
    handlers["open"] = cmd_open

    for extra in _extra_commands():
        extra(sub, handlers)
    return parser, handlers


def _extra_commands() -> list[Callable[[Any, dict[str, Callable[..., int]]], None]]:
    """Subcommands that live with their feature (capture tools, redaction)."""
    found = []
    for module, attr in (("mcp_notebook.capture.cli", "register"),
                         ("mcp_notebook.redact", "register")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        if hasattr(mod, attr):
            found.append(getattr(mod, attr))
    return found


def _record(argv: list[str]) -> int:
    """``mcp-notebook record``, parsed without the other commands: the tap starts before
    anything beyond the standard library is imported (clients time out slow servers)."""
    from .capture.cli import record_main

    return record_main(argv[1:])


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["record"]:
        return _record(argv)
    from .readers import CaptureError

    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return handlers[args.command](args)
    except CaptureError as exc:
        print(f"mcp-notebook: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # piped into head: stop quietly (before OSError, its base class)
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except (OSError, UnicodeError) as exc:
        print(f"mcp-notebook: cannot read input: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
