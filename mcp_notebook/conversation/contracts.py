"""Tool, prompt and resource contracts within a session.

What a server listed is the contract of its later calls: ``tools/call`` arguments against
the ``inputSchema`` of that tool in the latest ``tools/list`` answer before the call (in
the tool schema's own dialect: its ``$schema``, else JSON Schema 2020-12 as 2025-11-25
says), a call of a tool the list did not hold, ``structuredContent`` against the tool's
``outputSchema`` (not when ``isError``), ``prompts/get`` arguments against the prompt's
declared arguments, and ``resources/read`` of a URI neither listed nor matching a listed
template. Up to 2025-11-25 the scope is the session; in 2026-07-28 (no sessions) it is the
capture. Nothing is judged before the first list of its kind was answered.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import msgspec
import numpy as np

from ..protocol.envelope import bounded_recursion
from ..protocol.rules import Rule
from ._view import Hit, View, pointer_text

__all__ = ["RULES", "CHECKS", "listed", "tool_validator"]

_TOOLS = "MCP 2025-06-18, server/tools.mdx"

RULES: tuple[Rule, ...] = (
    Rule("tool-arguments-schema", "warning", "tools/call arguments match the tool's inputSchema",
         "inputSchema: JSON Schema defining expected parameters", f"{_TOOLS} §Tool",
         "The arguments break the inputSchema the server listed for this tool (pointer and "
         "expectation in the detail): a model or client sent the wrong shape. Fix the call; "
         "the server should answer it as a tool error (isError) it can correct.",
         topic="contracts"),
    Rule("tool-not-listed", "warning", "tools/call names a listed tool",
         "Unknown tools", f"{_TOOLS} §Error Handling (protocol errors)",
         "The session's latest tools/list did not hold this tool: a typo, a stale list, or "
         "a tool removed (listen for notifications/tools/list_changed and list again).",
         topic="contracts"),
    Rule("tool-output-schema", "error", "structuredContent matches the tool's outputSchema",
         "Servers MUST provide structured results that conform to this schema.",
         f"{_TOOLS} §Output Schema",
         "The tool declared an outputSchema; its structuredContent is missing or breaks it "
         "(not checked when isError is true).", versions=("2025-06-18", "2025-11-25",
                                                           "2026-07-28"),
         topic="contracts"),
    Rule("prompt-arguments", "warning", "prompts/get arguments match the prompt's arguments",
         "arguments: Optional list of arguments for customization",
         "MCP 2025-06-18, server/prompts.mdx §Prompt",
         "A required argument of the listed prompt is missing, or an argument it does not "
         "declare was sent (the detail says which). Send the declared arguments as strings.",
         topic="contracts"),
    Rule("resource-not-listed", "info", "resources/read of a listed URI or template",
         "Resource templates allow servers to expose parameterized resources using URI "
         "templates.", "MCP 2025-06-18, server/resources.mdx §Resource Templates",
         "The URI is neither in the latest resources/list nor matches a listed template. "
         "Legal (servers may serve more than they list), but worth a look.",
         topic="contracts"),
)


def listed(view: View, method: str, member: str, key: str
           ) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Walk the list answers of ``method`` in order: ``(response seq, scope, {key: item})``
    after each page (a request without a cursor starts the list again). Each distinct
    answer text is decoded once; the dicts yielded are shared: do not change them."""
    state: dict[int, dict[str, Any]] = {}
    pairs = sorted(view.answered([method], kind="result"), key=lambda p: p[1])
    reqs = view.request_params([p[0] for p in pairs])
    raws = view.raw_results([p[1] for p in pairs])
    scopes = view.scopes([p[0] for p in pairs])
    items_of: dict[bytes, dict[str, Any] | None] = view.__dict__.setdefault(
        f"_items:{method}", {})
    for (_, resp), params, raw, scope in zip(pairs, reqs, raws, scopes, strict=True):
        if raw is None:
            continue
        if raw not in items_of:
            result = view.parsed(raw)
            items = result.get(member) if isinstance(result, dict) else None
            items_of[raw] = None if not isinstance(items, list) else {
                item[key]: item for item in items
                if isinstance(item, dict) and isinstance(item.get(key), str)}
        got = items_of[raw]
        if got is None:
            continue
        if params.cursor is msgspec.UNSET or scope not in state:
            state[scope] = got
        else:
            state[scope] = {**state[scope], **got}
        yield resp, scope, state[scope]


Lists = dict[int, tuple[list[int], list[dict[str, Any]]]]


