"""Small look-ups the notebooks use instead of pandas plumbing: find frames, follow a pair.

>>> import mcp_notebook as mn
>>> t = mn.load(mn.sample_path("demo-stdio"))
>>> mn.teach.find(t, method="ping")[:1]
[12]
>>> mn.teach.answer_to(t, 12)
13
"""

from __future__ import annotations

from typing import Any

__all__ = ["answer_to", "find", "request_of"]


def find(trace: Any, *, kind: str | None = None, method: str | None = None,
         contains: str | None = None, direction: str | None = None) -> list[int]:
    """The seqs of the frames that match every condition given, in capture order.

    ``kind`` (request, result, error, notification, invalid...), ``method``, ``direction``
    (``c2s`` or ``s2c``), and ``contains``: a piece of the frame's raw text.
    """
    f = trace.frames
    keep = f["seq"] >= 0
    if kind is not None:
        keep &= f["kind"] == kind
    if method is not None:
        keep &= f["method"] == method
    if direction is not None:
        keep &= f["direction"] == direction
    if contains is not None:
        keep &= f["raw"].astype(str).str.contains(contains, regex=False)
    return [int(s) for s in f.loc[keep, "seq"]]


def answer_to(trace: Any, request_seq: int) -> int | None:
    """The seq of the (first) frame that answered the request at ``request_seq``, or None."""
    p = trace.pairs
    rows = p[p["request_seq"] == request_seq]["response_seq"].dropna()
    return int(rows.iloc[0]) if len(rows) else None


def request_of(trace: Any, response_seq: int) -> int | None:
    """The seq of the request that the frame at ``response_seq`` answers, or None."""
    p = trace.pairs
    rows = p[p["response_seq"] == response_seq]["request_seq"].dropna()
    return int(rows.iloc[0]) if len(rows) else None
