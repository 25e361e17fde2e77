"""The checks over whole columns: the same findings as :func:`mcp_notebook.core.checks.run`.

Sans-IO: a :class:`VecInput` holds numpy columns (codes for categorical values), the
sparse per-frame flags, the pairing's :class:`~mcp_notebook.core.pairing_vec.PairTable`
and the version of each session. The per-frame rules are masks over the columns, decided
once per distinct (session, method, direction) or (session, error code); the frame text
is read only for the rules that need it (ping results, the 2026 members), and only for
the frames they apply to. A rule without a column form here runs through its reference
check (:data:`mcp_notebook.core.checks.CHECKS`) on a :class:`CheckInput` whose lists are
made on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from ..fast import native as _native
from . import checks as ref_checks
from . import versions as V
from .pairing_vec import OUTCOMES, PairTable
from .rules import RULES, Rule

__all__ = ["VecInput", "VEC_CHECKS", "run_vec", "session_versions_vec", "distinct_codes"]

from .checks_bridge import session_versions_vec  # noqa: E402 - re-exported

REQUEST, NOTIFICATION, RESULT, ERROR = 0, 1, 2, 3
KINDS = ("request", "notification", "result", "error", "invalid", "stderr", "log")
_DIR = (None, "c2s", "s2c")
Hits = tuple[np.ndarray, np.ndarray, Sequence[str]]  # seq, related (-1: none), details
_NONE = np.empty(0, dtype=np.int64)


@dataclass
class VecInput:
    kind: np.ndarray  # int8 codes (KINDS)
    session: np.ndarray  # int32 codes
    session_cats: list[Any]
    direction: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    id_key: np.ndarray  # object
    method: np.ndarray  # int32 codes
    method_cats: list[Any]
    error_code: Any  # Int64 array
    flags: dict[int, tuple[str, ...]]
    batch: np.ndarray  # int32, -1 none
    size: np.ndarray  # int64 bytes of each frame's text
    texts: Callable[[np.ndarray], list[str | None]]  # frame text of rows, read on demand
    pairs: PairTable
    versions: dict[Any, str]  # session -> checked version
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    # rows of results known to hold no member but _meta (their text need not be read)
    empty_results: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # rows whose id key is longer than 15 characters, when the reader noted them (None:
    # every request's key is measured)
    long_keys: np.ndarray | None = None
    # why a reader made a row invalid (object; None: no reasons given)
    reason: np.ndarray | None = None

    def session_of(self, code: int) -> Any:
        return None if code < 0 else self.session_cats[code]

    def version_of(self, code: int) -> str:
        return self.versions.get(self.session_of(code), V.DEFAULT)

    @cached_property
    def flag_rows(self) -> dict[str, np.ndarray]:
        out: dict[str, list[int]] = {}
        for row in sorted(self.flags):
            for f in self.flags[row]:
                out.setdefault(f, []).append(row)
        return {f: np.asarray(rows, dtype=np.int64) for f, rows in out.items()}

    def method_codes(self, want: Callable[[str], bool]) -> np.ndarray:
        """Codes of the methods for which ``want(name)`` holds."""
        return np.asarray([i for i, m in enumerate(self.method_cats)
                           if isinstance(m, str) and want(m)], dtype=np.int32)

    def method_in(self, codes: np.ndarray, method: np.ndarray | None = None) -> np.ndarray:
        """Whether each method code (of ``method``, default: every frame's) is in ``codes``."""
        table = np.zeros(len(self.method_cats) + 1, dtype=bool)
        table[codes] = True  # code -1 (no method) reads the last slot: False
        return table[self.method if method is None else method]

    def name(self, code: int) -> Any:
        return None if code < 0 else self.method_cats[code]

    @cached_property
    def method_combos(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _method_combos(self)

    @cached_property
    def peer_closed(self) -> ref_checks.PeerClosed:
        """When each session's sides closed (the tap's records of it, among the log rows)."""
        rows = np.flatnonzero(self.kind == KINDS.index("log"))
        return ref_checks.PeerClosed(zip(rows.tolist(),
                                         map(self.session_of, self.session[rows].tolist()),
                                         self.texts(rows), strict=True))

    def reference(self) -> ref_checks.CheckInput:
        """The same input as plain lists, for rules checked by their reference function."""
        from .checks_bridge import LazyCheckInput

        return LazyCheckInput(self)


def distinct_codes(codes: np.ndarray) -> list[int]:
    """The distinct values of a code column, ascending (a table of seen values when the
    codes span a small range: no sort, no hash of a million values)."""
    if not len(codes):
        return []
    if codes.dtype.kind == "i" and codes.dtype.itemsize <= 2:
        bits = 8 * codes.dtype.itemsize
        seen = np.zeros(1 << bits, dtype=bool)
        seen[codes.view(np.uint8 if bits == 8 else np.uint16)] = True
        found = np.flatnonzero(seen)
        found[found >= 1 << (bits - 1)] -= 1 << bits
        return sorted(found.tolist())
    if codes.dtype.kind == "i":
        lo, hi = int(codes.min()), int(codes.max())
        if hi - lo < 1 << 20:
            seen = np.zeros(hi - lo + 1, dtype=bool)
            seen[codes - lo] = True
            return (np.flatnonzero(seen) + lo).tolist()
    return np.unique(codes).tolist()


def _hits(seq: Any, related: Any = None, details: Sequence[str] | None = None) -> Hits:
    seq = np.asarray(seq, dtype=np.int64)
    rel = np.full(len(seq), -1, dtype=np.int64) if related is None \
        else np.asarray(related, dtype=np.int64)
    return seq, rel, details if details is not None else [""] * len(seq)


def _flag(code: str) -> Callable[[VecInput], Hits]:
    return lambda vi: _hits(vi.flag_rows.get(code, _NONE))


def _response_id(want_kind: int, *flags: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        rows = [r for f in flags for r in vi.flag_rows.get(f, _NONE).tolist()
                if vi.kind[r] == want_kind]
        return _hits(rows)
    return check


def _result_id_null(vi: VecInput) -> Hits:
    """Results with a null id (but those that echo an earlier null request id of the other
    side: see the reference) or none."""
    null = vi.flag_rows.get("response-id-null", _NONE)
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
    missing = vi.flag_rows.get("response-id-missing", _NONE)
    return _hits(np.concatenate([null, missing[vi.kind[missing] == RESULT]]))


def _batch(vi: VecInput) -> Hits:
    rows = vi.flag_rows.get("batch", _NONE)
    rows = rows[vi.batch[rows] == 0]
    return _hits(rows, None, ["a batch array"] * len(rows))


_BIG = 1 << 53


def _big_id(vi: VecInput) -> Hits:
    if vi.long_keys is not None:
        req = vi.long_keys[vi.kind[vi.long_keys] == REQUEST]
    else:
        req = np.flatnonzero(vi.kind == REQUEST)
    keys = vi.id_key[req]
    long = _native.str_lengths(keys.tolist()) > 15
    req, long_keys = req[long].tolist(), keys[long].tolist()
    native = _native.native
    verdict = native.big_ids(long_keys) if native is not None else bytes([2]) * len(long_keys)
    out, det = [], []
    for r, key, v in zip(req, long_keys, verdict, strict=True):
        if v == 1 or (v == 2 and _is_big(key)):
            out.append(r)
            det.append(f"id {key} is above 2^53")
    return _hits(out, None, det)


def _is_big(key: str) -> bool:
    """Whether an id key is an integer above 2^53 (the reference's test)."""
    return key[0] != '"' and key.lstrip("-").isdigit() and abs(int(key)) > _BIG


def _notification_with_id(vi: VecInput) -> Hits:
    codes = vi.method_codes(lambda m: m.startswith("notifications/"))
    rows = np.flatnonzero((vi.kind == REQUEST) & vi.method_in(codes))
    return _hits(rows, None, [f"{vi.name(int(vi.method[r]))} carries id {vi.id_key[r]}"
                              for r in rows.tolist()])


def _notification_answered(vi: VecInput) -> Hits:
    p = vi.pairs
    codes = vi.method_codes(lambda m: m.startswith("notifications/"))
    sel = np.flatnonzero((p.request_seq >= 0) & vi.method_in(codes, p.method))
    dup = p.outcome[sel] == OUTCOMES.index("duplicate")
    seq, rel, det = [], [], []
    dups_of: dict[int, list[int]] = {}
    for i in sel[dup].tolist():
        dups_of.setdefault(int(p.request_seq[i]), []).append(int(p.response_seq[i]))
    for i in sel.tolist():
        q, m = int(p.request_seq[i]), vi.name(int(p.method[i]))
        if p.outcome[i] == OUTCOMES.index("duplicate"):
            responses = [int(p.response_seq[i])]
        else:
            first = [int(p.response_seq[i])] if p.response_seq[i] >= 0 else []
            responses = first + sorted(dups_of.get(q, []))
        for s in responses:
            seq.append(s)
            rel.append(q)
            det.append(f"a response to {m}")
    return _hits(seq, rel, det)


def _unanswered(after_close: bool) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        p = vi.pairs
        # (the requests whose requester is at fault: see the reference)
        owed = vi.method_codes(lambda m: m == "subscriptions/listen"
                               or m.startswith("notifications/"))
        sel = np.flatnonzero((p.outcome == OUTCOMES.index("unanswered")) & (p.request_seq >= 0)
                             & ~vi.method_in(owed, p.method))
        if len(sel):
            sel = sel[p.id_key[sel] != "null"]
        reused = [f[0] for f in p.findings if f[1] == "request-id-in-flight"]
        if reused and len(sel):
            sel = sel[~np.isin(p.request_seq[sel], np.asarray(reused, dtype=np.int64))]
        closes = vi.peer_closed
        why: list[tuple[int, str] | None] = [None] * len(sel)
        if closes and len(sel):
            why = [closes.closed(vi.session_of(int(p.session[i])), _DIR[p.requester[i] + 1],
                                 int(p.request_seq[i])) for i in sel.tolist()]
            keep = np.fromiter((w is not None for w in why), dtype=bool, count=len(sel))
            if not after_close:
                keep = ~keep
            sel = sel[keep]
            why = list(compress(why, keep.tolist()))
        elif after_close:
            return _hits(_NONE)
        if after_close:
            return _hits(p.request_seq[sel], [w[0] for w in why],  # type: ignore[index]
                         [ref_checks.unanswered_after_close(vi.name(int(p.method[i])),
                                                            p.id_key[i], w[1])  # type: ignore[index]
                          for i, w in zip(sel.tolist(), why, strict=True)])
        return _hits(p.request_seq[sel], None,
                     [f"{vi.name(int(p.method[i]))} id {p.id_key[i]} got no response"
                      for i in sel.tolist()])
    return check


def _methods(want: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        sel, flat, uniq = vi.method_combos
        m1 = len(vi.method_cats) + 1
        bad: dict[int, str] = {}
        for c in uniq.tolist():
            d, m, s = c % 3 - 1, (c // 3) % m1, (c // 3) // m1 - 1
            version = vi.version_of(s)
            name = vi.method_cats[m]
            entry = V.methods(version).get(name)
            if entry is None:
                if want == "unknown":
                    bad[c] = f"{name} is not a {version} method"
            elif want == "direction" and d >= 0 and entry[1] != "both" and entry[1] != _DIR[d + 1]:
                side = "client" if entry[1] == "c2s" else "server"
                bad[c] = f"{name} is sent by the {side} in {version}"
        if not bad:
            return _hits(_NONE)
        codes = np.fromiter(bad, dtype=np.int64, count=len(bad))
        size = (len(vi.session_cats) + 1) * m1 * 3
        if size <= _DENSE:
            table = np.zeros(size, dtype=bool)
            table[codes] = True
            hit = np.flatnonzero(sel & table[flat])
        else:
            hit = np.flatnonzero(sel & np.isin(flat, codes))
        return _hits(hit, None, [bad[c] for c in flat[hit].tolist()])
    return check


_DENSE = 1 << 22  # combinations of (session, method, direction) held in a table


def _method_combos(vi: VecInput) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which frames the method rules look at (a mask), each frame's (session, method,
    direction) as one number, and the distinct numbers of the frames looked at."""
    notif = vi.method_codes(lambda m: m.startswith("notifications/"))
    sel = (((vi.kind == REQUEST) & ~vi.method_in(notif)) | (vi.kind == NOTIFICATION)) \
        & (vi.method >= 0)
    m1 = len(vi.method_cats) + 1
    size = (len(vi.session_cats) + 1) * m1 * 3
    flat: Any = vi.session.astype(np.int32 if size < 1 << 31 else np.int64)
    flat += 1
    flat *= m1
    flat += vi.method
    flat *= 3
    flat += vi.direction
    flat += 1
    if size <= _DENSE:  # few combinations: a table of those seen
        present = np.zeros(size, dtype=bool)
        present[flat[sel]] = True
        return sel, flat, np.flatnonzero(present)
    return sel, flat, np.unique(flat[sel])


def _lifecycle(vi: VecInput) -> Hits:
    init = vi.method_codes(lambda m: m == "initialize")
    inits = np.flatnonzero((vi.kind == REQUEST) & vi.method_in(init))
    if not len(inits):
        return _hits(_NONE)
    sess, first = np.unique(vi.session[inits], return_index=True)
    first_init = np.full(len(vi.session_cats) + 1, -1, dtype=np.int64)
    first_init[sess] = inits[first]  # session code -1 lands in the last slot
    # only requests before some session's first initialize can come too early
    head = int(first_init.max())
    req = np.flatnonzero(vi.kind[:head] == REQUEST)
    meth = vi.method[req]
    fi = first_init[vi.session[req]]
    ok_methods = vi.method_codes(lambda m: m in ("ping", "initialize"))
    sel = (fi >= 0) & (req < fi) & (vi.direction[req] == 0) & ~vi.method_in(ok_methods, meth)
    rows, fi = req[sel], fi[sel]
    return _hits(rows, fi, [f"{vi.name(int(vi.method[r]))} before initialize"
                            for r in rows.tolist()])


def _error_codes(reserved_2026: bool) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        codes = vi.error_code
        rows = np.flatnonzero((vi.kind == ERROR) & ~np.asarray(codes.isna()))
        vals = np.asarray(codes[rows], dtype=np.int64) if len(rows) else _NONE
        inr = (vals >= -32768) & (vals <= -32000)
        rows, vals = rows[inr], vals[inr]
        out, det = [], []
        cache: dict[tuple[int, int], str | None] = {}
        for r, code in zip(rows.tolist(), vals.tolist(), strict=True):
            s = int(vi.session[r])
            got = cache.get((s, code), "")
            if got == "":
                got = cache[(s, code)] = _error_verdict(vi.version_of(s), code, reserved_2026)
            if got is not None:
                out.append(r)
                det.append(got)
        return _hits(out, None, det)
    return check


def _error_verdict(version: str, code: int, reserved_2026: bool) -> str | None:
    if code in V.error_codes(version):
        return None
    in_2026_range = V.normalise(version) == V.LATEST and -32099 <= code <= -32020
    if reserved_2026 and in_2026_range:
        return f"code {code} is not defined by {version}"
    if not reserved_2026 and not in_2026_range and code not in V.SDK_CODES:
        return f"code {code} is reserved but not defined by {version}"
    return None


class _PingResponse(msgspec.Struct, gc=False):
    result: dict[str, msgspec.Raw] | UnsetType = UNSET


_decode_ping = msgspec.json.Decoder(_PingResponse).decode


def _ping_result(vi: VecInput) -> Hits:
    p = vi.pairs
    ping = vi.method_codes(lambda m: m == "ping")
    sel = np.flatnonzero(vi.method_in(ping, p.method) & (p.outcome == OUTCOMES.index("result"))
                         & (p.response_seq >= 0))
    # a frame with "jsonrpc":"2.0" and a result with a member is at least 39 bytes longer
    # than its id: shorter ones hold an empty result, no need to read them
    if len(vi.empty_results):
        empty = np.zeros(len(vi.kind), dtype=bool)
        empty[vi.empty_results] = True
        sel = sel[~empty[p.response_seq[sel]]]
    rs = p.response_seq[sel]
    keylen = np.fromiter(map(len, p.id_key[sel].tolist()), dtype=np.int64, count=len(sel))
    versioned = np.array([r not in vi.flags or "jsonrpc-version" not in vi.flags[r]
                          for r in rs.tolist()], dtype=bool)
    sel = sel[~(versioned & (vi.size[rs] < 39 + keylen))]
    out, rel, det = [], [], []
    for i, text in zip(sel.tolist(), vi.texts(p.response_seq[sel]), strict=True):
        if text is None:
            continue
        try:  # as decode(text).get("result"), without building the values
            result = _decode_ping(text).result
        except (msgspec.DecodeError, RecursionError):
            continue
        if result is not UNSET and set(result) - {"_meta"}:
            out.append(int(p.response_seq[i]))
            rel.append(int(p.request_seq[i]))
            det.append(f"ping answered with {sorted(result)}")
    return _hits(out, rel, det)


def _text_rule(kind: int, test: Callable[[str], bool],
               detail: Callable[[VecInput, int], str]) -> Callable[[VecInput, np.ndarray], Hits]:
    def check(vi: VecInput, rows: np.ndarray) -> Hits:
        rows = rows[vi.kind[rows] == kind]
        hit = [r for r, t in zip(rows.tolist(), vi.texts(rows), strict=True)
               if t is not None and test(t)]
        return _hits(hit, None, [detail(vi, r) for r in hit])
    return check


_result_type = _text_rule(RESULT, lambda t: '"resultType"' not in t, lambda vi, r: "no resultType")
_request_meta = _text_rule(
    REQUEST, lambda t: ("io.modelcontextprotocol/protocolVersion" not in t
                        or "io.modelcontextprotocol/clientCapabilities" not in t),
    lambda vi, r: f"{vi.name(int(vi.method[r]))} without the 2026 _meta members")


def _server_request(vi: VecInput) -> Hits:
    rows = np.flatnonzero((vi.kind == REQUEST) & (vi.direction == 1))
    return _hits(rows, None, [f"the server sent {vi.name(int(vi.method[r]))}"
                              for r in rows.tolist()])


def _finding(code: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        got = [f for f in vi.pairs.findings if f[1] == code]
        return _hits([f[0] for f in got], [-1 if f[2] is None else f[2] for f in got],
                     [f[3] for f in got])
    return check


def _extra(key: str) -> Callable[[VecInput], Hits]:
    def check(vi: VecInput) -> Hits:
        got = [(i, e.get("related_seq"), e[key]) for i, e in vi.extra.items() if key in e]
        return _hits([g[0] for g in got], [-1 if g[1] is None else g[1] for g in got],
                     [v if isinstance(v, str) else "" for _, _, v in got])
    return check


def _stdout_noise(vi: VecInput) -> Hits:
    got = [(i, e.get("detail", "")) for i, e in vi.extra.items()
           if e.get("rule") == "stdout-noise"]
    return _hits([g[0] for g in got], None, [g[1] for g in got])


def _unreadable(vi: VecInput) -> Hits:
    """As :func:`mcp_notebook.core.checks._unreadable`, over the invalid rows only."""
    rows = np.flatnonzero((vi.kind == KINDS.index("invalid")) & (vi.direction < 0)).tolist()
    got = [i for i in rows if not vi.flags.get(i) and "rule" not in vi.extra.get(i, {})]
    reasons = [None] * len(got) if vi.reason is None else vi.reason[got].tolist()
    return _hits(got, None, [r or "" for r in reasons])


def _sse_event(vi: VecInput) -> Hits:
    log = KINDS.index("log")
    got = [(i, e["sse_event"]) for i, e in vi.extra.items()
           if e.get("sse_event") and e["sse_event"] != "message" and vi.kind[i] != log]
    return _hits([g[0] for g in got], None, [f"an SSE {ev!r} event" for _, ev in got])


VEC_CHECKS: dict[str, Callable[[VecInput], Hits]] = {
    **{code: _flag(code) for code in ref_checks.FLAG_RULES},
    "result-id-null": lambda vi: _result_id_null(vi),
    "error-id-null": _response_id(ERROR, "response-id-null"),
    "error-id-absent": _response_id(ERROR, "response-id-missing"),
    "batch-not-allowed": _batch,
    "big-id": _big_id,
    **{code: _finding(code) for code in ref_checks.FINDING_RULES},
    "unanswered-request": _unanswered(False),
    "unanswered-after-close": _unanswered(True),
    "notification-with-id": _notification_with_id,
    "notification-answered": _notification_answered,
    "unknown-method": _methods("unknown"),
    "wrong-direction": _methods("direction"),
    "lifecycle-order": _lifecycle,
    "unknown-error-code": _error_codes(False),
    "reserved-error-code-2026": _error_codes(True),
    "ping-result-not-empty": _ping_result,
    "server-request-2026": _server_request,
    "stdout-noise": _stdout_noise,
    "ambiguous-pairing": _extra("ambiguous"),
    "sse-non-message-event": _sse_event,
    "unreadable-record": _unreadable,
}

from ..conversation import VEC_CHECKS as _CONVERSATION  # noqa: E402 - issue 17

VEC_CHECKS.update(_CONVERSATION)

#: rules that read frame text: given only the rows of sessions the rule applies to
ROW_CHECKS: dict[str, Callable[[VecInput, np.ndarray], Hits]] = {
    "result-type-missing": _result_type,
    "request-meta-missing": _request_meta,
}


def run_vec(vi: VecInput, rules: Sequence[Rule] = RULES) -> list[tuple[Rule, int, int | None, str]]:
    """Apply the catalogue; ``(rule, seq, related_seq, detail)`` sorted by (seq, code)."""
    present = distinct_codes(vi.session)
    checked = {c: V.normalise(vi.version_of(c)) for c in present}
    out: list[tuple[Rule, int, int | None, str]] = []
    reference: ref_checks.CheckInput | None = None
    # by code: one stable sort by seq at the end then orders by (seq, code)
    for r in sorted(rules, key=lambda rule: rule.code):
        applies_by = {c: v in r.versions for c, v in checked.items()}
        if not any(applies_by.values()):
            continue
        table = np.zeros(len(vi.session_cats) + 1, dtype=bool)
        for c, ok in applies_by.items():
            table[c] = ok  # code -1 lands in the last slot
        if r.code in ROW_CHECKS:
            seq, rel, det = ROW_CHECKS[r.code](vi, np.flatnonzero(table[vi.session]))
        elif r.code in VEC_CHECKS:
            seq, rel, det = VEC_CHECKS[r.code](vi)
        else:  # no column form: the reference check, on lists made on demand
            if reference is None:
                reference = vi.reference()
            got = list(ref_checks.CHECKS[r.code](reference))
            seq = np.asarray([g[0] for g in got], dtype=np.int64)
            rel = np.asarray([-1 if g[1] is None else g[1] for g in got], dtype=np.int64)
            det = [g[2] for g in got]
        if not len(seq):
            continue
        keep = table[vi.session[seq]]
        if not keep.all():
            seq, rel = seq[keep], rel[keep]
            det = list(compress(det, keep.tolist()))
        rel_list: list[Any] = rel.tolist()
        if (rel < 0).any():
            rel_list = [None if q < 0 else q for q in rel_list]
        out.extend(zip(repeat(r), seq.tolist(), rel_list, det))
    out.sort(key=itemgetter(1))
    return out
