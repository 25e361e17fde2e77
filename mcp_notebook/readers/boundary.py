"""Boundary files (``mcp-notebook export --boundary``): one operation a row, no payload.

Each operation becomes envelope-only frames: the request or notification (its id, method,
the tool, prompt or resource it names, the id or progress token it refers to) and its
response (an empty result, ``{"isError": true}``, or the error code with an empty
message), at the original times, in the original capture order, with the original sizes.
The trace is payload-free (``trace.payload_free``): its pairs, latencies, sessions and
widgets are those of the capture; its rules cannot run.

A line of a ``.jsonl`` boundary file that is not an operation (not JSON, not an object, a
member of the wrong type) becomes an ``invalid`` row holding the line and saying why.
A ``.parquet`` one is read whole (pyarrow); one whose columns are not a boundary view's is
refused, saying which.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .base import BLANK, CaptureError, Record, iter_lines

name = "boundary"
description = "a boundary view (export --boundary, .jsonl or .parquet): payload-free events"
#: the loader marks a trace read from this format payload-free
payload_free = True
#: the note of a payload-free trace
PAYLOAD_FREE_NOTE = ("payload-free: made from {what} (envelopes only, no payload text); "
                     "the rules read message text it does not hold and were not run")

_KINDS = ("request", "notification", "response")
_META = "io.modelcontextprotocol/"


@cache
def _types() -> dict[str, tuple[type, ...]]:
    """JSONL members and the JSON types each may hold (besides null)."""
    from .boundary_table import BOUNDARY_COLUMNS  # imported late: the table imports readers

    out: dict[str, tuple[type, ...]] = {col: ((int,) if dtype == "Int64" else (int, float) if dtype == "float64"
                 else (bool,) if dtype == "bool" else (str,))
           for col, (dtype, _) in BOUNDARY_COLUMNS.items()}
    out.pop("duration")
    out["duration_ms"] = (int, float)
    return out


def normalise(b: pd.DataFrame) -> pd.DataFrame:
    from .boundary_table import normalise

    return normalise(b)


def sniff(head: str, filename: str) -> int:
    if head.startswith("PAR1"):
        return 60  # a parquet file: the only parquet format read (read checks its columns)
    for line in head.split("\n")[:5]:
        line = line.strip()
        if not line:
            continue
        if '"outcome"' not in line:
            return 0  # not an operation: no need to decode it
        try:
            obj = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return 0
        ok = isinstance(obj, dict) and "outcome" in obj and obj.get("kind") in _KINDS and (
            "request_seq" in obj or "response_seq" in obj) and "jsonrpc" not in obj
        return 95 if ok else 0
    return 0


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the envelope-only frames of a boundary file, in the original capture order."""
    if _is_parquet(path):
        yield from records_of(_parquet(path), path.name, session or path.name)
        return
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    bad: list[Record] = []
    for n, line in iter_lines(path):
        if not line.strip():
            yield BLANK
            continue
        row, why = _row(line)
        if row is None:
            bad.append(Record(raw=line, session=session or path.name, kind="invalid",
                              source=f"{path.name}:{n}", reason=f"not a boundary event: {why}"))
            continue
        rows.append(row)
        lines.append(n)
    b, dropped = _frame(rows)
    for i, why in dropped:
        bad.append(Record(raw=msgspec.json.encode(rows[i]).decode("utf-8", "replace"),
                          session=session or path.name, kind="invalid",
                          source=f"{path.name}:{lines[i]}",
                          reason=f"not a boundary event: {why}"))
    keep = sorted(set(range(len(rows))) - {i for i, _ in dropped})
    yield from records_of(b, path.name, session or path.name, [f"{path.name}:{lines[i]}" for i in keep])
    yield from sorted(bad, key=lambda r: int(r.source.rsplit(":", 1)[1]))


