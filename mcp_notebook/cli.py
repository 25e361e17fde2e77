"""``mcp-notebook``: summary, check, convert, rules, formats, and the capture tools.

Exit codes (the same for every command; ``record`` passes on its server's own status):

* 0 -- done; for ``check``: no finding at or above ``--fail-on``;
* 1 -- ``check`` found violations at or above ``--fail-on``;
* 2 -- bad usage, an input that cannot be read or an output that cannot be written (one
  line on stderr says why and what to do);
* 3 -- an unexpected error: a bug in mcp-notebook. One line on stderr says so; set
  ``MCP_NOTEBOOK_DEBUG=1`` (or pass ``--debug``) to see the traceback;
* 130 -- interrupted (Ctrl-C).
"""

from __future__ import annotations

import os
import sys

from . import __version__

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

# Nothing but os and sys at import: the console script imports this module for ``record``
# too (the stdio tap), whose server must start before anything else loads, so argparse,
# json, re, the readers, rules and pandas are imported where used.

__all__ = ["main"]

SEVERITIES = ("error", "warning", "info")
INTERNAL_ERROR = 3  #: the exit code of a bug (0 and 1 are results, 2 the user's to fix)
EXIT_CODES = """exit codes:
  0    done; for check and diff: nothing at or above --fail-on
  1    check found violations, or diff changes, at or above --fail-on
  2    bad usage, an input that cannot be read or an output that cannot be written
  3    a bug in mcp-notebook (MCP_NOTEBOOK_DEBUG=1 or --debug shows the traceback)
  130  interrupted (Ctrl-C)
  (record exits with its server's own status instead)"""
_DEBUG_HELP = "on an internal error, print the traceback (as MCP_NOTEBOOK_DEBUG=1 does)"


def _load(args: argparse.Namespace) -> Any:
    from .load import load
    from .readers import CaptureError

    files: Any = args.files
    if "-" in files:  # the capture on stdin: `... | mcp-notebook check -`
        if len(files) > 1:
            raise CaptureError("- reads one capture from stdin: give it alone, or name files")
        files = sys.stdin.buffer
    progress = False if getattr(args, "quiet", False) else None  # None: on a terminal only
    return load(files, format=args.format, version=args.protocol_version, progress=progress)


def _not_run(trace: Any) -> list[str]:
    """The rules that cannot run on a trace: all of them on a payload-free one."""
    from .protocol.rules import RULES

    return [r.code for r in RULES] if trace.payload_free else []


def _not_run_line(trace: Any) -> str:
    codes = _not_run(trace)
    return (f"payload-free trace: none of the {len(codes)} rules ran, each reads message "
            f"text a boundary or OTLP file does not hold ({', '.join(codes)}); `check` the "
            "original capture for findings")


def _skipped(trace: Any) -> list[str]:
    """What a folder held that did not load, one line each (``skipped NAME: why``)."""
    return [n for n in trace.notes if n.startswith("skipped ")]


def _add_input(p: argparse.ArgumentParser, many: bool = True) -> None:
    from .readers import formats

    p.add_argument("files", nargs="+" if many else 1, metavar="FILE",
                   help="capture file(s) or folder(s), plain or .gz; - reads stdin")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar (shown on a terminal for loads of 50 MB or more)")
    p.add_argument("--format", default="auto",
                   help=f"capture format: auto (sniff) or one of {', '.join(formats())}")
    p.add_argument("--protocol-version", default=None, metavar="VERSION", type=_version,
                   help="check against this MCP version instead of the negotiated one "
                        "(a date such as 2025-06-18, or draft)")


def _version(text: str) -> str:
    """A ``--protocol-version``: a ``YYYY-MM-DD`` date (checked as the nearest released
    version not newer) or ``draft``; anything else is a usage error."""
    import argparse
    import re

    from .protocol.versions import VERSIONS

    if text == "draft" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a protocol version: give a date such as {VERSIONS[-2]} or draft "
        f"(known: {', '.join(VERSIONS)})")


