"""Rules that read a frame's text: ping results, the 2026 members, server requests."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from ..checks import MARK, NO_TEXT, REQUEST, RESULT, Hits, VecInput, check, hits
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


class _Frame(msgspec.Struct, gc=False):
    """The members of a message the 2026 rules read (each kept as its JSON text)."""

    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET


class _Meta2026(msgspec.Struct, gc=False,
                rename={"version": "io.modelcontextprotocol/protocolVersion",
                        "caps": "io.modelcontextprotocol/clientCapabilities"}):
    version: msgspec.Raw | UnsetType = UNSET
    caps: msgspec.Raw | UnsetType = UNSET


class _Params2026(msgspec.Struct, gc=False):
    _meta: _Meta2026 | None | UnsetType = UNSET


_decode_frame = msgspec.json.Decoder(_Frame).decode
_decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
_decode_members = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_decode_params_2026 = msgspec.json.Decoder(_Params2026).decode


def _escaped_name(text: str) -> bool:
    """The text may spell a member name with escapes (the names these rules look for can
    hold a ``\\uXXXX`` or a ``\\/``; ``\\n``, ``\\"`` and the like cannot be in them)."""
    return "\\u" in text or "\\/" in text


def _member(text: str, batch: int, name: str) -> msgspec.Raw | None:
    """The JSON text of ``name`` (params or result) of the frame's message (its batch
    member when ``batch`` >= 0), or None where the message has none or is not an object."""
    try:
        raw: object = text
        if batch >= 0:
            raw = _decode_batch(text)[batch]
        value = getattr(_decode_frame(raw), name)  # type: ignore[arg-type]
    except (msgspec.DecodeError, msgspec.ValidationError, IndexError, RecursionError):
        return None
    return None if value is UNSET else value


def _no_result_type(text: str, batch: int) -> bool:
    """The result is not an object with a resultType member (for a text that names it, or
    may spell it: ``_result_type`` sifts the others out by their marks)."""
    result = _member(text, batch, "result")
    try:
        return result is None or "resultType" not in _decode_members(result)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return True


def _no_request_meta(text: str, batch: int) -> bool:
    """params._meta lacks the protocol version or the client capabilities."""
    if (not _escaped_name(text)
            and ('"io.modelcontextprotocol/protocolVersion"' not in text
                 or '"io.modelcontextprotocol/clientCapabilities"' not in text)):
        return True
    params = _member(text, batch, "params")
    try:
        meta = _decode_params_2026(params)._meta if params is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return True
    return not isinstance(meta, _Meta2026) or meta.version is UNSET or meta.caps is UNSET


def _text_rule(kind: int, test: Callable[[str, int], bool],
               detail: Callable[[VecInput, int], str]) -> Callable[[VecInput, np.ndarray], Hits]:
    def check(vi: VecInput, rows: np.ndarray) -> Hits:
        rows = rows[vi.kind[rows] == kind]
        hit = [r for r, t, b in zip(rows.tolist(), vi.texts(rows), vi.batch[rows].tolist(),
                                    strict=True)
               if t is not None and test(t, b)]
        return hits(hit, None, [detail(vi, r) for r in hit])
    return check


def _result_type(vi: VecInput, rows: np.ndarray) -> Hits:
    rows = rows[vi.kind[rows] == RESULT]
    marks = vi.marks(rows)
    has_text = (marks & NO_TEXT) == 0
    # a text with neither the name nor an escape that could spell it has no resultType
    unnamed = has_text & ((marks & (MARK['"resultType"'] | MARK["\\u"])) == 0)
    named = rows[has_text & ~unnamed]
    hit = np.concatenate([rows[unnamed], np.asarray(
        [r for r, t, b in zip(named.tolist(), vi.texts(named), vi.batch[named].tolist(),
                              strict=True) if t is not None and _no_result_type(t, b)],
        dtype=np.int64)])
    hit.sort()
    return hits(hit, None, ["no resultType"] * len(hit))


_request_meta = _text_rule(
    REQUEST, _no_request_meta,
    lambda vi, r: f"{vi.name(int(vi.method[r]))} without the 2026 _meta members")


def _server_request(vi: VecInput) -> Hits:
    rows = np.flatnonzero((vi.kind == REQUEST) & (vi.direction == 1))
    return hits(rows, None, [f"the server sent {vi.name(int(vi.method[r]))}"
                              for r in rows.tolist()])

check("ping-result-not-empty")(_ping_result)
check("result-type-missing", rows=True)(_result_type)
check("request-meta-missing", rows=True)(_request_meta)
check("server-request-2026")(_server_request)
