"""Write a trace out: frames as tap JSONL (loads back to the same frames); any of the three
tables as parquet, csv or Arrow.

In the files, an id is two columns: ``id_key``, its exact JSON text (``1``, ``"1"``,
``18446744073709551617``: types kept apart, big integers exact), and ``id_type``
(``integer``, ``string``, ``number``, ``null``, or empty when the frame has no id).
``json.loads(id_key)`` gives the id back exactly. Text is valid UTF-8 (bytes that were
not are written as ``\\xNN``).

A file is written whole or not at all: into a temporary file beside the destination,
moved into place once complete (a failure leaves the destination as it was and no partial
file); a destination that is a stream (``/dev/stdout``, a named pipe) is written as one.
A destination that is one of the trace's own input files -- by name, symlink or hard
link -- is refused: the text of a loaded trace may still be read from its files.
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
from types import SimpleNamespace
from typing import Any

import msgspec
import pandas as pd

__all__ = ["FORMATS", "TABLES", "OutputError", "id_type", "is_stream", "refuse_inputs", "table",
           "to_arrow", "to_parquet", "to_tap_records", "write"]

FORMATS = ("parquet", "csv", "jsonl")
#: the tables a trace writes out, in the order of :func:`to_parquet`'s files
TABLES = ("frames", "pairs", "violations")
PARQUET_HINT = "pip install 'mcp_notebook[parquet]'"


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
    c = SimpleNamespace(**{name: trace.column(name) for name in (
        "batch", "kind", "ts", "direction", "raw", "session", "flags", "reason", "stream",
        "local_time", "source")}, extra=trace.contexts())
    out: list[dict[str, Any]] = []
    for i in range(len(trace)):
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


def write(trace: Any, path: str | os.PathLike[str], fmt: str, table_name: str = "frames") -> None:
    """Write one table of ``trace`` to ``path`` as ``fmt`` (``"jsonl"``, ``"parquet"``, ``"csv"``).

    ``jsonl`` is tap JSONL and holds frames only: it loads back to the same trace.

    Raises
    ------
    OutputError
        ``path`` is one of the files the trace was loaded from, or a folder.
    ValueError
        ``fmt`` is not one of :data:`FORMATS`, or ``table_name`` not one of :data:`TABLES`.
    ImportError
        parquet without pyarrow (the message says what to install).
    OSError
        The file cannot be written (the destination is then left as it was).
    """
    path = Path(path)
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}: parquet, csv or jsonl")
    if table_name not in TABLES:
        raise ValueError(f"unknown table {table_name!r}: {', '.join(TABLES)}")
    if fmt == "jsonl" and table_name != "frames":
        raise ValueError("jsonl writes the frames (tap records, which load back); write "
                         f"{table_name} as parquet or csv")
    refuse_inputs(path, trace.paths)
    pq = _pq() if fmt == "parquet" else None  # before any file is made
    with _replacing(path) as tmp:
        if fmt == "jsonl":
            _write_jsonl(trace, tmp)
        elif pq is not None:
            pq.write_table(to_arrow(trace, table_name), tmp)
        else:
            table(trace, table_name).to_csv(tmp, index=False)


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


def _pa() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError(f"Arrow and parquet output need pyarrow: {PARQUET_HINT}") from None
    return pyarrow


def _pq() -> Any:
    _pa()
    import pyarrow.parquet as pq

    return pq


def id_type(key: Any) -> str | None:
    """The JSON type of an id from its JSON text (``id_key``); None when there is no id."""
    if not isinstance(key, str) or not key:
        return None
    head = key[:1]
    if head == '"':
        return "string"
    if head == "n":
        return "null"
    if head in "tf":
        return "boolean"
    if head in "{[":
        return "object" if head == "{" else "array"
    return "number" if any(c in key for c in ".eE") else "integer"


def table(trace: Any, name: str) -> pd.DataFrame:
    """One of :data:`TABLES` of ``trace`` as columns a file can hold.

    The ``id`` column (Python objects of any type) becomes ``id_type`` beside ``id_key``;
    text is made valid UTF-8; everything else is as in the DataFrame.
    """
    if name == "frames":
        return _flat(trace.frames)
    if name == "pairs":
        return _with_id_type(_utf8(trace.pairs.drop(columns=["id"]), ("id_key",)))
    if name == "violations":
        return trace.violations.copy()
    raise ValueError(f"unknown table {name!r}: {', '.join(TABLES)}")


def to_arrow(trace: Any, name: str | None = None) -> Any:
    """``{table name: pyarrow.Table}`` of :data:`TABLES`, or the one table ``name``."""
    pa = _pa()
    if name is None:
        return {n: to_arrow(trace, n) for n in TABLES}
    df = table(trace, name)
    text = [c for c in df.columns if df[c].dtype == object or pd.api.types.is_string_dtype(
        df[c].dtype) and not isinstance(df[c].dtype, pd.CategoricalDtype)]
    schema = pa.Schema.from_pandas(df, preserve_index=False)
    for c in text:  # text columns are strings even when every value is missing
        schema = schema.set(schema.get_field_index(c), pa.field(c, pa.string()))
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False)


def to_parquet(trace: Any, folder: str | Path) -> dict[str, Path]:
    """Write ``frames.parquet``, ``pairs.parquet`` and ``violations.parquet`` into ``folder``.

    Returns ``{table name: path}``. Polars (``pl.read_parquet``), DuckDB
    (``FROM 'folder/pairs.parquet'``) and pandas read them; join frames and pairs on
    ``seq = request_seq`` (or ``response_seq``). ``latency`` is an Arrow duration in
    nanoseconds (pandas and polars read a duration, DuckDB a BIGINT of nanoseconds).
    """
    pq = _pq()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, tab in to_arrow(trace).items():
        out[name] = folder / f"{name}.parquet"
        refuse_inputs(out[name], trace.paths)
        with _replacing(out[name]) as tmp:
            pq.write_table(tab, tmp)
    return out


def _with_id_type(df: pd.DataFrame) -> pd.DataFrame:
    at = df.columns.get_loc("id_key") + 1
    keys = df["id_key"]
    types = {k: id_type(k) for k in keys.dropna().unique()}
    df.insert(at, "id_type", pd.Series([types.get(k) for k in keys.to_numpy(dtype=object)],
                                       index=df.index, dtype=object))
    return df


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _flat(frames: pd.DataFrame) -> pd.DataFrame:
    """Columns a file format can hold: the id as its exact JSON text and its type, text made
    valid UTF-8."""
    # info is made from raw when read (mcp_notebook.info): not written, so an export of a
    # big capture does not decode every frame a second time
    out = _utf8(frames.drop(columns=["id", "info"], errors="ignore"),
                ("raw", "error_message", "reason", "source", "id_key"))
    return _with_id_type(out)


def _utf8(df: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Text columns as plain objects (lazy text read once), with the strings that hold
    undecodable bytes (surrogate escapes) written as ``\\xNN``. The trace's own
    DataFrames are never changed."""
    for col in columns:
        values = df[col].to_numpy(dtype=object, na_value=None)
        copied = False
        for i, v in enumerate(values):
            if isinstance(v, str) and not v.isascii() and _has_surrogates(v):
                if not copied:  # may be a view of the trace's own frames
                    values, copied = values.copy(), True
                values[i] = v.encode("utf-8", "surrogateescape").decode("utf-8",
                                                                         "backslashreplace")
        df[col] = pd.Series(values, index=df.index, dtype=object)  # no str inference
    return df
