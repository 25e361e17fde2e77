"""The boundary frame: one row per operation of a trace, built a chunk at a time.

:func:`iter_boundary` yields the rows in capture order, :data:`CHUNK` operations at a
time, for the exporters to write as they go; :func:`boundary_frame` is the whole frame;
:func:`latency_table` answers the latency questions from the frame alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ..engine.gcpause import frozen_heap
from ..readers.boundary_table import BOUNDARY_COLUMNS, error_type
from ..readers.boundary_table import TARGET as _TARGET
from ..table import empty

__all__ = ["CHUNK", "boundary_of", "boundary_frame", "iter_boundary", "operation_order",
           "frozen_heap", "messages_of", "each_message", "latency_table"]


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