_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # patterns: re (and its cache) load on first use
#: invisible characters that reorder or hide text: bidi controls (the right-to-left
#: override U+202E, embeddings, isolates, marks), zero-width characters, line and paragraph
#: separators, the BOM: a hostile label could make a line read other than it is
_INVISIBLE = "[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"


def _safe(text: str) -> str:
    """Text from a trace made harmless for a terminal: control characters (escape
    sequences a hostile capture could carry) as ``\\xNN``, bidi controls and other
    invisible characters as ``\\uNNNN``."""
    import re

    text = re.sub(_CONTROL, lambda m: f"\\x{ord(m.group()):02x}", text)
    return re.sub(_INVISIBLE, lambda m: f"\\u{ord(m.group()):04x}", text)


def _show(text: str) -> None:
    """Print text from a trace (see :func:`_safe`); what the terminal's encoding cannot
    hold (undecodable bytes as lone surrogates, say) as backslash escapes."""
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    print(_safe(text).encode(enc, "backslashreplace").decode(enc))


def cmd_summary(args: argparse.Namespace) -> int:
    trace = _load(args)
    s = trace.summary()
    if args.json:
        print(_json({**s, "skipped": _skipped(trace), "payload_free": trace.payload_free,
                     "rules_not_run": _not_run(trace)}))
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
    if trace.payload_free:
        _show("  " + _not_run_line(trace))
    return 0


