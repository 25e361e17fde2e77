"""``mn.load``: capture files in, a :class:`~mcp_notebook.trace.Trace` out."""

from __future__ import annotations

import glob
import os
import re
import shutil
import stat
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import fast, readers
from .engine import fallback
from .engine.native import missing as scanner_missing
from .fast import progress as bars
from .fast.records import part_of
from .fast.store import Store
from .protocol.envelope import bounded_recursion
from .readers import CaptureError, Record
from .table import settled
from .trace import Trace

__all__ = ["load", "expand"]

PathLike = str | os.PathLike[str]
#: what a file that cannot be read raises (zlib.error: a corrupt .gz)
_UNREADABLE = (OSError, EOFError, zlib.error)
_SKIP_IN_FOLDERS = (".source.txt", ".md", ".py", ".ipynb")


def expand(paths: PathLike | Iterable[PathLike]
           ) -> tuple[list[Path], list[Path], list[tuple[str, str]]]:
    """``(files named, files found, [(name skipped, why)])``.

    Folders are walked and glob patterns (``"logs/*.jsonl"``, ``"**"`` included) matched,
    each sorted by name; what they hold that is not a capture file (hidden files, notes
    and code by their suffix, pipes, sockets and devices) is skipped, and said why
    (:func:`skipped_note` is the line a trace's notes hold for it).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    named: list[Path] = []
    found: list[Path] = []
    skipped: list[tuple[str, str]] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            _refuse_pseudo(path)
            candidates = _walk(path, skipped)
        elif isinstance(p, str) and glob.has_magic(p) and not path.exists():
            candidates = sorted(Path(q) for q in glob.glob(p, recursive=True)
                                if not os.path.isdir(q))
            if not candidates:
                raise CaptureError(f"{p}: no file matches this pattern")
        else:
            named.append(path)
            continue
        for q in candidates:
            why = ("a hidden file" if q.name.startswith(".") else
                   f"not a capture by its name ({q.name.rsplit('.', 1)[-1]})"
                   if q.name.endswith(_SKIP_IN_FOLDERS) else special_kind(q))
            if why is None:
                found.append(q)
            else:
                skipped.append((q.name, why))
    return named, found, skipped


def skipped_note(name: str, why: str) -> str:
    """The note of a trace for a file or folder skipped: ``skipped NAME: why``."""
    return f"skipped {name}: {why}"


def _walk(folder: Path, skipped: list[tuple[str, str]]) -> list[Path]:
    """The files under ``folder``, sorted by path; hidden folders (``.git``, ...) and links
    to folders are not entered, and said so."""
    out: list[Path] = []
    for root, dirs, files in os.walk(folder):
        keep = []
        for d in sorted(dirs):
            if d.startswith("."):
                skipped.append((f"{d}/", "a hidden folder"))
            elif os.path.islink(os.path.join(root, d)):
                skipped.append((f"{d}/", "a link to a folder (not followed)"))
            else:
                keep.append(d)
        dirs[:] = keep
        out.extend(Path(root) / f for f in files)
    return sorted(out)


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it is neither a regular file nor a folder (a named pipe, a
    socket, a device); None otherwise, or when it does not exist."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # missing or unreadable: said where it is opened
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"{name}, not a regular file"
    return "not a regular file"


def _refuse_special(path: Path) -> None:
    """A named pipe, socket or device is refused before anything opens it (opening a pipe
    waits for a writer; a device may never end); so is a file of /proc or /sys."""
    why = special_kind(path)
    if why is not None:
        raise CaptureError(
            f"{path}: is {why}; mn.load reads capture files, and reading this could wait "
            "forever or never end. To read it as a stream, pass it open: "
            "mn.load(open(path, 'rb')); or save it to a file first (for example "
            "`cat PIPE > capture.jsonl`) and load that.")
    _refuse_pseudo(path)


#: kernel pseudo-filesystems: their files say size 0 and may block on reading or never end
_PSEUDO_FS = frozenset({"proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs",
                        "securityfs", "cgroup", "cgroup2", "pstore", "bpf", "configfs",
                        "fusectl", "mqueue", "efivarfs", "binfmt_misc", "nsfs", "rpc_pipefs"})
_OCTAL = re.compile(r"\\([0-7]{3})")


def pseudo_fs(path: Path) -> str | None:
    """The kernel pseudo-filesystem ``path`` is on (``"proc"``, ``"sysfs"``, ...), from
    ``/proc/self/mountinfo``; None for any other, or where that cannot be told."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            table = f.read()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for line in table.splitlines():
        fields = line.split()
        try:
            point, fs = fields[4], fields[fields.index("-", 6) + 1]
        except (ValueError, IndexError):
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), point)
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fs
    return kind if kind in _PSEUDO_FS else None


