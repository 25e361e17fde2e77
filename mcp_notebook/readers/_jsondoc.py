"""Helpers for readers of whole-JSON capture files (Inspector exports, cassettes)."""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import msgspec

__all__ = ["compact", "is_null", "text_of", "array_items", "Item", "CUT"]


def compact(raw: msgspec.Raw | bytes) -> str:
    """The compact JSON text of a raw JSON value, every number and key order kept.

    >>> compact(b'{\\n  "id": 18446744073709551617,\\n  "x": 1.50\\n}')
    '{"id":18446744073709551617,"x":1.50}'
    """
    return msgspec.json.format(bytes(raw), indent=-1).decode("utf-8", "surrogateescape")


def is_null(raw: msgspec.Raw | bytes) -> bool:
    """True when a raw JSON value is absent or ``null``."""
    data = bytes(raw).strip()
    return not data or data == b"null"


def text_of(raw: msgspec.Raw | bytes) -> str | None:
    """A raw JSON string value as text; None when it is not a string."""
    try:
        value = msgspec.json.decode(bytes(raw))
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, str) else None



# a JSON string (closed, or cut by the end of the text), or one structural character
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{},]', re.S)


#: what :func:`array_items` says of a document that ends between two members
CUT = "the file ends before the array is closed: it was cut"


class Item(NamedTuple):
    """One member of a JSON array found in a document that may be broken."""

    position: int  # in the array, from 0
    start: int  # offset of its first character in the document
    text: str  # its text; for a cut member, what there is of it
    complete: bool  # False: the document ends inside this member


def array_items(doc: str, path: tuple[str, ...] = ()) -> tuple[list[Item], str | None]:
    """The members of the array at ``path`` (object keys from the top) of a JSON text.

    For a document the whole-document decoder refused: each member is found by its
    brackets and strings alone, so one bad value in a member (a lone surrogate, a wrong
    type) costs that member only, and a document cut inside a member (a crash, a full
    disk) keeps every member before it; the cut one comes back with ``complete=False``.
    Returns the members and, when no such array is found, why (or :data:`CUT` when the
    document ends between two members).

    >>> items, problem = array_items('{"a": [1, {"b": "]"}, [2, 3], {"cut": tr', ("a",))
    >>> [(i.text, i.complete) for i in items], problem
    ([('1', True), ('{"b": "]"}', True), ('[2, 3]', True), ('{"cut": tr', False)], None)
    >>> array_items('{"b": []}', ("a",))
    ([], 'no array at a')
    """
    stack: list[tuple[str, str | None]] = []  # (bracket, key it opened under)
    key: str | None = None  # the last string read at object level
    target = 0  # depth of the wanted array once found
    items: list[Item] = []
    after = 0  # where the current member's text starts (after "[" or ",")
    for m in _TOKEN.finditer(doc):
        c = m.group()[0]
        if not target:
            if c == '"':
                key = _key(m.group()) if stack and stack[-1][0] == "{" else None
            elif c in "{[":
                stack.append((c, key if stack and stack[-1][0] == "{" else None))
                key = None
                if (c == "[" and len(stack) == len(path) + 1
                        and tuple(k for _, k in stack[1:]) == path
                        and all(b == "{" for b, _ in stack[:-1])):
                    target, after = len(stack), m.end()
            elif c in "}]":
                if stack:
                    stack.pop()
            else:
                key = None
            continue
        if len(stack) == target and c in ",]":
            text = doc[after:m.start()].strip()
            if text:
                items.append(Item(len(items), after + _lead(doc, after), text, True))
            after = m.end()
            if c == "]":
                return items, None
        elif c in "{[":
            stack.append((c, None))
        elif c in "}]" and len(stack) > target:  # a stray "}" at the array's level: junk
            stack.pop()
    if not target:
        return [], "no array at " + (".".join(path) if path else "the top")
    text = doc[after:].strip()
    if not text:
        return items, CUT
    items.append(Item(len(items), after + _lead(doc, after), text, False))
    return items, None


def _lead(doc: str, at: int) -> int:
    """The blanks at ``doc[at:]``."""
    return len(doc[at:at + 256]) - len(doc[at:at + 256].lstrip())


def _key(tok: str) -> str | None:
    try:
        value = json.loads(tok)
    except ValueError:
        return None
    return value if isinstance(value, str) else None