def _json(value: Any) -> str:
    """Strict JSON (ASCII, so no terminal control survives): NaN and infinities, which JSON
    has not, as null."""
    import json

    return json.dumps(_finite(value), indent=2, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _ms(value: float) -> str:
    return "     -" if value != value else f"{value:>6.1f}"


def cmd_check(args: argparse.Namespace) -> int:
    from . import conversation

    trace = _load(args)
    with conversation.deep():  # check runs every rule, the schema ones at any size
        v = trace.violations
    level = SEVERITIES.index(args.fail_on)
    failing = v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
    args.status = 1 if len(failing) else 0  # kept if the output pipe closes early
    if args.report != "text":
        from .report_formats import write_findings

        write_findings(trace, args.report, sys.stdout, fail_on=args.fail_on)  # as it goes
        return int(args.status)
    if args.json:
        rows = []
        for row in v.itertuples(index=False):
            rows.append({"rule": row.rule, "severity": str(row.severity),
                         "seq": _int(row.seq), "related_seq": _int(row.related_seq),
                         "source": _where(trace, row.seq),
                         "message": row.message, "spec": row.spec, "versions": row.versions})
        print(_json({"fail_on": args.fail_on, "failing": int(len(failing)),
                     "protocol_version": trace.protocol_version, "violations": rows,
                     "skipped": _skipped(trace), "payload_free": trace.payload_free,
                     "rules_not_run": _not_run(trace)}))
    else:
        shown = v if args.all else v[v["severity"].astype(str).isin(SEVERITIES[: level + 1])]
        for row in shown.itertuples(index=False):
            where = _where(trace, row.seq) or "(trace)"
            _show(f"{where}: {row.severity}: [{row.rule}] {row.message}")
            if args.spec:
                _show(f"    spec: {row.spec}")
        for line in _skipped(trace):  # before the count, which stays the last line
            _show(line)
        if trace.payload_free:
            _show(_not_run_line(trace))
        counts = v["severity"].astype(str).value_counts()
        _show(f"{len(v)} finding(s): " + ", ".join(f"{int(counts.get(s, 0))} {s}"
                                                   for s in SEVERITIES)
              + f"; {len(failing)} at or above {args.fail_on}"
              + ("" if args.all or len(shown) == len(v) else " (--all shows the rest)"))
    return int(args.status)


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


def cmd_convert(args: argparse.Namespace) -> int:
    from pathlib import Path  # here: the record path does not import pathlib

    from .export import OutputError, is_stream, refuse_inputs, write

    tail = args.to if args.table == "frames" else f"{args.table}.{args.to}"
    out = Path(args.out) if args.out else _default_out(Path(args.files[0]), tail)
    if out is None:
        _error(f"cannot name an output for {args.files[0]}: give one with --out FILE")
        return 2
    try:  # before loading: refuse at once, and whatever `load` would read
        refuse_inputs(out, args.files)
    except OutputError as exc:
        _error(str(exc))
        return 2
    if args.to == "jsonl" and args.table != "frames":
        _error(f"--to jsonl writes frames only; write {args.table} as parquet or csv")
        return 2
    trace = _load(args)
    stream = is_stream(out)
    try:
        write(trace, out, args.to, args.table)
    except OutputError as exc:
        _error(str(exc))
        return 2
    except ImportError as exc:  # parquet without pyarrow: the message says what to install
        _error(str(exc))
        return 2
    except BrokenPipeError:
        raise  # piped into head: stop quietly
    except OSError as exc:
        _error(f"cannot write {out}: {exc.strerror or exc}"
               + ("" if stream else " (nothing was written)"))
        return 2
    n = len(getattr(trace, args.table))
    message = f"wrote {n} {args.table} to {out}"
    if stream and _is_stdout(out):  # the frames went to stdout: keep it theirs
        print(_safe(message), file=sys.stderr)
    else:
        _show(message)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .export import OutputError, refuse_inputs

    if args.boundary:
        out = Path(args.out) if args.out else _default_out(Path(args.files[0]), "events.jsonl")
        if out is None or out.suffix not in (".jsonl", ".parquet"):
            _error(f"name the events file .jsonl or .parquet, not {out}")
            return 2
    else:
        out = Path(args.otlp or args.perfetto or args.har)
    try:
        refuse_inputs(out, args.files)
    except OutputError as exc:
        _error(str(exc))
        return 2
    trace = _load(args)
    if args.boundary:
        from .boundary import stream_boundary

        n = stream_boundary(trace, out)  # written as it goes, a chunk at a time
        _show(f"wrote {n} operations to {out} (no payload text)")
    elif args.otlp:
        from .otlp import write_otlp

        write_otlp(trace, out, metrics=args.metrics)
        _show(f"wrote {trace.pairs['request_seq'].dropna().nunique()} spans to {out}")
    elif args.perfetto:
        held = trace.to_perfetto(out)
        _show(f"wrote {out}: " + ", ".join(f"{n} {k}" for k, n in held.items()))
    else:
        from .har_out import NotHTTPTraffic

        try:
            trace.to_har(out)
        except NotHTTPTraffic as exc:
            _error(str(exc))
            return 2
        _show(f"wrote {len(trace.frames)} frames to {out} as HAR 1.2")
    return 0


DIFF_EXAMPLES = (
    "diff data/everything-stdio-basics.jsonl data/everything-stdio-basics.jsonl",
    "diff data/demo-stdio.jsonl data/demo-http.har    # exit 1",
    "diff data/demo-stdio.jsonl data/demo-http.har --json --p95 off --fail-on info    # exit 1",
)


def cmd_diff(args: argparse.Namespace) -> int:
    from .compare import diff_main

    return diff_main(args.rest, epilog=_examples(*DIFF_EXAMPLES)["epilog"])


def _is_stdout(path: Path) -> bool:
    try:
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _default_out(src: Path, to: str) -> Path | None:
    """``X.log`` -> ``X.parquet`` beside it; never the input's own name: ``X.jsonl`` (or
    ``X.jsonl.gz``) to jsonl is ``X.converted.jsonl``."""
    if src.name in ("", ".", ".."):
        src = src.resolve()
        if not src.name:
            return None
    base = src.with_suffix("") if src.suffix == ".gz" else src
    out = base.with_suffix("." + to)
    return base.with_suffix(f".converted.{to}") if out.name == base.name else out


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from .protocol.rules import RULES

    if args.json:
        print(json.dumps([{"code": r.code, "severity": r.severity, "versions": list(r.versions),
                           "title": r.title, "spec": r.spec, "source": r.source,
                           "advice": r.advice} for r in RULES], indent=2))
    else:
        for r in RULES:
            _show(f"{r.code:<26} {r.severity:<8} {r.title}")
    return 0


def cmd_formats(args: argparse.Namespace) -> int:
    from .readers import formats

    for name, description in formats().items():
        _show(f"{name:<16} {description}")
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
    import argparse

    parser = argparse.ArgumentParser(
        prog="mcp-notebook", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="See and check captured MCP (JSON-RPC) traffic.",
        epilog=EXIT_CODES + "\n\nexamples:\n  mcp-notebook summary data/demo-stdio.jsonl\n"
               "  mcp-notebook check data/broken-duplicate-response.jsonl --fail-on warning"
               "    # exit 1\n"
               "  mcp-notebook check --help")
    parser.add_argument("--version", action="version", version=f"mcp-notebook {__version__}")
    parser.add_argument("--debug", action="store_true", default=False, help=_DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[..., int]] = {}

    p = sub.add_parser("summary", help="counts, pairs, latency and violations of a capture",
                       **_examples("summary data/everything-stdio-basics.jsonl",
                                   "summary data/demo-http.har --json",
                                   "summary data/    # every capture in the folder, one trace"))
    _add_input(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    handlers["summary"] = cmd_summary

    p = sub.add_parser("check", help="check every envelope rule; exit 1 on findings",
                       **_examples("check data/broken-duplicate-response.jsonl    # exit 1",
                                   "check data/demo-http.har --fail-on info --all --spec"
                                   "    # exit 1",
                                   "check data/demo-stdio.jsonl --json --protocol-version "
                                   "2025-06-18",
                                   "check data/broken-duplicate-response.jsonl --report sarif"
                                   "    # exit 1",
                                   "check data/broken-duplicate-response.jsonl --report github"
                                   "    # exit 1"))
    _add_input(p)
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--report", choices=("text", "sarif", "junit", "github"), default="text",
                   help="print the findings for CI: SARIF 2.1.0, JUnit XML or GitHub "
                        "annotations (--format names the capture's format)")
    p.add_argument("--fail-on", choices=SEVERITIES, default="error",
                   help="lowest severity that makes the exit code 1 (default: error)")
    p.add_argument("--all", action="store_true", help="list findings below --fail-on too")
    p.add_argument("--spec", action="store_true", help="print the spec sentence of each")
    handlers["check"] = cmd_check

    p = sub.add_parser("convert", help="write the frames as parquet, csv or tap jsonl",
                       **_examples("convert data/demo-http.har --to parquet"
                                   "    # writes data/demo-http.parquet",
                                   "convert data/demo-stdio.jsonl --to jsonl"
                                   "    # writes data/demo-stdio.converted.jsonl",
                                   "convert data/ --to csv --out all-frames.csv"))
    _add_input(p, many=True)
    p.add_argument("--to", choices=("parquet", "csv", "jsonl"), required=True)
    p.add_argument("--out", "-o", metavar="FILE",
                   help="output file, never an input (default: beside the first input, "
                        "named after it: X.parquet, X.csv, X.converted.jsonl; X.pairs.parquet "
                        "for --table pairs)")
    p.add_argument("--table", choices=("frames", "pairs", "violations"), default="frames",
                   help="the table to write (default: frames; jsonl holds frames only)")
    handlers["convert"] = cmd_convert

    p = sub.add_parser("export", help="payload-free events, OpenTelemetry, Perfetto or HAR",
                       **_examples("export data/demo-http.har --boundary -o events.jsonl",
                                   "export data/demo-stdio.jsonl --otlp spans.json",
                                   "export data/demo-stdio.jsonl --perfetto demo.pftrace",
                                   "export data/demo-sse.har --har copy.har",
                                   "export data/demo-stdio.jsonl --har x.har    # exit 2"))
    _add_input(p)
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
    handlers["export"] = cmd_export

    # diff parses its own options (main hands it the rest of the line); listed here for
    # --help and the examples
    p = sub.add_parser("diff", help="what changed from capture A to capture B",
                       **_examples(*DIFF_EXAMPLES))
    p.add_argument("rest", nargs=argparse.REMAINDER,
                   help="A B [--json] [--fail-on …] [--p50 …] [--p95 …]: diff --help says all")
    handlers["diff"] = cmd_diff

    p = sub.add_parser("rules", help="list the rule catalogue",
                       **_examples("rules", "rules --json"))
    p.add_argument("--json", action="store_true")
    handlers["rules"] = cmd_rules

    p = sub.add_parser("formats", help="list the capture formats",
                       **_examples("formats",
                                   "summary data/demo-sse.har --format har"
                                   "    # name the format instead of sniffing it"))
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
    for p in sub.choices.values():  # `mcp-notebook check X --debug` works too
        if "--debug" not in p._option_string_actions:
            p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                           help=_DEBUG_HELP)
    return parser, handlers