def _refuse_pseudo(path: Path) -> None:
    fs = pseudo_fs(path)
    if fs is not None:
        raise CaptureError(
            f"{path}: is on a {fs} filesystem (kernel pseudo-files, which may wait forever "
            "or never end); mn.load reads capture files: copy what you need to a regular "
            "file first and load that.")


def load(
    paths: PathLike | Iterable[PathLike],
    format: str = "auto",
    *,
    session: str | None = None,
    direction: str | None = None,
    version: str | None = None,
    max_line_bytes: int = fast.MAX_LINE_BYTES,
    progress: bool | None = None,
    **options: Any,
) -> Trace:
    """Load one or more captures into a :class:`Trace`.

    Parameters
    ----------
    paths
        A file, a list of files, a folder (its capture files, sorted by name; what it
        skips is in ``trace.notes``), or a glob pattern (``"logs/**/*.jsonl"``). Plain or
        ``.gz``. Or the capture itself: ``bytes``, or a file object open in binary mode
        (``sys.stdin.buffer``, ``open(fifo, "rb")``), read to its end.
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
    max_line_bytes
        A line of an NDJSON or tap capture longer than this (default 64 MiB) becomes an
        invalid row holding only its first 4 KiB, its reason giving its length; memory
        stays bounded whatever a file holds (blank lines are counted, not stored). Raise
        it to read frames larger than that.
    progress
        A progress bar while files of 50 MB or more (together) are read: tqdm's
        notebook bar in Jupyter, a bar on stderr when stderr is a terminal, nothing when
        it is piped. ``False`` turns it off, ``True`` shows it on stderr even when piped.

    Named pipes, sockets and devices named as paths, and files and folders of kernel
    pseudo-filesystems (``/proc``, ``/sys``, ``/dev``), are refused at once (reading one
    could wait forever or never end): pass a stream open instead (``open(path, "rb")``)
    or save it to a file. In folders they are skipped, like every file that is not a capture, and
    ``trace.notes`` says so; a folder in which nothing loads is an error.

    Raises
    ------
    CaptureError
        A named file is missing, unreadable or of no known format (folders skip
        such files and say so in ``trace.notes``).

    Warns
    -----
    FallbackWarning
        Once per load when the loader took a slower way round (a fast path failed, the C
        scanner is not built, a reader stopped on input it could not handle); the notes
        say which. With ``MCP_NOTEBOOK_STRICT=1`` these raise ``FastPathError`` instead.
    """
    if isinstance(paths, (bytes, bytearray, memoryview)) or hasattr(paths, "read"):
        return _load_stream(paths, format, session=session, direction=direction,
                            version=version, max_line_bytes=max_line_bytes,
                            progress=progress, **options)
    if direction not in (None, "c2s", "s2c"):
        raise ValueError(f"direction must be 'c2s', 's2c' or None, not {direction!r}")
    if max_line_bytes < 1:
        raise ValueError(f"max_line_bytes must be at least 1, not {max_line_bytes!r}")
    with fallback.collecting() as fell:
        trace = _load(paths, format, session, direction, version, max_line_bytes, progress,
                      options)
    trace.notes.extend(n for n in fell if n not in trace.notes)
    fallback.warn(fell)
    return trace


