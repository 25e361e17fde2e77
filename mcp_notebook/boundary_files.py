"""Boundary files: the boundary view written as ``.parquet`` or ``.jsonl`` (one event a
line), as it goes, and read back to the same frame. (:mod:`mcp_notebook.boundary` makes the
view; its names are imported here when used: that module imports this one.)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .table import empty

__all__ = ["write_boundary", "stream_boundary", "read_boundary", "normalise"]


# -- files --------------------------------------------------------------------------------------
def write_boundary(trace_or_frame: Any, path: str | Path) -> Path:
    """Write the boundary view to ``path``: ``.parquet`` or ``.jsonl`` (one event a line).

    In JSONL, ``start`` is ISO 8601 UTC with nanoseconds and ``duration`` becomes
    ``duration_ms`` (a float that gives the nanoseconds back exactly); empty cells are
    left out of their line. :func:`read_boundary` reads either back to the same frame.
    A trace is written as it goes, a chunk of operations at a time
    (:func:`iter_boundary`); :func:`stream_boundary` also says how many it wrote.
    """
    stream_boundary(trace_or_frame, path)
    return Path(path)


def stream_boundary(trace_or_frame: Any, path: str | Path, chunk: int | None = None) -> int:
    """:func:`write_boundary`, returning the number of operations written (``chunk``
    operations at a time; default :data:`mcp_notebook.boundary.CHUNK`)."""
    from .boundary import CHUNK, iter_boundary

    chunk = chunk or CHUNK
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".jsonl", ".ndjson"):
        raise ValueError(f"boundary output {path.name!r}: give a .parquet or .jsonl name")
    if isinstance(trace_or_frame, pd.DataFrame):
        frame = trace_or_frame
        chunks: Any = (frame.iloc[lo:lo + chunk] for lo in range(0, max(len(frame), 1), chunk))
    else:
        chunks = iter_boundary(trace_or_frame, chunk)
    n = 0
    if suffix == ".parquet":
        _need_pyarrow()
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = _arrow_schema()
        with pq.ParquetWriter(path, schema) as writer:
            for b in chunks:
                out = b.copy()
                for col in ("session", "requester", "kind", "method", "outcome"):
                    out[col] = out[col].astype(object).where(out[col].notna(), None)
                writer.write_table(pa.Table.from_pandas(out, schema=schema,
                                                        preserve_index=False))
                n += len(b)
            if n == 0:
                writer.write_table(schema.empty_table())
        return n
    with open(path, "wb") as fh:
        for b in chunks:
            _write_jsonl(b, fh)
            n += len(b)
    return n


def _arrow_schema() -> Any:
    import pyarrow as pa

    from .boundary import BOUNDARY_COLUMNS

    kinds = {"category": pa.string(), "object": pa.string(), "Int64": pa.int64(),
             "float64": pa.float64(), "bool": pa.bool_(),
             "datetime64[ns, UTC]": pa.timestamp("ns", tz="UTC"),
             "timedelta64[ns]": pa.duration("ns")}
    return pa.schema([(c, kinds[d]) for c, (d, _) in BOUNDARY_COLUMNS.items()])


def _write_jsonl(b: pd.DataFrame, fh: Any) -> None:
    enc = msgspec.json.Encoder()
    starts = b["start"].to_numpy(dtype="datetime64[ns]")
    start_text: np.ndarray = np.char.add(np.datetime_as_string(starts, unit="ns"),
                                         "+00:00").astype(object)
    start_text[np.isnat(starts)] = None
    ns = b["duration"].to_numpy(dtype="timedelta64[ns]").astype(np.int64)
    duration_ms = np.where(b["duration"].notna().to_numpy(), ns / 1e6, np.nan).tolist()
    columns: dict[str, list[Any]] = {}
    for col in b.columns:
        if col in ("start", "duration"):
            continue
        values = b[col]
        columns[col] = values.astype(object).where(values.notna(), None).tolist()
    columns["start"] = start_text.tolist()
    columns["duration_ms"] = [None if math.isnan(v) else v for v in duration_ms]
    names = list(columns)
    lines = []
    for row in zip(*columns.values(), strict=True):
        line = {k: v for k, v in zip(names, row, strict=True) if v is not None}
        lines.append(enc.encode(line))
    if lines:
        fh.write(b"\n".join(lines) + b"\n")


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError("a .parquet boundary file needs pyarrow: "
                          "pip install 'mcp_notebook[parquet]', or write .jsonl") from None


def read_boundary(path: str | Path) -> pd.DataFrame:
    """A boundary file written by :func:`write_boundary`, back as the boundary frame."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        _need_pyarrow()
        b = pd.read_parquet(path)
    else:
        rows = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()
                if line.strip()]
        b = pd.DataFrame(rows)
        if "duration_ms" in b:
            ms = pd.to_numeric(b.pop("duration_ms"))
            b["duration"] = pd.to_timedelta(np.round(ms * 1e6), unit="ns")
        if "start" in b:
            b["start"] = pd.to_datetime(b["start"], utc=True, format="ISO8601")
    return normalise(b)


def normalise(b: pd.DataFrame) -> pd.DataFrame:
    """A frame with (some of) the boundary columns as the boundary frame: every column of
    ``BOUNDARY_COLUMNS`` in order and dtype, what is missing empty."""
    from .boundary import BOUNDARY_COLUMNS
    out = empty(BOUNDARY_COLUMNS)
    n = len(b)
    cols = {}
    for col, (dtype, _) in BOUNDARY_COLUMNS.items():
        values = b[col] if col in b else pd.Series([None] * n)
        if dtype == "category":
            cols[col] = values.astype(object).where(values.notna(), None).astype("category")
        elif dtype == "object":
            cols[col] = values.astype(object).where(values.notna(), None)
        elif dtype == "bool":
            cols[col] = values.fillna(False).astype(bool)
        elif dtype.startswith("datetime"):
            cols[col] = pd.to_datetime(values, utc=True)
        elif dtype.startswith("timedelta"):
            cols[col] = pd.to_timedelta(values)
        else:
            cols[col] = pd.array(values, dtype=dtype)
    return pd.DataFrame(cols, columns=list(out.columns)).reset_index(drop=True)


