"""Rules that read a frame's text: ping results, the 2026 members, server requests."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from ..checks import REQUEST, RESULT, Hits, VecInput, check, hits
from ..pairing import OUTCOMES


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
    return hits(out, rel, det)


def _text_rule(kind: int, test: Callable[[str], bool],
               detail: Callable[[VecInput, int], str]) -> Callable[[VecInput, np.ndarray], Hits]:
    def check(vi: VecInput, rows: np.ndarray) -> Hits:
        rows = rows[vi.kind[rows] == kind]
        hit = [r for r, t in zip(rows.tolist(), vi.texts(rows), strict=True)
               if t is not None and test(t)]
        return hits(hit, None, [detail(vi, r) for r in hit])
    return check


_result_type = _text_rule(RESULT, lambda t: '"resultType"' not in t, lambda vi, r: "no resultType")


_request_meta = _text_rule(
    REQUEST, lambda t: ("io.modelcontextprotocol/protocolVersion" not in t
                        or "io.modelcontextprotocol/clientCapabilities" not in t),
    lambda vi, r: f"{vi.name(int(vi.method[r]))} without the 2026 _meta members")


def _server_request(vi: VecInput) -> Hits:
    rows = np.flatnonzero((vi.kind == REQUEST) & (vi.direction == 1))
    return hits(rows, None, [f"the server sent {vi.name(int(vi.method[r]))}"
                              for r in rows.tolist()])

check("ping-result-not-empty")(_ping_result)
check("result-type-missing", rows=True)(_result_type)
check("request-meta-missing", rows=True)(_request_meta)
check("server-request-2026")(_server_request)