def _examples(*lines: str) -> dict[str, Any]:
    """An ``examples:`` epilogue (each line runs as a test, from a folder holding a copy of
    the bundled ``data/``; ``# exit N`` says the exit code it must give)."""
    import argparse

    text = "examples:\n" + "\n".join(f"  mcp-notebook {line}" for line in lines)
    return {"epilog": f"{text}\n\n{EXIT_CODES}",
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def _extra_commands() -> list[Callable[[Any, dict[str, Callable[..., int]]], None]]:
    """Subcommands that live with their feature (capture tools, redaction)."""
    found = []
    for module, attr in (("mcp_notebook.capture.cli", "register"),
                         ("mcp_notebook.redact", "register")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ModuleNotFoundError as exc:  # the feature is not there; a broken one raises
            if exc.name != module:
                raise
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
    """Run ``mcp-notebook`` with ``argv``; return the exit code (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["record"]:
        return _record(argv)
    import argparse

    args: argparse.Namespace | None = None
    try:
        if argv[:1] == ["diff"]:  # its own options, --help included
            return _run(cmd_diff, argparse.Namespace(rest=argv[1:]))
        parser, handlers = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_usage(sys.stderr)
            _error("name a command (mcp-notebook --help lists them)")
            return 2
        return _run(handlers[args.command], args)
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:  # a bug: never exit 0 or 1, which mean results
        if os.environ.get("MCP_NOTEBOOK_DEBUG") or getattr(args, "debug", False):
            import traceback

            traceback.print_exc()
        _error(f"internal error ({type(exc).__name__}: {exc}). This is a bug in "
               "mcp-notebook; run again with MCP_NOTEBOOK_DEBUG=1 (or --debug) to see the "
               "traceback, and please report it.")
        return INTERNAL_ERROR


def _run(handler: Callable[..., int], args: argparse.Namespace) -> int:
    """Call ``handler``; turn what the user can fix into exit 2 with one line on stderr."""
    import zlib

    from .readers import CaptureError

    try:
        return handler(args)
    except CaptureError as exc:
        _error(str(exc))
        return 2
    except BrokenPipeError:  # piped into head: stop quietly (before OSError, its base class)
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        # the status the command had decided before printing (check: 1 on findings)
        return int(getattr(args, "status", 0))
    except UnicodeDecodeError as exc:
        _error(f"cannot decode input: {exc}")
        return 2
    except (EOFError, zlib.error) as exc:  # a .gz cut short or corrupt (as `load` says)
        names = getattr(args, "files", None) or [getattr(args, "file", "input")]
        _error(f"{', '.join(map(str, names))}: cannot be read ({exc})")
        return 2
    except OSError as exc:
        reads = getattr(args, "files", None) or getattr(args, "file", None)
        _error(f"cannot read input: {exc}" if reads else str(exc))
        return 2


def _error(message: str) -> None:
    """One line on stderr, its control characters shown as escapes."""
    print(f"mcp-notebook: {_safe(message)}".replace("\n", " "), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
