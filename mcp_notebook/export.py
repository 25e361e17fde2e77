"""Write a trace out: frames as tap JSONL (loads back to the same frames); any of the three
tables as parquet, csv or Arrow.

In the files, an id is two columns: ``id_key``, its exact JSON text (``1``, ``"1"``,
``18446744073709551617``: types kept apart, big integers exact), and ``id_type``
(``integer``, ``string``, ``number``, ``null``, or empty when the frame has no id).
``json.loads(id_key)`` gives the id back exactly. Text is valid UTF-8 (bytes that were
not are written as ``\\xNN``).
"""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd

__all__ = ["TABLES", "id_type", "table", "to_arrow", "to_parquet", "to_tap_records", "write"]

#: the tables a trace writes out, in the order of :func:`to_parquet`'s files
TABLES = ("frames", "pairs", "violations")
PARQUET_HINT = "pip install 'mcp_notebook[parquet]'"

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


def write(trace: Any, path: Path, fmt: str, table_name: str = "frames") -> None:
    """Write one table of ``trace`` to ``path`` as ``fmt`` (parquet, csv or jsonl).

    ``jsonl`` is tap JSONL and holds frames only: it loads back to the same trace.
    """
    path = Path(path)
    if table_name not in TABLES:
        raise ValueError(f"unknown table {table_name!r}: {', '.join(TABLES)}")
    if fmt == "jsonl" and table_name != "frames":
        raise ValueError("jsonl writes the frames (tap records, which load back); write "
                         f"{table_name} as parquet or csv")
    if fmt == "jsonl":
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
        return
    if fmt == "parquet":
        _pq().write_table(to_arrow(trace, table_name), path)
    elif fmt == "csv":
        table(trace, table_name).to_csv(path, index=False)
    else:
        raise ValueError(f"unknown output format {fmt!r}: parquet, csv or jsonl")


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
        pq.write_table(tab, out[name])
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
    out = _utf8(frames.drop(columns=["id"]),
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
