"""``mcp-notebook record`` and the other commands that live with their feature.

``record`` (the stdio tap) is parsed without the other commands: the tap starts its server
before anything beyond the standard library is imported (clients time out slow servers).
The capture tools (``record``, ``proxy``) and ``redact`` add their own subcommands to
``--help`` through their module's ``register(subparsers, handlers)``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: (module, function) of each feature that adds subcommands
FEATURES = (("mcp_notebook.capture.cli", "register"), ("mcp_notebook.redact", "register"))


def record(argv: list[str]) -> int:
    """``mcp-notebook record ARGS...`` (``argv`` starts with ``record``)."""
    from ..capture.cli import record_main

    return record_main(argv[1:])


def feature_commands() -> list[Callable[[Any, dict[str, Callable[..., int]]], None]]:
    """The ``register`` of each feature that is there (a missing one is left out; a broken
    one raises)."""
    found = []
    for module, attr in FEATURES:
        try:
            mod = __import__(module, fromlist=[attr])
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        if hasattr(mod, attr):
            found.append(getattr(mod, attr))
    return found
