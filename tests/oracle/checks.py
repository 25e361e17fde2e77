"""The list-based oracle of the checks (the engine's checks, :mod:`mcp_notebook.engine.rules`,
are held to it over generated traffic and the rule cases).

Sans-IO: each check reads a :class:`CheckInput` (plain lists, one entry per frame, and the
pairing's rows and findings) and yields ``(seq, related_seq, detail)`` for each finding.
:func:`run` applies the catalogue, keeping each finding only where its rule applies to
the protocol version of the frame's session.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from mcp_notebook.engine.walks import OPPOSITE, Finding, PairRow
from mcp_notebook.protocol import versions as V
from mcp_notebook.protocol.rules import RULES, Rule

__all__ = ["CheckInput", "CHECKS", "run", "session_versions"]

Hit = tuple[int, "int | None", str]


@dataclass
class CheckInput:
    kind: Sequence[str]
    session: Sequence[object]
    direction: Sequence[str | None]
    id_key: Sequence[str | None]
    method: Sequence[str | None]
    error_code: Sequence[int | None]
    flags: Sequence[tuple[str, ...]]
    raw: Sequence[str]
    batch: Sequence[int | None]
    pairs: list[PairRow]
    findings: list[Finding]
    versions: dict[object, str]  # session -> checked version
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    reason: Sequence[str | None] = ()  # why a reader made a row invalid (empty: none given)


def _flag(code: str) -> Callable[[CheckInput], Iterator[Hit]]:
    def check(ci: CheckInput) -> Iterator[Hit]:
        for i, fl in enumerate(ci.flags):
            if code in fl:
                yield i, None, ""
    check.__doc__ = f"Frames that the envelope classifier flagged {code!r}."
    return check


def _finding(code: str) -> Callable[[CheckInput], Iterator[Hit]]:
    def check(ci: CheckInput) -> Iterator[Hit]:
        for f in ci.findings:
            if f.rule == code and not (code == "orphan-response" and ci.extra.get(
                    f.seq, {}).get("request_not_held")):
                yield f.seq, f.related_seq, f.detail
    check.__doc__ = (f"Pairing findings {code!r} (an orphan response the capture says may "
                     "answer a request it does not hold: none).")
    return check


def _response_id(want_kind: str, flag: str) -> Callable[[CheckInput], Iterator[Hit]]:
    def check(ci: CheckInput) -> Iterator[Hit]:
        for i, fl in enumerate(ci.flags):
            if flag in fl and ci.kind[i] == want_kind:
                yield i, None, ""
    return check


def _result_id_null(ci: CheckInput) -> Iterator[Hit]:
    """Results with a null id, but those that echo a null id the other side's request had
    sent before them (that request's id is its sender's error, ``request-id-type``)."""
    hits = list(_response_id("result", "response-id-null")(ci))
    if not hits:
        return
    first = first_null_requests(ci.kind, ci.session, ci.direction, ci.id_key)
    for i, related, detail in hits:
        q = first.get((ci.session[i], OPPOSITE.get(ci.direction[i])))
        if q is None or q > i:
            yield i, related, detail


def first_null_requests(kind: Sequence[str], session: Sequence[object],
                        direction: Sequence[str | None],
                        id_key: Sequence[str | None]) -> dict[tuple, int]:
    """(session, requester) -> the seq of its first request with a null id."""
    out: dict[tuple, int] = {}
    for i, k in enumerate(kind):
        if k == "request" and id_key[i] == "null":
            out.setdefault((session[i], direction[i]), i)
    return out


def _batch(ci: CheckInput) -> Iterator[Hit]:
    for i, fl in enumerate(ci.flags):
        if "batch" in fl and ci.batch[i] == 0:  # once per batch, on its first member
            yield i, None, "a batch array"


_BIG = 1 << 53


def _big_id(ci: CheckInput) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        if k == "request":
            key = ci.id_key[i]
            if key and key[0] != '"' and key.lstrip("-").isdigit() and abs(int(key)) > _BIG:
                yield i, None, f"id {key} is above 2^53"


def _notification_with_id(ci: CheckInput) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        m = ci.method[i]
        if k == "request" and m is not None and m.startswith("notifications/"):
            yield i, None, f"{m} carries id {ci.id_key[i]}"


def _notification_answered(ci: CheckInput) -> Iterator[Hit]:
    for r in ci.pairs:
        m = r.method
        if r.request_seq is not None and m and m.startswith("notifications/"):
            for s in r.responses:
                yield s, r.request_seq, f"a response to {m}"


#: The stdio tap's own records (its ``meta`` lines, loaded as ``log`` rows) that say a side
#: has closed, by how their text starts: the requester whose requests can no longer be
#: answered (the other side is the one that closed), and what happened. A record that
#: starts the server again opens both sides.
PEER_CLOSED: tuple[tuple[str, str, str], ...] = (
    ("client closed stdin", "s2c", "the client had closed its input to the server"),
    ("client no longer reads stdout", "s2c", "the client had stopped reading the server's output"),
    ("the server no longer reads its stdin", "c2s", "the server had stopped reading its input"),
    ("server exited", "c2s", "the server had exited"),
    ("server killed by", "c2s", "the server had been killed"),
)
_PEER_STARTED = "started "


class PeerClosed:
    """When each session's sides closed, from the tap's records of it.

    ``log_rows`` are ``(seq, session, text)`` of the ``log`` rows, in seq order."""

    def __init__(self, log_rows: Iterable[tuple[int, object, str | None]]) -> None:
        # session -> [(seq, {requester: (close seq, what happened)})], the state after seq
        self._at: dict[object, tuple[list[int], list[dict[str, tuple[int, str]]]]] = {}
        for seq, session, text in log_rows:
            if not text:
                continue
            seqs, states = self._at.setdefault(session, ([], []))
            state = dict(states[-1]) if states else {}
            if text.startswith(_PEER_STARTED):
                state = {}
            else:
                hit = next((p for p in PEER_CLOSED if text.startswith(p[0])), None)
                if hit is None or hit[1] in state:
                    continue
                state[hit[1]] = (seq, hit[2])
            seqs.append(seq)
            states.append(state)

    def __bool__(self) -> bool:
        return bool(self._at)

    def closed(self, session: object, requester: str | None, seq: int) -> tuple[int, str] | None:
        """``(close seq, what happened)`` when the side that should answer a request of
        ``requester`` sent at ``seq`` had closed before it; else None."""
        got = self._at.get(session)
        if got is None or requester is None:
            return None
        i = bisect_left(got[0], seq) - 1
        return got[1][i].get(requester) if i >= 0 else None


def peer_closed(ci: CheckInput) -> PeerClosed:
    return PeerClosed((i, ci.session[i], ci.raw[i]) for i, k in enumerate(ci.kind) if k == "log")


def _unanswered(ci: CheckInput, after_close: bool = False) -> Iterator[Hit]:
    """Requests left unanswered: by the answerer (``unanswered-request``), or because it
    had closed (``after_close``). Some requests are their requester's fault, found on them,
    and no answer is owed: one that reused an id still in flight (``request-id-in-flight``:
    an answer it did not get went to the earlier request of that id), one with a null id
    (``request-id-type``: many peers take it for a notification) and a ``notifications/*``
    method with an id (``notification-with-id``)."""
    closes = peer_closed(ci)
    reused = {f.seq for f in ci.findings if f.rule == "request-id-in-flight"}
    for r in ci.pairs:
        if (r.outcome == "unanswered" and r.request_seq is not None
                and not ci.extra.get(r.request_seq, {}).get("answer_not_held")
                and r.method != "subscriptions/listen" and r.request_seq not in reused
                and r.id_key != "null"
                and not (isinstance(r.method, str) and r.method.startswith("notifications/"))):
            why = closes.closed(r.session, r.requester, r.request_seq) if closes else None
            if why is None and not after_close:
                yield r.request_seq, None, f"{r.method} id {r.id_key} got no response"
            elif why is not None and after_close:
                yield r.request_seq, why[0], unanswered_after_close(r.method, r.id_key, why[1])


def unanswered_after_close(method: object, id_key: object, what: str) -> str:
    return f"{method} id {id_key} got no response: {what} before this request; no answer could come"


def _methods(ci: CheckInput, want: str) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        m = ci.method[i]
        if m is None or k not in ("request", "notification"):
            continue
        if k == "request" and m.startswith("notifications/"):
            continue  # reported as notification-with-id
        version = ci.versions.get(ci.session[i], V.DEFAULT)
        table = V.methods(version)
        entry = table.get(m)
        if entry is None:
            if want == "unknown" and V.removed_in(m, version) is None:
                yield i, None, f"{m} is not a {version} method"
            continue
        d = ci.direction[i]
        if want == "direction" and d is not None and entry[1] != "both" and entry[1] != d:
            side = "client" if entry[1] == "c2s" else "server"
            yield i, None, f"{m} is sent by the {side} in {version}"


def _lifecycle(ci: CheckInput) -> Iterator[Hit]:
    first_init: dict[object, int] = {}
    for i, k in enumerate(ci.kind):
        if k == "request" and ci.method[i] == "initialize" and ci.session[i] not in first_init:
            first_init[ci.session[i]] = i
    for i, k in enumerate(ci.kind):
        s = ci.session[i]
        if (k == "request" and s in first_init and i < first_init[s]
                and ci.direction[i] == "c2s" and ci.method[i] not in ("ping", "initialize")):
            yield i, first_init[s], f"{ci.method[i]} before initialize"


def _error_codes(ci: CheckInput, want_reserved_2026: bool) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        code = ci.error_code[i]
        if k != "error" or code is None or not (-32768 <= code <= -32000):
            continue
        version = ci.versions.get(ci.session[i], V.DEFAULT)
        defined = V.error_codes(version)
        if code in defined:
            continue
        in_2026_range = V.normalise(version) == V.LATEST and -32099 <= code <= -32020
        if want_reserved_2026 and in_2026_range:
            yield i, None, f"code {code} is not defined by {version}"
        elif not want_reserved_2026 and not in_2026_range and code not in V.SDK_CODES:
            yield i, None, f"code {code} is reserved but not defined by {version}"


_decode = msgspec.json.decode


def _ping_result(ci: CheckInput) -> Iterator[Hit]:
    for r in ci.pairs:
        if r.method == "ping" and r.outcome == "result" and r.response_seq is not None:
            try:
                result = _decode(ci.raw[r.response_seq]).get("result")
            except (msgspec.DecodeError, AttributeError, RecursionError):
                continue
            if isinstance(result, dict) and set(result) - {"_meta"}:
                yield r.response_seq, r.request_seq, f"ping answered with {sorted(result)}"


def _message(ci: CheckInput, i: int) -> Any:
    """The frame's message as json.loads gives it (its batch member in a batch)."""
    try:
        value = json.loads(ci.raw[i])
    except (ValueError, RecursionError):
        return None
    b = ci.batch[i]
    if b is not None:
        return value[b] if isinstance(value, list) and b < len(value) else None
    return value


def _result_type(ci: CheckInput) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        if k == "result":
            m = _message(ci, i)
            result = m.get("result") if isinstance(m, dict) else None
            if not isinstance(result, dict) or "resultType" not in result:
                yield i, None, "no resultType"


def _request_meta(ci: CheckInput) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        if k == "request":
            m = _message(ci, i)
            params = m.get("params") if isinstance(m, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if (not isinstance(meta, dict)
                    or "io.modelcontextprotocol/protocolVersion" not in meta
                    or "io.modelcontextprotocol/clientCapabilities" not in meta):
                yield i, None, f"{ci.method[i]} without the 2026 _meta members"


def _server_request(ci: CheckInput) -> Iterator[Hit]:
    for i, k in enumerate(ci.kind):
        if k == "request" and ci.direction[i] == "s2c":
            yield i, None, f"the server sent {ci.method[i]}"


def _extra(key: str) -> Callable[[CheckInput], Iterator[Hit]]:
    def check(ci: CheckInput) -> Iterator[Hit]:
        for i, extra in ci.extra.items():
            if key in extra:
                value = extra[key]
                yield i, extra.get("related_seq"), value if isinstance(value, str) else ""
    return check


def _stdout_noise(ci: CheckInput) -> Iterator[Hit]:
    for i, extra in ci.extra.items():
        if extra.get("rule") == "stdout-noise":
            yield i, None, extra.get("detail", "")


def _unreadable(ci: CheckInput) -> Iterator[Hit]:
    """Rows a reader could read as no record of its format: invalid, of no side, with no
    envelope flag (those are the message rules') and no rule the reader named."""
    for i, k in enumerate(ci.kind):
        if (k == "invalid" and ci.direction[i] is None and not ci.flags[i]
                and "rule" not in ci.extra.get(i, {})):
            yield i, None, (ci.reason[i] if i < len(ci.reason) else None) or ""


def _sse_event(ci: CheckInput) -> Iterator[Hit]:
    for i, extra in ci.extra.items():
        event = extra.get("sse_event")
        if event and event != "message" and ci.kind[i] != "log":
            yield i, None, f"an SSE {event!r} event"


#: rules found by the envelope classifier, one message at a time (the flag is the code)
FLAG_RULES = (
    "parse-error", "not-an-object", "not-a-message", "jsonrpc-version", "method-not-string",
    "reserved-method", "params-not-object", "mixed-request-response", "response-neither",
    "result-and-error", "result-not-object", "error-not-object", "error-code-not-integer",
    "error-message-not-string", "request-id-type", "batch-empty")

#: rules found by the pairing walk (its findings carry the code)
FINDING_RULES = (
    "id-type-mismatch", "request-id-reused", "request-id-in-flight", "duplicate-response",
    "orphan-response", "response-after-cancel", "cancel-after-response",
    "cancel-unknown-request", "cancel-initialize", "progress-unknown-token",
    "progress-after-response", "progress-not-increasing")

CHECKS: dict[str, Callable[[CheckInput], Iterator[Hit]]] = {
    **{code: _flag(code) for code in FLAG_RULES},
    "result-id-null": lambda ci: _chain(_result_id_null(ci),
                                        _response_id("result", "response-id-missing")(ci)),
    "error-id-null": _response_id("error", "response-id-null"),
    "error-id-absent": _response_id("error", "response-id-missing"),
    "batch-not-allowed": _batch,
    "big-id": _big_id,
    **{code: _finding(code) for code in FINDING_RULES},
    "unanswered-request": _unanswered,
    "unanswered-after-close": lambda ci: _unanswered(ci, after_close=True),
    "notification-with-id": _notification_with_id,
    "notification-answered": _notification_answered,
    "unknown-method": lambda ci: _methods(ci, "unknown"),
    "wrong-direction": lambda ci: _methods(ci, "direction"),
    "lifecycle-order": _lifecycle,
    "unknown-error-code": lambda ci: _error_codes(ci, False),
    "reserved-error-code-2026": lambda ci: _error_codes(ci, True),
    "ping-result-not-empty": _ping_result,
    "result-type-missing": _result_type,
    "request-meta-missing": _request_meta,
    "server-request-2026": _server_request,
    "stdout-noise": _stdout_noise,
    "ambiguous-pairing": _extra("ambiguous"),
    "sse-non-message-event": _sse_event,
    "unreadable-record": _unreadable,
}

from mcp_notebook.conversation import REF_CHECKS as _CONVERSATION  # noqa: E402 - issue 17

CHECKS.update(_CONVERSATION)


def _chain(*its: Iterator[Hit]) -> Iterator[Hit]:
    for it in its:
        yield from it


def session_versions(
    kind: Sequence[str], session: Sequence[object], direction: Sequence[str | None],
    method: Sequence[str | None], version: Sequence[str | None], pairs: list[PairRow],
    override: str | None = None,
) -> dict[object, str]:
    """The protocol version each session is checked against.

    The initialize result's ``protocolVersion`` wins, then the request's; from 2026-07-28
    on, the ``_meta`` version of requests; an ``override`` wins over all.
    """
    out: dict[object, str] = {}
    seen = set(session)
    if override is not None:
        return {s: V.normalise(override) for s in seen}
    from_request: dict[object, str] = {}
    from_meta: dict[object, Counter[str]] = {}
    for i, k in enumerate(kind):
        v = version[i]
        if v is None or k != "request":
            continue
        if method[i] == "initialize":
            from_request.setdefault(session[i], v)
        else:
            from_meta.setdefault(session[i], Counter())[v] += 1
    for r in pairs:
        if r.method == "initialize" and r.response_seq is not None and r.session not in out:
            v = version[r.response_seq]
            if v is not None:
                out[r.session] = v
    return choose_versions(seen, out, from_request, from_meta)


def choose_versions(sessions: Iterable[object], from_result: dict[object, str],
                    from_request: dict[object, str],
                    from_meta: dict[object, Counter[str]]) -> dict[object, str]:
    """Per session: the initialize result's version, else the initialize request's, else
    the most common ``_meta`` version; sessions with none are left out."""
    out = dict(from_result)
    for s in sessions:
        if s in out:
            continue
        if s in from_request:
            out[s] = from_request[s]
        elif s in from_meta:
            out[s] = from_meta[s].most_common(1)[0][0]
    return out


def run(ci: CheckInput, rules: Sequence[Rule] | None = None
        ) -> list[tuple[Rule, int, int | None, str]]:
    """Apply the catalogue (the rules this oracle has a check for: a rule added since is
    held by its rows of the rule table); ``(rule, seq, related_seq, detail)`` by seq."""
    if rules is None:
        rules = [r for r in RULES if r.code in CHECKS]
    out: list[tuple[Rule, int, int | None, str]] = []
    checked = {s: V.normalise(ci.versions.get(s, V.DEFAULT)) for s in set(ci.session)}
    for r in rules:
        check = CHECKS[r.code]
        applies = {s: v in r.versions for s, v in checked.items()}
        if not any(applies.values()):
            continue
        for seq, related, detail in check(ci):
            if applies.get(ci.session[seq], V.DEFAULT in r.versions):
                out.append((r, seq, related, detail))
    out.sort(key=lambda t: (t[1], t[0].code))
    return out
