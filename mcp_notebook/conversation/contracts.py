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
from typing import Any, NamedTuple

import msgspec
import numpy as np
import pandas as pd

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
    reqs = np.asarray([p[0] for p in pairs], dtype=np.int64)
    cursors = [c[4] for c in view.calls(reqs)]  # the call column: no Params made
    found = view.listed_members([p[1] for p in pairs], member)
    scopes = view.scope_array(reqs).tolist()
    items_of: dict[bytes, dict[str, Any] | None] = view.__dict__.setdefault(
        f"_items:{method}", {})
    for (_, resp), cursor, items, scope in zip(pairs, cursors, found, scopes, strict=True):
        if items.__class__ is bytes:  # the member's text (the list column): once per text
            got = items_of.get(items, _UNSEEN)
            if got is _UNSEEN:
                got = items_of[items] = _keyed(view.parsed(items), key)
        else:
            got = _keyed(items, key)
        if got is None:
            continue
        if not cursor or scope not in state:
            state[scope] = got
        else:
            state[scope] = {**state[scope], **got}
        yield resp, scope, state[scope]


_UNSEEN: Any = object()


def _keyed(items: Any, key: str) -> dict[str, Any] | None:
    """A list member's items by their ``key`` (None: the member is no list)."""
    if not isinstance(items, list):
        return None
    return {item[key]: item for item in items
            if isinstance(item, dict) and isinstance(item.get(key), str)}


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
    try:
        for e in v.iter_errors(instance):
            seen.setdefault(prefix + pointer_text(e.instance_path), e.message)
    except ValueError as e:  # jsonschema-rs: "Recursion limit reached" on a deep instance
        return [(prefix, f"nested too deep to validate ({e}); the schema refuses it")]
    return sorted(seen.items(), key=lambda kv: -kv[0].count("/"))


def _instance(raw: bytes) -> Any:
    """A raw JSON member as a value (an absent or null one as the empty object)."""
    if raw in (b"", b"null"):
        return {}
    try:
        return _decode(raw)  # integers of any size exact, as json.loads
    except (msgspec.DecodeError, RecursionError):
        return None  # nested too deep to decode safely: judged as no object


class Calls(NamedTuple):
    """The ``tools/call`` requests after a list of their scope, as columns: the call's
    frame, its tool in the latest list before it (None: not listed), the name and the raw
    arguments text (b"" when absent)."""

    seq: np.ndarray  # int64
    tool: np.ndarray  # object: dict or None
    name: np.ndarray  # object: str
    args: np.ndarray  # object: bytes
    which: np.ndarray  # int64: the index of each call's tool in ``tools``
    tools: list[Any]  # the distinct (list, name) look-ups' tools (dict or None)

    def where(self, test: Any) -> np.ndarray:
        """The calls whose tool passes ``test`` (decided once per distinct look-up)."""
        ok = np.fromiter((bool(test(t)) for t in self.tools), dtype=bool, count=len(self.tools))
        return np.flatnonzero(ok[self.which])


_NO_CALLS = Calls(np.empty(0, dtype=np.int64), np.empty(0, dtype=object),
                  np.empty(0, dtype=object), np.empty(0, dtype=object),
                  np.empty(0, dtype=np.int64), [])


def _tool_calls(view: View) -> Calls:
    return view.memo("tool-calls", _walk_calls)  # type: ignore[no-any-return]


