"""Helpers for readers of whole-JSON capture files (Inspector exports, cassettes)."""

from __future__ import annotations

import io
import json
import mmap
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec
import numpy as np

__all__ = ["compact", "compacted", "joined", "places", "nulls", "is_null", "text_of", "array_items", "salvage", "Item",
           "read_mapped",
           "CUT"]

T = TypeVar("T")


def compact(raw: msgspec.Raw | bytes) -> str:
    """The compact JSON text of a raw JSON value, every number and key order kept.

    >>> compact(b'{\\n  "id": 18446744073709551617,\\n  "x": 1.50\\n}')
    '{"id":18446744073709551617,"x":1.50}'
    """
    # msgspec reads the raw value's buffer as it is (no bytes copy first)
    return msgspec.json.format(raw, indent=-1).decode("utf-8", "surrogateescape")


def compacted(path: Path, decode: Callable[[bytes], Any]) -> tuple[Any, bytes]:
    """``(decode(flat), flat)``: the document made compact as a whole by msgspec (every
    number and key order kept), so each raw value decoded from it is its own compact
    text, a slice of ``flat`` (:func:`joined` gives such texts as places in it). ``(None,
    the file's bytes)`` when either refuses the document (read again: the per-item path
    says what is wrong)."""
    from .base import open_bytes  # base imports no helper of this module: no cycle

    try:
        flat = _format_file(path)
    except (msgspec.DecodeError, RecursionError):
        with open_bytes(path) as f:
            return None, f.read()
    try:
        return decode(flat), flat
    except (msgspec.DecodeError, RecursionError):
        del flat
        with open_bytes(path) as f:
            return None, f.read()


def _format_file(path: Path) -> bytes:
    """The file compacted by msgspec, read through :func:`read_mapped` (at 1 GB: about
    260,000 page faults and 0.6 s of system time saved against a copy of the file)."""
    return read_mapped(path, lambda data, _mapped: msgspec.json.format(data, indent=-1))


