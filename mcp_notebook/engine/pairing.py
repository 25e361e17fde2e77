"""Pairing on the column store: the walk of :func:`mcp_notebook.engine.walks.pair`, in C.

Sans-IO: plain arrays in (one entry per frame, in capture order), a :class:`PairTable` out.
Where the C extension is built (:mod:`mcp_notebook.engine.native`) the walk runs there, on
integer codes, in one pass (``csrc/pair.h``); without it the Python walk
(:func:`mcp_notebook.engine.walks.pair`) is both the reference and the fallback (the
PEP 399 pattern: the tests run both on the same cases).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..protocol.vocab import DIRECTIONS, FINDINGS, KINDS, OUTCOMES, Kind
from . import native as _native
from .fallback import fell_back
from .walks import _digits_twin, pair

__all__ = ["PairTable", "pair_arrays", "OUTCOMES", "FINDINGS"]

_O = {o: i for i, o in enumerate(OUTCOMES)}
ERROR = Kind.ERROR
_DIRS = (None, *DIRECTIONS)
_CANCEL = "notifications/cancelled"
_PROGRESS = "notifications/progress"
#: session codes the C walk packs into its keys
_C_SESSIONS = (1 << 29) - 1


@dataclass
class PairTable:
    """Pair rows (in the reference order) and findings (by seq), as arrays."""

    request_seq: np.ndarray  # int64, -1: none
    response_seq: np.ndarray  # int64, -1: none
    session: np.ndarray  # int32 session codes
    requester: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    id_key: np.ndarray  # object
    method: np.ndarray  # int32 method codes, -1 none
    outcome: np.ndarray  # int8 index into OUTCOMES
    cancel_seq: np.ndarray  # int64, -1: none
    progress_count: np.ndarray  # int64
    findings: list[tuple[int, str, int | None, str]]  # (seq, rule, related_seq, detail)

    def __len__(self) -> int:
        return len(self.request_seq)


def pair_arrays(kind: np.ndarray, session: np.ndarray, direction: np.ndarray,
                id_key: np.ndarray, id_code: np.ndarray, id_uniques: Sequence[Any],
                method: np.ndarray, method_cats: Sequence[Any],
                is_tool_error: np.ndarray, ref: Any, progress: Any,
                id_index: dict[Any, int] | None = None) -> PairTable:
    """Pair the frames (see :func:`mcp_notebook.engine.walks.pair`).

    ``id_code`` numbers the distinct id keys (``id_uniques``; -1: no id); ``id_index``,
    when given, maps each of them to its code. ``ref`` and ``progress`` are the few frames
    that have them: objects with ``rows`` (ascending) and ``values`` arrays
    (:class:`mcp_notebook.fast.store.Sparse`).
    """
    native = _native.native
    if native is not None and (not len(session) or int(session.max()) < _C_SESSIONS):
        codes = (_index(method_cats, _CANCEL), _index(method_cats, _PROGRESS),
                 _index(method_cats, "initialize"))
        return _pair_native(native, kind, session, direction, id_key, id_code, id_uniques,
                            method, is_tool_error, ref, progress, codes, id_index)
    if native is None and (why := _native.missing()) is not None:
        fell_back(why)
    return pair_python(kind, session, direction, id_key, method, method_cats, is_tool_error,
                       ref, progress)


def pair_python(kind: np.ndarray, session: np.ndarray, direction: np.ndarray,
                id_key: np.ndarray, method: np.ndarray, method_cats: Sequence[Any],
                is_tool_error: np.ndarray, ref: Any, progress: Any) -> PairTable:
    """The Python walk on the same arrays (codes as the keys: same codes, same keys)."""
    n = len(kind)
    names = [*method_cats, None]
    dense_ref: list[Any] = [None] * n
    for r, v in zip(ref.rows.tolist(), ref.values.tolist(), strict=True):
        dense_ref[r] = v
    dense_prog: list[Any] = [None] * n
    for r, v in zip(progress.rows.tolist(), progress.values.tolist(), strict=True):
        dense_prog[r] = v
    rows, findings = pair(range(n), session.tolist(), [_DIRS[d + 1] for d in direction.tolist()],
                          [KINDS[k] for k in kind.tolist()], id_key.tolist(),
                          [names[m] for m in method.tolist()], is_tool_error.tolist(),
                          dense_ref, dense_prog)

    def opt(v: int | None) -> int:
        return -1 if v is None else v

    req = np.fromiter((opt(r.request_seq) for r in rows), np.int64, len(rows))
    return PairTable(
        request_seq=req,
        response_seq=np.fromiter((opt(r.response_seq) for r in rows), np.int64, len(rows)),
        session=np.fromiter((r.session for r in rows), np.int32, len(rows)),  # type: ignore[misc]
        requester=np.fromiter((_DIRS.index(r.requester) - 1 for r in rows), np.int8,
                              len(rows)),
        id_key=np.fromiter((r.id_key for r in rows), object, len(rows)),
        method=np.where(req >= 0, method[np.maximum(req, 0)] if n else req, -1).astype(np.int32),
        outcome=np.fromiter((_O[r.outcome] for r in rows), np.int8, len(rows)),
        cancel_seq=np.fromiter((opt(r.cancel_seq) for r in rows), np.int64, len(rows)),
        progress_count=np.fromiter((r.progress_count for r in rows), np.int64, len(rows)),
        findings=sorted(((f.seq, f.rule, f.related_seq, f.detail) for f in findings),
                        key=lambda f: f[0]))


def _pair_native(native: Any, kind: np.ndarray, session: np.ndarray, direction: np.ndarray,
                 id_key: np.ndarray, id_code: np.ndarray, id_uniques: Sequence[Any],
                 method: np.ndarray, is_tool_error: np.ndarray, ref: Any, progress: Any,
                 codes: tuple[int, int, int],
                 id_index: dict[Any, int] | None) -> PairTable:
    """The reference walk in C (``_native.pair``); the texts of its findings made here."""
    uniq = id_uniques if isinstance(id_uniques, list) else list(id_uniques)
    c = np.ascontiguousarray
    got = native.pair(
        c(kind, np.int8), c(session, np.int32), c(direction, np.int8), c(id_code, np.int32),
        c(is_tool_error, bool), c(method, np.int32), c(ref.rows, np.int64),
        ref.values.tolist(), c(progress.rows, np.int64), c(progress.values, np.float64),
        uniq, (-2, *codes), _digits_twin, id_index)  # -2: the code of "null" found in C
    i64, i32, i8 = np.int64, np.int32, np.int8
    key_seq = np.frombuffer(got[8], i64)
    fv = np.frombuffer(got[9], i64).reshape(-1, 3)
    fx = np.frombuffer(got[10], np.float64).reshape(-1, 2)
    seqs = fv[:, 0].tolist()
    refs = _refs_of(ref, seqs)  # what ref.get(s) gives, read at once
    rules = fv[:, 1]
    details = np.empty(len(seqs), dtype=object)
    for r in np.unique(rules).tolist():  # each rule's findings worded together
        at = np.flatnonzero(rules == r)
        details[at] = _WORDS.get(FINDINGS[r], _no_token)(
            fv[at, 0].tolist(), id_key, kind, refs, fx[at, 0].tolist(), fx[at, 1].tolist())
    rel = fv[:, 2]
    findings = list(zip(seqs, np.array(FINDINGS, dtype=object)[rules].tolist(),
                        [None if x < 0 else x for x in rel.tolist()], details.tolist(),
                        strict=True))
    return PairTable(
        request_seq=np.frombuffer(got[0], i64), response_seq=np.frombuffer(got[1], i64),
        session=np.frombuffer(got[2], i32), requester=np.frombuffer(got[3], i8),
        id_key=id_key[key_seq], method=np.frombuffer(got[4], i32),
        outcome=np.frombuffer(got[5], i8), cancel_seq=np.frombuffer(got[6], i64),
        progress_count=np.frombuffer(got[7], i64), findings=findings)


def _refs_of(ref: Any, rows: list[int]) -> dict[int, Any]:
    """``ref.get(s)`` (a :class:`~mcp_notebook.fast.store.Sparse`) of each of ``rows``
    that has a value, by one search of them all instead of one a finding."""
    r = np.asarray(rows, dtype=np.int64)
    hit, pos = ref.where(r)
    return dict(zip(r[hit].tolist(), [v.item() if isinstance(v, np.generic) else v
                                      for v in ref.values[pos[hit]]], strict=True))


_Words = Callable[[list[int], Any, Any, Any, list[float], list[float]], list[str]]


def _no_token(ss: list[int], k: Any, kind: Any, ref: Any, a: list[float],
              b: list[float]) -> list[str]:
    return [f"no request in flight carries token {ref.get(s)}" for s in ss]


#: the wording of the findings of each pairing rule, by name, as
#: :func:`mcp_notebook.engine.walks.pair` words them (both walks here write them so): the
#: findings at frames ``ss`` (from their id keys ``k``, kinds or refs, or their progress
#: values ``a`` after ``b``) worded together (a capture can hold hundreds of thousands of
#: findings: no function call each)
_WORDS: dict[str, _Words] = {
    "request-id-in-flight":
        lambda ss, k, kind, ref, a, b: [f"id {k[s]} is still in flight" for s in ss],
    "request-id-reused": lambda ss, k, kind, ref, a, b: [
        f"id {k[s]} was used before in this session" for s in ss],
    "response-after-cancel": lambda ss, k, kind, ref, a, b: [
        f"a {'error' if kind[s] == ERROR else 'result'} for id {k[s]} after it was cancelled"
        for s in ss],
    "duplicate-response":
        lambda ss, k, kind, ref, a, b: [f"a second response for id {k[s]}" for s in ss],
    "id-type-mismatch": lambda ss, k, kind, ref, a, b: [
        f"response id {k[s]} but the request id was {_digits_twin(k[s])}" for s in ss],
    "orphan-response": lambda ss, k, kind, ref, a, b: [
        f"no request with id {k[s]} from this side" for s in ss],
    "cancel-initialize":
        lambda ss, k, kind, ref, a, b: ["initialize was cancelled"] * len(ss),
    "cancel-after-response": lambda ss, k, kind, ref, a, b: [
        f"request {ref.get(s)} had already been answered" for s in ss],
    "cancel-unknown-request": lambda ss, k, kind, ref, a, b: [
        f"no request {ref.get(s)} from this side is known" for s in ss],
    "progress-not-increasing": lambda ss, k, kind, ref, a, b: [
        f"progress {x:g} after {y:g}" for x, y in zip(a, b, strict=True)],
    "progress-after-response": lambda ss, k, kind, ref, a, b: [
        f"progress for token {ref.get(s)} after the response" for s in ss],
    "progress-unknown-token": _no_token,
}


def _index(cats: Sequence[Any], value: str) -> int:
    try:
        return list(cats).index(value)
    except ValueError:
        return -1
