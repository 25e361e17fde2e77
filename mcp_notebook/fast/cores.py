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

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MIN_SECOND_THREAD", "PIPE", "SPLIT", "free", "min_second_thread", "scan_pipe",
           "share", "split", "workers"]

#: how a large file is split: "fork" (a forked child), "threads" (two threads, the C
#: scanner reading lines with the GIL released), or "auto": a fork when this process may
#: fork (it overlaps all of the work; two threads only the line reading, about a quarter
#: of it: benchmarks/FLOOR.md), else two threads for bare NDJSON with the C scanner (a Jupyter
#: kernel: threaded, so no fork), else one thread; "none": one core (no split, and no
#: worker thread in the C scanner either); read by :mod:`.parallel` too
SPLIT = os.environ.get("MCP_NOTEBOOK_SPLIT", "auto").strip() or "auto"


def workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


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
    return not (SPLIT == "none" or _split or workers() < 2)


#: inputs at least this large are read by the C passes that can use a second thread (the
#: HAR pass, the Inspector's and the recorder's document passes)
MIN_SECOND_THREAD = 16 << 20


def min_second_thread() -> int:
    """The least input a C pass that can use a second thread reads on two (``-1``: none):
    none where no core is free (:func:`free`), any under ``MCP_NOTEBOOK_SPLIT=threads``,
    else :data:`MIN_SECOND_THREAD`."""
    if not free():
        return -1
    return 0 if SPLIT == "threads" else MIN_SECOND_THREAD


def scan_pipe() -> int:
    """``_native.scan``'s ``pipe`` for a read in this process now: :data:`PIPE` when a
    core is free for the scanner's worker thread, else 0."""
    return PIPE if free() else 0
