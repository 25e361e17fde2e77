"""Schemas by version: every request, notification and result against the official schema.

The schemas are the official ``schema.json`` of each protocol version (copied verbatim
into ``conversation/schema/<version>/``, see ``SOURCE.txt`` there for the commit and the
licence). A message is validated against the definition its method names in that version
(``protocol/methods-by-version.json``: ``schema_type`` for the message, ``result_type`` for
the result of its paired request), in the dialect the schema declares (draft-07 up to
2025-06-18, 2020-12 from 2025-11-25). Each definition is compiled once (jsonschema-rs) and
cached. A finding names the JSON pointer of the failing member and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol import versions as V
from ..protocol.rules import Rule
from ._view import Hit, View, pointer_text

if TYPE_CHECKING:  # pragma: no cover
    import jsonschema_rs

__all__ = ["RULES", "CHECKS", "schema_errors", "definition_for", "validator"]

_SCHEMA = "official schema.json of the negotiated version"
T = TypeVar("T")

RULES: tuple[Rule, ...] = (
    Rule("schema-params", "error", "Request and notification params match the schema",
         "The message is validated against the definition its method names in the official "
         "schema of the negotiated version (e.g. CallToolRequest for tools/call).",
         f"MCP schema.json of the version ({_SCHEMA}); definitions named in "
         "methods-by-version.json",
         "The member at the pointer breaks the version's schema: send what the schema "
         "expects there (see the detail), or negotiate the version whose schema you follow.",
         topic="schemas", quoted=False),
    Rule("schema-result", "error", "Results match their method's result schema",
         "A result is validated against the result definition of its request's method in "
         "the official schema of the negotiated version (e.g. CallToolResult for tools/call).",
         f"MCP schema.json of the version ({_SCHEMA})",
         "The result member at the pointer breaks the schema of the method's result: fix "
         "what the server returns there.", topic="schemas", quoted=False),
)


@cache
def _document(version: str) -> dict[str, Any]:
    path = resources.files(__package__) / "schema" / version / "schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _table(version: str) -> dict[tuple[str, str], str]:
    """``{(method, "message"|"result"): definition}`` of a version."""
    text = (resources.files("mcp_notebook.protocol") / "methods-by-version.json").read_text("utf-8")
    rows = json.loads(text)["versions"][version]
    out: dict[tuple[str, str], str] = {}
    for row in rows:
        out[(row["method"], "message")] = row["schema_type"]
        if "result_type" in row:
            out[(row["method"], "result")] = row["result_type"]
    return out


def definition_for(version: str, method: str, part: str, body: Any = None,
                   request: Any = None) -> str | None:
    """The definition a message (``part="message"``) or result (``"result"``) of ``method``
    is checked against in ``version``; a union result is narrowed by what the body says
    (2026 ``resultType``, a 2025-11-25 task-augmented request)."""
    name = _table(V.normalise(version)).get((method, part))
    if name is None or "|" not in name:
        return name
    choices = [c.strip() for c in name.split("|")]
    if "InputRequiredResult" in choices:
        rt = body.get("resultType") if isinstance(body, dict) else None
        return "InputRequiredResult" if rt == "input_required" else choices[0]
    if "CreateTaskResult" in choices:
        params = request.get("params") if isinstance(request, dict) else None
        task = isinstance(params, dict) and "task" in params
        return "CreateTaskResult" if task else choices[0]
    return choices[0]


@cache
def validator(version: str, definition: str) -> jsonschema_rs.Validator:
    """The compiled validator of one definition of one version's schema (cached)."""
    import jsonschema_rs

    doc = _document(version)
    key = "$defs" if "$defs" in doc else "definitions"
    root = {"$schema": doc["$schema"], key: doc[key], "$ref": f"#/{key}/{definition}"}
    return jsonschema_rs.validator_for(root)


def schema_errors(version: str, definition: str, instance: Any,
                  prefix: str = "") -> list[tuple[str, str]]:
    """``[(pointer, what was expected)]`` of ``instance`` against a definition; the most
    specific error first (the deepest pointer), at most one per pointer."""
    v = validator(V.normalise(version), definition)
    if v.is_valid(instance):
        return []
    seen: dict[str, str] = {}
    for e in v.iter_errors(instance):
        ptr = prefix + pointer_text(e.instance_path)
        seen.setdefault(ptr, e.message)
    return sorted(seen.items(), key=lambda kv: -kv[0].count("/"))


def _hit(seq: int, related: int | None, version: str, definition: str,
         errors: list[tuple[str, str]]) -> Hit:
    ptr, what = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return Hit(seq, related, f"{definition} ({version}) at {ptr or '/'}: {what}{more}", ptr)


#: the frames whose texts are read and decoded at once (one call of the text sources per
#: batch: frame by frame, reading the texts cost ten times the validation)
BATCH = 4096


def _batches(items: list[T]) -> Iterator[list[T]]:
    for k in range(0, len(items), BATCH):
        yield items[k:k + BATCH]


def _params(view: View) -> list[Hit]:
    out: list[Hit] = []
    for some in _batches(view.message_rows()):
        view.prefetch(some)
        out += _params_of(view, some)
    return out


def _params_of(view: View, seqs: list[int]) -> list[Hit]:
    out: list[Hit] = []
    found: dict[tuple[str, str | None], str | None] = {}  # (version, method) -> definition
    for seq in seqs:
        version = view.version(seq)
        method = view.method(seq)
        key = (version, method)
        if key in found:
            definition = found[key]
        else:
            definition = found[key] = definition_for(version, method, "message") \
                if method else None
        msg = view.body(seq)
        if definition is None or not isinstance(msg, dict):
            continue
        errors = schema_errors(version, definition, msg)
        if errors:
            out.append(_hit(seq, None, version, definition, errors))
    return out


def _results(view: View) -> list[Hit]:
    out: list[Hit] = []
    for some in _batches(view.answered(kind="result")):
        view.prefetch([seq for pair in some for seq in pair])
        out += _results_of(view, some)
    return out


def _results_of(view: View, pairs: list[tuple[int, int]]) -> list[Hit]:
    out: list[Hit] = []
    for req, resp in pairs:
        method = view.method(req)
        version = view.version(resp)
        msg = view.body(resp)
        result = msg.get("result") if isinstance(msg, dict) else None
        if method is None or not isinstance(result, dict):
            continue
        definition = definition_for(version, method, "result", result, view.body(req))
        if definition is None:
            continue
        errors = schema_errors(version, definition, result, "/result")
        if errors:
            out.append(_hit(resp, req, version, definition, errors))
    return out


def params_hits(view: View) -> list[Hit]:
    """The ``schema-params`` findings of a view (computed once)."""
    return view.memo("schema-params", _params)  # type: ignore[no-any-return]


CHECKS = {"schema-params": params_hits,
          "schema-result": lambda view: view.memo("schema-result", _results)}
