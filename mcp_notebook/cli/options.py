"""What the commands share: the input options, the load they make, the help epilogues."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

SEVERITIES = ("error", "warning", "info")
EXIT_CODES = """exit codes:
  0    done; for check and diff: nothing at or above --fail-on
  1    check found violations, or diff changes, at or above --fail-on
  2    bad usage, an input that cannot be read or an output that cannot be written
  3    a bug in mcp-notebook (MCP_NOTEBOOK_DEBUG=1 or --debug shows the traceback)
  130  interrupted (Ctrl-C)
  (record exits with its server's own status instead)"""
DEBUG_HELP = "on an internal error, print the traceback (as MCP_NOTEBOOK_DEBUG=1 does)"


def examples(*lines: str) -> dict[str, Any]:
    """An ``examples:`` epilogue (each line runs as a test, from a folder holding a copy of
    the bundled ``data/``; ``# exit N`` says the exit code it must give)."""
    import argparse

    text = "examples:\n" + "\n".join(f"  mcp-notebook {line}" for line in lines)
    return {"epilog": f"{text}\n\n{EXIT_CODES}",
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def add_input(p: argparse.ArgumentParser, many: bool = True) -> None:
    """The capture(s) a command reads, and how to read them."""
    from ..readers import formats

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

    from ..protocol.versions import VERSIONS

    if text == "draft" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a protocol version: give a date such as {VERSIONS[-2]} or draft "
        f"(known: {', '.join(VERSIONS)})")


def load(args: argparse.Namespace) -> Any:
    """The trace of the inputs :func:`add_input` named."""
    from ..load import load
    from ..readers import CaptureError

    files: Any = args.files
    if "-" in files:  # the capture on stdin: `... | mcp-notebook check -`
        if len(files) > 1:
            raise CaptureError("- reads one capture from stdin: give it alone, or name files")
        files = sys.stdin.buffer
    progress = False if getattr(args, "quiet", False) else None  # None: on a terminal only
    return load(files, format=args.format, version=args.protocol_version, progress=progress)


def not_run(trace: Any) -> list[str]:
    """The rules that cannot run on a trace: all of them on a payload-free one."""
    from ..protocol.rules import RULES

    return [r.code for r in RULES] if trace.payload_free else []


def not_run_line(trace: Any) -> str:
    codes = not_run(trace)
    return (f"payload-free trace: none of the {len(codes)} rules ran, each reads message "
            f"text a boundary or OTLP file does not hold ({', '.join(codes)}); `check` the "
            "original capture for findings")


def skipped(trace: Any) -> list[str]:
    """What a folder held that did not load, one line each (``skipped NAME: why``)."""
    return [n for n in trace.notes if n.startswith("skipped ")]


def default_out(src: Path, to: str) -> Path | None:
    """``X.log`` -> ``X.parquet`` beside it; never the input's own name: ``X.jsonl`` (or
    ``X.jsonl.gz``) to jsonl is ``X.converted.jsonl``."""
    if src.name in ("", ".", ".."):
        src = src.resolve()
        if not src.name:
            return None
    base = src.with_suffix("") if src.suffix == ".gz" else src
    out = base.with_suffix("." + to)
    return base.with_suffix(f".converted.{to}") if out.name == base.name else out
