"""The schema validation of the contract rules: a tool's schema compiled once per JSON
text (in its own dialect: its ``$schema``, else JSON Schema 2020-12), members validated
one by one or as one batch, and the structural test of arguments (an object or not)
made without decoding."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import msgspec
import numpy as np

from ..fast.store import ArgTexts
from ._view import pointer_text

_decode = msgspec.json.decode


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


def _object_starts(raws: ArgTexts) -> np.ndarray:
    """Whether each of raw arguments starts as an object (absent and null ones count as
    ``{}``): the structural test, without decoding."""
    code = raws.first_bytes()  # 0 for an empty text
    out = (code == ord("{")) | (code == 0)
    maybe = np.flatnonzero((code == ord("n")) & (raws.lengths() == 4))
    if len(maybe):
        out[maybe] = np.asarray([t == b"null" for t in raws[maybe].tolist()], dtype=bool)
    return out


def _objects(values: list[Any]) -> np.ndarray:
    """A list as a 1-d object array (whatever its items are)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _object_texts(raws: ArgTexts) -> np.ndarray:
    """:func:`_object_text` of each of raw arguments."""
    out = _object_starts(raws)
    long = np.flatnonzero(out & (raws.lengths() >= _SHALLOW))
    if len(long):
        texts = raws[long].tolist()
        for k, text in zip(long.tolist(), texts, strict=True):
            out[k] = _object_text(text)
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