def _latest(view: View, method: str, member: str, key: str) -> Lists:
    """scope -> (answer seqs, the list after each), for :func:`_at`."""
    out: Lists = {}
    for resp, scope, items in listed(view, method, member, key):
        seqs, states = out.setdefault(scope, ([], []))
        seqs.append(resp)
        states.append(items)
    return out


def _at(lists: Lists, scope: int, seq: int) -> dict[str, Any] | None:
    """The list of ``scope`` as the latest answer before ``seq`` left it (None: none yet)."""
    got = lists.get(scope)
    if got is None:
        return None
    i = bisect_right(got[0], seq) - 1
    return got[1][i] if i >= 0 else None


@lru_cache(maxsize=4096)
def _compiled(schema_text: str) -> Any:
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(json.loads(schema_text))
    except (ValueError, TypeError, jsonschema_rs.ReferencingError):
        return None


def tool_validator(schema: Any, seen: dict[int, Any] | None = None) -> Any:
    """A compiled validator of a tool's schema (cached by its JSON text, and in ``seen`` by
    the object, which the calls of one listing share); None when it does not compile."""
    if not isinstance(schema, dict):
        return None
    if seen is not None and id(schema) in seen:
        return seen[id(schema)][1]
    v = _compiled(json.dumps(schema, sort_keys=True))
    if seen is not None:
        seen[id(schema)] = (schema, v)  # the schema is kept: its id stays its own
    return v


def _errors(v: Any, instance: Any, prefix: str) -> list[tuple[str, str]]:
    if v.is_valid(instance):
        return []
    seen: dict[str, str] = {}
    for e in v.iter_errors(instance):
        seen.setdefault(prefix + pointer_text(e.instance_path), e.message)
    return sorted(seen.items(), key=lambda kv: -kv[0].count("/"))


def _instance(raw: bytes) -> Any:
    """A raw JSON member as a value (an absent or null one as the empty object)."""
    if raw in (b"", b"null"):
        return {}
    try:
        return _decode(raw)  # integers of any size exact, as json.loads
    except (msgspec.DecodeError, RecursionError):
        return None  # nested too deep to decode safely: judged as no object


def _raw_errors(view: View, v: Any, raw: bytes, prefix: str) -> list[tuple[str, str]]:
    """:func:`_errors` of a raw member, once per distinct (validator, text) in the view:
    real traffic repeats its calls."""
    cache: dict[tuple[int, bytes, str], list[tuple[str, str]]] = view.__dict__.setdefault(
        "_validated", {})
    key = (id(v), raw, prefix)
    got = cache.get(key)
    if got is None:
        got = _errors(v, _instance(raw), prefix)
        kept = view.__dict__.get("_validated_bytes", 0)
        if kept < _CACHE_BYTES:  # bounded: a capture of distinct calls keeps no more
            cache[key] = got
            view.__dict__["_validated_bytes"] = kept + len(raw)
    return got


#: the most argument text :func:`_raw_errors` keeps as keys per view
_CACHE_BYTES = 16 << 20


def _tool_calls(view: View) -> list[tuple[int, dict[str, Any] | None, str, bytes]]:
    return view.memo("tool-calls", _walk_calls)  # type: ignore[no-any-return]


def _walk_calls(view: View) -> list[tuple[int, dict[str, Any] | None, str, bytes]]:
    """``(call seq, its tool from the latest list or None, name, raw arguments)``; calls
    before any list of their scope are left out."""
    lists = _latest(view, "tools/list", "tools", "name")
    if not lists:
        return []
    out = []
    calls = view.rows(["tools/call"], (0,))
    params = view.request_params(calls)
    for seq, tools, p in zip(calls, _lists_at(lists, view.scopes(calls), calls), params,
                             strict=True):
        if tools is not None and isinstance(p.name, str):
            out.append((seq, tools.get(p.name), p.name, bytes(p.arguments)))
    return out


def _lists_at(lists: Lists, scopes: list[int], seqs: list[int]) -> list[dict[str, Any] | None]:
    """:func:`_at` of many frames at once (one search per scope)."""
    out: list[dict[str, Any] | None] = [None] * len(seqs)
    if not seqs:
        return out
    sc = np.asarray(scopes, dtype=np.int64)
    sq = np.asarray(seqs, dtype=np.int64)
    for scope, (answers, states) in lists.items():
        where = np.flatnonzero(sc == scope)
        if not len(where):
            continue
        idx = np.searchsorted(np.asarray(answers, dtype=np.int64), sq[where], side="right") - 1
        for i, k in zip(where.tolist(), idx.tolist(), strict=True):
            if k >= 0:
                out[i] = states[k]
    return out


_decode = msgspec.json.decode


