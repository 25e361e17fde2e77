"""Write a trace's frames out: tap JSONL (loads back to the same frames), parquet, csv.

A file is written whole or not at all: into a temporary file beside the destination,
moved into place once complete (a failure leaves the destination as it was and no partial
file); a destination that is a stream (``/dev/stdout``, a named pipe) is written as one. A destination that is one of the trace's own input files -- by name, symlink or
hard link -- is refused: the text of a loaded trace may still be read from its files.
"""

from __future__ import annotations

import base64
import math
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd

__all__ = ["write", "to_tap_records", "OutputError", "FORMATS", "is_stream", "refuse_inputs"]

FORMATS = ("parquet", "csv", "jsonl")


class OutputError(ValueError):
    """The output cannot go where it was asked to (an input of the trace, a folder)."""

_encode = msgspec.json.encode


_DEFAULT_STREAM = {"stderr": "stderr", "meta": "log"}  # any other dir: stdio


def to_tap_records(trace: Any) -> list[dict[str, Any]]:
    """One tap record per captured frame (a batch's members share one record).

    Besides ``ts, dir, raw, session`` a record keeps what the frame would otherwise lose
    on the way back: a reader's ``kind``/``reason`` for rows it marked invalid, the
    ``stream``, ``local_time``, the ``source`` and the reader's ``extra`` context.
    """
    c = trace._cols
    out: list[dict[str, Any]] = []
    for i in range(len(c)):
        if c.batch[i] not in (None, 0):
            continue  # the batch frame was written with its first member
        kind = c.kind[i]
        rec: dict[str, Any] = {"ts": c.ts[i], "dir": c.direction[i], "raw": c.raw[i],
                               "session": None if c.session[i] is None else str(c.session[i])}
        if kind == "stderr":
            rec["dir"] = "stderr"
        elif kind == "log":
            rec["dir"] = "meta"
        elif kind == "invalid" and c.flags[i] == ():
            rec["kind"] = "invalid"  # forced by the reader: keep its reason
            rec["reason"] = c.reason[i]
        if c.stream[i] != _DEFAULT_STREAM.get(rec["dir"], "stdio"):
            rec["stream"] = c.stream[i]
        if c.local_time[i]:
            rec["local_time"] = True
        rec["source"] = c.source[i]
        if c.extra.get(i):
            rec["extra"] = c.extra[i]
        out.append(rec)
    return out


def write(trace: Any, path: str | os.PathLike[str], fmt: str) -> None:
    """Write ``trace``'s frames to ``path`` as ``fmt`` (``"jsonl"``, ``"parquet"``, ``"csv"``).

    Raises
    ------
    OutputError
        ``path`` is one of the files the trace was loaded from, or a folder.
    ValueError
        ``fmt`` is not one of :data:`FORMATS`.
    OSError
        The file cannot be written (the destination is then left as it was).
    """
    path = Path(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}: parquet, csv or jsonl")
    refuse_inputs(path, trace.paths)
    with _replacing(path) as tmp:
        if fmt == "jsonl":
            _write_jsonl(trace, tmp)
        elif fmt == "parquet":
            _flat(trace.frames).to_parquet(tmp, index=False)
        else:
            _flat(trace.frames).to_csv(tmp, index=False)


def refuse_inputs(path: Path, inputs: Sequence[str | os.PathLike[str]]) -> None:
    """Raise :class:`OutputError` if writing ``path`` would write over one of ``inputs``."""
    if path.is_dir():
        raise OutputError(f"{path} is a folder: name the file to write")
    if not path.exists():
        return
    for src in inputs:
        try:
            same = os.path.samefile(path, src)  # follows symlinks; equal inodes: hard links
        except OSError:
            continue
        if same:
            raise OutputError(f"{path} is the input {src}: writing it would destroy the "
                              "capture being read; name another output file")


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, moved onto it when the block ends without error.

    Through a symlink the file it names is replaced (the link stays). A destination that
    is no regular file -- ``/dev/stdout``, a named pipe, a device -- is a stream: written
    as it is, never replaced by a file.
    """
    if is_stream(path):
        yield path
        return
    target = Path(os.path.realpath(path))
    # ends with the real name: pandas infers compression (``x.csv.gz``) from the suffix
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=".part-", suffix="." + target.name)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written as a stream, not replaced: a device, a pipe, a socket,
    or the file this process's stdout or stderr is (``/dev/stdout``, through its links)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False  # a new file (or a link to one not yet there)
    if not stat.S_ISREG(st.st_mode):
        return True
    for fd in (1, 2):
        try:
            std = os.fstat(fd)
        except OSError:
            continue
        if (std.st_dev, std.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def _mode_for(path: Path) -> int:
    """The permissions ``path`` has, or a new file would get (mkstemp's are 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0o22)
        os.umask(mask)
        return 0o666 & ~mask


def _write_jsonl(trace: Any, path: Path) -> None:
    with open(path, "wb") as f:
        for rec in to_tap_records(trace):
            if rec["ts"] is not None and math.isnan(rec["ts"]):
                rec["ts"] = None
            raw = rec["raw"]
            if isinstance(raw, str) and _has_surrogates(raw):
                # bytes that are not UTF-8: readable text, and the exact bytes beside it
                exact = raw.encode("utf-8", "surrogateescape")
                rec["raw"] = exact.decode("utf-8", "replace")
                rec["raw_b64"] = base64.b64encode(exact).decode("ascii")
            f.write(_encode(rec) + b"\n")


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _flat(frames: pd.DataFrame) -> pd.DataFrame:
    """Columns a file format can hold: the id as its exact JSON text, text made valid UTF-8."""
    out = frames.drop(columns=["id"])
    for col in ("raw", "error_message", "reason", "source", "id_key"):
        out[col] = out[col].map(
            lambda v: v.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            if isinstance(v, str) else v)
    return out
