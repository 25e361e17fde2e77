"""``mcp-notebook``: summary, check, convert, rules, formats, and the capture tools.

Exit codes (the same for every command; ``record`` passes on its server's own status):

* 0 -- done; for ``check``: no finding at or above ``--fail-on``;
* 1 -- ``check`` found violations at or above ``--fail-on``;
* 2 -- bad usage, an input that cannot be read or an output that cannot be written (one
  line on stderr says why and what to do);
* 3 -- an unexpected error: a bug in mcp-notebook. One line on stderr says so; set
  ``MCP_NOTEBOOK_DEBUG=1`` (or pass ``--debug``) to see the traceback;
* 130 -- interrupted (Ctrl-C).

One module per command or family (:data:`COMMANDS`), each with ``add_<command>(subparsers)``
and ``cmd_<command>(args)``; :mod:`.options` and :mod:`.output` are what they share, and
:mod:`.record` wires in the tap and the commands that live with their feature.
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from .options import DEBUG_HELP
from .output import error

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

# Nothing but os and sys at import, here and in every module of the package: the console
# script imports it for ``record`` too (the stdio tap), whose server must start before
# anything else loads, so argparse, json, re, the readers, rules and pandas are imported
# where used, and each command's module when the parser is built.

__all__ = ["main", "entry"]

INTERNAL_ERROR = 3  #: the exit code of a bug (0 and 1 are results, 2 the user's to fix)

#: the built-in commands, in ``--help`` order, and the module of :mod:`mcp_notebook.cli`
#: of each
COMMANDS = {"summary": "summary", "check": "check", "convert": "convert", "export": "export",
            "diff": "diff", "rules": "listings", "formats": "listings",
            "notebooks": "notebooks", "open": "notebooks"}


def _module(command: str) -> Any:
    return __import__(f"{__name__}.{COMMANDS[command]}", fromlist=["_"])


def __getattr__(name: str) -> Any:
    """``cmd_summary`` and the other commands' functions, from their module on first use.
    What runs is the package's: a ``cmd_<command>`` set here replaces that command."""
    command = name[4:] if name.startswith("cmd_") else ""
    if command not in COMMANDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_module(command), name)


def _handler(command: str) -> Callable[..., int]:
    return getattr(sys.modules[__name__], f"cmd_{command}")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[..., int]]]:
    import argparse

    from .options import EXIT_CODES
    from .record import feature_commands

    parser = argparse.ArgumentParser(
        prog="mcp-notebook", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="See and check captured MCP (JSON-RPC) traffic.",
        epilog=EXIT_CODES + "\n\nexamples:\n  mcp-notebook summary data/demo-stdio.jsonl\n"
               "  mcp-notebook check data/broken-duplicate-response.jsonl --fail-on warning"
               "    # exit 1\n"
               "  mcp-notebook check --help")
    parser.add_argument("--version", action="version", version=f"mcp-notebook {__version__}")
    parser.add_argument("--debug", action="store_true", default=False, help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[..., int]] = {}
    for command in COMMANDS:
        getattr(_module(command), f"add_{command}")(sub)
        handlers[command] = _handler(command)
    for extra in feature_commands():
        extra(sub, handlers)
    for p in sub.choices.values():  # `mcp-notebook check X --debug` works too
        if "--debug" not in p._option_string_actions:
            p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                           help=DEBUG_HELP)
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mcp-notebook`` with ``argv``; return the exit code (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["record"]:
        from .record import record

        return record(argv)
    import argparse

    args: argparse.Namespace | None = None
    try:
        if argv[:1] == ["diff"]:  # its own options, --help included
            return _run(_handler("diff"), argparse.Namespace(rest=argv[1:]))
        parser, handlers = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_usage(sys.stderr)
            error("name a command (mcp-notebook --help lists them)")
            return 2
        return _run(handlers[args.command], args)
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except Exception as exc:  # a bug: never exit 0 or 1, which mean results
        if os.environ.get("MCP_NOTEBOOK_DEBUG") or getattr(args, "debug", False):
            import traceback

            traceback.print_exc()
        error(f"internal error ({type(exc).__name__}: {exc}). This is a bug in "
              "mcp-notebook; run again with MCP_NOTEBOOK_DEBUG=1 (or --debug) to see the "
              "traceback, and please report it.")
        return INTERNAL_ERROR


def entry() -> None:
    """The console script ``mcp-notebook`` (and ``python -m mcp_notebook``): :func:`main`,
    then exit with its code.

    Before the interpreter shuts down, what the command left in memory is frozen out of the
    garbage collector (``gc.freeze``): shutdown's collections would otherwise walk every
    object of pandas' modules and of the loaded capture, about 0.2 s after each command
    that loaded one (benchmarks/FLOOR.md). Every object here is the command's own, and
    the files it wrote are closed; standard output is flushed at exit as before."""
    code = main()
    import gc

    gc.freeze()
    sys.exit(code)


def _run(handler: Callable[..., int], args: argparse.Namespace) -> int:
    """Call ``handler``; turn what the user can fix into exit 2 with one line on stderr."""
    import zlib

    from ..readers import CaptureError

    try:
        return handler(args)
    except CaptureError as exc:
        error(str(exc))
        return 2
    except BrokenPipeError:  # piped into head: stop quietly (before OSError, its base class)
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        # the status the command had decided before printing (check: 1 on findings)
        return int(getattr(args, "status", 0))
    except UnicodeDecodeError as exc:
        error(f"cannot decode input: {exc}")
        return 2
    except (EOFError, zlib.error) as exc:  # a .gz cut short or corrupt (as `load` says)
        names = getattr(args, "files", None) or [getattr(args, "file", "input")]
        error(f"{', '.join(map(str, names))}: cannot be read ({exc})")
        return 2
    except OSError as exc:
        reads = getattr(args, "files", None) or getattr(args, "file", None)
        error(f"cannot read input: {exc}" if reads else str(exc))
        return 2
