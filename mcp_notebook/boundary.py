"""The boundary view: one row per operation, what crossed the server boundary, no payload.

A row is a request with its response (or an orphan or duplicate response, as the pairs
have them), or a notification. It keeps what a dashboard of tool usage, durations, errors
and sessions needs — the method, the tool, prompt or resource it names, timing, outcome,
error code and type, sizes, and the versions and peers agreed at ``initialize`` — and none
of the payload text: no arguments, no results, no error messages.

>>> import mcp_notebook as mn
>>> b = mn.load(mn.sample_path("everything-stdio-basics")).boundary()
>>> b.loc[b["method"] == "tools/call", "name"].iloc[0]
'echo'
"""

from __future__ import annotations

import bisect
import gc
import math
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .readers.boundary_table import (
    BOUNDARY_COLUMNS,
    ERROR_TYPES,
    _need_pyarrow,
    error_type,
    normalise,
    read_boundary,
)
from .readers.boundary_table import TARGET as _TARGET
from .table import empty

__all__ = ["BOUNDARY_COLUMNS", "ERROR_TYPES", "boundary_frame", "iter_boundary",
           "write_boundary", "stream_boundary",
           "read_boundary", "normalise", "latency_table", "trace_from_boundary"]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_PEER_COLUMNS = ("protocol_version", "client_name", "client_version", "server_name",
                 "server_version")
_META = "io.modelcontextprotocol/"


def _meta_peers(msg: Any, member: str, info: str) -> dict[str, str | None]:
    """Peer facts a 2026-07-28 message carries in its own ``_meta``."""
    body = msg.get(member) if isinstance(msg, dict) else None
    meta = body.get("_meta") if isinstance(body, dict) else None
    if not isinstance(meta, dict):
        return {}
    out: dict[str, str | None] = {}
    who = meta.get(_META + info + "Info")
    if isinstance(who, dict):
        out[info + "_name"] = _str(who.get("name"))
        out[info + "_version"] = _str(who.get("version"))
    if isinstance(meta.get(_META + "protocolVersion"), str):
        out["protocol_version"] = meta[_META + "protocolVersion"]
    return out


def _per_message_peers(trace: Any, ops: pd.DataFrame) -> None:
    """Fill the peer columns of operations in sessions without an ``initialize`` (the
    2026-07-28 stateless protocol sends them with every request and result)."""
    rows = np.flatnonzero((ops["client_name"].isna() | ops["server_name"].isna()).to_numpy())
    if not len(rows):
        return
    req = ops["request_seq"].to_numpy(dtype="float64", na_value=np.nan)[rows]
    resp = ops["response_seq"].to_numpy(dtype="float64", na_value=np.nan)[rows]
    req_ok, resp_ok = ~np.isnan(req), ~np.isnan(resp)
    asked = each_message(trace, req[req_ok].astype(np.int64))
    answered = each_message(trace, resp[resp_ok].astype(np.int64))
    for k, i in enumerate(rows.tolist()):
        found: dict[str, str | None] = {}
        if req_ok[k]:
            found.update(_meta_peers(next(asked), "params", "client"))
        if resp_ok[k]:
            found.update(_meta_peers(next(answered), "result", "server"))
        for col, value in found.items():
            if value is not None:
                ops.iloc[i, ops.columns.get_loc(col)] = value


def messages_of(trace: Any, seqs: Iterable[int]) -> list[Any]:
    """``trace.message(seq)`` for many frames, their text read in one pass."""
    return list(trace.messages(np.asarray(list(seqs), dtype=np.int64)))


def each_message(trace: Any, seqs: Any, batch: int = 2048) -> Iterator[Any]:
    """``trace.message(seq)`` of each frame of ``seqs``, decoded ``batch`` at a time: only
    a batch of decoded messages (payloads and all) is held at once."""
    rows = np.asarray(seqs, dtype=np.int64)
    for lo in range(0, len(rows), batch):
        yield from trace.messages(rows[lo:lo + batch])


