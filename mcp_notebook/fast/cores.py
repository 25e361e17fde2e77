"""Whether a read may put a second core to work inside the C scanner or document passes.

``_native.scan(..., pipe=1)`` has a worker thread read the lines of bare NDJSON (without
the GIL) while the calling thread makes their rows (``engine/csrc/scanpipe.h``), and
``_native.inspector_doc`` / ``recorder_doc`` read a large document's entries on two
threads (``engine/csrc/docsplit.h``); the answers are the same either way. That pays
only where a core is free: not while a read of this process is split over two processes
or two threads (:mod:`.parallel`: each half has a core already), not in a worker of a
process pool (:func:`share`), not on one usable core, and not under
``MCP_NOTEBOOK_SPLIT=none`` (one core asked for). :func:`free` says which, each time a
reader calls the scanner (:func:`scan_pipe`) or a document pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PIPE", "free", "scan_pipe", "split", "share"]

#: what ``_native.scan`` is asked for where a core is free: 1, a worker thread for calls
#: of ``_native.PIPE_MIN`` lines or more (the tests set 2: whatever the number of lines)
PIPE = 1

_split = 0  # reads split in two under way in this process (a forked half inherits it)


@contextmanager
def split() -> Iterator[None]:
    """The span of a read split over two processes or two threads: no scanner worker is
    started in it, by either half (a child forked inside inherits the mark)."""
    global _split
    _split += 1
    try:
        yield
    finally:
        _split -= 1


def share() -> None:
    """Mark this process as one of several reading at once (a process pool's worker):
    no scanner worker is started in it."""
    global _split
    _split += 1


def free() -> bool:
    """Whether a read in this process now may put a second core to work (the scanner's
    worker, the document passes' second thread)."""
    from . import parallel

    return not (parallel.SPLIT == "none" or _split or parallel.workers() < 2)


def scan_pipe() -> int:
    """``_native.scan``'s ``pipe`` for a read in this process now: :data:`PIPE` when a
    core is free for the scanner's worker thread, else 0."""
    return PIPE if free() else 0
