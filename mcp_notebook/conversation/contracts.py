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


def _scope(view: View, seq: int) -> int:
    return -2 if view.version(seq) == "2026-07-28" else view.session(seq)


def listed(view: View, method: str, member: str, key: str
           ) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Walk the list answers of ``method`` in order: ``(response seq, scope, {key: item})``
    after each page (a request without a cursor starts the list again)."""
    state: dict[int, dict[str, Any]] = {}
    pairs = sorted(view.answered([method], kind="result"), key=lambda p: p[1])
    view.prefetch([s for p in pairs for s in p])
    for req, resp in pairs:
        scope = _scope(view, req)
        result = view.result(resp) or {}
        items = result.get(member)
        if not isinstance(items, list):
            continue
        if "cursor" not in view.params(req):
            state[scope] = {}
        got = state.setdefault(scope, {})
        for item in items:
            if isinstance(item, dict) and isinstance(item.get(key), str):
                got[item[key]] = item
        yield resp, scope, dict(got)


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


def _tool_calls(view: View) -> list[tuple[int, dict[str, Any] | None, str, Any]]:
    return view.memo("tool-calls", _walk_calls)  # type: ignore[no-any-return]


def _walk_calls(view: View) -> list[tuple[int, dict[str, Any] | None, str, Any]]:
    """``(call seq, its tool from the latest list or None, name, arguments)``; calls before
    any list of their scope are left out."""
    lists = _latest(view, "tools/list", "tools", "name")
    if not lists:
        return []
    out = []
    calls = view.rows(["tools/call"], (0,))
    view.prefetch(calls)
    for seq in calls:
        tools = _at(lists, _scope(view, seq), seq)
        if tools is None:
            continue
        p = view.params(seq)
        name = p.get("name")
        if isinstance(name, str):
            out.append((seq, tools.get(name), name, p.get("arguments", {})))
    return out


def _arguments(view: View) -> list[Hit]:
    out: list[Hit] = []
    seen: dict[int, Any] = {}
    for seq, tool, name, args in _tool_calls(view):
        if tool is None:
            continue
        v = tool_validator(tool.get("inputSchema"), seen)
        if v is None:
            continue
        errors = _errors(v, args if args is not None else {}, "/params/arguments")
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
    calls = _tool_calls(view)
    seen: dict[int, Any] = {}
    view.prefetch([view.response_of[c[0]] for c in calls
                   if c[1] and "outputSchema" in c[1] and c[0] in view.response_of])
    for seq, tool, name, _ in calls:
        schema = tool.get("outputSchema") if tool else None
        resp = view.response_of.get(seq)
        if schema is None or resp is None:
            continue
        result = view.result(resp)
        if result is None or result.get("isError") is True or \
                result.get("resultType") == "input_required":
            continue
        if "structuredContent" not in result:
            out.append(Hit(resp, seq, f"{name} declares an outputSchema but the result has "
                           "no structuredContent", "/result"))
            continue
        v = tool_validator(schema, seen)
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
    view.prefetch(gets)
    for seq in gets:
        prompts = _at(lists, _scope(view, seq), seq)
        p = view.params(seq)
        name = p.get("name")
        prompt = prompts.get(name) if prompts is not None and isinstance(name, str) else None
        if prompt is None:
            continue
        declared = {a.get("name"): a for a in prompt.get("arguments") or []
                    if isinstance(a, dict)}
        sent = p.get("arguments") or {}
        sent = sent if isinstance(sent, dict) else {}
        missing = [n for n, a in declared.items() if a.get("required") and n not in sent]
        extra = [n for n in sent if n not in declared]
        if missing:
            out.append(Hit(seq, None, f"{p['name']} needs argument {missing[0]!r}",
                           "/params/arguments"))
        elif extra:
            out.append(Hit(seq, None, f"{p['name']} declares no argument {extra[0]!r}",
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
    view.prefetch(reads)
    for seq in reads:
        scope = _scope(view, seq)
        uris = _at(lists, scope, seq)
        temps = _at(templates, scope, seq)
        if uris is None and temps is None:
            continue
        uri = view.params(seq).get("uri")
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
