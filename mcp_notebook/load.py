"""``mn.load``: capture files in, a :class:`~mcp_notebook.trace.Trace` out."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import fast, readers
from .core.envelope import bounded_recursion
from .readers import CaptureError, Record
from .table import Columns, collect
from .trace import Trace

__all__ = ["load", "expand"]

PathLike = str | os.PathLike[str]
#: what a file that cannot be read raises (zlib.error: a corrupt .gz)
_UNREADABLE = (OSError, EOFError, zlib.error)
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
    formats = _formats(named + found, format)
    merged = _deduplicated(formats, session, direction, options)
    wrapped = {p: w for p, fmt in formats.items() if fmt in readers.LINE_FORMATS
               and (w := readers.wrapping(p))}  # pasted into Markdown: the readers unwrap
    notes.extend(f"{p.name}: {w.describe()}" for p, w in wrapped.items())
    pieces: list[Any] = []  # Columns of reference-path files and Stores of fast-path files
    fast_jobs = [(path, formats[path], session, direction) for path in named + found
                 if path in formats and path not in merged and path not in wrapped
                 and fast.supports(formats[path], options)]
    with bounded_recursion():  # several files: shared between two processes when it pays
        prefetched = fast.load_many(fast_jobs)
    for path in named + found:
        fmt = formats.get(path, format)
        if path not in merged and path not in wrapped and fast.supports(fmt, options):
            if path in prefetched:
                store = prefetched[path]
            else:
                with bounded_recursion():
                    store = fast.try_load(path, fmt, session, direction)
            if store is not None:
                pieces += [cols, store]
                cols = Columns()
                used.append(str(path))
                continue
        before = len(cols)
        try:
            with bounded_recursion():  # sniffing and decoding recurse in C
                records = merged[path] if path in merged else readers.read(
                    path, format=formats.get(path, format), session=session,
                    direction=direction, **options)
                _collect(records, cols, path, session, notes)
        except CaptureError as exc:
            if path in named:
                raise
            notes.append(f"skipped {path.name}: {exc}")
            continue
        except _UNREADABLE as exc:  # unreadable, or a gzip stream cut short or corrupt
            if path in named and len(cols) == before:
                raise CaptureError(f"{path}: cannot be read ({exc})") from exc
            notes.append(f"{path.name}: reading stopped early ({exc})")
        used.append(str(path))
    store = fast.combine([*pieces, cols])
    notes.extend(readers.time_notes(store.extra))
    if fast.infer_directions(store):  # as core.direction.infer, on columns
        notes.append("directions inferred from the message flow (the capture does not say)")
    return Trace(store, version=version, notes=notes, paths=used)


def _collect(records: Iterable[Record], cols: Columns, path: Path, session: str | None,
             notes: list[str]) -> None:
    """``collect``, with a reader's bug on hostile input kept as an invalid row, not raised."""
    try:
        collect(records, cols)
    except (CaptureError, *_UNREADABLE):
        raise
    except Exception as exc:  # keep what the reader gave before it failed, and say so
        why = (f"the {path.name} reader stopped here on input it could not handle "
               f"({type(exc).__name__}: {exc}); rows after this point are missing")[:500]
        cols.add(Record(raw="", session=session or path.name, source=path.name,
                        kind="invalid", reason=why), None, 0)
        notes.append(why)


def _formats(paths: list[Path], format: str) -> dict[Path, str]:
    """The format of each file that has one (the loop reports the others)."""
    out: dict[Path, str] = {}
    for path in paths:
        try:
            with bounded_recursion():
                out[path] = readers.sniff(path) if format == "auto" else format
        except (CaptureError, *_UNREADABLE):
            continue
    return out


def _deduplicated(formats: dict[Path, str], session: str | None, direction: str | None,
                  options: dict[str, Any]) -> dict[Path, list[Record]]:
    """Records of files whose format writes the same entries to several files.

    A reader module may define ``dedupe(records_by_file)``: Claude Desktop copies each
    per-server entry into its combined ``mcp.log``, so loading both would double them.
    """
    by_format: dict[str, list[Path]] = {}
    for path, name in formats.items():
        by_format.setdefault(name, []).append(path)
    out: dict[Path, list[Record]] = {}
    for name, paths in by_format.items():
        hook = getattr(readers.REGISTRY.get(name), "dedupe", None)
        if hook is None or len(paths) < 2:
            continue
        try:
            with bounded_recursion():
                lists = {p: list(readers.read(p, format=name, session=session,
                                              direction=direction, **options)) for p in paths}
                out.update(hook(lists))
        except (CaptureError, OSError, EOFError):
            continue  # the loop reads them one by one and reports what fails
    return out