def read_mapped(path: Path, use: Callable[[Any, bool], T]) -> T:
    """``use(data, mapped)`` of the file's bytes: a plain file through a read-only map of it
    (its pages are the system's cache, not a copy of the whole file in fresh memory;
    unmapped after ``use``, which must keep no view of it), a compressed or empty one, or
    one that cannot be mapped, read whole."""
    from .base import open_bytes

    with open_bytes(path) as f:
        fileno = getattr(f, "fileno", None)
        if isinstance(f, io.BufferedReader) and fileno is not None:
            try:
                view = mmap.mmap(fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # empty, or a file the system cannot map
                view = None
            if view is not None:
                with view:
                    return use(view, True)
        return use(f.read(), False)


def joined(flat: bytes, raws: list[msgspec.Raw]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """``(buf, starts, ends)``: the texts of ``raws`` (raw values decoded from ``flat``) as
    places in one buffer. With the C extension, the buffer is ``flat`` itself and the
    places are where the values are in it (no copy: at 1M messages the joined texts were
    0.75 GB more alive beside the document); without it (or for a value that is not a
    slice of ``flat``), the texts joined, as before. The texts are the same either way.

    >>> import msgspec
    >>> flat = b'[[1,2],{"a":3}]'
    >>> raws = msgspec.json.decode(flat, type=list[msgspec.Raw])
    >>> buf, starts, ends = joined(flat, raws)
    >>> [bytes(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
    [b'[1,2]', b'{"a":3}']
    """
    at = places(flat, raws)
    if at is not None:
        return flat, at[0], at[0] + at[1]
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    ends = np.cumsum(lengths)
    return b"".join(raws), ends - lengths, ends


def places(flat: bytes, raws: list[msgspec.Raw]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(starts, lengths)`` of raw values decoded from ``flat``, where they are in it (the
    C extension says); None without the extension, or where one is not a slice of it
    (join them then: :func:`joined`)."""
    from ..engine.native import native

    if native is None:
        return None
    starts = np.frombuffer(native.offsets(flat, raws), dtype=np.int64)
    if len(starts) and starts.min() < 0:
        return None
    return starts, np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))


#: the first bytes of a value that may be ``null`` (blanks around it included)
_NULL_FIRST = frozenset(b" \t\r\n\x0b\x0cn")


def is_null(raw: msgspec.Raw | bytes) -> bool:
    """True when a raw JSON value is absent or ``null``.

    >>> [is_null(b''), is_null(b" null "), is_null(b"nul"), is_null(b'{"a": null}')]
    [True, True, False, False]
    """
    if not len(raw):
        return True
    if memoryview(raw)[0] not in _NULL_FIRST:
        return False  # opens with neither a blank nor "n": not null (no copy)
    data = bytes(raw).strip()
    return not data or data == b"null"


def nulls(raws: Sequence[msgspec.Raw]) -> np.ndarray:
    """Which of the raw values of a compacted document are absent or ``null`` (as
    :func:`is_null` of each; there a value is its own bytes, so only a 4-byte one may be
    ``null``).

    >>> nulls([b"", b"null", b"nul!", b"[1,2]"]).tolist()
    [True, True, False, False]
    """
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    out = lengths == 0
    for k in np.flatnonzero(lengths == 4).tolist():
        out[k] = is_null(raws[k])
    return out


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
    document ends between two members, or right after the last one's closing bracket).

    >>> items, problem = array_items('{"a": [1, {"b": "]"}, [2, 3], {"cut": tr', ("a",))
    >>> [(i.text, i.complete) for i in items], problem
    ([('1', True), ('{"b": "]"}', True), ('[2, 3]', True), ('{"cut": tr', False)], None)
    >>> array_items('[{"a": 1}, {"b": [2]}', ())[0][-1].complete
    True
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
    # a last member whose brackets all closed is whole: the file was cut after it
    whole = len(stack) == target and text[:1] in "{[" and text[-1:] in "}]"
    items.append(Item(len(items), after + _lead(doc, after), text, whole))
    return items, CUT if whole else None


def _lead(doc: str, at: int) -> int:
    """The blanks at ``doc[at:]``."""
    return len(doc[at:at + 256]) - len(doc[at:at + 256].lstrip())


def _key(tok: str) -> str | None:
    try:
        value = json.loads(tok)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def salvage(data: bytes, path: tuple[str, ...], *, what: str, unit: str, name: str,
            sess: str, exc: Exception, tail: list, need_object: bool = True
            ) -> list[tuple[int, bytes]]:
    """The items of a document the whole-document decoder refused, one at a time.

    Returns ``(position, bytes)`` of each complete item of the array at ``path``; what
    cannot be read is a record in ``tail``: a file holding no such array, or with
    ``need_object`` none whose items include an object (an ``invalid`` row: not a
    ``what``), an item the file ends inside (``invalid``, source
    ``name#<unit><position>``), a file cut between items (a ``log`` row).
    """
    from .base import Record  # base imports no helper of this module: no cycle

    text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    found, problem = array_items(text, path)
    if not found or need_object and not any(item.text[:1] == "{" for item in found):
        tail.append(Record(raw="", session=sess, source=name, kind="invalid",
                           reason=f"not {what}: {exc}"))
        return []
    items: list[tuple[int, bytes]] = []
    for item in found:
        if item.complete:
            items.append((item.position, item.text.encode("utf-8", "surrogateescape")))
        else:
            tail.append(Record(raw=item.text[:2000], session=sess, kind="invalid",
                               source=f"{name}#{unit}{item.position}",
                               reason=f"the file ends inside this {unit} (cut after "
                               f"{len(item.text)} characters of it)"
                               + (f"; {exc}" if isinstance(exc, RecursionError) else "")))
    if problem == CUT:
        tail.append(Record(raw=problem, session=sess, source=name, stream="log", kind="log"))
    return items
