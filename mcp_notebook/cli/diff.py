"""``mcp-notebook diff``: what changed from capture A to capture B (:mod:`mcp_notebook.compare`
parses its options and runs it)."""

from __future__ import annotations

from .options import examples

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from typing import Any

EXAMPLES = (
    "diff data/everything-stdio-basics.jsonl data/everything-stdio-basics.jsonl",
    "diff data/demo-stdio.jsonl data/demo-http.har    # exit 1",
    "diff data/demo-stdio.jsonl data/demo-http.har --json --p95 off --fail-on info    # exit 1",
)


def add_diff(sub: Any) -> None:
    """Listed for ``--help`` and the examples: ``main`` hands diff the rest of the line."""
    import argparse

    p = sub.add_parser("diff", help="what changed from capture A to capture B",
                       **examples(*EXAMPLES))
    p.add_argument("rest", nargs=argparse.REMAINDER,
                   help="A B [--json] [--fail-on …] [--p50 …] [--p95 …]: diff --help says all")


def cmd_diff(args: argparse.Namespace) -> int:
    from ..compare import diff_main

    return diff_main(args.rest, epilog=examples(*EXAMPLES)["epilog"])