def _load_stream(data: Any, format: str, **kw: Any) -> Trace:
    """``mn.load`` of bytes or of a binary file object (``sys.stdin.buffer``, a pipe, a
    socket file, an HTTP body): copied to a temporary file, which is loaded (the frame
    text kept in memory) and removed."""
    name = getattr(data, "name", None)
    name = "bytes" if not hasattr(data, "read") else (
        Path(name).name if isinstance(name, str) and not name.startswith("<") else
        (name.strip("<>") if isinstance(name, str) else "stream"))
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-") as folder:
        path = Path(folder) / (name or "stream")
        with open(path, "wb") as out:
            if hasattr(data, "read"):
                first = data.read(0)
                if not isinstance(first, bytes):
                    raise TypeError("mn.load reads a file object in binary mode: open it "
                                    "with open(path, 'rb'), or pass sys.stdin.buffer")
                shutil.copyfileobj(data, out, 1 << 20)
            else:
                out.write(data)
        fast.KEEP_TEXT.add(path)
        try:
            trace = load(path, format, **kw)
        except CaptureError as exc:  # named as the caller knows it, not by the copy
            raise CaptureError(str(exc).replace(str(path), f"<{name}>")) from None
        finally:
            fast.KEEP_TEXT.discard(path)
    trace.paths = [f"<{name}>"]
    return trace


def _load(paths: PathLike | Iterable[PathLike], format: str, session: str | None,
          direction: str | None, version: str | None, max_line: int,
          show_progress: bool | None, options: dict[str, Any]) -> Trace:
    named, found, skipped = expand(paths)
    if not named and not found:
        why = f" ({'; '.join(skipped_note(*s) for s in skipped)})" if skipped else ""
        raise CaptureError(f"{paths}: no capture files found{why}")
    for path in named:
        _refuse_special(path)
    bar = bars.start(named + found, show_progress)
    try:
        return _read(paths, named, found, skipped, format, session, direction, version,
                     max_line, options)
    finally:
        bars.stop(bar)


def _cut_read(path: Path, got: list[Store], merged: dict[Path, Any], fmt: str,
              session: str | None, direction: str | None, options: dict[str, Any]) -> bool:
    """Read a ``.gz`` capture whose compressed stream is cut short up to where it ends
    (into ``got``); False where that fails too, or leaves nothing to read."""
    if path in merged:
        return False
    try:
        with bounded_recursion(), readers.base.reading_cut_gzip():
            _collect(readers.read(path, format=fmt, session=session, direction=direction,
                                  **options), got, path, session, scanner=True)
    except (CaptureError, *_UNREADABLE):
        got.clear()
        return False
    if not any(len(store) or store.blank_lines for store in got):  # the cut left nothing
        got.clear()
        return False
    return True


def _read(paths: Any, named: list[Path], found: list[Path], skipped: list[tuple[str, str]],
          format: str, session: str | None, direction: str | None, version: str | None,
          max_line: int, options: dict[str, Any]) -> Trace:
    notes: list[str] = [skipped_note(*s) for s in skipped]
    used: list[str] = []
    formats = _formats(named + found, format)
    for net, said in _inspector_twins(formats).items():  # two exports of one session
        notes.append(skipped_note(net.name, said))
        del formats[net]
        named, found = [p for p in named if p != net], [p for p in found if p != net]
    merged = _deduplicated(formats, session, direction, options)
    wrapped = {p: w for p, fmt in formats.items() if fmt in readers.LINE_FORMATS
               and (w := readers.wrapping(p))}  # pasted into Markdown: the readers unwrap
    notes.extend(f"{p.name}: {w.describe()}" for p, w in wrapped.items())
    pieces: list[Store] = []  # one store per file, whichever path read it
    fast_jobs = [(path, formats[path], session, direction, max_line) for path in named + found
                 if path in formats and path not in merged and path not in wrapped
                 and fast.supports(formats[path], options)]
    if fast_jobs and (why := scanner_missing()) is not None:
        fallback.fell_back(why)
    with bounded_recursion():  # several files: shared between two processes when it pays
        prefetched = fast.load_many(fast_jobs)
    last: Path | None = None
    for path in named + found:
        if last is not None:
            bars.file_done(last)
        last = path
        fmt = formats.get(path, format)
        tried = path not in merged and path not in wrapped and fast.supports(fmt, options)
        if tried:
            if path in prefetched:
                store = prefetched[path]
            else:
                with bounded_recursion():
                    store = fast.try_load(path, fmt, session, direction, max_line)
            if store is not None:
                pieces.append(store)
                used.append(str(path))
                continue
        got: list[Store] = []
        try:
            with bounded_recursion():  # sniffing and decoding recurse in C
                records = merged[path] if path in merged else readers.read(
                    path, format=formats.get(path, format), session=session,
                    direction=direction, **options)
                _collect(records, got, path, session, scanner=not tried)
        except CaptureError as exc:
            if path in named:
                raise
            notes.append(skipped_note(path.name, str(exc)))
            continue
        except _UNREADABLE as exc:  # unreadable, or a gzip stream cut short or corrupt
            if isinstance(exc, EOFError) and not got and _cut_read(
                    path, got, merged, formats.get(path, format), session, direction,
                    options):
                notes.append(f"{path.name}: the compressed file is cut short (it ends "
                             "before the end of its gzip stream); read up to where it ends")
            elif path in named and not got:
                raise CaptureError(f"{path}: cannot be read ({exc})") from exc
            else:
                notes.append(f"{path.name}: reading stopped early ({exc})")
        pieces.extend(got)
        used.append(str(path))
    if last is not None:
        bars.file_done(last)
    if not used:  # only files found in folders, and none of them loads
        raise CaptureError(f"{paths}: nothing in it loads ({'; '.join(notes)})"[:2000])
    store = fast.combine(pieces)
    notes.extend(readers.capture_notes(store.extra, store.kind))
    if fast.infer_directions(store):  # as engine.walks.infer, on columns
        notes.append("directions inferred from the message flow (the capture does not say)")
    trace = Trace(store, version=version, notes=notes, paths=used)
    free = [p for p in used if getattr(readers.REGISTRY.get(formats.get(Path(p), format)),
                                       "payload_free", False)]
    if free:  # envelopes only: the rules would read payloads it does not hold
        trace.payload_free = True
        trace.notes.insert(0, readers.payload_free_note(free, len(used)))
    return trace


