"""``mcp-notebook rules`` and ``mcp-notebook formats``: the rule catalogue, the formats."""

from __future__ import annotations

from .options import examples
from .output import show

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from typing import Any


def add_rules(sub: Any) -> None:
    p = sub.add_parser("rules", help="list the rule catalogue", **examples("rules", "rules --json"))
    p.add_argument("--json", action="store_true")


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    from ..protocol.rules import RULES

    if args.json:
        print(json.dumps([{"code": r.code, "severity": r.severity, "versions": list(r.versions),
                           "title": r.title, "spec": r.spec, "source": r.source,
                           "advice": r.advice} for r in RULES], indent=2))
    else:
        for r in RULES:
            show(f"{r.code:<26} {r.severity:<8} {r.title}")
    return 0


def add_formats(sub: Any) -> None:
    sub.add_parser("formats", help="list the capture formats",
                   **examples("formats",
                              "summary data/demo-sse.har --format har"
                              "    # name the format instead of sniffing it"))


def cmd_formats(args: argparse.Namespace) -> int:
    from ..readers import formats

    known = formats()
    width = max(map(len, known))
    for name, description in known.items():
        show(f"{name:<{width}}  {description}")
    return 0
