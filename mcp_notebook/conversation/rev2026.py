"""The 2026-07-28 patterns: result types, multi round-trip requests (MRTR), subscriptions,
removed methods and retired error codes.

Sources are ``docs/specification/2026-07-28/`` of the specification repository
(``basic/index.mdx``, ``basic/patterns/mrtr.mdx``, ``basic/patterns/subscriptions.mdx``,
``changelog.mdx``). The required ``ttlMs``/``cacheScope`` of cacheable results are
members the 2026 schema requires, so ``schema-result`` reports them with their pointer.
:func:`calls` links the rounds of one logical call (a request answered with
``input_required`` and its retries, each with a new id, echoing ``requestState``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..engine.checks import MARK, NO_TEXT, TWICE
from ..protocol import versions as V
from ..protocol.rules import Rule
from ._view import ERROR, NOTIFICATION, RESULT, Hit, View

__all__ = ["RULES", "CHECKS", "calls", "MRTR_METHODS"]

_ONLY = V.VERSIONS[4:]
_MRTR = "MCP 2026-07-28, basic/patterns/mrtr.mdx"
_SUBS = "MCP 2026-07-28, basic/patterns/subscriptions.mdx"
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
_EMBEDDED = ("elicitation/create", "sampling/createMessage", "roots/list")
SUB_ID = "io.modelcontextprotocol/subscriptionId"
_LISTEN_NOTES = ("notifications/tools/list_changed", "notifications/prompts/list_changed",
                 "notifications/resources/list_changed", "notifications/resources/updated",
                 "notifications/subscriptions/acknowledged")

RULES: tuple[Rule, ...] = (
    Rule("result-type-value", "error", "resultType is complete or input_required",
         "The set of supported ResultType values MUST be created from the set defined in "
         "the core protocol and include any additional values of supported extensions "
         "that are advertised via capabilities.", "MCP 2026-07-28, basic/index.mdx §ResultType",
         "Send \"complete\" or \"input_required\" (or a value of an extension both sides "
         "declared, such as \"task\").", versions=_ONLY, topic="2026"),
    Rule("input-required-method", "error", "input_required only on tools/call, prompts/get, "
         "resources/read", "Servers MUST NOT send InputRequiredResult responses on any other "
         "client requests.", f"{_MRTR} §Supported Requests",
         "Only tools/call, prompts/get and resources/read may answer input_required.",
         versions=_ONLY, topic="2026"),
    Rule("input-required-shape", "error", "An InputRequiredResult asks for something",
         "Servers MUST include at least one of inputRequests or requestState in every "
         "InputRequiredResult response.", f"{_MRTR} §Server Requirements",
         "Add inputRequests (elicitation/create, sampling/createMessage or roots/list "
         "requests) or a requestState.", versions=_ONLY, topic="2026"),
    Rule("retry-request-state", "error", "A retry echoes requestState exactly",
         "If an InputRequiredResult contains the requestState field, the client MUST echo "
         "back the exact value of that field when retrying the original request.",
         f"{_MRTR} §Client Requirements",
         "Send the requestState of the InputRequiredResult unchanged (and none when none "
         "was given), with a new id.", versions=_ONLY, topic="2026"),
    Rule("listen-ack-first", "error", "A subscription is acknowledged first",
         "The server MUST send notifications/subscriptions/acknowledged as the first "
         "message carrying the subscription's ID", f"{_SUBS} §Acknowledgment",
         "Send the acknowledgment before any notification of the subscription.",
         versions=_ONLY, topic="2026"),
    Rule("listen-subscription-id", "error", "Subscription notifications carry their id",
         "All notifications delivered on the stream carry io.modelcontextprotocol/"
         "subscriptionId in _meta, identifying the subscriptions/listen request that "
         "opened the stream.", f"{_SUBS} §Acknowledgment",
         "Put the listen request's JSON-RPC id in _meta[\"io.modelcontextprotocol/"
         "subscriptionId\"] of every notification of the stream.", versions=_ONLY,
         topic="2026"),
    Rule("http-header-mismatch", "error", "Streamable HTTP headers match the body",
         "Any server that processes the message body MUST validate that encoded header "
         "values, after decoding if Base64-encoded, match the corresponding values in the "
         "request body.", "MCP 2026-07-28, basic/transports/streamable-http.mdx "
         "§Server Validation",
         "Send MCP-Protocol-Version (= _meta io.modelcontextprotocol/protocolVersion), "
         "Mcp-Method (= method) and, for tools/call, resources/read and prompts/get, "
         "Mcp-Name (= params.name or params.uri) on every POST; a server should have "
         "answered 400 with -32020 (HeaderMismatch).", versions=_ONLY, topic="2026"),
    Rule("removed-method", "warning", "Methods the negotiated revision removed",
         "The method is defined by an earlier protocol version but not by the negotiated "
         "one.", "MCP schema.json of each version; changelog.mdx of the revision that "
         "removed it", "Use the negotiated revision's replacement (e.g. 2026-07-28: "
         "server/discover for initialize, subscriptions/listen for resources/subscribe), "
         "or negotiate the older version.", topic="2026", quoted=False),
    Rule("retired-error-code", "error", "Retired error codes are not emitted",
         "Implementations of this protocol version MUST NOT emit these codes: -32002 — "
         "resource not found (2025-11-25 and earlier; replaced by -32602).",
         "MCP 2026-07-28, basic/index.mdx §Error Codes",
         "Use -32602 (Invalid params) for a resource that is not found.", versions=_ONLY,
         topic="2026"),
)


def _rows_2026(view: View, kind: int) -> list[int]:
    vi = view.vi
    codes = view.memo("sessions-2026", lambda v: v.sessions_of(V.LATEST))
    if not codes:
        return []
    return np.flatnonzero((vi.kind == kind) & np.isin(vi.session, codes)).tolist()


def _result_type(view: View) -> list[Hit]:
    rows = np.asarray(_rows_2026(view, RESULT), dtype=np.int64)
    m = view.vi.marks(rows)
    # a result may name a resultType other than "complete" where its text names one more
    # than once, or once not as "complete", or may spell the name with escapes
    named = rows[((m & NO_TEXT) == 0) & (((m & MARK["\\u"]) != 0) | (
        ((m & MARK['"resultType"']) != 0)
        & (((m & TWICE) != 0) | ((m & MARK['"resultType":"complete"']) == 0))))].tolist()
    view.prefetch(named)
    out: list[Hit] = []
    for seq in named:
        rt = (view.result(seq) or {}).get("resultType", "complete")
        if rt not in ("complete", "input_required", "task"):
            out.append(Hit(seq, None, f"resultType {rt!r}", "/result/resultType"))
    return out


def _input_required(view: View) -> list[tuple[int, int, dict[str, Any]]]:
    """``(request, response, result)`` of the input_required answers."""
    out: list[tuple[int, int, dict[str, Any]]] = []
    rows = np.asarray(_rows_2026(view, RESULT), dtype=np.int64)
    if not len(rows):  # no 2026-07-28 session: no pair walked
        return out
    m = view.vi.marks(rows)
    maybe = set(rows[((m & NO_TEXT) == 0)
                     & ((m & (MARK['"input_required"'] | MARK["\\u"])) != 0)].tolist())
    pairs = [(q, r) for q, r in view.answered(kind="result") if r in maybe]
    view.prefetch([r for _, r in pairs])
    for req, resp in pairs:
        result = view.result(resp) or {}
        if result.get("resultType") == "input_required":
            out.append((req, resp, result))
    return out


def _ir_method(view: View) -> list[Hit]:
    return [Hit(resp, req, f"{view.method(req)} answered input_required", "/result/resultType")
            for req, resp, _ in view.memo("ir", _input_required)
            if view.method(req) not in MRTR_METHODS]


def _ir_shape(view: View) -> list[Hit]:
    out = []
    for req, resp, result in view.memo("ir", _input_required):
        if "inputRequests" not in result and "requestState" not in result:
            out.append(Hit(resp, req, "neither inputRequests nor requestState", "/result"))
            continue
        for key, ask in (result.get("inputRequests") or {}).items():
            m = ask.get("method") if isinstance(ask, dict) else None
            if m not in _EMBEDDED:
                out.append(Hit(resp, req, f"inputRequests[{key!r}] is {m!r}",
                               f"/result/inputRequests/{key}/method"))
    return out


def _identity(view: View, seq: int) -> tuple[Any, ...]:
    p = view.params(seq)
    return (view.method(seq), p.get("name") if "name" in p else p.get("uri"))


def _rounds(view: View) -> list[tuple[int, int, int, int | None]]:
    """``(request seq, call id, round, previous input_required response)`` of every
    request of the MRTR methods that belongs to a logical call of more than one round."""
    irs = {req: (resp, result) for req, resp, result in view.memo("ir", _input_required)}
    if not irs:
        return []
    open_calls: dict[tuple[Any, ...], tuple[int, int, int, dict[str, Any]]] = {}
    out: list[tuple[int, int, int, int | None]] = []
    for seq in view.rows(MRTR_METHODS, (0,)):
        key = _identity(view, seq)
        p = view.params(seq)
        prev = open_calls.get(key)
        is_retry = prev is not None and ("inputResponses" in p or "requestState" in p
                                         or "requestState" not in prev[3])
        if is_retry and prev is not None:
            call, rnd = prev[0], prev[1] + 1
            out.append((seq, call, rnd, prev[2]))
        else:
            call, rnd = seq, 1
        if seq in irs:
            if rnd == 1:
                out.append((seq, call, 1, None))
            open_calls[key] = (call, rnd, irs[seq][0], irs[seq][1])
        else:
            open_calls.pop(key, None)
    return sorted(set(out))


def _retry_state(view: View) -> list[Hit]:
    out = []
    for seq, _, rnd, prev in view.memo("rounds", _rounds):
        if prev is None or rnd == 1:
            continue
        want = (view.result(prev) or {}).get("requestState")
        got = view.params(seq).get("requestState")
        if want != got:
            what = "no requestState" if got is None else f"requestState {str(got)[:40]!r}"
            exp = "none" if want is None else f"{str(want)[:40]!r}"
            out.append(Hit(seq, prev, f"retry sends {what}, the InputRequiredResult gave "
                           f"{exp}", "/params/requestState"))
    return out


def _listen(view: View, want: str) -> list[Hit]:
    listens = {view.vi.id_key[s]: s for s in view.rows(["subscriptions/listen"], (0,))
               if view.version(s) == V.LATEST}
    if not listens:
        return []
    acked: set[str] = set()
    out = []
    for seq in view.rows(_LISTEN_NOTES, (NOTIFICATION,)):
        if view.version(seq) != V.LATEST:
            continue
        meta = view.params(seq).get("_meta")
        sub = meta.get(SUB_ID) if isinstance(meta, dict) else None
        key = None if sub is None else (f'"{sub}"' if isinstance(sub, str) else str(sub))
        if key is None or key not in listens:
            if want == "id":
                out.append(Hit(seq, None, f"{view.method(seq)} without a subscriptionId of "
                               "an open listen request", f"/params/_meta/{SUB_ID}"))
            continue
        if view.method(seq) == "notifications/subscriptions/acknowledged":
            acked.add(key)
        elif key not in acked and want == "ack":
            out.append(Hit(seq, listens[key], f"{view.method(seq)} before the "
                           "acknowledgment of subscription " + key))
    return out


def _removed(view: View) -> list[Hit]:
    """Decided once per (session, method) pair present."""
    vi = view.vi
    # only the methods some revision removed (a table over method codes: no group of the
    # frames of methods every version has)
    gone_codes = [c for c, m in enumerate(vi.method_cats)
                  if isinstance(m, str) and any(V.removed_in(m, v) for v in V.VERSIONS)]
    if not gone_codes:
        return []
    rows = view.row_array([vi.method_cats[c] for c in gone_codes])
    if not len(rows):
        return []
    out = []
    # the verdict of each (version, method) once, and only the groups it condemns made
    # (a capture of thousands of sessions has a group per session and method)
    details: dict[tuple[str, int], str | None] = {}

    def detail_of(s_code: int, m_code: int) -> str | None:
        version = V.normalise(vi.version_of(s_code))
        key = (version, m_code)
        if key not in details:
            m = vi.method_cats[m_code]
            removed = V.removed_in(m, version)
            details[key] = None if removed is None else (
                f"{m} was removed in {removed[0]} (last in {removed[1]}; "
                f"this session is {version})")
        return details[key]

    for (s_code, m_code), group in view.groups(
            rows, vi.session, vi.method, want=lambda v: detail_of(*v) is not None):
        detail = detail_of(s_code, m_code)
        if detail is not None:  # (always: the groups made are those it condemns)
            out += [Hit(int(seq), None, detail) for seq in group.tolist()]
    return sorted(out)


_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


def _unbase64(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        import base64
        import binascii

        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return value
    return value


def _headers(view: View) -> list[Hit]:
    """The POST bodies of a HAR capture (``extra["http"] == "POST"``) in 2026 sessions
    against their MCP headers (``extra["mcp_headers"]``, names lower-cased)."""
    codes = set(view.memo("sessions-2026", lambda v: v.sessions_of(V.LATEST)))
    if not codes:
        return []
    vi = view.vi
    rows = [s for s in view.rows(None) if int(vi.session[s]) in codes
            and vi.direction[s] == 0 and view.extra(s).get("http") == "POST"]
    view.prefetch(rows)
    out = []
    for seq in rows:
        got = view.extra(seq).get("mcp_headers") or {}
        method = view.method(seq)
        p = view.params(seq)
        meta = p.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        want = {"mcp-method": method}
        if vi.kind[seq] == 0 and PROTOCOL_VERSION in meta:
            want["mcp-protocol-version"] = meta[PROTOCOL_VERSION]
        if method in _NAMED and isinstance(p.get(_NAMED[method]), str):
            want["mcp-name"] = p[_NAMED[method]]
        for header, value in want.items():
            sent = got.get(header)
            if sent is None:
                out.append(Hit(seq, None, f"no {header} header (the body says {value!r})"))
                break
            if _unbase64(sent) != value:
                out.append(Hit(seq, None, f"{header}: {sent!r}, the body says {value!r}"))
                break
    return out


def _retired(view: View) -> list[Hit]:
    rows = _rows_2026(view, ERROR)
    codes = view.vi.error_code
    return [Hit(s, None, "code -32002", "/error/code") for s in rows
            if not pd.isna(codes[s]) and int(codes[s]) == -32002]


CHECKS = {"result-type-value": _result_type, "input-required-method": _ir_method,
          "input-required-shape": _ir_shape, "retry-request-state": _retry_state,
          "listen-ack-first": lambda v: _listen(v, "ack"),
          "listen-subscription-id": lambda v: _listen(v, "id"),
          "http-header-mismatch": _headers, "removed-method": _removed, "retired-error-code": _retired}


def calls(trace: Any) -> pd.DataFrame:
    """The pairs with ``call`` (the request seq of the logical call's first round) and
    ``round`` (1, 2, ...): a 2026 MRTR request answered ``input_required`` and its
    retries are one call; any other request is a call of one round."""
    from ._view import view_of

    view = view_of(trace._check_input(trace.versions))
    rounds = {seq: (call, rnd) for seq, call, rnd, _ in view.memo("rounds", _rounds)}
    pairs = trace.pairs.copy()
    req = pairs["request_seq"]
    pairs["call"] = pd.array([rounds.get(int(s), (int(s), 1))[0] if not pd.isna(s) else None
                              for s in req], dtype="Int64")
    pairs["round"] = pd.array([rounds.get(int(s), (int(s), 1))[1] if not pd.isna(s) else None
                               for s in req], dtype="Int64")
    return pairs
