"""``mn.load``: capture files in, a :class:`~mcp_notebook.trace.Trace` out."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import readers
from .core.direction import infer
from .readers import CaptureError
from .table import Columns, collect
from .trace import Trace

__all__ = ["load", "expand"]

PathLike = str | os.PathLike[str]
_SKIP_IN_FOLDERS = (".source.txt", ".md", ".py", ".ipynb")


def expand(paths: PathLike | Iterable[PathLike]) -> tuple[list[Path], list[Path]]:
    """``(files named, files found in folders)``; folders are walked, sorted by name."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    named: list[Path] = []
    found: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found.extend(sorted(q for q in path.rglob("*") if q.is_file()
                                and not q.name.startswith(".")
                                and not q.name.endswith(_SKIP_IN_FOLDERS)))
        else:
            named.append(path)
    return named, found


def load(
    paths: PathLike | Iterable[PathLike],
    format: str = "auto",
    *,
    session: str | None = None,
    direction: str | None = None,
    version: str | None = None,
    **options: Any,
) -> Trace:
    """Load one or more captures into a :class:`Trace`.

    Parameters
    ----------
    paths
        A file, a list of files, or a folder (its capture files, sorted by name).
        Plain or ``.gz``.
    format
        ``"auto"`` sniffs each file; or a name from :func:`mcp_notebook.formats`.
    session
        Name the session(s) instead of one per file (records that name their own
        session keep it).
    direction
        For bare NDJSON: ``"c2s"`` or ``"s2c"`` when the file holds one side only;
        otherwise the direction is inferred from the message flow.
    version
        Check against this protocol version instead of the negotiated one.

    Raises
    ------
    CaptureError
        A named file is missing, unreadable or of no known format (folders skip
        such files and say so in ``trace.notes``).
    """
    if direction not in (None, "c2s", "s2c"):
        raise ValueError(f"direction must be 'c2s', 's2c' or None, not {direction!r}")
    named, found = expand(paths)
    if not named and not found:
        raise CaptureError(f"{paths}: no capture files found")
    cols = Columns()
    notes: list[str] = []
    used: list[str] = []
    for path in named + found:
        before = len(cols)
        try:
            records = readers.read(path, format=format, session=session, direction=direction,
                                   **options)
            collect(records, cols)
        except CaptureError as exc:
            if path in named:
                raise
            notes.append(f"skipped {path.name}: {exc}")
            continue
        except (OSError, EOFError) as exc:  # unreadable, or a gzip stream cut short
            if path in named and len(cols) == before:
                raise CaptureError(f"{path}: cannot be read ({exc})") from exc
            notes.append(f"{path.name}: reading stopped early ({exc})")
        used.append(str(path))
    if any(d is None for d, k in zip(cols.direction, cols.kind, strict=True)
           if k in ("request", "notification", "result", "error")):
        cols.direction = infer(cols.kind, cols.session, cols.id_key, cols.method, cols.direction)
        notes.append("directions inferred from the message flow (the capture does not say)")
    return Trace(cols, version=version, notes=notes, paths=used)