def _is_parquet(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


def _parquet(path: Path) -> pd.DataFrame:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CaptureError(f"{path}: a .parquet boundary file needs pyarrow: pip install "
                           "'mcp_notebook[parquet]'") from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError) on a bad file
        raise CaptureError(f"{path}: a parquet file that cannot be read ({exc})") from None
    missing = [c for c in ("kind", "outcome", "request_seq", "response_seq")
               if c not in table.column_names]
    if missing:
        raise CaptureError(
            f"{path}: a parquet file, but not a boundary view (no {', '.join(missing)} "
            f"column; it has {', '.join(table.column_names[:12])}). mn.load reads the "
            "parquet files that `mcp-notebook export --boundary` writes.")
    try:
        b = normalise(table.to_pandas())
    except (TypeError, ValueError) as exc:
        raise CaptureError(f"{path}: a boundary view with a column of the wrong type "
                           f"({exc})") from None
    bad = ~b["kind"].isin(_KINDS) | (b["request_seq"].isna() & b["response_seq"].isna())
    if bad.any():
        raise CaptureError(f"{path}: row {int(np.flatnonzero(bad.to_numpy())[0])} is not an "
                           "operation (its kind is not request, notification or response, "
                           "or it has neither a request_seq nor a response_seq)")
    return b


def _row(line: str) -> tuple[dict[str, Any] | None, str]:
    """The operation of one JSONL line, or None and why it is not one."""
    try:
        obj = msgspec.json.decode(line.encode("utf-8", "surrogateescape"))
    except msgspec.DecodeError as exc:
        return None, f"not JSON ({exc})"
    except RecursionError:
        return None, "nested too deeply"
    if not isinstance(obj, dict):
        return None, f"a JSON {type(obj).__name__}, not an object"
    if obj.get("kind") not in _KINDS:
        return None, f"kind {obj.get('kind')!r} is not request, notification or response"
    for key, value in obj.items():
        want = _types().get(key)
        if want is None or value is None:
            continue  # a member this version does not know is left out
        if not isinstance(value, want) or (bool not in want and isinstance(value, bool)):
            return None, f"{key} is a {type(value).__name__}"
    seqs = [obj.get(k) for k in ("request_seq", "response_seq")]
    if all(s is None for s in seqs):
        return None, "neither request_seq nor response_seq"
    if any(s is not None and s < 0 for s in seqs):
        return None, "a negative seq"
    for key in ("id_key", "ref"):  # compact JSON texts, decoded to make the envelopes
        if isinstance(obj.get(key), str):
            try:
                msgspec.json.decode(obj[key])
            except (msgspec.DecodeError, RecursionError):
                return None, f"{key} is not JSON text"
    return obj, ""


def _frame(rows: list[dict[str, Any]]) -> tuple[pd.DataFrame, list[tuple[int, str]]]:
    """The boundary frame of the rows, and ``(row, why)`` of those whose start or
    duration cannot be read (left out of the frame)."""
    b = pd.DataFrame(rows) if rows else pd.DataFrame(columns=["kind"])
    dropped: list[tuple[int, str]] = []
    if "start" in b:
        given = b["start"].notna().to_numpy()
        start = pd.to_datetime(b["start"], utc=True, format="ISO8601", errors="coerce")
        dropped += [(int(i), f"start {rows[int(i)]['start']!r} is not an ISO 8601 time")
                    for i in np.flatnonzero(given & start.isna().to_numpy())]
        b["start"] = start
    if "duration_ms" in b:
        ms = pd.to_numeric(b.pop("duration_ms")).astype("float64")
        far = (ms.abs() > 9e15).to_numpy()  # beyond timedelta64[ns]
        dropped += [(int(i), "duration_ms is out of range") for i in np.flatnonzero(far)]
        b["duration"] = pd.to_timedelta(np.round(ms.where(~far) * 1e6), unit="ns")
    if dropped:
        b = b.drop(index=[i for i, _ in dropped])
    return normalise(b.reset_index(drop=True)), dropped


# -- operations to envelope-only frames ---------------------------------------------------------
def _envelope_text(message: dict[str, Any]) -> str:
    return msgspec.json.encode(message).decode("utf-8")
