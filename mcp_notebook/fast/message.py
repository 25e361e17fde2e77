"""The fast envelope: the usual JSON-RPC message, classified with one typed decode.

:data:`decoder` decodes a message into typed members (``jsonrpc`` must be ``"2.0"``,
``method`` a string, ``params`` and ``result`` objects, ``error`` an object with an
integer ``code`` and a string ``message``). Anything else fails to decode, or is sent
back by :func:`scan` to the reference classifier (:func:`mcp_notebook.protocol.envelope.classify`):
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
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .rows import CALL_METHODS, LISTED, Rows

__all__ = ["decoder", "scan", "Message"]


class _Error(msgspec.Struct, gc=False):
    code: int
    message: str


class _Meta(msgspec.Struct, gc=False,
            rename={"version": "io.modelcontextprotocol/protocolVersion"}):
    progressToken: int | str | UnsetType = UNSET  # noqa: N815 - the MCP member name
    version: str | UnsetType = UNSET


class _Params(msgspec.Struct, gc=False):
    requestId: int | str | UnsetType = UNSET  # noqa: N815
    progressToken: int | str | UnsetType = UNSET  # noqa: N815
    progress: float | UnsetType = UNSET
    protocolVersion: str | UnsetType = UNSET  # noqa: N815
    _meta: _Meta | None = None
    # the call column's members (requests of rows.CALL_METHODS)
    name: Any = UNSET
    uri: Any = UNSET
    arguments: msgspec.Raw = msgspec.Raw()
    task: msgspec.Raw = msgspec.Raw()
    cursor: msgspec.Raw = msgspec.Raw()


class _Result(msgspec.Struct, gc=False):
    isError: bool | UnsetType = UNSET  # noqa: N815
    protocolVersion: str | UnsetType = UNSET  # noqa: N815
    # the list column's members (rows.LISTED)
    tools: msgspec.Raw = msgspec.Raw()
    prompts: msgspec.Raw = msgspec.Raw()
    resources: msgspec.Raw = msgspec.Raw()
    resourceTemplates: msgspec.Raw = msgspec.Raw()  # noqa: N815


class Message(msgspec.Struct, gc=False):
    """A JSON-RPC 2.0 message of the usual shape (the members the tables need)."""

    jsonrpc: Literal["2.0"]
    id: int | str | None | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: _Params | UnsetType = UNSET
    result: _Result | UnsetType = UNSET
    error: _Error | UnsetType = UNSET


decoder = msgspec.json.Decoder(Message)

_SPECIAL = frozenset(("notifications/cancelled", "notifications/progress", "initialize"))
_INT64 = 1 << 63
_encode = msgspec.json.encode


def key_of(v: int | str) -> str | None:
    """The id key (compact JSON text) of a decoded int or str id; None for 0, whose text
    (``0`` or ``-0``) the decoded value does not tell."""
    if isinstance(v, int):
        return str(v) if v else None
    if '"' not in v and "\\" not in v and v.isprintable():
        return f'"{v}"'
    return _encode(v).decode()


def _details(method: str, p: _Params, has_id: bool) -> tuple[bool, str | None, float | None,
                                                               str | None]:
    """``(ok, ref, progress, version)`` of decoded params, as ``envelope._details`` gives
    them; ``ok`` is False when only the reference can tell (a token or id of 0)."""
    ref: str | None = None
    progress: float | None = None
    version: str | None = None
    if method == "notifications/cancelled":
        if p.requestId is not UNSET:
            ref = key_of(p.requestId)
            if ref is None:
                return False, None, None, None
    elif method == "notifications/progress":
        if p.progressToken is not UNSET:
            ref = key_of(p.progressToken)
            if ref is None:
                return False, None, None, None
        if p.progress is not UNSET:
            progress = float(p.progress)
    elif has_id and p._meta is not None and p._meta.progressToken is not UNSET:
        ref = key_of(p._meta.progressToken)
        if ref is None:
            return False, None, None, None
    if method == "initialize" and p.protocolVersion is not UNSET:
        version = p.protocolVersion
    elif p._meta is not None and p._meta.version is not UNSET:
        version = p._meta.version
    return True, ref, progress, version


def _call(p: _Params | UnsetType) -> tuple[Any, Any, bytes, bool, bool] | None:
    """The call column's entry of a request's params (as the C scanner's ``add_call``):
    ``(name, uri, arguments text or b"", task given, cursor given)``, None for an absent
    name or uri; None when one is there but no string (the conversation rules read such a
    frame's text)."""
    if p is UNSET:
        return None, None, b"", False, False
    name, uri = p.name, p.uri
    if name is not UNSET and name.__class__ is not str or \
            uri is not UNSET and uri.__class__ is not str:
        return None
    return (None if name is UNSET else name, None if uri is UNSET else uri,
            bytes(p.arguments), len(p.task) > 0, len(p.cursor) > 0)


def _listed(res: _Result, same: Callable[[bytes, bytes], bytes]) -> dict[str, bytes] | None:
    """The list column's value of a result (as the C scanner's ``add_listed``): the JSON
    text of each of its rows.LISTED members; None when it has none."""
    out: dict[str, bytes] | None = None
    for name in LISTED:
        raw = getattr(res, name)
        if len(raw):
            text = bytes(raw)
            if out is None:
                out = {}
            out[name] = same(text, text)
    return out


def scan(msgs: Sequence[Message], lines: Sequence[int], rows: Rows,
         escaped: Callable[[int], bool], slow: Callable[[int], None]) -> None:
    """Append one row per decoded message; hand unusual ones to ``slow(line)``.

    ``lines[k]`` is the line of ``msgs[k]``; ``escaped(line)`` says whether the line holds
    a ``\\u`` escape.
    """
    kind_a, id_a, key_a, meth_a = (rows.kind.append, rows.id.append, rows.id_key.append,
                                   rows.method.append)
    line_a = rows.line.append
    minfo = rows.method_info  # method name -> (code, 1 special / 2 reserved / 0)
    mget = minfo.get
    kinds = rows.kind
    base = rows.base
    sp = rows.sparse
    ver_d = sp["version"]
    code_d, emsg_d, tool_d = sp["error_code"], sp["error_message"], sp["is_tool_error"]
    ref_r, ref_v = rows.ref_rows.append, rows.ref_vals.append
    same = rows.ref_intern.setdefault  # progress tokens repeat: keep one string of each
    prog_r, prog_v = rows.prog_rows.append, rows.prog_vals.append
    add_call = rows.add_call
    list_r, list_v = rows.list_rows.append, rows.list_vals.append
    list_same = rows.list_intern.setdefault
    for k, m in enumerate(msgs):
        j = lines[k]
        val: Any = m.id
        cls = val.__class__
        if cls is int:
            if not val:  # 0 or -0: the text decides the key
                slow(j)
                continue
            key: str | None = str(val)
        elif cls is str:
            if '"' not in val and "\\" not in val and val.isprintable():
                key = f'"{val}"'
            else:
                key = _encode(val).decode()
        elif val is UNSET:
            key = val = None
        else:  # null: the reference decides
            slow(j)
            continue
        meth = m.method
        if meth is not UNSET:
            info = mget(meth)
            if info is None:
                info = minfo[meth] = (rows.method_code(meth),
                                      2 if meth.startswith("rpc.") else int(meth in _SPECIAL))
            mc, special = info
            if m.result is not UNSET or m.error is not UNSET or special == 2:
                slow(j)
                continue
            p = m.params
            if p is not UNSET and (special or p._meta is not None):
                ok, ref, prog, ver = _details(meth, p, key is not None)
                if not ok or ((ref is not None or ver is not None) and not special
                              and escaped(j)):
                    slow(j)
                    continue
                r = base + len(kinds)
                if ref is not None:
                    ref_r(r)
                    ref_v(same(ref, ref))
                if prog is not None:
                    prog_r(r)
                    prog_v(prog)
                if ver is not None:
                    ver_d[r] = ver
            if key is not None and meth in CALL_METHODS:
                call = _call(p)
                if call is not None:
                    add_call(base + len(kinds), *call)
            kind_a(0 if key is not None else 1)
        else:
            if key is None:
                slow(j)
                continue
            err = m.error
            if err is not UNSET:
                code = err.code
                if m.result is not UNSET or not -_INT64 <= code < _INT64:
                    slow(j)
                    continue
                r = base + len(kinds)
                code_d[r] = code
                emsg_d[r] = err.message
                kind_a(3)
            else:
                res = m.result
                if res is UNSET:
                    slow(j)
                    continue
                tool, rver = res.isError, res.protocolVersion
                if tool is not UNSET or rver is not UNSET:
                    if escaped(j):
                        slow(j)
                        continue
                    r = base + len(kinds)
                    if tool is True:
                        tool_d[r] = True
                    if rver is not UNSET:
                        ver_d[r] = rver
                if len(res.tools) or len(res.prompts) or len(res.resources) or \
                        len(res.resourceTemplates):
                    got = _listed(res, list_same)
                    if got is not None:
                        list_r(base + len(kinds))
                        list_v(got)
                kind_a(2)
            mc = -1
        id_a(val)
        key_a(key)
        meth_a(mc)
        line_a(j)
