"""The ``info`` column of ``t.frames``: one readable line per frame, as Wireshark's Info.

``tools/call get_weather(city="Paris")``, ``resources/read file:///notes.txt``,
``2 content: text 120 B, image 3.4 kB``, ``isError: division by zero``,
``-32601 Method not found``, ``progress 3/10 working``.

The column is lazy (a :class:`~mcp_notebook.lazytext.LazyTextArray` over an
:class:`InfoSource`): a line is made when a row is read, so a table page of 50 rows decodes
50 frames, and a search or a sort over the column makes every line in one batch. Each frame
is decoded with typed ``msgspec`` structs that skip what the line does not show (a
``tools/list`` result of 200 tools costs a scan, not 200 dicts); a frame those structs do not
fit is decoded plainly. Errors come from the ``error_code``/``error_message`` columns
without decoding anything.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .lazytext import LazyTextArray, TextSource, texts_of

__all__ = ["InfoSource", "info_column", "info_line", "with_info", "WIDTH"]

#: longest info line, in characters (the rest is cut and marked with an ellipsis)
WIDTH = 120
_ARG = 40  # longest shown argument value


_NONE = msgspec.Raw(b"")  # a member that was absent (Raw takes no None)


class _Content(msgspec.Struct):
    type: Any = None
    text: Any = None
    data: Any = None
    uri: Any = None
    mimeType: Any = None  # noqa: N815 - the wire name
    blob: Any = None
    resource: Any = None


class _Named(msgspec.Struct):
    name: Any = None
    uri: Any = None


class _Info(msgspec.Struct):
    name: Any = None
    version: Any = None


class _Params(msgspec.Struct):
    name: Any = None
    uri: Any = None
    arguments: msgspec.Raw = _NONE
    protocolVersion: Any = None  # noqa: N815
    clientInfo: _Info | None = None  # noqa: N815
    progress: Any = None
    total: Any = None
    message: Any = None
    requestId: Any = None  # noqa: N815
    reason: Any = None
    level: Any = None
    data: msgspec.Raw = _NONE
    ref: _Named | None = None
    argument: Any = None
    cursor: Any = None


class _Result(msgspec.Struct):
    content: list[_Content] | _Content | None = None
    isError: Any = None  # noqa: N815
    tools: list[_Named] | None = None
    prompts: list[_Named] | None = None
    resources: list[_Named] | None = None
    resourceTemplates: list[Any] | None = None  # noqa: N815
    contents: list[_Content] | None = None
    messages: list[Any] | None = None
    serverInfo: _Info | None = None  # noqa: N815
    protocolVersion: Any = None  # noqa: N815
    structuredContent: msgspec.Raw = _NONE  # noqa: N815
    nextCursor: Any = None  # noqa: N815
    completion: Any = None
    model: Any = None
    action: Any = None
    role: Any = None


class _Msg(msgspec.Struct):
    params: _Params | None = None
    result: _Result | None = None


_typed = msgspec.json.Decoder(_Msg)
_typed_batch = msgspec.json.Decoder(list[_Msg])
_plain = msgspec.json.Decoder()


def _cut(text: str, width: int = WIDTH) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _bytes(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1e6:.1f} MB"


def _value(raw: Any) -> str:
    """A short JSON value: strings quoted, containers by their size."""
    if isinstance(raw, msgspec.Raw):
        raw = _plain.decode(raw)
    if isinstance(raw, str):
        return '"' + _cut(raw, _ARG) + '"'
    if isinstance(raw, dict):
        return "{…}" if raw else "{}"
    if isinstance(raw, list):
        return f"[{len(raw)}]"
    return _cut(msgspec.json.encode(raw).decode(), _ARG)


def _args(raw: msgspec.Raw) -> str:
    if not raw:
        return ""
    value = _plain.decode(raw)
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k}={_value(v)}" for k, v in value.items()) + ")"
    return "(" + _value(value) + ")"


def _content(items: list[_Content]) -> str:
    parts = []
    for c in items[:4]:
        body = c.text if isinstance(c.text, str) else c.data if isinstance(c.data, str) else \
            c.blob if isinstance(c.blob, str) else None
        kind = str(c.type) if c.type is not None else ("resource" if c.uri else "item")
        parts.append(f"{kind} {_bytes(len(body.encode('utf-8', 'surrogatepass')))}"
                     if body is not None else kind if c.uri is None else f"{kind} {c.uri}")
    more = f", +{len(items) - 4}" if len(items) > 4 else ""
    return f"{len(items)} content: " + ", ".join(parts) + more


def _first_text(items: list[_Content] | _Content | None) -> str:
    for c in [items] if isinstance(items, _Content) else items or []:
        if isinstance(c.text, str):
            return c.text
    return ""


def _names(label: str, items: list[_Named]) -> str:
    names = [str(x.name if x.name is not None else x.uri) for x in items[:6]]
    more = ", …" if len(items) > 6 else ""
    return f"{len(items)} {label}" + (": " + ", ".join(names) + more if names else "")


def _request(method: str, p: _Params | None) -> str:
    if p is None:
        return method
    if method in ("tools/call", "prompts/get") and p.name is not None:
        return f"{method} {p.name}{_args(p.arguments)}"
    if p.uri is not None and method.startswith(("resources/", "notifications/resources/")):
        return f"{method} {p.uri}"
    if method == "initialize":
        who = f" {p.clientInfo.name} {p.clientInfo.version or ''}".rstrip() if p.clientInfo \
            else ""
        return f"{method}{who} · protocol {p.protocolVersion}"
    if method == "notifications/progress":
        total = f"/{p.total}" if p.total is not None else ""
        msg = f" {p.message}" if p.message is not None else ""
        return f"progress {p.progress}{total}{msg}"
    if method == "notifications/cancelled":
        why = f": {p.reason}" if p.reason is not None else ""
        return f"cancel request {p.requestId}{why}"
    if method == "notifications/message":
        return f"log {p.level}: {_value(p.data) if p.data else ''}"
    if method == "completion/complete" and p.ref is not None:
        arg = p.argument.get("name") if isinstance(p.argument, dict) else None
        return f"{method} {p.ref.name or p.ref.uri}" + (f" {arg}" if arg else "")
    if p.name is not None:
        return f"{method} {p.name}"
    if p.cursor is not None:
        return f"{method} cursor={_value(p.cursor)}"
    return method


def _result(r: _Result | None) -> str:
    if r is None:
        return "result"
    if r.isError is True:
        return "isError: " + (_first_text(r.content) or "(no text)")
    if isinstance(r.content, _Content):  # sampling/createMessage: one content block
        return (f"model {r.model}: " if r.model is not None else "") + _content([r.content])[11:]
    if r.content is not None:
        return _content(r.content) + (" + structured" if r.structuredContent else "")
    if r.serverInfo is not None:
        return (f"{r.serverInfo.name} {r.serverInfo.version or ''}".rstrip()
                + f" · protocol {r.protocolVersion}")
    for label, items in (("tools", r.tools), ("prompts", r.prompts),
                         ("resources", r.resources)):
        if items is not None:
            return _names(label, items) + (" · more" if r.nextCursor else "")
    if r.resourceTemplates is not None:
        return f"{len(r.resourceTemplates)} resource templates"
    if r.contents is not None:
        return _content(r.contents).replace("content", "contents", 1)
    if r.messages is not None:
        return f"{len(r.messages)} messages"
    if isinstance(r.completion, dict):
        values = r.completion.get("values")
        return f"{len(values) if isinstance(values, list) else 0} completions"
    if r.model is not None:
        return f"model {r.model}"
    if r.action is not None:
        return f"action {r.action}"
    return "empty result"


def _fallback(kind: str, method: str, text: str, batch: int) -> str:
    """A frame the typed structs do not fit (e.g. a name that is a number): decoded plainly."""
    try:
        msg = _plain.decode(text)
    except msgspec.DecodeError:
        return _cut(text)
    if isinstance(msg, list):
        msg = msg[batch] if 0 <= batch < len(msg) else {}
    if not isinstance(msg, dict):
        return _cut(text)
    part = msg.get("params") if kind in ("request", "notification") else msg.get("result")
    if isinstance(part, dict) and part:
        keys = ", ".join(str(k) for k in list(part)[:6])
        return f"{method} {{{keys}}}".strip() if kind != "result" else f"result {{{keys}}}"
    return method or kind


def info_line(kind: str, method: str | None, text: str | None, *, batch: int = -1,
              error_code: Any = None, error_message: Any = None, reason: Any = None) -> str:
    """The info line of one frame.

    >>> info_line("request", "tools/call",
    ...           '{"jsonrpc":"2.0","id":3,"method":"tools/call",'
    ...           '"params":{"name":"add","arguments":{"a":2,"b":3}}}')
    'tools/call add(a=2, b=3)'
    >>> info_line("error", None, "", error_code=-32601, error_message="Method not found")
    '-32601 Method not found'
    """
    method = method or ""
    if kind == "error":
        code = "" if error_code is None or pd.isna(error_code) else f"{int(error_code)} "
        return _cut(f"{code}{error_message if isinstance(error_message, str) else ''}".strip()
                    or "error")
    if kind == "invalid":
        return _cut(str(reason) if isinstance(reason, str) and reason else "invalid frame")
    if kind not in ("request", "notification", "result") or text is None:
        return _cut(text or "")
    try:
        if batch >= 0:
            items = _typed_batch.decode(text)
            msg = items[batch] if batch < len(items) else _Msg()
        else:
            msg = _typed.decode(text)
        line = _request(method, msg.params) if kind != "result" else _result(msg.result)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, AttributeError,
            RecursionError):
        return _fallback(kind, method, text, batch)
    return _cut(line)


class InfoSource(TextSource):
    """Info lines of a frames table's rows, made when read (see the module doc)."""

    def __init__(self, frames: pd.DataFrame) -> None:
        self._raw = frames["raw"].array
        self._kind = frames["kind"].astype(object).to_numpy() \
            if not isinstance(frames["kind"].dtype, pd.CategoricalDtype) else None
        self._kind_cat = frames["kind"].array if self._kind is None else None
        self._method = frames["method"].array
        self._batch = frames["batch"].fillna(-1).to_numpy(dtype=np.int64) \
            if "batch" in frames else np.full(len(frames), -1, dtype=np.int64)
        self._code = frames["error_code"].array if "error_code" in frames else None
        self._message = frames["error_message"].to_numpy(dtype=object) \
            if "error_message" in frames else None
        self._reason = frames["reason"].to_numpy(dtype=object) if "reason" in frames else None
        self._n = len(frames)

    def __len__(self) -> int:
        return self._n

    def _strings(self, col: Any, rows: np.ndarray) -> list[Any]:
        if isinstance(col, pd.Categorical):
            cats = np.asarray(col.categories, dtype=object)
            codes = col.codes[rows]
            out = np.full(len(rows), None, dtype=object)
            ok = codes >= 0
            out[ok] = cats[codes[ok]]
            return out.tolist()
        return np.asarray(col, dtype=object)[rows].tolist()

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        kinds = self._strings(self._kind_cat if self._kind is None else self._kind, rows)
        methods = self._strings(self._method, rows)
        need = np.asarray([k in ("request", "notification", "result", "log", "stderr")
                           for k in kinds], dtype=bool)
        raws: list[Any] = [None] * len(rows)
        if need.any():
            got = texts_of(self._raw, rows[need])
            for k, v in zip(np.flatnonzero(need).tolist(), got, strict=True):
                raws[k] = v
        codes = self._code[rows] if self._code is not None else [None] * len(rows)
        msgs = self._message[rows] if self._message is not None else [None] * len(rows)
        reasons = self._reason[rows] if self._reason is not None else [None] * len(rows)
        batch = self._batch[rows].tolist()
        return [info_line(str(k), m if isinstance(m, str) else None, r, batch=b,
                          error_code=c, error_message=em, reason=rs)
                for k, m, r, b, c, em, rs in zip(kinds, methods, raws, batch, codes, msgs,
                                                 reasons, strict=True)]


def info_column(frames: pd.DataFrame) -> pd.Series:
    """The lazy ``info`` column of a frames DataFrame (same index)."""
    return pd.Series(LazyTextArray(InfoSource(frames)), index=frames.index, copy=False)


def with_info(frames: pd.DataFrame) -> pd.DataFrame:
    """``frames`` with its ``info`` column (the hook where ``t.frames`` is built)."""
    if "info" not in frames.columns and "raw" in frames.columns and "kind" in frames.columns:
        frames["info"] = info_column(frames)
    return frames
