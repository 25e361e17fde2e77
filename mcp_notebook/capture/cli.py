"""The ``record`` and ``proxy`` sub-commands of ``mcp-notebook``.

``mcp_notebook.cli`` calls :func:`register`; each ``add_*_parser`` can also be used alone
and returns the handler (``args -> exit status``). Nothing heavy is imported here: the
tap needs the standard library only, the proxy imports aiohttp when it runs. Not even
argparse on the plain ``record`` path (:func:`record_main`): the server starts first.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    Handler = Callable[[argparse.Namespace], int]

__all__ = ["add_record_parser", "add_proxy_parser", "register", "record_main"]


def add_record_parser(subparsers: Any) -> Handler:
    """Add ``record`` (the stdio tap) to an argparse sub-parser set; return its handler."""
    from . import record

    p = subparsers.add_parser("record", help="run an MCP stdio server behind a recording tap "
                              "(tap JSONL)", description=RECORD_DESCRIPTION)
    record.add_arguments(p)
    return record.run


RECORD_DESCRIPTION = ("Relay stdin/stdout between an MCP client and SERVER_CMD byte for byte "
                      "and record every frame and stderr line as tap JSONL. Put it in a "
                      "client config in place of the server command.")


def _formatter() -> type[argparse.HelpFormatter]:
    import argparse

    class Formatter(argparse.HelpFormatter):
        """argparse's help formatter, finding the terminal width without importing shutil
        (which imports bz2, lzma and fnmatch: start-up time the tap does not need)."""

        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            if width is None:
                try:
                    width = int(os.environ["COLUMNS"])
                except (KeyError, ValueError):
                    out = sys.__stdout__
                    try:
                        width = os.get_terminal_size(out.fileno()).columns if out else 80
                    except (ValueError, OSError):
                        width = 80
                width -= 2
            super().__init__(prog, indent_increment, max_help_position, width)

    return Formatter


def record_main(argv: list[str]) -> int:
    """``mcp-notebook record ARGS`` alone. The plain form is read without argparse
    (:func:`~mcp_notebook.capture.record.parse`); anything else (help, a mistake, an
    abbreviation) goes to one small argparse parser, whose messages stay as they were."""
    from . import record

    args = record.parse(argv)
    if args is None:
        import argparse

        p = argparse.ArgumentParser(prog="mcp-notebook record", description=RECORD_DESCRIPTION,
                                    formatter_class=_formatter())
        record.add_arguments(p)
        return record.run(p.parse_args(argv))
    return record.run(args)


def add_proxy_parser(subparsers: Any) -> Handler:
    """Add ``proxy`` (the recording HTTP reverse proxy) to a sub-parser set; return its handler."""
    from . import proxy

    p = subparsers.add_parser(
        "proxy", help="record MCP over HTTP (Streamable HTTP, HTTP+SSE) to HAR 1.2",
        description="A reverse proxy on loopback that forwards to --target, passes SSE "
                    "through live and writes every exchange to a HAR 1.2 file, with each SSE "
                    "event's arrival time in response.content._sseEvents.")
    proxy.add_arguments(p)
    return proxy.run


def register(subparsers: Any, handlers: dict[str, Handler]) -> None:
    """Add ``record`` and ``proxy`` to ``mcp-notebook`` (``handlers``: name -> handler)."""
    handlers["record"] = add_record_parser(subparsers)
    handlers["proxy"] = add_proxy_parser(subparsers)
