"""The three DataFrames' declared columns, and the column lists built from reader records.

Column names, dtypes and one-line meanings are declared once here; empty results keep
their columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .protocol.envelope import Envelope, classify
from .readers.base import Record

__all__ = ["FRAME_COLUMNS", "PAIR_COLUMNS", "VIOLATION_COLUMNS", "Columns", "collect",
           "empty", "int64_or_na", "settled"]

#: name -> (dtype, meaning)
FRAME_COLUMNS: dict[str, tuple[str, str]] = {
    "seq": ("int64", "row number, in capture order"),
    "ts": ("datetime64[ns, UTC]", "capture time (UTC); NaT when the capture has none"),
    "session": ("category", "session: a file, a connection, an Mcp-Session-Id"),
    "stream": ("category", "where the row came from: stdio, stderr, log, http, sse"),
    "direction": ("category", "c2s (client to server) or s2c; empty for log lines"),
    "kind": ("category", "request, notification, result, error, invalid, stderr, log"),
    "id": ("object", "the id exactly as sent (int of any size, str, ...); None when absent"),
    "id_key": ("object", "the id's compact JSON text: 1 and \"1\" differ"),
    "method": ("category", "the method of a request or notification"),
    "error_code": ("Int64", "error.code of an error response"),
    "error_message": ("object", "error.message of an error response"),
    "is_tool_error": ("bool", "a result whose isError is true (a tool failure, not a protocol error)"),
    "size": ("int64", "bytes of the raw frame"),
    "raw": ("object", "the exact text of the frame or line"),
    "source": ("object", "where in the input: file:line, or HAR entry and SSE event"),
    "batch": ("Int64", "position inside a batch array, where there is one"),
    "reason": ("object", "why an invalid row is invalid"),
    "local_time": ("bool", "ts came from a local clock of unknown zone and was taken as UTC"),
    "info": ("lazytext", "one readable line: tool/prompt/resource and arguments, a result "
                         "summary, or code and message (mcp_notebook.info; made when read)"),
}

PAIR_COLUMNS: dict[str, tuple[str, str]] = {
    "request_seq": ("Int64", "seq of the request; empty for an orphan response"),
    "response_seq": ("Int64", "seq of the (first) response; empty when unanswered"),
    "session": ("category", "session of the exchange"),
    "requester": ("category", "the side that sent the request: c2s (client) or s2c (server)"),
    "id": ("object", "the request id exactly as sent"),
    "id_key": ("object", "the id's compact JSON text"),
    "method": ("category", "the request's method"),
    "outcome": ("category",
                "result, error, tool_error, unanswered, cancelled, orphan or duplicate"),
    "error_code": ("Int64", "error.code when the outcome is error"),
    "t_request": ("datetime64[ns, UTC]", "time of the request"),
    "t_response": ("datetime64[ns, UTC]", "time of the response"),
    "latency": ("timedelta64[ns]", "t_response - t_request"),
    "cancel_seq": ("Int64", "seq of the notifications/cancelled naming this request"),
    "progress_count": ("int64", "notifications/progress received for this request"),
}

VIOLATION_COLUMNS: dict[str, tuple[str, str]] = {
    "rule": ("object", "stable rule code (see docs/rules.md)"),
    "severity": ("category", "error (a MUST broken), warning (a SHOULD, or a likely bug), info"),
    "seq": ("Int64", "the frame the finding is on"),
    "related_seq": ("Int64", "another frame involved (the request, the first response, ...)"),
    "message": ("object", "what is wrong and what to do"),
    "spec": ("object", "the quoted spec sentence and its source"),
    "versions": ("object", "the protocol versions the rule applies to"),
}


def empty(columns: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """An empty DataFrame with the declared columns and dtypes."""
    return pd.DataFrame({name: pd.Series([], dtype=_dtype(d)) for name, (d, _) in columns.items()})


def _dtype(d: str) -> Any:
    if d == "category":
        return "category"
    if d == "object":
        return object
    if d == "lazytext":  # registered by its module, which a fresh worker may not have read
        from .lazytext import LazyTextDtype

        return LazyTextDtype()
    return d


@dataclass
class Columns:
    """Frame columns as plain lists, plus what the checker needs and the frames do not show."""

    ts: list[float | None] = field(default_factory=list)
    session: list[object] = field(default_factory=list)
    stream: list[str] = field(default_factory=list)
    direction: list[str | None] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    id: list[object] = field(default_factory=list)
    id_key: list[str | None] = field(default_factory=list)
    method: list[str | None] = field(default_factory=list)
    error_code: list[int | None] = field(default_factory=list)
    error_message: list[str | None] = field(default_factory=list)
    is_tool_error: list[bool] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    batch: list[int | None] = field(default_factory=list)
    reason: list[str | None] = field(default_factory=list)
    local_time: list[bool] = field(default_factory=list)
    # not shown in frames
    flags: list[tuple[str, ...]] = field(default_factory=list)
    ref: list[str | None] = field(default_factory=list)
    progress: list[float | None] = field(default_factory=list)
    version: list[str | None] = field(default_factory=list)
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    blank_lines: int = 0

    def __len__(self) -> int:
        return len(self.kind)

    def add(self, rec: Record, env: Envelope | None, raw_size: int) -> None:
        self.ts.append(rec.ts)
        self.session.append(rec.session)
        self.stream.append(rec.stream)
        self.raw.append(rec.raw)
        self.source.append(rec.source)
        self.size.append(raw_size)
        self.local_time.append(rec.local_time)
        if rec.extra:
            self.extra[len(self.kind)] = rec.extra
        if env is None:  # a forced row: stderr, log or invalid
            self.direction.append(rec.direction)
            self.kind.append(rec.kind or "log")
            self.id.append(None)
            self.id_key.append(None)
            self.method.append(None)
            self.error_code.append(None)
            self.error_message.append(None)
            self.is_tool_error.append(False)
            self.batch.append(None)
            self.reason.append(rec.reason)
            self.flags.append(())
            self.ref.append(None)
            self.progress.append(None)
            self.version.append(None)
            return
        self.direction.append(rec.direction)
        self.kind.append(env.kind)
        self.id.append(env.id)
        self.id_key.append(env.id_key)
        self.method.append(env.method)
        self.error_code.append(env.error_code)
        self.error_message.append(env.error_message)
        self.is_tool_error.append(env.is_tool_error)
        self.batch.append(env.batch)
        self.reason.append(env.reason)
        self.flags.append(env.flags)
        self.ref.append(env.ref)
        self.progress.append(env.progress)
        self.version.append(env.version)


def settle(rec: Record) -> Record:
    """Decide the meaning of one record (once: ``rec.frames``), then run the reader's step
    that depends on it (``rec.settle``)."""
    if rec.frames is None and rec.kind != "blank":
        rec.frames = () if rec.kind is not None else (
            (rec.envelope,) if rec.envelope is not None else tuple(classify(rec.raw)))
    step = rec.settle
    if step is not None:
        rec.settle = None
        step(rec)
    return rec


def settled(records: Iterable[Record]) -> Iterator[Record]:
    """The records, each with its envelopes decided (:func:`settle`), in the order the
    table keeps: consecutive records that carry an ``arrange`` step (one file's) are
    held and given back in the order that step says.

    The JSON-RPC meaning of a frame is decided here and nowhere else: readers find
    frames and their context; what they decide from a frame's meaning they decide in
    ``settle`` and ``arrange``, which run here, after it.
    """
    held: list[Record] = []
    arrange = None
    for rec in records:
        settle(rec)
        if rec.arrange is not None and (arrange is None or rec.arrange is arrange):
            arrange = rec.arrange
            held.append(rec)
            continue
        if held:
            assert arrange is not None
            yield from arrange(held, _meaning)
            held, arrange = [], None
            if rec.arrange is not None:
                arrange = rec.arrange
                held.append(rec)
                continue
        yield rec
    if held:
        assert arrange is not None
        yield from arrange(held, _meaning)


def _meaning(records: list[Record]) -> None:
    for rec in records:
        settle(rec)


def collect(records: Iterable[Record], cols: Columns | None = None) -> Columns:
    """Classify each record (:func:`settled`) and append its row(s) to ``cols``."""
    if cols is None:
        cols = Columns()
    for rec in settled(records):
        if rec.kind == "blank":
            cols.blank_lines += 1
            continue
        size = len(rec.raw.encode("utf-8", "surrogateescape")) if rec.size is None \
            else rec.size  # a payload-free format gives the original frame's size
        if rec.kind is not None:
            cols.add(rec, None, size)
        else:
            assert rec.frames is not None
            for env in rec.frames:
                cols.add(rec, env, size)
    return cols


_INT64 = 1 << 63


def int64_or_na(values: list[int | None]) -> Any:
    """An Int64 array; an integer outside int64 (a peer's error code can be any JSON integer)
    is missing there (the exact value stays in the frame's text)."""
    return pd.array([v if v is None or -_INT64 <= v < _INT64 else None for v in values],
                    dtype="Int64")