def records_of(b: pd.DataFrame, name: str, session: str | None = None,
               sources: list[str] | None = None) -> Iterator[Record]:
    """The envelope-only frames of the operations of a boundary frame, in the original
    capture order (by their seqs), with their original sizes. ``sources`` names where
    each row came from (default ``NAME#row<i>``); a row with no session takes
    ``session`` (default ``name``)."""
    out: dict[int, Record] = {}
    start_s = b["start"].astype("int64").to_numpy() / 1e9
    end = b["start"] + b["duration"]
    end_s = end.astype("int64").to_numpy() / 1e9
    other = {"c2s": "s2c", "s2c": "c2s"}
    inits = b[b["method"] == "initialize"]
    negotiated = dict(zip(inits["session"].astype(object), inits["protocol_version"],
                          strict=True))
    server = dict(zip(inits["session"].astype(object), inits["server_name"], strict=True))
    for i, row in enumerate(b.itertuples(index=False)):
        sess = row.session if isinstance(row.session, str) else session
        source = sources[i] if sources is not None else f"{name}#row{i}"
        # a version not agreed by an initialize came in the message's own _meta (2026-07-28)
        own = (row.protocol_version if row.method != "initialize"
               and negotiated.get(row.session) != row.protocol_version else None)
        requester = str(row.requester) if isinstance(row.requester, str) else "c2s"
        ts = None if pd.isna(row.start) else float(start_s[i])
        ident = _decoded(row.id_key)
        seq = row.request_seq
        if row.kind in ("request", "notification") and pd.notna(seq) and int(seq) not in out:
            msg: dict[str, Any] = {"jsonrpc": "2.0"}
            if row.kind == "request":
                msg["id"] = ident
            msg["method"] = row.method
            params = _params(row)
            if own and row.kind == "request":
                params.setdefault("_meta", {}).update(_known({
                    _META + "protocolVersion": own, _META + "clientInfo": _known(
                        {"name": row.client_name, "version": row.client_version})}))
            if params:
                msg["params"] = params
            out[int(seq)] = Record(raw=_envelope_text(msg), ts=ts, direction=requester,
                                   session=sess, source=source, size=_int(row.bytes_in))
        if pd.notna(row.response_seq):
            reply: dict[str, Any] = {"jsonrpc": "2.0"}
            if isinstance(row.id_key, str):  # an error may come with no id at all
                reply["id"] = ident
            if pd.notna(row.error_code):
                reply["error"] = {"code": int(row.error_code), "message": ""}
            elif row.method == "initialize":
                reply["result"] = _known({"protocolVersion": row.protocol_version,
                                          "serverInfo": _known({"name": row.server_name,
                                                                "version": row.server_version})})
            else:
                reply["result"] = {"isError": True} if row.outcome == "tool_error" else {}
                if (row.method != "initialize" and isinstance(row.server_name, str)
                        and server.get(row.session) != row.server_name):
                    reply["result"]["_meta"] = {_META + "serverInfo": _known(
                        {"name": row.server_name, "version": row.server_version})}
            when = (ts if row.kind == "response" else
                    None if pd.isna(end.iat[i]) else float(end_s[i]))
            out[int(row.response_seq)] = Record(
                raw=_envelope_text(reply), ts=when, direction=other.get(requester, "s2c"),
                session=sess, source=source, size=_int(row.bytes_out))
    for k in sorted(out):
        yield out[k]


def _decoded(text: Any) -> Any:
    """The value of a compact JSON text (an id, a token); None if there is none."""
    if not isinstance(text, str):
        return None
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return text  # not JSON text (a hand-made file): the text itself


def _int(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


def _known(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, (str, dict)) and v != {}}


def _params(row: Any) -> dict[str, Any]:
    """The params an operation's identifiers need: its target, and the id or token it names."""
    params: dict[str, Any] = {}
    if row.method == "initialize" and row.kind == "request":
        params = _known({"protocolVersion": row.protocol_version, "clientInfo": _known(
            {"name": row.client_name, "version": row.client_version})})
    from .boundary_table import TARGET as _TARGET

    member = _TARGET.get(row.method)
    if member and isinstance(row.name, str):
        params[member] = row.name
    ref = _decoded(row.ref)
    if ref is None:
        return params
    if row.method == "notifications/cancelled":
        params["requestId"] = ref
    elif row.method == "notifications/progress":
        params["progressToken"] = ref
        if pd.notna(row.progress):
            params["progress"] = float(row.progress)
    elif row.kind == "request":
        params["_meta"] = {"progressToken": ref}
    return params
