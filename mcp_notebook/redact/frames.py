"""Redact the frames of a loaded trace: a new Trace with the same rows, and a report.

A frame that holds a JSON value is decoded, its secrets replaced member by member, and
encoded again in compact form (only frames that held a secret change; ids, methods and
every number stay exact). Any other row (stderr, log, an unparsable frame) is redacted
as text. Rows, kinds, ids, sessions and times are never changed, so the redacted trace
pairs exactly like the original.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import msgspec
import pandas as pd

from ..protocol.envelope import classify
from .policy import KEEP_PATHS, Hit
from .redactor import Redactor

__all__ = ["REPORT_COLUMNS", "Redacted", "redact_frame", "redact_columns", "report_frame"]

#: name -> (dtype, meaning) of the redaction report
REPORT_COLUMNS: dict[str, tuple[str, str]] = {
    "seq": ("Int64", "the frame the secret was in (empty: a part of the capture with no frame)"),
    "source": ("object", "where in the input: file:line, HAR entry and event"),
    "where": ("object", "JSON path in the message, a HAR header / cookie, text, extra.<key>"),
    "kind": ("object", "what found it: key:<name>, header:<name>, bearer, jwt, api_key, ..."),
    "replacement": ("object", "the «redacted:sha256:…» text now in its place"),
}

_decode = msgspec.json.decode
_encode = msgspec.json.encode


class Redacted(NamedTuple):
    """What :meth:`Trace.redact` returns: the redacted trace and the report."""

    trace: Any
    report: pd.DataFrame


def _keep_member(path: tuple[Any, ...]) -> bool:
    return path in KEEP_PATHS


def _keep_in_batch(path: tuple[Any, ...]) -> bool:
    return len(path) > 1 and path[1:] in KEEP_PATHS


def redact_frame(raw: str, r: Redactor, hits: list[Hit]) -> str:
    """The text of one frame with its secrets replaced (JSON structure kept when it is JSON).

    >>> r = Redactor(salt="s")
    >>> hits = []
    >>> out = redact_frame('{"jsonrpc":"2.0","id":"sk-aaaaaaaaaaaaaaaaaaaa","method":"x",'
    ...                    '"params":{"apiKey":"abc"}}', r, hits)
    >>> '"id":"sk-aaaaaaaaaaaaaaaaaaaa"' in out, "abc" in out, [h.where for h in hits]
    (True, False, ['$.params.apiKey'])
    """
    stripped = raw.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = _decode(raw.encode("utf-8", "surrogateescape"))
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            doc = None
        if isinstance(doc, (dict, list)):
            found: list[Hit] = []
            keep = _keep_in_batch if isinstance(doc, list) else _keep_member
            try:
                new = r.json(doc, (), found, keep)
                text = _encode(new).decode("utf-8") if found else raw
            except (RecursionError, TypeError, ValueError, UnicodeError):
                found, text = [], None  # too deep to rebuild: redact it as text
            if text is not None:
                hits.extend(found)
                return text
    return r.text(raw, "text", hits)


def redact_columns(cols: Any, r: Redactor) -> tuple[Any, list[tuple[int, Hit]]]:
    """A copy of a trace's columns with every row redacted, and ``(seq, hit)`` pairs."""
    c = cols
    new = copy.copy(c)
    new.raw = list(c.raw)
    new.size = list(c.size)
    new.error_message = list(c.error_message)
    new.reason = list(c.reason)
    new.extra = {k: dict(v) for k, v in c.extra.items()}
    out: list[tuple[int, Hit]] = []
    n = len(c.kind)
    i = 0
    while i < n:
        members = 1
        if c.batch[i] is not None:  # a batch array: its members share one raw text
            while i + members < n and c.batch[i + members] == c.batch[i] + members \
                    and c.source[i + members] == c.source[i]:
                members += 1
        hits: list[Hit] = []
        text = redact_frame(c.raw[i], r, hits)
        if hits:
            size = len(text.encode("utf-8", "surrogateescape"))
            for j in range(i, i + members):
                new.raw[j] = text
                new.size[j] = size
            _new_messages(new, i, members, text)
            for h in hits:
                out.append((_member_seq(i, members, h.where), h))
        for j in range(i, i + members):
            if c.reason[j]:
                hr: list[Hit] = []
                new.reason[j] = r.text(c.reason[j], "reason", hr)
                out.extend((j, h) for h in hr)
            if j in new.extra:
                he: list[Hit] = []
                new.extra[j] = r.json(new.extra[j], ("extra",), he)
                out.extend((j, h._replace(where=h.where.replace("$.extra", "extra", 1)))
                           for h in he)
        i += members
    return new, out


def _member_seq(first: int, members: int, where: str) -> int:
    """The row of a batch member a JSON path ``$[k]...`` points into."""
    if members > 1 and where.startswith("$["):
        k = where[2:].split("]", 1)[0]
        if k.isdigit() and int(k) < members:
            return first + int(k)
    return first


def _new_messages(new: Any, first: int, members: int, text: str) -> None:
    """Error messages read again from the redacted text (they may have held a secret)."""
    if not any(new.kind[j] == "error" for j in range(first, first + members)):
        return
    envs = classify(text)
    for j in range(first, first + members):
        pos = new.batch[j] or 0
        if new.kind[j] == "error" and pos < len(envs) and envs[pos].kind == "error":
            new.error_message[j] = envs[pos].error_message


def report_frame(rows: list[tuple[int | None, str, Hit]]) -> pd.DataFrame:
    """The report DataFrame from ``(seq, source, hit)`` rows (columns: REPORT_COLUMNS)."""
    return pd.DataFrame({
        "seq": pd.array([s for s, _, _ in rows], dtype="Int64"),
        "source": pd.Series([src for _, src, _ in rows], dtype=object),
        "where": pd.Series([h.where for _, _, h in rows], dtype=object),
        "kind": pd.Series([h.kind for _, _, h in rows], dtype=object),
        "replacement": pd.Series([h.replacement for _, _, h in rows], dtype=object),
    })
