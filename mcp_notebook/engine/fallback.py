"""When the loader takes a slower way round, it says so: a note on the trace, one warning.

A fast path that raises, a worker process that dies, a C scanner that is not built, or a
reader that stops on input it cannot handle: the load still gives the capture (by the
reference path, or with an invalid row where the reader stopped), and :func:`fell_back`
records why. :func:`mcp_notebook.load` gathers these into ``trace.notes`` and issues one
:class:`FallbackWarning` per load.

With the environment variable ``MCP_NOTEBOOK_STRICT=1`` (the test suite sets it) each of
them raises :class:`FastPathError` instead, so a broken fast path fails the tests rather
than being compared with the slow path it fell back to.

Switching a path off on purpose is not a fallback: ``fast.ENABLED = False`` or
``engine.native.native = None`` where the scanner is built (the tests compare the paths so)
load without a note.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FallbackWarning", "FastPathError", "STRICT_ENV", "strict", "fell_back",
           "collecting", "warn"]

#: the environment variable that turns every fallback into an error
STRICT_ENV = "MCP_NOTEBOOK_STRICT"


class FallbackWarning(UserWarning):
    """The loader took a slower or lossy way round (the note on the trace says which)."""


class FastPathError(RuntimeError):
    """A fallback under ``MCP_NOTEBOOK_STRICT=1``."""


def strict() -> bool:
    """Whether fallbacks raise (``MCP_NOTEBOOK_STRICT`` set to anything but ``0``)."""
    return os.environ.get(STRICT_ENV, "").strip() not in ("", "0")


_notes: list[str] | None = None  # the notes of the load under way (None: no load)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """The notes of :func:`fell_back` calls made inside the block (nested loads share them)."""
    global _notes
    outer = _notes
    mine: list[str] = [] if outer is None else outer
    _notes = mine
    try:
        yield mine
    finally:
        _notes = outer


def fell_back(note: str, exc: BaseException | None = None) -> None:
    """Record that the load took a slower way round; raise under ``MCP_NOTEBOOK_STRICT``."""
    if exc is not None:
        note = f"{note} ({type(exc).__name__}: {exc})"[:800]
    if strict():
        raise FastPathError(f"{STRICT_ENV}=1: {note}") from exc
    if _notes is not None:
        if note not in _notes:
            _notes.append(note)
    else:  # outside a load: at least the warning
        warn([note])


def warn(notes: list[str]) -> None:
    """One warning for the fallbacks of a load."""
    if notes:
        more = f" (and {len(notes) - 1} more: see trace.notes)" if len(notes) > 1 else ""
        warnings.warn(FallbackWarning(notes[0] + more), stacklevel=3)
