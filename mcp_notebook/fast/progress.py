"""A progress bar for long loads: tqdm's notebook bar in Jupyter, a stderr bar in a terminal.

``mn.load`` shows one when the files it reads hold at least :data:`MIN_BYTES` together
(counted as stored: a ``.gz`` file by its compressed size) and there is somewhere to show
it: a Jupyter kernel, or a standard error that is a terminal. Nothing when stderr is piped
or a file, unless asked with ``progress=True``; ``progress=False`` turns it off (the CLI's
``--quiet`` passes that). Without tqdm installed there is no bar, and nothing fails.

The bar moves as the line-format readers read their blocks (:func:`tick`) and by whole
files for the other formats; the half of a split file that a worker process reads counts
when the worker is done.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["MIN_BYTES", "Progress", "start", "tick", "file_done", "detach"]

#: loads of at least this many bytes show progress
MIN_BYTES = 50 << 20

_current: Progress | None = None  # the bar of the load under way


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where a widget bar can be shown)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _bar(total: int, force: bool) -> Any:
    """A tqdm bar, or None when there is nowhere to show it (or no tqdm)."""
    try:
        if _in_notebook():
            from tqdm.notebook import tqdm as bar
        elif force or sys.stderr.isatty():
            from tqdm import tqdm as bar
        else:
            return None
        return bar(total=total, unit="B", unit_scale=True, unit_divisor=1024,
                   desc="loading", file=None if _in_notebook() else sys.stderr,
                   leave=False, dynamic_ncols=True, mininterval=0.2)
    except ImportError:  # no tqdm (or, in a notebook, no ipywidgets): no bar
        return None


class Progress:
    """The bar of one load, over the bytes of its files."""

    def __init__(self, sizes: dict[Path, int], bar: Any) -> None:
        self.sizes, self.bar = sizes, bar
        self.done = 0  # bytes of the files finished
        self.shown = 0

    def _show(self, n: int) -> None:
        n = min(n, self.bar.total)
        if n > self.shown:
            self.bar.update(n - self.shown)
            self.shown = n

    def at(self, pos: int) -> None:
        """Within the file being read: ``pos`` bytes of it (as stored) are read."""
        self._show(self.done + pos)

    def file_done(self, path: Path) -> None:
        self.done += self.sizes.get(path, 0)
        self._show(self.done)

    def close(self) -> None:
        self.bar.close()


def start(paths: list[Path], progress: bool | None) -> Progress | None:
    """The bar of a load of ``paths`` (None: none shown); :func:`tick` and
    :func:`file_done` move it until :meth:`Progress.close`."""
    global _current
    if progress is False:
        return None
    sizes = {}
    for p in paths:
        try:
            sizes[p] = os.stat(p).st_size
        except OSError:
            continue
    total = sum(sizes.values())
    if total < MIN_BYTES and progress is not True:
        return None
    bar = _bar(total, force=progress is True)
    if bar is None:
        return None
    _current = Progress(sizes, bar)
    return _current


def stop(p: Progress | None) -> None:
    global _current
    if p is not None:
        p.close()
        if _current is p:
            _current = None


def tick(f: Any) -> None:
    """The reader of ``f`` read another block: move the bar to where ``f`` stands (not
    from a worker thread: the bar follows the first part)."""
    if _current is None or getattr(_quiet, "on", False):
        return
    raw = getattr(f, "fileobj", None) or f  # a GzipFile: where its compressed file stands
    try:
        _current.at(raw.tell())
    except (OSError, ValueError, AttributeError):
        pass


def file_done(path: Path) -> None:
    if _current is not None:
        _current.file_done(path)


_quiet = threading.local()


def quiet() -> None:
    """In a worker thread: move no bar (the thread reading the first part does)."""
    _quiet.on = True


def detach() -> None:
    """In a forked worker: draw nothing (the parent's bar is the parent's)."""
    global _current
    _current = None
