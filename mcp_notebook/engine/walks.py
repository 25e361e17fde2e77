"""The Python walks: pairing (:func:`pair`) and direction inference (:func:`infer`).

They are the reference the C walks (``csrc/pair.h``) implement and the fallback where the
extension is not built; :mod:`.pairing` and :mod:`.direction` run them on the column
store's codes.

Pairing: pair responses with requests, and link cancels and progress to them.
Sans-IO: works on plain sequences (one entry per frame, in capture order) and returns
plain rows. The key is ``(session, requester, id_key)``: both sides number their own
requests, often from 0, so an id alone never pairs.

A requester that reuses an id while a request with it is still open is the one at fault
(``request-id-in-flight``); its requests are answered first in, first out: a response
answers the earliest open request under its key that was not cancelled (a cancelled
request may get no answer), else the earliest cancelled one; a cancel names the earliest
open request not cancelled yet. The answers are then neither duplicates nor orphans.
A request in flight points at the latest open request with its id; a reused one at the
last answered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..protocol.versions import direction_of

__all__ = ["PairRow", "Finding", "pair", "infer", "OPPOSITE"]

OPPOSITE = {"c2s": "s2c", "s2c": "c2s", None: None}


@dataclass(slots=True)
class PairRow:
    request_seq: int | None
    response_seq: int | None
    session: object
    requester: str | None
    id_key: str | None
    method: str | None
    outcome: str
    cancel_seq: int | None = None
    progress_count: int = 0
    last_progress: float | None = None
    token: tuple | None = None
    responses: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Finding:
    """A pairing-level problem: a rule code, the frame it is on and the related frame."""

    rule: str
    seq: int
    related_seq: int | None
    detail: str


def _digits_twin(key: str) -> str | None:
    """The same id in the other JSON type: ``1`` <-> ``"1"``."""
    if key.startswith('"') and key.endswith('"'):
        inner = key[1:-1]
        if inner.lstrip("-").isdigit():
            return inner
        return None
    if key.lstrip("-").isdigit():
        return f'"{key}"'
    return None


def pair(
    seq: Sequence[int],
    session: Sequence[object],
    direction: Sequence[str | None],
    kind: Sequence[str],
    id_key: Sequence[str | None],
    method: Sequence[str | None],
    is_tool_error: Sequence[bool],
    ref: Sequence[str | None],
    progress: Sequence[float | None],
) -> tuple[list[PairRow], list[Finding]]:
    """Walk the frames once; return the pair rows and the pairing findings.

    One row per request (in request order), plus one row per response that has no
    request (``orphan``) or answers an already answered one (``duplicate``).
    """
    rows: list[PairRow] = []
    findings: list[Finding] = []
    # key -> the open requests (row indexes, in request order): not cancelled, and
    # cancelled but not answered (a cancelled request may still be answered: a legal race)
    live: dict[tuple, deque[int]] = {}
    cancelled: dict[tuple, deque[int]] = {}
    done: dict[tuple, int] = {}  # key -> row index of the last answered request
    tokens: dict[tuple, int] = {}  # (session, requester, token key) -> row index
    token_done: dict[tuple, int] = {}
    extra_rows: list[tuple[int, PairRow]] = []  # orphans/duplicates, placed by their seq

    def latest_open(key: tuple) -> int | None:
        """Row index of the latest open request under the key (None: none is open)."""
        a, b = live.get(key), cancelled.get(key)
        if a and b:
            return max(a[-1], b[-1])
        return a[-1] if a else b[-1] if b else None

    for i in range(len(seq)):
        k = kind[i]
        s = seq[i]
        if k == "request":
            key = (session[i], direction[i], id_key[i])
            flying = latest_open(key)
            if flying is not None:
                findings.append(Finding("request-id-in-flight", s, rows[flying].request_seq,
                                        f"id {id_key[i]} is still in flight"))
            elif key in done:
                findings.append(Finding("request-id-reused", s, rows[done[key]].request_seq,
                                        f"id {id_key[i]} was used before in this session"))
            row = PairRow(s, None, session[i], direction[i], id_key[i], method[i], "unanswered")
            live.setdefault(key, deque()).append(len(rows))
            rows.append(row)
            if ref[i] is not None:
                row.token = (session[i], direction[i], ref[i])
                tokens[row.token] = len(rows) - 1
        elif k == "result" or k == "error":
            requester = OPPOSITE.get(direction[i])
            ik = id_key[i]
            if ik is None or ik == "null":
                extra_rows.append((s, PairRow(None, s, session[i], requester, ik, None, "orphan",
                                              responses=[s])))
                continue
            key = (session[i], requester, ik)
            if live.get(key) or cancelled.get(key):
                # first in, first out: the earliest open request that was not cancelled,
                # else the earliest cancelled one
                q = live.get(key)
                idx = q.popleft() if q else cancelled[key].popleft()
                row = rows[idx]
                row.response_seq = s
                row.responses.append(s)
                if row.outcome != "cancelled":
                    row.outcome = ("error" if k == "error"
                                   else "tool_error" if is_tool_error[i] else "result")
                else:
                    findings.append(Finding("response-after-cancel", s, row.cancel_seq,
                                            f"a {k} for id {ik} after it was cancelled"))
                done[key] = idx
                if row.token is not None and tokens.get(row.token) == idx:
                    token_done[row.token] = tokens.pop(row.token)
            elif key in done:
                row = rows[done[key]]
                row.responses.append(s)
                findings.append(Finding("duplicate-response", s, row.response_seq,
                                        f"a second response for id {ik}"))
                extra_rows.append((s, PairRow(row.request_seq, s, session[i], requester, ik,
                                              row.method, "duplicate", responses=[s])))
            else:
                twin = _digits_twin(ik)
                twin_key = (session[i], requester, twin)
                mate = latest_open(twin_key) if twin is not None else None
                if mate is not None:
                    findings.append(Finding("id-type-mismatch", s, rows[mate].request_seq,
                                            f"response id {ik} but the request id was {twin}"))
                else:
                    findings.append(Finding("orphan-response", s, None,
                                            f"no request with id {ik} from this side"))
                extra_rows.append((s, PairRow(None, s, session[i], requester, ik, None, "orphan",
                                              responses=[s])))
        elif k == "notification":
            m = method[i]
            if m == "notifications/cancelled" and ref[i] is not None:
                key = (session[i], direction[i], ref[i])
                if live.get(key) or cancelled.get(key):
                    # the earliest open request not cancelled yet (else the earliest
                    # cancelled one, cancelled again)
                    q = live.get(key)
                    if q:
                        idx = q.popleft()
                        cancelled.setdefault(key, deque()).append(idx)
                    else:
                        idx = cancelled[key][0]
                    row = rows[idx]
                    row.outcome = "cancelled"
                    row.cancel_seq = s
                    if row.method == "initialize":
                        findings.append(Finding("cancel-initialize", s, row.request_seq,
                                                "initialize was cancelled"))
                elif key in done:
                    row = rows[done[key]]
                    if row.cancel_seq is None:
                        row.cancel_seq = s
                    findings.append(Finding("cancel-after-response", s, row.request_seq,
                                            f"request {ref[i]} had already been answered"))
                else:
                    findings.append(Finding("cancel-unknown-request", s, None,
                                            f"no request {ref[i]} from this side is known"))
            elif m == "notifications/progress" and ref[i] is not None:
                tkey = (session[i], OPPOSITE.get(direction[i]), ref[i])
                if tkey in tokens:
                    row = rows[tokens[tkey]]
                    row.progress_count += 1
                    value = progress[i]
                    if (value is not None and row.last_progress is not None
                            and value <= row.last_progress):
                        findings.append(Finding("progress-not-increasing", s, row.request_seq,
                                                f"progress {value:g} after {row.last_progress:g}"))
                    if value is not None:
                        row.last_progress = value
                elif tkey in token_done:
                    row = rows[token_done[tkey]]
                    findings.append(Finding("progress-after-response", s, row.response_seq,
                                            f"progress for token {ref[i]} after the response"))
                else:
                    findings.append(Finding("progress-unknown-token", s, None,
                                            f"no request in flight carries token {ref[i]}"))

    if extra_rows:
        rows = _merge_by_seq(rows, extra_rows)
    return rows, findings


def _merge_by_seq(rows: list[PairRow], extra: list[tuple[int, PairRow]]) -> list[PairRow]:
    """Request rows in request order, orphan/duplicate rows placed by their response seq."""
    keyed = [((r.request_seq if r.request_seq is not None else -1), 0, r) for r in rows]
    keyed += [(s, 1, r) for s, r in extra]
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in keyed]


# -- direction inference ---------------------------------------------------------------------
# Infer who sent each message when a capture does not say (bare stdio NDJSON).
#
# Sans-IO. Requests and notifications take the direction the method table gives them;
# methods that both sides send (``ping``) and unknown ones are taken as client requests,
# unless the client already used that id in the session (both sides count their own ids,
# so a reused id points to the other side). A response travels opposite to the request
# it answers.


def infer(
    kind: Sequence[str],
    session: Sequence[object],
    id_key: Sequence[str | None],
    method: Sequence[str | None],
    given: Sequence[str | None],
    batch: Sequence[int | None] | None = None,
) -> list[str | None]:
    """Fill the ``None`` entries of ``given`` with ``c2s``/``s2c`` where a message is.

    With ``batch`` (each frame's position in its batch array), the members of one batch
    take the direction inferred for its first member: one side wrote the whole line.
    """
    out = list(given)
    used: set[tuple[object, str, str | None]] = set()
    pending: dict[tuple[object, str | None], list[str]] = {}
    for i, k in enumerate(kind):
        if k in ("request", "notification"):
            d = out[i]
            if d is None:
                m = method[i] or ""
                known = direction_of(m)
                if known in ("c2s", "s2c"):
                    d = known
                elif k == "request" and (session[i], "c2s", id_key[i]) in used:
                    d = "s2c"
                else:
                    d = "c2s"
                out[i] = d
            if k == "request":
                used.add((session[i], d, id_key[i]))
                pending.setdefault((session[i], id_key[i]), []).append(d)
        elif k in ("result", "error") and out[i] is None:
            stack = pending.get((session[i], id_key[i]))
            if stack:
                out[i] = "s2c" if stack.pop() == "c2s" else "c2s"
            else:
                out[i] = "s2c"  # most responses come from the server
    if batch is not None:
        first: str | None = None
        for i, pos in enumerate(batch):
            if pos == 0:
                first = out[i]
            elif pos is not None and first is not None:
                out[i] = first
    return out