def _arguments(view: View) -> list[Hit]:
    with bounded_recursion():
        return _arguments_of(view)


def _arguments_of(view: View) -> list[Hit]:
    out: list[Hit] = []
    seen: dict[int, Any] = {}
    for seq, tool, name, args in _tool_calls(view):
        if tool is None:
            continue
        v = tool_validator(tool.get("inputSchema"), seen)
        if v is None:
            continue
        errors = _raw_errors(view, v, args, "/params/arguments")
        if errors:
            ptr, what = errors[0]
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            out.append(Hit(seq, view.response_of.get(seq),
                           f"{name} at {ptr}: {what}{more}", ptr))
    return out


def _not_listed(view: View) -> list[Hit]:
    return [Hit(seq, None, f"{name!r} was not in the latest tools/list")
            for seq, tool, name, _ in _tool_calls(view) if tool is None]


def _output(view: View) -> list[Hit]:
    out: list[Hit] = []
    seen: dict[int, Any] = {}
    calls = [(seq, tool, name, view.response_of[seq]) for seq, tool, name, _ in _tool_calls(view)
             if tool and tool.get("outputSchema") is not None and seq in view.response_of]
    view.prefetch([c[3] for c in calls])
    for seq, tool, name, resp in calls:
        result = view.result(resp)
        if result is None or result.get("isError") is True or \
                result.get("resultType") == "input_required":
            continue
        if "structuredContent" not in result:
            out.append(Hit(resp, seq, f"{name} declares an outputSchema but the result has "
                           "no structuredContent", "/result"))
            continue
        v = tool_validator(tool["outputSchema"], seen)
        errors = _errors(v, result["structuredContent"], "/result/structuredContent") if v else []
        if errors:
            ptr, what = errors[0]
            out.append(Hit(resp, seq, f"{name} at {ptr}: {what}", ptr))
    return out


def _prompts(view: View) -> list[Hit]:
    lists = _latest(view, "prompts/list", "prompts", "name")
    out: list[Hit] = []
    if not lists:
        return out
    gets = view.rows(["prompts/get"], (0,))
    for seq, scope, p in zip(gets, view.scopes(gets), view.request_params(gets), strict=True):
        prompts = _at(lists, scope, seq)
        name = p.name
        prompt = prompts.get(name) if prompts is not None and isinstance(name, str) else None
        if prompt is None:
            continue
        declared = {a.get("name"): a for a in prompt.get("arguments") or []
                    if isinstance(a, dict)}
        sent = _instance(bytes(p.arguments)) or {}
        sent = sent if isinstance(sent, dict) else {}
        missing = [n for n, a in declared.items() if a.get("required") and n not in sent]
        extra = [n for n in sent if n not in declared]
        if missing:
            out.append(Hit(seq, None, f"{name} needs argument {missing[0]!r}",
                           "/params/arguments"))
        elif extra:
            out.append(Hit(seq, None, f"{name} declares no argument {extra[0]!r}",
                           f"/params/arguments/{extra[0]}"))
    return out


@lru_cache(maxsize=1024)
def _template_regex(template: str) -> re.Pattern[str]:
    """A URI template (RFC 6570, the forms MCP servers use) as a regex."""
    out, pos = [], 0
    for m in re.finditer(r"\{([^}]*)\}", template):
        out.append(re.escape(template[pos:m.start()]))
        expr = m.group(1)
        out.append(".*" if expr[:1] in ("+", "#", "/") or expr.endswith("*") else "[^/]*")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z")


def _resources(view: View) -> list[Hit]:
    lists = _latest(view, "resources/list", "resources", "uri")
    templates = _latest(view, "resources/templates/list", "resourceTemplates", "uriTemplate")
    out: list[Hit] = []
    if not lists and not templates:
        return out
    reads = view.rows(["resources/read"], (0,))
    for seq, scope, p in zip(reads, view.scopes(reads), view.request_params(reads), strict=True):
        uris = _at(lists, scope, seq)
        temps = _at(templates, scope, seq)
        if uris is None and temps is None:
            continue
        uri = p.uri
        if not isinstance(uri, str) or uri in (uris or {}):
            continue
        if any(_template_regex(t).match(uri) for t in temps or ()):
            continue
        out.append(Hit(seq, None, f"{uri} is neither listed nor matches a listed template",
                       "/params/uri"))
    return out


CHECKS = {"tool-arguments-schema": lambda view: view.memo("tool-arguments-schema", _arguments), "tool-not-listed": _not_listed,
          "tool-output-schema": _output, "prompt-arguments": _prompts,
          "resource-not-listed": _resources}
