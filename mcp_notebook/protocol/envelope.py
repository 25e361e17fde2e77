"""Classify one captured frame as JSON-RPC 2.0 / MCP messages.

Sans-IO: this module takes the exact text (or bytes) of one frame and returns one
:class:`Envelope` per message it holds (a batch array gives one per member). It opens
no file and knows nothing of pandas.

Only the envelope is decoded: ``params``, ``result`` and ``error.data`` stay raw JSON
text. Ids are keyed by their compact JSON text (``1`` and ``"1"`` differ; ids of any
size stay exact), which is the type-tagged key the pairing uses.

Problems a single message shows on its own are returned as *flags*: stable rule codes
of :mod:`mcp_notebook.protocol.rules` that the checker turns into violations.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import msgspec
from msgspec import Raw

__all__ = ["Envelope", "classify", "id_key_of", "decode_id", "bounded_recursion"]

#: The recursion limit while decoding: the JSON decoders recurse in C, so a raised
#: ``sys.setrecursionlimit`` (some notebooks raise it) would let a nesting bomb overflow
#: the C stack and kill the interpreter instead of raising RecursionError.
SAFE_RECURSION_LIMIT = 8000


@contextmanager
def bounded_recursion() -> Iterator[None]:
    """Run the block with the recursion limit at most :data:`SAFE_RECURSION_LIMIT`."""
    old = sys.getrecursionlimit()
    lowered = False
    if old > SAFE_RECURSION_LIMIT:
        try:
            sys.setrecursionlimit(SAFE_RECURSION_LIMIT)
            lowered = True
        except RecursionError:  # already deeper than that: leave it
            pass
    try:
        yield
    finally:
        if lowered:
            sys.setrecursionlimit(old)


class _Message(msgspec.Struct, gc=False):
    """The members of a JSON-RPC message, each kept as raw JSON text."""

    jsonrpc: Raw = Raw()
    id: Raw = Raw()
    method: Raw = Raw()
    params: Raw = Raw()
    result: Raw = Raw()
    error: Raw = Raw()


class _Error(msgspec.Struct, gc=False):
    code: Raw = Raw()
    message: Raw = Raw()


class _ToolResult(msgspec.Struct, gc=False):
    isError: Raw = Raw()  # noqa: N815 - the MCP member name
    protocolVersion: Raw = Raw()  # noqa: N815


class _Meta(msgspec.Struct, gc=False, rename={"version": "io.modelcontextprotocol/protocolVersion"}):
    progressToken: Raw = Raw()  # noqa: N815
    version: Raw = Raw()


class _Params(msgspec.Struct, gc=False):
    """The few ``params`` members the pairing and the version detection need."""

    requestId: Raw = Raw()  # noqa: N815
    progressToken: Raw = Raw()  # noqa: N815
    progress: Raw = Raw()
    protocolVersion: Raw = Raw()  # noqa: N815
    _meta: _Meta | None = None


_decode_message = msgspec.json.Decoder(_Message).decode
_decode_params = msgspec.json.Decoder(_Params).decode
_decode_error = msgspec.json.Decoder(_Error).decode
_decode_tool = msgspec.json.Decoder(_ToolResult).decode
_decode_any = msgspec.json.Decoder().decode
_decode_raw_list = msgspec.json.Decoder(list[Raw]).decode
_encode = msgspec.json.encode


class Envelope(NamedTuple):
    """What one JSON-RPC message is, decoded no further than needed."""

    kind: str  # request | notification | result | error | invalid
    id: object  # the id exactly as sent (int, str, float, None); None also when absent
    id_key: str | None  # compact JSON text of the id; None when the id is absent
    method: str | None
    error_code: int | None
    error_message: str | None
    is_tool_error: bool
    batch: int | None  # position inside a batch array, None outside one
    reason: str | None  # why the frame is invalid, or None
    flags: tuple[str, ...]  # rule codes this message breaks on its own
    ref: str | None = None  # cancelled requestId key; progress token key (notification or request)
    progress: float | None = None  # notifications/progress: the progress value
    version: str | None = None  # protocolVersion named by initialize (request or result) or _meta


def decode_id(raw: bytes) -> object:
    """Return the id value of raw JSON text: int (exact at any size), str, float or None."""
    return _decode_any(raw)


def id_key_of(raw: bytes) -> str:
    """The type-tagged key of a raw id: its compact JSON text.

    >>> id_key_of(b'1'), id_key_of(b'"1"'), id_key_of(b'18446744073709551617')
    ('1', '"1"', '18446744073709551617')
    """
    if b"\\" in raw or raw[:1].isspace() or raw[-1:].isspace():
        # the same string can be spelled with escapes; key it by one canonical spelling
        return _encode(_decode_any(raw)).decode()
    return raw.decode()


def _invalid(reason: str, flags: tuple[str, ...], batch: int | None = None) -> Envelope:
    return Envelope("invalid", None, None, None, None, None, False, batch, reason, flags)


def _as_str(raw: Raw) -> str | None:
    try:
        value = _decode_any(raw)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, str) else None


_TRUE = b"true"
_TOO_DEEP = "JSON nested too deeply to decode safely"


def _one(raw: bytes, batch: int | None) -> Envelope:
    """Classify one JSON value that should be a single JSON-RPC message."""
    try:
        m = _decode_message(raw)
    except msgspec.ValidationError:
        kind = _top_type(raw)
        return _invalid(f"a JSON {kind}, not a JSON-RPC message object", ("not-an-object",), batch)

    flags: list[str] = []
    has_id, has_method = len(m.id) > 0, len(m.method) > 0
    has_result, has_error = len(m.result) > 0, len(m.error) > 0

    if bytes(m.jsonrpc) != b'"2.0"':
        flags.append("jsonrpc-version")

    id_value: object = None
    id_key: str | None = None
    if has_id:
        id_raw = bytes(m.id)
        id_key = id_key_of(id_raw)
        id_value = _decode_any(id_raw)

    if has_method:
        method = _as_str(m.method)
        if method is None:
            return _invalid("`method` is not a string", ("method-not-string",), batch)
        if has_result or has_error:
            return _invalid("a message with `method` and also `result`/`error`",
                            ("mixed-request-response",), batch)._replace(method=method, id=id_value,
                                                                          id_key=id_key)
        if len(m.params) and _first(m.params) != b"{":
            flags.append("params-not-object")
        if method.startswith("rpc."):
            flags.append("reserved-method")
        ref, progress, version = _details(method, m.params, has_id)
        if not has_id:
            return Envelope("notification", None, None, method, None, None, False, batch, None,
                            tuple(flags), ref, progress, version)
        if not _is_request_id(id_value):
            flags.append("request-id-type")
        return Envelope("request", id_value, id_key, method, None, None, False, batch, None,
                        tuple(flags), ref, progress, version)

    if not has_result and not has_error:
        if has_id:
            return _invalid("a response with neither `result` nor `error`",
                            ("response-neither",), batch)._replace(id=id_value, id_key=id_key)
        return _invalid("an object with no `method`, `id`, `result` or `error`",
                        ("not-a-message",), batch)

    if not has_id:
        flags.append("response-id-missing")
    elif id_value is None:
        flags.append("response-id-null")
    elif not _is_request_id(id_value):
        flags.append("request-id-type")

    if has_error:
        if has_result:
            flags.append("result-and-error")
        code, message, err_flags = _error_fields(m.error)
        flags.extend(err_flags)
        return Envelope("error", id_value, id_key, None, code, message, False, batch, None,
                        tuple(flags))

    result = bytes(m.result)
    is_tool_error = False
    version = None
    if result[:1] != b"{":
        flags.append("result-not-object")
    elif b'"isError"' in result or b'"protocolVersion"' in result:
        try:
            top = _decode_tool(result)
        except msgspec.DecodeError:
            top = _ToolResult()
        is_tool_error = bytes(top.isError) == _TRUE
        if len(top.protocolVersion):
            version = _as_str(top.protocolVersion)
    return Envelope("result", id_value, id_key, None, None, None, is_tool_error, batch, None,
                    tuple(flags), None, None, version)


def _details(method: str, params: Raw, has_id: bool) -> tuple[str | None, float | None, str | None]:
    """``(ref, progress, version)`` read from ``params`` where the method needs them."""
    if not len(params) or _first(params) != b"{":
        return None, None, None
    wanted = method in ("notifications/cancelled", "notifications/progress", "initialize")
    if not wanted and len(params) < 1 << 16:
        text = bytes(params)
        # a name may be spelled with escapes ("\\/", "\\u0054"): then only decoding tells
        wanted = (b"progressToken" in text or b"io.modelcontextprotocol/protocolVersion" in text
                  or b"\\u" in text or b"\\/" in text)
    elif not wanted:
        wanted = True  # a large params: decode the few members we want rather than search it
    if not wanted:
        return None, None, None
    try:
        p = _decode_params(params)
    except msgspec.DecodeError:
        return None, None, None
    ref: str | None = None
    progress: float | None = None
    version: str | None = None
    if method == "notifications/cancelled":
        ref = _key_or_none(p.requestId)
    elif method == "notifications/progress":
        ref = _key_or_none(p.progressToken)
        if len(p.progress):
            value = _decode_any(p.progress)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                progress = float(value)
    elif has_id and p._meta is not None:
        ref = _key_or_none(p._meta.progressToken)
    if method == "initialize" and len(p.protocolVersion):
        version = _as_str(p.protocolVersion)
    elif p._meta is not None and len(p._meta.version):
        version = _as_str(p._meta.version)
    return ref, progress, version


def _key_or_none(raw: Raw) -> str | None:
    return id_key_of(bytes(raw)) if len(raw) else None


def _first(raw: Raw) -> bytes:
    return bytes(memoryview(raw)[:1])


def _is_request_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _error_fields(raw: Raw) -> tuple[int | None, str | None, list[str]]:
    if _first(raw) != b"{":
        return None, None, ["error-not-object"]
    err = _decode_error(raw)
    flags: list[str] = []
    code: int | None = None
    if len(err.code):
        value = _decode_any(err.code)
        if isinstance(value, int) and not isinstance(value, bool):
            code = value
        else:
            flags.append("error-code-not-integer")
    else:
        flags.append("error-code-not-integer")
    message: str | None = None
    if len(err.message):
        value = _decode_any(err.message)
        if isinstance(value, str):
            message = value
        else:
            flags.append("error-message-not-string")
    else:
        flags.append("error-message-not-string")
    return code, message, flags


def _top_type(raw: bytes) -> str:
    first = raw.lstrip()[:1]
    return {b"[": "array", b'"': "string", b"t": "boolean", b"f": "boolean", b"n": "null"}.get(
        first, "number")


def classify(text: str | bytes) -> list[Envelope]:
    """Classify the exact text of one frame.

    Returns one envelope per message: a single object gives one, a batch array gives one
    per member (with its position), and anything unparsable gives one ``invalid``
    envelope whose ``reason`` says why.

    >>> [e.kind for e in classify('{"jsonrpc":"2.0","id":1,"method":"ping"}')]
    ['request']
    >>> classify('{"jsonrpc":"2.0","id":"1","result":{}}')[0].id_key
    '"1"'
    >>> classify('{"jsonrpc":"2.0","method":"x"')[0].reason
    'not valid JSON: Input data was truncated'
    """
    try:  # MCP: "JSON-RPC messages MUST be UTF-8 encoded"; Raw members are not checked later
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if not isinstance(text, str):
            raw.decode("utf-8")
    except UnicodeError:
        return [_invalid("not valid UTF-8", ("parse-error",))]
    stripped = raw.strip()
    if not stripped:
        return [_invalid("an empty frame", ("parse-error",))]
    if stripped[:1] == b"[":
        try:
            members = _decode_raw_list(stripped)
        except msgspec.DecodeError as exc:
            return [_invalid(f"not valid JSON: {exc}", ("parse-error",))]
        except RecursionError:
            return [_invalid(_TOO_DEEP, ("parse-error",))]
        if not members:
            return [_invalid("an empty batch array", ("batch-empty",))]
        out = []
        for pos, member in enumerate(members):
            env = _one(bytes(member), pos)
            out.append(env._replace(flags=env.flags + ("batch",)))
        return out
    try:
        return [_one(stripped, None)]
    except msgspec.DecodeError as exc:
        return [_invalid(f"not valid JSON: {exc}", ("parse-error",))]
    except RecursionError:
        return [_invalid(_TOO_DEEP, ("parse-error",))]
