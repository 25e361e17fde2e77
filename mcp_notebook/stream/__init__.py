"""``mn.summarize``: the summary of a capture too large to hold, read in bounded memory.

The frames table of ten million tiny frames does not fit in memory next to its file; what
one wants of such a capture is its summary. :func:`summarize` reads the file in chunks
cut at line boundaries (:mod:`.chunks`), scans each with the fast loader's scanner, and
keeps only the requests still open, a compact table of the request ids seen
(:mod:`.keys`), the running counts and the first examples of each finding (:mod:`.walk`).
The numbers are those of ``mn.load(path).summary()`` (the tests compare them on every
bundled capture and on generated profiles).

Which rules run in streaming mode (:data:`STREAMED`):

- the rules of one frame, run on each chunk by the catalogue's own checks
  (:data:`FRAME_RULES`): the envelope flags, ids, batches, methods and error codes of
  each version, the 2026 members, the transport's;
- the rules between frames, followed by the streaming walk with bounded state
  (:data:`WALK_RULES`): pairing (in flight, reused, duplicate, orphan, cancel, progress),
  unanswered requests (and after a side closed), answered notifications, ping results,
  requests before ``initialize``, null-id results.

The conversation rules (schemas, capabilities, listed tools and prompts, the 2026 rounds,
payload sizes) read a request's payload with its answer and what the session listed
before: they are **not run in streaming mode**, and the summary lists them under
``streaming.rules_not_run`` (``mn.load`` runs them).

A session's protocol version decides which rules apply; it can be settled late (the most
common ``_meta`` version of a 2026 session): a chunk checked under a version that the end
of the file changes is read again and checked under the final one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from .rules import FRAME_RULES, STREAMED, WALK_RULES, not_streamed
from .summary import NotStreamable, Summary, summarize_stream

__all__ = ["summarize", "Summary", "STREAMED", "FRAME_RULES", "WALK_RULES", "not_streamed",
           "streamable", "STREAM_MIN_BYTES"]

#: ``mcp-notebook summary`` streams a file at least this large (``--stream`` forces it)
STREAM_MIN_BYTES = 256 << 20
#: the formats read in chunks (the line formats of the fast loader, plain files)
FORMATS = ("ndjson", "tap")


def streamable(path: str | os.PathLike[str], format: str = "auto") -> str | None:
    """Why ``path`` cannot be summarized in streaming mode; None when it can."""
    from ..readers import CaptureError, sniff, wrapping
    from ..readers.base import GZIP_MAGIC

    p = Path(path)
    if not p.is_file():
        return f"{p} is not a regular file"
    with open(p, "rb") as f:
        if f.read(2) == GZIP_MAGIC:
            return "a .gz file is read whole (its chunks cannot be found without it)"
    try:
        fmt = sniff(p) if format == "auto" else format
    except CaptureError as exc:
        return str(exc)
    if fmt not in FORMATS:
        return f"the {fmt} format is read whole (streaming reads {' and '.join(FORMATS)})"
    if wrapping(p):
        return "a capture pasted into Markdown is read whole"
    return None


def summarize(path: str | os.PathLike[str], format: str = "auto", *,
              session: str | None = None, direction: str | None = None,
              version: str | None = None, chunk_bytes: int | None = None,
              examples: int = 3, stream: bool | None = None) -> Summary:
    """The summary of one capture file read in chunks, in bounded memory: the counts of
    ``mn.load(path).summary()`` without the frames table.

    The same keys as ``Trace.summary()`` (frames by kind, methods, error codes, sessions;
    pairs, unanswered, cancelled, orphans, duplicates; violations by rule and severity;
    blank lines, counted, not stored), and ``latency`` (by method: count, answered, p50,
    p90, p99 and max ms, errors), ``examples`` (the first findings of each rule: line and
    message), ``invalid_examples`` (the first broken lines: line and reason) and
    ``streaming`` (``streamed``, ``chunks``, ``rules_not_run``: the conversation rules,
    which read a request's payload with its answer and are run by ``mn.load`` only).
    Memory holds the requests still open and a byte per integer request id seen (13 to 26
    per other id), not the frames: 10,485,760 tiny frames (a 318 MB file) are
    summarized in about 145 MB, at the same cost per line as 100k
    (``benchmarks/RESULTS-10m.md``).

    Parameters
    ----------
    path
        One capture file. Bare NDJSON and tap JSONL (plain files) are streamed; any other
        format, or a ``.gz`` file, is loaded whole (``stream=None``) and said so in
        ``summary["streaming"]["why"]``.
    format, session, direction, version
        As for :func:`mcp_notebook.load`.
    chunk_bytes
        The size of the chunks read (default 1 MiB; each ends at a line boundary).
    examples
        How many findings of each rule to keep as examples.
    stream
        None: stream what can be; True: stream or raise ``CaptureError`` saying why;
        False: load whole.

    >>> import mcp_notebook as mn
    >>> s = mn.summarize(mn.sample_path("demo-stdio"))
    >>> s["streaming"]["streamed"], s["frames"] == mn.load(mn.sample_path("demo-stdio")).summary()["frames"]
    (True, True)
    """
    from ..readers import CaptureError

    p = Path(path)
    if direction not in (None, "c2s", "s2c"):
        raise ValueError(f"direction must be 'c2s', 's2c' or None, not {direction!r}")
    why = None if stream is False else streamable(p, format)
    if stream and why is not None:
        raise CaptureError(f"{p}: cannot be summarized in streaming mode: {why}")
    if stream is False or why is not None:
        return _whole(p, format, session, direction, version, why)
    from ..readers import sniff

    fmt = sniff(p) if format == "auto" else format
    from .chunks import CHUNK_BYTES

    t0 = time.perf_counter()
    try:
        out = summarize_stream(p, fmt, session or p.name, direction, version,
                               chunk_bytes or CHUNK_BYTES, examples)
    except NotStreamable as exc:
        if stream:
            raise CaptureError(f"{p}: cannot be summarized in streaming mode: {exc}") from None
        return _whole(p, format, session, direction, version, str(exc))
    out["streaming"]["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _whole(p: Path, format: str, session: str | None, direction: str | None,
           version: str | None, why: str | None) -> Summary:
    """The summary by ``mn.load`` (the file read whole)."""
    from ..load import load

    t = load(p, format, session=session, direction=direction, version=version)
    out = Summary(t.summary())
    out["streaming"] = {"streamed": False, "why": why or "asked to load whole",
                        "rules_not_run": []}
    lat = t.latency_by_method()
    out["latency"] = {str(m): {k: _num(v) for k, v in row.items()} for m, row in
                      lat.iterrows()}
    v = t.violations
    ex: dict[str, list[dict[str, Any]]] = {}
    if len(v):
        lines = t.frames["source"]
        for code, group in v.groupby("rule", sort=True):
            ex[str(code)] = [{"line": _line(lines.iat[int(s)]), "detail": str(m)}
                             for s, m in zip(group["seq"].head(3), group["message"].head(3),
                                             strict=True)]
    out["examples"] = ex
    return out


def _line(source: Any) -> int | None:
    text = str(source)
    tail = text.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _num(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if value != value else round(float(value), 3)
    return value
