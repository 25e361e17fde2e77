"""Read a line-format file in one process, or split in two byte ranges over two processes
(or two threads).

A file of at least :data:`MIN_PARALLEL_BYTES` (plain, not gzip) on a machine with two
usable cores or more is cut at the line boundary nearest its middle (several smaller
files, together at least :data:`MIN_MANY_BYTES`, are shared out instead: :func:`load_many`).
A forked child decodes the second half while this process decodes the first; the child
sends its rows back pickled (numpy arrays and the id objects): on Linux into an anonymous
shared memory file whose pages this process maps (the arrays out of band, not copied),
elsewhere through its pipe. Anything
that goes wrong on the child's side (a failed ``fork``, a crash, a short message) falls back
to reading the second half here, so the result never depends on it; the load says so
(:func:`.fallback.fell_back`, which raises under ``MCP_NOTEBOOK_STRICT=1``).

``fork`` is used only while this process runs one thread (:func:`can_fork`): a fork of a
threaded process (a Jupyter kernel has its IOPub and heartbeat threads) copies locks other
threads may hold, and the child can hang on them. There a bare NDJSON file is read by two
threads, one per half (:func:`split_by`): the C scanner reads each batch of lines with the
GIL released, so one thread's line reading overlaps the other's Python work (the rows are
still built under the GIL).
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..engine import fallback
from ..readers.base import open_bytes
from . import cores, progress
from .lines import MAX_LINE_BYTES, join_spans
from .rows import Rows

__all__ = ["read_file", "load_many", "MIN_PARALLEL_BYTES", "MIN_MANY_BYTES",
           "can_fork", "split_by"]

#: files at least this large are split over two processes (when two cores are usable)
MIN_PARALLEL_BYTES = 64 << 20


def _reader(fmt: str) -> Any:
    if fmt == "ndjson":
        from .ndjson import read_part
    else:
        from .tap import read_part
    return read_part


def can_fork() -> bool:
    """Whether a worker may be forked: the platform has ``fork`` and this process runs
    no other Python thread (a forked child of a threaded process can deadlock), but the
    monitor of our own progress bar (tqdm's ``TMonitor``: it sleeps, and the child draws
    nothing)."""
    if not hasattr(os, "fork"):
        return False
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    return all(type(t).__name__ == "TMonitor" for t in others)


def _cut(path: Path, size: int) -> int:
    """The start of the first line at or after the middle of the file (``size`` if none)."""
    with open(path, "rb") as f:
        pos = size // 2
        f.seek(pos)
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                return size
            i = chunk.find(b"\n")
            if i >= 0:
                return pos + i + 1
            pos += len(chunk)


def read_file(path: Path, fmt: str, session: str, direction: str | None, *, gz: bool,
              keep_text: bool, finish: Callable[[Rows, np.ndarray, int], Any] | None = None,
              max_line: int = MAX_LINE_BYTES) -> list[Any]:
    """``finish(rows, line spans, first line)`` for consecutive parts of the file (without
    ``finish``: those tuples). The first part is finished while a child reads the next."""
    done = finish or (lambda rows, spans, line0: (rows, spans, line0))
    read_part = _reader(fmt)
    size = path.stat().st_size
    if gz or size < MIN_PARALLEL_BYTES or cores.workers() < 2 or split_by(fmt) is None:
        with open_bytes(path) as f:
            rows, spans = read_part(f, path.name, session, direction, keep_text=keep_text,
                                    max_line=max_line)
        return [done(rows, join_spans(spans), 0)]
    with cores.split():  # each half has a core: the scanners start no worker thread
        return _split_read(path, fmt, session, direction, size, keep_text, max_line, done)


def _split_read(path: Path, fmt: str, session: str, direction: str | None, size: int,
                keep_text: bool, max_line: int,
                done: Callable[[Rows, np.ndarray, int], Any]) -> list[Any]:
    """:func:`read_file` of a file split in two at the line nearest its middle."""
    read_part = _reader(fmt)
    cut = _cut(path, size)
    if split_by(fmt) == "threads":
        return _two_threads(path, fmt, session, direction, cut, size, keep_text, max_line,
                            done)
    child = _start(path, fmt, session, direction, cut, keep_text, max_line) if cut < size \
        else None
    try:
        with open(path, "rb") as f:
            first, spans0 = read_part(f, path.name, session, direction, 0, cut, keep_text,
                                      max_line)
        first_lines = first.lines
        parts = [done(first, join_spans(spans0), 0)]
    except BaseException:
        if child is not None:  # not left blocked on a full pipe, nor as a zombie
            _abandon(child)
        raise
    del first, spans0
    if cut >= size:
        return parts
    got, why = _finish(child) if child is not None else (None, "the fork failed")
    if got is not None:
        got[0].unpack()  # the child sent its id columns as codes (Rows.pack)
    if got is None:  # no child, or it failed: read the second half here
        fallback.fell_back(f"{path.name}: the worker process for the second half of the "
                           f"file failed ({why}); this process read it instead")
        with open(path, "rb") as f:
            f.seek(cut)
            got = read_part(f, path.name, session, direction, cut, None, keep_text, max_line)
    second, spans1 = got
    parts.append(done(second, join_spans(spans1), first_lines))
    return parts




def split_by(fmt: str) -> str | None:
    """How a large file of ``fmt`` is read on two cores here; None: on one."""
    from ..engine import native as _native

    if cores.SPLIT == "threads":
        return "threads"
    if cores.SPLIT in ("fork", "auto") and can_fork():
        return "fork"
    if cores.SPLIT == "auto" and fmt == "ndjson" and _native.native is not None:
        return "threads"
    return None


def _two_threads(path: Path, fmt: str, session: str, direction: str | None, cut: int,
                 size: int, keep_text: bool, max_line: int,
                 done: Callable[[Rows, np.ndarray, int], Any]) -> list[Any]:
    """The two halves of the file read by this thread and a worker thread at once: the C
    scan of each block runs without the GIL (``_native.scan``), so the two overlap, and
    no process is forked (safe in a threaded process such as a Jupyter kernel)."""
    read_part = _reader(fmt)
    if cut >= size:  # no line starts after the middle: one part
        with open(path, "rb") as f:
            rows, spans = read_part(f, path.name, session, direction, keep_text=keep_text,
                                    max_line=max_line)
        return [done(rows, join_spans(spans), 0)]
    box: dict[str, Any] = {}

    def second() -> None:
        progress.quiet()
        try:
            with open(path, "rb") as f:
                f.seek(cut)
                box["got"] = read_part(f, path.name, session, direction, cut, None,
                                       keep_text, max_line)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            box["exc"] = exc

    worker = threading.Thread(target=second, name="mcp-notebook-scan", daemon=True)
    worker.start()
    try:
        with open(path, "rb") as f:
            first, spans0 = read_part(f, path.name, session, direction, 0, cut, keep_text,
                                      max_line)
        first_lines = first.lines
        parts = [done(first, join_spans(spans0), 0)]
        del first, spans0
    finally:
        worker.join()
    if "exc" in box:
        exc = box["exc"]
        if not isinstance(exc, Exception):
            raise exc
        fallback.fell_back(f"{path.name}: the worker thread for the second half of the file "
                           "failed; this thread read it instead", exc)
        with open(path, "rb") as f:
            f.seek(cut)
            box["got"] = read_part(f, path.name, session, direction, cut, None, keep_text,
                                   max_line)
    second_rows, spans1 = box.pop("got")
    parts.append(done(second_rows, join_spans(spans1), first_lines))
    return parts


class _Child(NamedTuple):
    """A forked child: its pid, the read end of its pipe, and the shared memory file it
    writes its result into (None: the result comes through the pipe)."""

    pid: int
    pipe: int
    shared: int | None


def _shared_file() -> int | None:
    """An anonymous shared memory file (Linux' ``memfd_create``) the child writes its
    result into, or None where there is none (the result then comes through the pipe)."""
    make = getattr(os, "memfd_create", None)
    if make is None:
        return None
    try:
        return int(make("mcp-notebook-part"))
    except OSError:
        return None


#: where each out-of-band buffer starts in the shared file (a multiple of this)
_ALIGN = 64


def _write_shared(fd: int, result: Any) -> list[tuple[int, int]]:
    """Write ``result`` into the shared file: its pickle (protocol 5), then each large
    buffer (numpy arrays, bytearrays) whole and aligned, out of band. Returns where each
    piece is, ``(offset, length)``, the pickle first. The child writes at its own pace
    (through a pipe it waited for the parent to read, 64 KiB at a time), and the parent
    maps the buffers instead of copying them."""
    bufs: list[pickle.PickleBuffer] = []
    head = pickle.dumps(result, protocol=5, buffer_callback=bufs.append)
    where = [(0, len(head))]
    with os.fdopen(os.dup(fd), "wb") as f:
        f.write(head)
        pos = len(head)
        for buf in bufs:
            raw = buf.raw()
            pad = -pos % _ALIGN
            f.write(bytes(pad))
            pos += pad
            f.write(raw)
            where.append((pos, raw.nbytes))
            pos += raw.nbytes
    return where


def _read_shared(fd: int, where: list[tuple[int, int]]) -> Any:
    """The result :func:`_write_shared` wrote: its buffers are pages of the shared file,
    mapped copy-on-write (writable here, the file unchanged), not copied."""
    size = max(a + n for a, n in where)
    view = memoryview(mmap.mmap(fd, size, access=mmap.ACCESS_COPY))
    (a, n), rest = where[0], where[1:]
    return pickle.loads(view[a:a + n], buffers=[view[b:b + m] for b, m in rest])  # noqa: S301


def _fork(work: Callable[[], Any]) -> _Child | None:
    """Fork a child that sends ``work()`` back: pickled into a shared memory file where
    there is one (:func:`_write_shared`), else through its pipe. A child whose work raises
    sends the last lines of its traceback instead."""
    shared = _shared_file()
    try:
        r, w = os.pipe()
        pid = os.fork()
    except OSError:
        if shared is not None:
            os.close(shared)
        return None
    if pid == 0:  # the child
        code = 1
        try:
            progress.detach()  # the parent draws the bar
            os.close(r)
            with os.fdopen(w, "wb") as out:
                try:
                    result = work()
                except BaseException:
                    out.write(b"mcp-fail")
                    pickle.dump(traceback.format_exc(limit=-3), out)
                    raise
                where = None
                if shared is not None:
                    try:
                        where = _write_shared(shared, result)
                    except (OSError, pickle.PickleError):  # the pipe, then
                        where = None
                if where is not None:
                    out.write(b"mcp-shm ")
                    pickle.dump(where, out)
                else:
                    out.write(b"mcp-part")
                    pickle.dump(result, out, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return _Child(pid, r, shared)


def _start(path: Path, fmt: str, session: str, direction: str | None, start: int,
           keep_text: bool, max_line: int) -> _Child | None:
    """Fork a child that reads from ``start`` to the end."""
    def work() -> tuple[Rows, list[np.ndarray]]:
        with open(path, "rb") as f:
            f.seek(start)
            rows, spans = _reader(fmt)(f, path.name, session, direction, start, None,
                                       keep_text, max_line)
        rows.flush()
        rows.pack()
        return rows, spans

    return _fork(work)


def _abandon(child: _Child) -> None:
    """End a child whose work is no longer wanted."""
    os.close(child.pipe)
    if child.shared is not None:
        os.close(child.shared)
    try:
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _finish(child: _Child) -> tuple[Any, str]:
    """``(what the child sent, "")``, or ``(None, why)`` if it failed."""
    pid = child.pid
    got: Any = None
    why = ""
    try:
        with os.fdopen(child.pipe, "rb") as f:
            head = f.read(8)
            if head == b"mcp-part":
                got = pickle.load(f)  # noqa: S301 - our own child's output
            elif head == b"mcp-shm " and child.shared is not None:
                got = _read_shared(child.shared, pickle.load(f))  # noqa: S301 - the same
            elif head == b"mcp-fail":
                why = " / ".join(pickle.load(f).strip().splitlines()[-2:])  # noqa: S301
            else:
                why = "it sent nothing"
    except Exception as exc:  # a child that died half-way: read the half here
        got, why = None, f"its message was cut short: {type(exc).__name__}: {exc}"
    finally:
        if child.shared is not None:
            os.close(child.shared)  # what was mapped stays mapped
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        status = 1
    if status != 0:
        code = os.waitstatus_to_exitcode(status) if status > 0 else status
        end = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return None, f"{end}: {why}" if why and why != "it sent nothing" else end
    return got, why


#: several files of the fast formats are shared between two processes when together they
#: are at least this large (below it, a fork costs more than it saves)
MIN_MANY_BYTES = 24 << 20

Job = tuple[Path, str, "str | None", "str | None", int]  # path, format, session, direction,
# longest line


def load_many(jobs: list[Job], load: Any) -> dict[Path, Any]:
    """``{path: load(*job)}`` for several files, shared between this process and a forked
    child (about half the bytes each), when it pays; ``{}`` when it does not (the caller
    then loads them one by one). Files of :data:`MIN_PARALLEL_BYTES` or more are left
    out: each of those is split in two by :func:`read_file` already."""
    sizes = {}
    for job in jobs:
        try:
            size = job[0].stat().st_size
        except OSError:
            continue
        if size < MIN_PARALLEL_BYTES:
            sizes[job[0]] = size
    small = [j for j in jobs if j[0] in sizes]
    if (len(small) < 2 or sum(sizes.values()) < MIN_MANY_BYTES or cores.workers() < 2
            or not can_fork()):
        return {}
    with cores.split():  # each process has a core: the scanner starts no worker thread
        return _share(small, sizes, load)


def _share(small: list[Job], sizes: dict[Path, int], load: Any) -> dict[Path, Any]:
    """:func:`load_many` of the files it shares out."""
    # the largest first, each to the lighter side
    mine: list[Job] = []
    theirs: list[Job] = []
    load_a = load_b = 0
    for job in sorted(small, key=lambda j: -sizes[j[0]]):
        if load_a <= load_b:
            mine.append(job)
            load_a += sizes[job[0]]
        else:
            theirs.append(job)
            load_b += sizes[job[0]]
    def work() -> tuple[dict[Path, Any], list[str]]:
        with fallback.collecting() as notes:  # the child's notes go back with its stores
            before = len(notes)
            out = {job[0]: load(*job) for job in theirs}
            return out, notes[before:]

    child = _fork(work)
    out = {job[0]: load(*job) for job in mine}
    got, why = _finish(child) if child is not None else (None, "the fork failed")
    if got is None:  # no child, or it failed: load its files here
        fallback.fell_back(f"the worker process for {len(theirs)} of the files failed "
                           f"({why}); this process read them instead")
        got = {job[0]: load(*job) for job in theirs}, []
    for note in got[1]:
        fallback.fell_back(note)
    out.update(got[0])
    return out
