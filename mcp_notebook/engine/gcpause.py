"""The cyclic garbage collector paused while many small objects are made, then left as found.

Decoded JSON, rows and span trees make millions of small objects and no reference cycles:
a collection run again and again as they are made walks them all and frees nothing, and
costs more than the work. Reference counting frees as ever. The collector is enabled again
afterwards only if it was enabled before (the library leaves the user's process as it found
it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "frozen_heap"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block; restore its state after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Run with what is allocated so far left out of the cyclic collector's scans
    (``gc.freeze``), and unfrozen after: an export makes many small objects a chunk at a
    time, and each collection would otherwise walk the whole loaded trace again.

    ``gc.unfreeze`` thaws everything, not only what this block froze; so where the user's
    process had frozen objects of its own, the block freezes nothing and leaves them so.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
