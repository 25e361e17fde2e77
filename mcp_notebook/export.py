"""Write a trace's frames out: tap JSONL (loads back to the same frames), parquet, csv."""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd

__all__ = ["write", "to_tap_records"]

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


def write(trace: Any, path: Path, fmt: str) -> None:
    path = Path(path)
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
    frames = _flat(trace.frames)
    if fmt == "parquet":
        frames.to_parquet(path, index=False)
    elif fmt == "csv":
        frames.to_csv(path, index=False)
    else:
        raise ValueError(f"unknown output format {fmt!r}: parquet, csv or jsonl")


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
