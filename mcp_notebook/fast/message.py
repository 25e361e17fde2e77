"""The fast envelope: the usual JSON-RPC message, classified with one typed decode.

:data:`decoder` decodes a message into typed members (``jsonrpc`` must be ``"2.0"``,
``method`` a string, ``params`` and ``result`` objects, ``error`` an object with an
integer ``code`` and a string ``message``). Anything else fails to decode, or is sent
back by :func:`scan` to the reference classifier (:func:`mcp_notebook.core.envelope.classify`):
odd ids (null, floats, escaped strings), responses without an id, batches, reserved
method names... So the fast path decides only the cases where it gives the same answer
as the reference, and the reference decides the rest.

Members found by name inside ``params`` or ``result`` (progress token, protocol
version, ``isError``) are taken from the typed decode only when the line holds no
``\\u`` escape: the reference looks for those names as literal text before decoding,
and a name spelled with escapes is the one case where the two could differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..core.envelope import _as_str, _decode_any, _Params, _ToolResult, id_key_of
from .rows import Rows

__all__ = ["decoder", "scan", "Message"]


class _Error(msgspec.Struct, gc=False):
    code: int
    message: str


class Message(msgspec.Struct, gc=False):
    """A JSON-RPC 2.0 message of the usual shape (the members the tables need)."""

    jsonrpc: Literal["2.0"]
    id: Raw = Raw()
    method: str | UnsetType = UNSET
    params: _Params | UnsetType = UNSET
    result: _ToolResult | UnsetType = UNSET
    error: _Error | UnsetType = UNSET


decoder = msgspec.json.Decoder(Message)

_SPECIAL = frozenset(("notifications/cancelled", "notifications/progress", "initialize"))
_TRUE = Raw(b"true")
_INT64 = 1 << 63
_ESC = b"\\u"


def _details(method: str, p: _Params, has_id: bool) -> tuple[str | None, float | None,
                                                               str | None]:
    """``(ref, progress, version)`` of decoded params, as ``envelope._details`` gives them."""
    ref: str | None = None
    progress: float | None = None
    version: str | None = None
    if method == "notifications/cancelled":
        if len(p.requestId):
            ref = id_key_of(bytes(p.requestId))
    elif method == "notifications/progress":
        if len(p.progressToken):
            ref = id_key_of(bytes(p.progressToken))
        if len(p.progress):
            value = _decode_any(p.progress)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                progress = float(value)
    elif has_id and p._meta is not None and len(p._meta.progressToken):
        ref = id_key_of(bytes(p._meta.progressToken))
    if method == "initialize" and len(p.protocolVersion):
        version = _as_str(p.protocolVersion)
    elif p._meta is not None and len(p._meta.version):
        version = _as_str(p._meta.version)
    return ref, progress, version


def scan(msgs: Sequence[Message], lines: Sequence[int], rows: Rows,
         line_bytes: Callable[[int], bytes], slow: Callable[[int], None],
         context: Sequence[tuple] | None = None) -> None:
    """Append one row per decoded message; hand unusual ones to ``slow(line)``.

    ``lines[k]`` is the line of ``msgs[k]``. ``context[k]``, for formats with per-line
    context, is ``(ts, session, direction code, size)`` of a fast row.
    """
    kind_a, id_a, key_a, meth_a = (rows.kind.append, rows.id.append, rows.id_key.append,
                                   rows.method.append)
    line_a = rows.line.append
    sp = rows.sparse
    ref_d, prog_d, ver_d = sp["ref"], sp["progress"], sp["version"]
    code_d, emsg_d, tool_d = sp["error_code"], sp["error_message"], sp["is_tool_error"]
    for k, m in enumerate(msgs):
        j = lines[k]
        idr = m.id
        if len(idr):
            kb = bytes(idr)
            if kb[0] == 34:  # a string id
                if 92 in kb:  # an escape: the reference keys it canonically
                    slow(j)
                    continue
                key: str | None = kb.decode()
                val: object = key[1:-1]  # type: ignore[index]
            else:
                try:
                    val = int(kb)
                except ValueError:  # null, a float, true, ...: the reference decides
                    slow(j)
                    continue
                key = kb.decode()
        else:
            key = val = None
        meth = m.method
        if meth is not UNSET:
            if m.result is not UNSET or m.error is not UNSET or meth[:4] == "rpc.":
                slow(j)
                continue
            p = m.params
            if p is not UNSET and (meth in _SPECIAL or p._meta is not None):
                ref, prog, ver = _details(meth, p, key is not None)
                if (ref is not None or ver is not None) and meth not in _SPECIAL \
                        and _ESC in line_bytes(j):
                    slow(j)
                    continue
                r = len(rows.kind)
                if ref is not None:
                    ref_d[r] = ref
                if prog is not None:
                    prog_d[r] = prog
                if ver is not None:
                    ver_d[r] = ver
            kind_a(0 if key is not None else 1)
        else:
            if key is None or val is None:
                slow(j)
                continue
            err = m.error
            if err is not UNSET:
                code = err.code
                if m.result is not UNSET or not -_INT64 <= code < _INT64:
                    slow(j)
                    continue
                r = len(rows.kind)
                code_d[r] = code
                emsg_d[r] = err.message
                kind_a(3)
            else:
                res = m.result
                if res is UNSET:
                    slow(j)
                    continue
                if len(res.isError) or len(res.protocolVersion):
                    if _ESC in line_bytes(j):
                        slow(j)
                        continue
                    r = len(rows.kind)
                    if res.isError == _TRUE:
                        tool_d[r] = True
                    if len(res.protocolVersion):
                        ver = _as_str(res.protocolVersion)
                        if ver is not None:
                            ver_d[r] = ver
                kind_a(2)
            meth = None
        id_a(val)
        key_a(key)
        meth_a(meth)
        line_a(j)
        if context is not None:
            ts, sess, d, size = context[k]
            rows.ts.append(ts)
            rows.session.append(sess)
            rows.direction.append(d)
            rows.stream.append("stdio")
            rows.tap_raw.append(True)
            rows.size.append(size)
