"""The boundary view in files (``.parquet``, ``.jsonl``), and a payload-free Trace from one."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..readers.boundary_table import BOUNDARY_COLUMNS, _need_pyarrow, read_boundary
from .view import CHUNK, iter_boundary

__all__ = ["trace_from_boundary", "write_boundary", "stream_boundary"]


# -- a payload-free Trace ------------------------------------------------------------------------
def trace_from_boundary(source: pd.DataFrame | str | Path) -> Any:
    """A payload-free :class:`~mcp_notebook.trace.Trace` from a boundary frame or file.

    Each operation becomes envelope-only frames (the id, method and target name; an empty
    result, ``isError``, or the error code) in the capture order of the original, with its
    sizes, so ``pairs``, ``latency_by_method``, ``summary`` and the widgets work on it.
    Times are kept to the microsecond (the loader holds seconds as floats). Its
    ``payload_free`` is True; ``message(seq)`` gives the envelope only, and its
    ``violations`` are empty: the rules read payloads this file does not have.
    ``mn.load`` of a boundary file gives the same trace (the ``boundary`` format).
    """
    from ..fast.records import part_of
    from ..fast.store import Store
    from ..readers.boundary import PAYLOAD_FREE_NOTE, records_of
    from ..trace import Trace

    b = source if isinstance(source, pd.DataFrame) else read_boundary(source)
    store = Store.from_parts([part_of(records_of(b, "boundary"))])
    trace = Trace(store, notes=[PAYLOAD_FREE_NOTE.format(what="a boundary view")])
    trace.payload_free = True
    return trace


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
    operations at a time; default :data:`mcp_notebook.boundary.view.CHUNK`)."""
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
