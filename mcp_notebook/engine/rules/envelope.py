"""Rules of one message: what the envelope classifier flagged, ids, batches, notifications."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import native as _native
from ..checks import ERROR, NONE, REQUEST, RESULT, Hits, VecInput, check, hits


def _flag(code: str) -> Callable[[VecInput], Hits]:
    return lambda vi: hits(vi.flag_rows.get(code, NONE))


def _response_id(want_kind: int, *flags: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        rows = [r for f in flags for r in vi.flag_rows.get(f, NONE).tolist()
                if vi.kind[r] == want_kind]
        return hits(rows)
    return check


def _result_id_null(vi: VecInput) -> Hits:
    """Results with a null id (but those that echo an earlier null request id of the other
    side: see the reference) or none."""
    null = vi.flag_rows.get("response-id-null", NONE)
    null = null[vi.kind[null] == RESULT]
    if len(null):
        req = np.flatnonzero(vi.kind == REQUEST)
        req = req[vi.id_key[req] == "null"]
        first: dict[tuple[int, int], int] = {}
        for r in req.tolist():
            first.setdefault((int(vi.session[r]), int(vi.direction[r])), r)
        if first:
            other = {0: 1, 1: 0}
            null = np.asarray([i for i in null.tolist()
                               if first.get((int(vi.session[i]),
                                             other.get(int(vi.direction[i]), -1)), i + 1) > i],
                              dtype=np.int64)
    missing = vi.flag_rows.get("response-id-missing", NONE)
    return hits(np.concatenate([null, missing[vi.kind[missing] == RESULT]]))


def _batch(vi: VecInput) -> Hits:
    rows = vi.flag_rows.get("batch", NONE)
    rows = rows[vi.batch[rows] == 0]
    return hits(rows, None, ["a batch array"] * len(rows))


_BIG = 1 << 53


def _big_id(vi: VecInput) -> Hits:
    if vi.long_keys is not None:
        req = vi.long_keys[vi.kind[vi.long_keys] == REQUEST]
    else:
        req = np.flatnonzero(vi.kind == REQUEST)
    keys = vi.id_key[req]
    texts = keys.tolist()
    long = _native.str_lengths(texts) > 15
    if long.all():  # (a capture of long ids: no second copy of them all)
        long_keys = texts
    else:
        req, long_keys = req[long], keys[long].tolist()
    native = _native.native
    verdict = np.frombuffer(native.big_ids(long_keys), dtype=np.uint8) if native is not None \
        else np.full(len(long_keys), 2, dtype=np.uint8)  # 1: big, 0: not, 2: Python decides
    big = verdict == 1
    for k in np.flatnonzero(verdict == 2).tolist():
        big[k] = _is_big(long_keys[k])
    at = np.flatnonzero(big)
    return hits(req[at].tolist(), None,
                [f"id {long_keys[k]} is above 2^53" for k in at.tolist()])


def _is_big(key: str) -> bool:
    """Whether an id key is an integer above 2^53 (the reference's test)."""
    return key[0] != '"' and key.lstrip("-").isdigit() and abs(int(key)) > _BIG


def _notification_with_id(vi: VecInput) -> Hits:
    codes = vi.method_codes(lambda m: m.startswith("notifications/"))
    rows = np.flatnonzero((vi.kind == REQUEST) & vi.method_in(codes))
    return hits(rows, None, [f"{vi.name(int(vi.method[r]))} carries id {vi.id_key[r]}"
                              for r in rows.tolist()])

#: rules found by the envelope classifier, one message at a time (the flag is the code)
FLAG_RULES = (
    "parse-error", "not-an-object", "not-a-message", "jsonrpc-version", "method-not-string",
    "reserved-method", "params-not-object", "mixed-request-response", "response-neither",
    "result-and-error", "result-not-object", "error-not-object", "error-code-not-integer",
    "error-message-not-string", "request-id-type", "batch-empty")
for _code in FLAG_RULES:
    check(_code)(_flag(_code))
check("result-id-null")(_result_id_null)
check("error-id-null")(_response_id(ERROR, "response-id-null"))
check("error-id-absent")(_response_id(ERROR, "response-id-missing"))
check("batch-not-allowed")(_batch)
check("big-id")(_big_id)
check("notification-with-id")(_notification_with_id)