def _collect(records: Iterable[Record], got: list[Store], path: Path,
             session: str | None, scanner: bool = True) -> None:
    """The store of a reader's records (``fast.records``), with a reader's bug on hostile
    input kept as an invalid row, not raised. A file that stops being readable (a gzip
    stream cut short) keeps the rows read before (``got``) and raises. ``scanner=False``
    after the fast path did not read the file: the Python path only."""
    state: dict[str, Any] = {}

    def failed(exc: Exception) -> Record | None:
        if isinstance(exc, (CaptureError, *_UNREADABLE)):
            state["exc"] = exc
            return None
        why = (f"the {path.name} reader stopped here on input it could not handle "
               f"({type(exc).__name__}: {exc}); rows after this point are missing")[:500]
        fallback.fell_back(why)  # a reader bug: raised under MCP_NOTEBOOK_STRICT=1
        return Record(raw="", session=session or path.name, source=path.name,
                      kind="invalid", reason=why)

    part = part_of(records, on_error=failed, scanner=scanner)
    if part.n or "exc" not in state:
        got.append(Store.from_parts([part]))
    if "exc" in state:
        raise state["exc"]


def _inspector_twins(formats: dict[Path, str]) -> dict[Path, str]:
    """The Inspector network exports loaded with the protocol export of the same session
    (``inspector_network.same_session``): each left out, and why."""
    nets = [p for p, f in formats.items() if f == "inspector-network"]
    protos = [p for p, f in formats.items() if f == "inspector"]
    out: dict[Path, str] = {}
    if not nets or not protos:
        return out
    from .readers.inspector_network import same_session

    read_before: dict[Path, Any] = {}  # each protocol export read once
    for net in nets:
        try:
            with bounded_recursion():
                twin = same_session(net, protos, read_before)
        except (CaptureError, *_UNREADABLE):
            continue  # the loop reads it and reports what fails
        if twin is not None:
            out[net] = (f"its messages are all in {twin.name}, the Protocol tab's export of "
                        "the same session (each with its own time): not read twice")
    return out


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
                lists = {p: list(settled(readers.read(p, format=name, session=session,
                                                      direction=direction, **options)))
                         for p in paths}  # settled: the sessions depend on the frames
                out.update(hook(lists))
        except (CaptureError, OSError, EOFError):
            continue  # the loop reads them one by one and reports what fails
    return out