def _targets(trace: Any, seqs: Iterable[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    seqs = list(seqs)
    for seq, msg in zip(seqs, each_message(trace, seqs), strict=True):
        params = msg.get("params") if isinstance(msg, dict) else None
        if isinstance(params, dict):
            value = params.get(_TARGET.get(msg.get("method"), ""))
            if isinstance(value, str):
                out[seq] = value
    return out


_MADE: weakref.WeakKeyDictionary[Any, pd.DataFrame] = weakref.WeakKeyDictionary()
#: operations per chunk of :func:`iter_boundary`
CHUNK = 10_000


def boundary_of(trace: Any) -> pd.DataFrame:
    """The boundary frame of ``trace``, made once per trace (not to be changed in place:
    :meth:`Trace.boundary` hands out copies). The exporters read :func:`iter_boundary`."""
    made = _MADE.get(trace)
    if made is None:
        made = _MADE[trace] = boundary_frame(trace)
    return made


def boundary_frame(trace: Any) -> pd.DataFrame:
    """One row per operation of ``trace`` (columns: ``BOUNDARY_COLUMNS``), in capture order."""
    chunks = list(iter_boundary(trace))
    if len(chunks) == 1:
        return chunks[0]
    if not chunks:
        return empty(BOUNDARY_COLUMNS)
    ops = pd.concat(chunks, ignore_index=True)
    for col in ("session", "requester", "kind", "method", "outcome"):
        ops[col] = ops[col].astype(object).astype("category")
    return ops


def operation_order(trace: Any) -> tuple[np.ndarray, int]:
    """The operations of ``trace`` in capture order: positions into ``t.pairs`` (those
    below the number of pairs, also returned) and, past it, into the notification frames
    (``n_pairs + i`` is the i-th notification). One int64 per operation."""
    p, f = trace.pairs, trace.frames
    first = p["request_seq"].fillna(p["response_seq"]).to_numpy(dtype=np.int64)
    notes = np.flatnonzero((f["kind"] == "notification").to_numpy())
    order = np.argsort(np.concatenate([first, notes]), kind="stable")
    return order, len(p)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Run with what is allocated so far left out of the cyclic garbage collector's scans
    (``gc.freeze``): an export makes many small objects a chunk at a time, and each
    collection would otherwise walk the whole loaded trace again."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def iter_boundary(trace: Any, chunk: int = CHUNK) -> Any:
    """The boundary frame of ``trace`` in chunks of ``chunk`` operations, in capture order:
    what the exporters write as they go (memory: the chunk, and one int64 per operation)."""
    with frozen_heap():
        yield from _chunks(trace, chunk)


def _chunks(trace: Any, chunk: int) -> Any:
    order, n_pairs = operation_order(trace)
    if not len(order):
        return
    f = trace.frames
    notes = np.flatnonzero((f["kind"] == "notification").to_numpy())
    peers = trace.peers()
    for lo in range(0, len(order), chunk):
        part = order[lo:lo + chunk]
        is_pair = part < n_pairs
        yield _operations(trace, part[is_pair], notes[part[~is_pair] - n_pairs], peers)


def notification_targets(trace: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``notifications/progress`` and ``notifications/cancelled`` that name a request of
    the pairs: their seqs, the request's seq, and whether each is a progress, in capture
    order.

    A progress names the last request before it, from the other side of its session,
    whose ``_meta.progressToken`` is its token; a cancel the last request before it, from
    its own side, whose id is its ``requestId``. Memory: the requests that carry a token
    or that a cancel names, and the notifications.
    """
    p, f = trace.pairs, trace.frames
    reqs = np.unique(p["request_seq"].dropna().to_numpy(dtype=np.int64))
    is_note = (f["kind"] == "notification").to_numpy()
    # session and direction as category codes: no object per frame
    session = f["session"].cat.codes.to_numpy()
    side = f["direction"].cat.codes.to_numpy()
    flip = {int(c): int(k) for c, k in _opposite_codes(f["direction"]).items()}
    out_notes: list[np.ndarray] = []
    out_reqs: list[np.ndarray] = []
    out_progress: list[np.ndarray] = []
    for name, progress in (("notifications/progress", True), ("notifications/cancelled", False)):
        notes = np.flatnonzero(is_note & (f["method"] == name).to_numpy())
        if not len(notes) or not len(reqs):
            continue
        refs, _ = trace.references(notes)
        if progress:
            keys, _ = trace.references(reqs)
        else:  # only the ids some cancel names
            wanted = {r for r in refs if r is not None}
            ids = f["id_key"].iloc[reqs].tolist()
            keys = np.array([k if k in wanted else None for k in ids], dtype=object)
        by: dict[tuple[int, int, Any], list[int]] = {}
        for seq, key in zip(reqs.tolist(), keys, strict=True):
            if key is not None:
                by.setdefault((int(session[seq]), int(side[seq]), key), []).append(seq)
        target = np.full(len(notes), -1, dtype=np.int64)
        for i, (seq, ref) in enumerate(zip(notes.tolist(), refs, strict=True)):
            if ref is None:
                continue
            asker = int(side[seq]) if not progress else flip.get(int(side[seq]), -2)
            mine = by.get((int(session[seq]), asker, ref))
            k = bisect.bisect_left(mine, seq) if mine else 0
            if mine and k:
                target[i] = mine[k - 1]
        hit = target >= 0
        out_notes.append(notes[hit])
        out_reqs.append(target[hit])
        out_progress.append(np.full(int(hit.sum()), progress, dtype=bool))
    if not out_notes:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros(0, dtype=bool))
    all_notes = np.concatenate(out_notes)
    order = np.argsort(all_notes, kind="stable")
    return (all_notes[order], np.concatenate(out_reqs)[order],
            np.concatenate(out_progress)[order])


def _opposite_codes(direction: pd.Series) -> dict[int, int]:
    """Category code of c2s -> that of s2c and back (those present)."""
    cats = list(direction.cat.categories)
    codes = {name: cats.index(name) for name in ("c2s", "s2c") if name in cats}
    return {codes[a]: codes[b] for a, b in (("c2s", "s2c"), ("s2c", "c2s"))
            if a in codes and b in codes}


def _operations(trace: Any, pair_rows: np.ndarray, note_seqs: np.ndarray,
                peers: dict[Any, dict[str, str | None]]) -> pd.DataFrame:
    """The boundary rows of some pairs (positions in ``t.pairs``) and notifications
    (their seqs), in capture order."""
    f = trace.frames
    p = trace.pairs.iloc[pair_rows]
    notes = f.iloc[note_seqs]
    size = f["size"].to_numpy()
    n_notes = len(notes)
    ops = pd.DataFrame({
        "session": _objects(p["session"], notes["session"]),
        "requester": _objects(p["requester"], notes["direction"]),
        "kind": pd.Series(["request"] * len(p) + ["notification"] * n_notes, dtype=object),
        "method": _objects(p["method"], notes["method"]),
        "id_key": _objects(p["id_key"], pd.Series([None] * n_notes, dtype=object)),
        "request_seq": pd.array(np.concatenate([
            p["request_seq"].to_numpy(dtype="float64", na_value=np.nan),
            notes["seq"].to_numpy(dtype="float64")]), dtype="Int64"),
        "response_seq": pd.array(np.concatenate([
            p["response_seq"].to_numpy(dtype="float64", na_value=np.nan),
            np.full(n_notes, np.nan)]), dtype="Int64"),
        "start": pd.concat([p["t_request"], notes["ts"]], ignore_index=True),
        "duration": pd.concat([p["latency"], pd.Series(pd.NaT, index=notes.index,
                                                       dtype="timedelta64[ns]")],
                              ignore_index=True),
        "outcome": _objects(p["outcome"], pd.Series(["notification"] * n_notes,
                                                    dtype=object)),
        "error_code": pd.array(np.concatenate([
            p["error_code"].to_numpy(dtype="float64", na_value=np.nan),
            np.full(n_notes, np.nan)]), dtype="Int64"),
    })
    if ops.empty:
        return empty(BOUNDARY_COLUMNS)
    orphan = ops["request_seq"].isna()
    # an orphan response: the operation is known only by its response
    if orphan.any():
        ops.loc[orphan, "start"] = f["ts"].iloc[ops.loc[orphan, "response_seq"]
                                                .to_numpy(dtype=np.int64)].to_numpy()
    ops["kind"] = ops["kind"].where(~orphan, "response")
    wanted = ops["method"].isin(list(_TARGET)) & ~orphan
    names = _targets(trace, ops.loc[wanted, "request_seq"].astype(int).tolist())
    ops["name"] = pd.Series([names.get(int(s)) if pd.notna(s) else None
                             for s in ops["request_seq"]], dtype=object)
    tool = (ops["outcome"] == "tool_error").to_numpy()
    ops["error_type"] = pd.Series(
        [error_type(c, t) for c, t in zip(ops["error_code"], tool, strict=True)], dtype=object)
    ops["is_error"] = ops["error_type"].notna()
    known = ops["request_seq"].notna().to_numpy()
    refs, progress = trace.references(ops["request_seq"].to_numpy(dtype="float64",
                                                                   na_value=-1).astype(np.int64)
                                      .clip(0))
    refs[~known] = None
    progress[~known] = np.nan
    ops["ref"] = pd.Series(refs, dtype=object)
    ops["progress"] = pd.Series(progress, dtype="float64")
    ops["bytes_in"] = _sizes(ops["request_seq"], size)
    ops["bytes_out"] = _sizes(ops["response_seq"], size)
    sessions = ops["session"].tolist()
    for col in _PEER_COLUMNS:
        ops[col] = pd.Series([peers.get(s if isinstance(s, str) else None, {}).get(col)
                              for s in sessions], dtype=object)
    _per_message_peers(trace, ops)
    first = ops["request_seq"].fillna(ops["response_seq"]).astype("int64")
    ops = ops.iloc[np.argsort(first.to_numpy(), kind="stable")].reset_index(drop=True)
    for col in ("session", "requester", "kind", "method", "outcome"):
        ops[col] = ops[col].astype("category")
    return ops[list(BOUNDARY_COLUMNS)]


def _objects(a: pd.Series, b: pd.Series) -> pd.Series:
    """Two columns end to end, as Python objects (None where empty)."""
    values = np.concatenate([a.astype(object).to_numpy(), b.astype(object).to_numpy()])
    out = pd.Series(values, dtype=object)
    return out.where(out.notna(), None)


def _sizes(seqs: pd.Series, size: np.ndarray) -> pd.arrays.IntegerArray:
    known = seqs.notna().to_numpy()
    out = np.zeros(len(seqs), dtype=np.int64)
    out[known] = size[seqs[known].to_numpy(dtype=np.int64)]
    return pd.arrays.IntegerArray(out, ~known)


# -- questions answered from the boundary alone --------------------------------------------------
def latency_table(ops: pd.DataFrame) -> pd.DataFrame:
    """Per method: count, p50, p90, p99 and max latency (ms), errors and error rate.

    ``ops`` is a boundary frame (or pairs: ``latency`` and ``t_request`` stand in for
    ``duration`` and ``start``); the numbers are those of ``Trace.latency_by_method``.
    """
    duration = ops["duration"] if "duration" in ops else ops["latency"]
    keep = ops["request_seq"].notna() & ~ops["outcome"].isin(
        ["duplicate", "orphan", "notification"])
    if "kind" in ops:
        keep &= ops["kind"] == "request"
    p = ops[keep]
    cols = ["count", "answered", "p50_ms", "p90_ms", "p99_ms", "max_ms", "errors",
            "tool_errors", "error_rate"]
    if p.empty:
        return pd.DataFrame(columns=cols).rename_axis("method")
    ms = duration[keep].dt.total_seconds() * 1000.0
    g = pd.DataFrame({"method": p["method"].astype(object).fillna("?"), "ms": ms,
                      "error": p["outcome"] == "error",
                      "tool_error": p["outcome"] == "tool_error",
                      "answered": p["response_seq"].notna()})
    grouped = g.groupby("method", sort=True)
    out = pd.DataFrame({
        "count": grouped.size(),
        "answered": grouped["answered"].sum(),
        "p50_ms": grouped["ms"].quantile(0.5),
        "p90_ms": grouped["ms"].quantile(0.9),
        "p99_ms": grouped["ms"].quantile(0.99),
        "max_ms": grouped["ms"].max(),
        "errors": grouped["error"].sum(),
        "tool_errors": grouped["tool_error"].sum(),
    })
    out["error_rate"] = out["errors"] / out["answered"].where(out["answered"] > 0)
    return out.sort_values("count", ascending=False)[cols]


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
    from .fast.records import part_of
    from .fast.store import Store
    from .readers.boundary import PAYLOAD_FREE_NOTE, records_of
    from .trace import Trace

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
    operations at a time; default :data:`mcp_notebook.boundary.CHUNK`)."""
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