def _walk_calls(view: View) -> Calls:
    """:class:`Calls` of the view; calls before any list of their scope are left out, and
    so are calls whose name is no string. Each call's tool is looked up once per distinct
    (list, name) pair."""
    lists = _latest(view, "tools/list", "tools", "name")
    if not lists:
        return _NO_CALLS
    calls = view.row_array(["tools/call"], (0,))
    at = _state_index(lists, view.scope_array(calls), calls)
    keep = np.flatnonzero(at >= 0)
    if not len(keep):
        return _NO_CALLS
    flat = [state for _, states in lists.values() for state in states]
    # the states by identity: sessions whose servers answered alike share one
    ident: dict[int, int] = {}
    shared = np.asarray([ident.setdefault(id(s), len(ident)) for s in flat], dtype=np.int64)
    reps = list({id(s): s for s in flat}.values())
    got = view.calls(calls[keep])
    names = _objects([c[0] for c in got])
    args = _objects([c[2] for c in got])
    del got
    codes, distinct = pd.factorize(names)
    bad = [i for i, d in enumerate(distinct) if d.__class__ is not str]
    if bad or (codes < 0).any():  # a name that is no string (absent, a number, ...)
        named = codes >= 0
        if bad:
            named &= ~np.isin(codes, bad)
        keep, names, args = keep[named], names[named], args[named]
        codes, distinct = pd.factorize(names)
    pair = shared[at[keep]] * len(distinct) + codes
    uniq, inverse = np.unique(pair, return_inverse=True)
    tools = np.empty(len(uniq), dtype=object)
    tools[:] = [reps[k].get(distinct[c]) for k, c in
                zip((uniq // len(distinct)).tolist(), (uniq % len(distinct)).tolist(),
                    strict=True)]
    which = inverse.ravel()
    return Calls(calls[keep], tools[which], names, args, which, tools.tolist())


def _state_index(lists: Lists, scopes: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """For each frame, the index of the list its scope's latest answer before it left, in
    the states of ``lists`` end to end (-1: none yet): :func:`_at` of many frames at once."""
    out = np.full(len(seqs), -1, dtype=np.int64)
    base = 0
    for scope, (answers, states) in lists.items():
        where = np.flatnonzero(scopes == scope)
        if len(where):
            idx = np.searchsorted(np.asarray(answers, dtype=np.int64), seqs[where],
                                  side="right") - 1
            out[where] = np.where(idx >= 0, idx + base, -1)
        base += len(states)
    return out


_decode = msgspec.json.decode


def _arguments(view: View) -> list[Hit]:
    with bounded_recursion():
        return _arguments_of(view)


def _arguments_of(view: View) -> list[Hit]:
    calls = _tool_calls(view)
    # one compiled validator per distinct schema text (decided once per distinct tool
    # look-up): its calls validated as one batch
    groups: dict[int, tuple[int, Any, bool]] = {}  # id(validator) -> (group, schema, every)
    of_schema: dict[int, int] = {}  # id(schema) -> group (-1: no validator)
    group_of = np.full(len(calls.tools), -1, dtype=np.int64)
    judged = np.ones(len(calls.seq), dtype=bool)
    if view.shallow_arguments:  # the structural part only: arguments that are no object
        judged = ~_object_starts(calls.args)
    for j in np.unique(calls.which[judged]).tolist():  # only tools with calls to judge
        tool = calls.tools[j]
        if tool is None:
            continue
        schema = tool.get("inputSchema")
        g = of_schema.get(id(schema))  # the lists keep the schemas: their ids stay theirs
        if g is None:
            v = tool_validator(schema)
            if v is None:
                g = -1
            else:
                g = groups.setdefault(id(v), (len(groups), schema, _accepts_all(schema)))[0]
            of_schema[id(schema)] = g
        group_of[j] = g
    per_call = np.where(judged, group_of[calls.which], -1)
    order = np.argsort(per_call, kind="stable")  # by group, each in call order
    bounds = np.searchsorted(per_call[order], np.arange(len(groups) + 1))
    found: list[tuple[int, Hit]] = []
    for g, schema, every in groups.values():
        idx = order[bounds[g]:bounds[g + 1]]
        if every:  # only a call whose arguments are no object can fail
            idx = idx[~_object_texts(calls.args[idx])]
        if not len(idx):
            continue
        raws = calls.args[idx].tolist()
        idx = idx.tolist()
        for i, errors in zip(idx, _batch_errors(schema, raws, "/params/arguments"), strict=True):
            if errors:
                seq, name = int(calls.seq[i]), calls.name[i]
                ptr, what = errors[0]
                more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
                found.append((i, Hit(seq, view.response_of.get(seq),
                                     f"{name} at {ptr}: {what}{more}", ptr)))
    found.sort(key=lambda x: x[0])
    return [h for _, h in found]


#: the members of a schema that accepts every object when they are as here (annotations
#: aside): {"type": "object"} with no properties, nothing required, nothing else
_ANNOTATIONS = frozenset({"$schema", "title", "description", "$comment"})


def _accepts_all(schema: Any) -> bool:
    """Whether ``schema`` accepts every JSON object, decided from its members (conservative:
    any member that could constrain an object answers False)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    for k, val in schema.items():
        if k in _ANNOTATIONS or k == "type":
            continue
        if (k, val) not in (("properties", {}), ("required", []),
                            ("additionalProperties", True)):
            return False
        if k == "additionalProperties" and val is not True:  # 1 == True in the test above
            return False
    return True


def _object_starts(raws: np.ndarray) -> np.ndarray:
    """Whether each of raw arguments (an object array of bytes) starts as an object (absent
    and null ones count as ``{}``): the structural test, without decoding."""
    first = raws.astype("S1")  # each text's first byte (b"" for an empty one)
    out = (first == b"{") | (first == b"")
    maybe = np.flatnonzero(first == b"n")
    if len(maybe):
        out[maybe] = raws[maybe] == b"null"
    return out  # type: ignore[no-any-return]


def _objects(values: list[Any]) -> np.ndarray:
    """A list as a 1-d object array (whatever its items are)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _object_texts(raws: np.ndarray) -> np.ndarray:
    """:func:`_object_text` of each of raw arguments (an object array of bytes)."""
    out = _object_starts(raws)
    long = np.flatnonzero(out & (np.fromiter(map(len, raws.tolist()), dtype=np.int64,
                                             count=len(raws)) >= _SHALLOW))
    for k in long.tolist():
        out[k] = _object_text(raws[k])
    return out


def _object_text(raw: Any) -> bool:
    """Whether raw arguments are an object (absent and null arguments count as ``{}``) the
    decoder takes: one nested too deep to decode is judged as no object (:func:`_instance`),
    so a text of many brackets is validated as ever."""
    text = _object_or_empty(bytes(raw))
    return text[:1] == b"{" and (len(text) < _SHALLOW or
                                 text.count(b"{") + text.count(b"[") < _SHALLOW)


#: fewer brackets than this: nested less deep than any decode refuses
_SHALLOW = 256


def _object_or_empty(raw: bytes) -> bytes:
    """A raw member's text, ``{}`` for an absent or null one (as :func:`_instance`)."""
    return b"{}" if raw in (b"", b"null") else raw


@lru_cache(maxsize=4096)
def _array_validator(schema_text: str) -> Any:
    """A validator of an array of instances of the schema (``items``), or None when the
    schema could mean something else under another root (references, ids, anchors)."""
    import jsonschema_rs

    schema = json.loads(schema_text)
    if not isinstance(schema, dict):
        return None
    inner = dict(schema)
    dialect = inner.pop("$schema", None)
    if "$" in json.dumps(inner):  # any $ref, $id, $anchor, ...: validated one by one
        return None
    wrapper: dict[str, Any] = {"type": "array", "items": inner}
    if dialect is not None:
        wrapper["$schema"] = dialect
    try:
        return jsonschema_rs.validator_for(wrapper)
    except (ValueError, TypeError, jsonschema_rs.ReferencingError):
        return None


def _batch_errors(schema: Any, raws: list[Any], prefix: str) -> list[list[tuple[str, str]]]:
    """:func:`_errors` of each raw member against ``schema``: the whole batch decoded and
    validated in one call when it holds, halves of a failing batch again, one by one below
    a few; the findings are those of validating each alone."""
    text = json.dumps(schema, sort_keys=True)
    v = _compiled(text)
    out: list[list[tuple[str, str]]] = [[] for _ in raws]
    av = _array_validator(text)
    items: list[Any] | None = None
    if av is not None:
        texts = _objects(raws)
        empty = np.flatnonzero((texts == b"") | (texts == b"null"))
        texts[empty] = b"{}"  # as _object_or_empty
        joined = b"[" + b",".join(texts.tolist()) + b"]"
        try:
            items = _decode(joined)
        except (msgspec.DecodeError, RecursionError):
            items = None
    if items is None:  # one by one
        for k, r in enumerate(raws):
            out[k] = _errors(v, _instance(bytes(r)), prefix)
        return out

    def walk(lo: int, hi: int) -> None:
        if hi - lo <= 4:
            for k in range(lo, hi):
                out[k] = _errors(v, items[k], prefix)
        elif not av.is_valid(items[lo:hi]):
            mid = (lo + hi) // 2
            walk(lo, mid)
            walk(mid, hi)
    walk(0, len(raws))
    return out


def _not_listed(view: View) -> list[Hit]:
    calls = _tool_calls(view)
    at = calls.where(lambda t: t is None)
    return [Hit(seq, None, f"{name!r} was not in the latest tools/list")
            for seq, name in zip(calls.seq[at].tolist(), calls.name[at].tolist(), strict=True)]


def _output(view: View) -> list[Hit]:
    out: list[Hit] = []
    seen: dict[int, Any] = {}
    tc = _tool_calls(view)
    at = tc.where(lambda t: t and t.get("outputSchema") is not None)
    calls = [(seq, tool, name, view.response_of[seq]) for seq, tool, name in
             zip(tc.seq[at].tolist(), tc.tool[at].tolist(), tc.name[at].tolist(), strict=True)
             if seq in view.response_of]
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


def _latest_at(view: View, lists: Lists, rows: np.ndarray) -> list[dict[str, Any] | None]:
    """For each of ``rows``, the list its scope's latest answer before it left (None:
    none yet): :func:`_at` of many frames at once."""
    if not lists:
        return [None] * len(rows)
    flat: list[dict[str, Any] | None] = [s for _, states in lists.values() for s in states]
    flat.append(None)  # index -1: none yet
    at = _state_index(lists, view.scope_array(rows), rows)
    return [flat[k] for k in at.tolist()]


def _latest_codes(view: View, lists: Lists, rows: np.ndarray
                  ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:func:`_latest_at` as codes: for each of ``rows`` the code of its list among the
    distinct list objects (sessions whose servers answered alike share one), and those
    lists; code 0 is None (no list yet)."""
    if not lists or not len(rows):
        return np.zeros(len(rows), dtype=np.int64), [None]
    flat = [s for _, states in lists.values() for s in states]
    ident: dict[int, int] = {}
    code = np.asarray([ident.setdefault(id(s), len(ident) + 1) for s in flat] + [0],
                      dtype=np.int64)  # index -1 (none yet): the last, code 0
    reps: list[dict[str, Any] | None] = [None, *{id(s): s for s in flat}.values()]
    return code[_state_index(lists, view.scope_array(rows), rows)], reps


def _prompts(view: View) -> list[Hit]:
    lists = _latest(view, "prompts/list", "prompts", "name")
    out: list[Hit] = []
    if not lists:
        return out
    gets = view.row_array(["prompts/get"], (0,))
    memo: dict[tuple[int, bytes], tuple[str, str] | None] = {}
    for seq, prompts, (name, _, args, _, _) in zip(
            gets.tolist(), _latest_at(view, lists, gets), view.calls(gets), strict=True):
        prompt = prompts.get(name) if prompts is not None and isinstance(name, str) else None
        if prompt is None:
            continue
        key = (id(prompt), args)  # the lists keep their prompts: the id stays theirs
        got = memo.get(key, _UNSEEN)
        if got is _UNSEEN:
            got = memo[key] = _prompt_finding(name, prompt, args)
        if got is not None:
            out.append(Hit(seq, None, *got))
    return out


def _prompt_finding(name: str, prompt: dict[str, Any], args: bytes) -> tuple[str, str] | None:
    """(detail, pointer) of a prompts/get of ``prompt`` with these arguments, or None."""
    declared = {a.get("name"): a for a in prompt.get("arguments") or []
                if isinstance(a, dict)}
    sent = _instance(args) or {}
    sent = sent if isinstance(sent, dict) else {}
    missing = [n for n, a in declared.items() if a.get("required") and n not in sent]
    extra = [n for n in sent if n not in declared]
    if missing:
        return f"{name} needs argument {missing[0]!r}", "/params/arguments"
    if extra:
        return f"{name} declares no argument {extra[0]!r}", f"/params/arguments/{extra[0]}"
    return None


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
    reads = view.row_array(["resources/read"], (0,))
    u_code, u_lists = _latest_codes(view, lists, reads)
    t_code, t_lists = _latest_codes(view, templates, reads)
    judged = np.flatnonzero((u_code > 0) | (t_code > 0))
    if not len(judged):
        return out
    reads, u_code, t_code = reads[judged], u_code[judged], t_code[judged]
    uri_code, uris = pd.factorize(_objects([c[1] for c in view.calls(reads)]))
    # decided once per distinct (resource list, template list, uri)
    key = (u_code * len(t_lists) + t_code) * (len(uris) + 1) + (uri_code + 1)
    uniq, inverse = np.unique(key, return_inverse=True)
    bad = np.zeros(len(uniq), dtype=bool)
    for g, k in enumerate(uniq.tolist()):
        pair, c = divmod(k, len(uris) + 1)
        uri = uris[c - 1] if c else None
        if not isinstance(uri, str):
            continue
        listed_uris, temps = u_lists[pair // len(t_lists)], t_lists[pair % len(t_lists)]
        bad[g] = uri not in (listed_uris or {}) and not any(
            _template_regex(t).match(uri) for t in temps or ())
    at = np.flatnonzero(bad[inverse.ravel()])
    return [Hit(seq, None, f"{uris[c]} is neither listed nor matches a listed template",
                "/params/uri") for seq, c in zip(reads[at].tolist(), uri_code[at].tolist(),
                                                  strict=True)]


CHECKS = {"tool-arguments-schema": lambda view: view.memo("tool-arguments-schema", _arguments), "tool-not-listed": _not_listed,
          "tool-output-schema": _output, "prompt-arguments": _prompts,
          "resource-not-listed": _resources}
