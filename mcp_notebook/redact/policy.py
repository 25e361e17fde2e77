"""What counts as a secret: :class:`Policy`, plain data a user can extend.

Values are judged by their shape and their context, never by a word alone:

1. **keys**: a JSON member, a HAR header / cookie / query parameter, a ``key: value`` /
   ``key=value`` in text or a ``--flag value`` on a command line whose *name* ends in a
   secret word (``password``, ``apiKey``, ``Authorization``, ``client_secret``,
   ``*token``...) has its value replaced; ``?key=``, ``&sig=`` and ``X-Amz-Signature=``
   only in a query. A JSON Schema under such a name (a ``tools/list`` parameter called
   ``password``) is a description, not a secret: only its ``default`` / ``examples`` are.
2. **values**: shapes that are secrets wherever they appear (:mod:`.shapes`: ``Bearer``
   tokens, vendor keys, JWTs, private key blocks, ``user:password@`` in URLs), also
   inside a base64 blob that decodes to text (the blob is encoded again).
3. JSON-RPC structure is never touched: ``jsonrpc``, ``id``, ``method``, and the ids
   a message refers to (``params.requestId``, ``progressToken``) are kept, so a
   redacted capture pairs exactly like the original.

:class:`~mcp_notebook.redact.redactor.Redactor` applies a policy; each replacement it makes
is a :class:`Hit`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from .names import DEFAULT_KEEP_KEYS, DEFAULT_KEYS, DEFAULT_QUERY_KEYS, normalise
from .shapes import DEFAULT_VALUES

__all__ = ["Policy", "Hit", "TOKEN_RE", "KEEP_PATHS", "DEFAULT_KEYS", "DEFAULT_QUERY_KEYS",
           "DEFAULT_VALUES", "DEFAULT_KEEP_KEYS", "normalise"]

#: A replacement a :class:`Redactor` wrote (never redacted again: redaction is idempotent).
TOKEN_RE = re.compile(r"«redacted:sha256:[0-9a-f]{16}»")


class Hit(NamedTuple):
    """One replacement: where (a JSON path, a header, ``text``), what kind, the replacement."""

    where: str
    kind: str
    replacement: str


@dataclass(frozen=True)
class Policy:
    """What the redactor looks for: plain data a user can extend.

    Parameters
    ----------
    keys
        Regexes naming secret-holding keys (JSON members, headers, cookies, query
        parameters, ``key=value`` in text, ``--flag`` on a command line), matched in full
        against the lower-cased name without ``-_.`` and spaces.
    values
        ``kind -> regex`` of secret shapes found anywhere in text; a group named
        ``secret`` narrows the part replaced.
    keep_keys
        Names never redacted for their name: a plain name (``page_token``) is normalised
        like a key, anything else is a regex matched against the normalised name.
    all_cookies
        Redact every cookie value of a HAR, whatever its name.
    query_keys
        Regexes of names that hold secrets in a URL query or a form only.
    engines
        Optional engines whose shapes are added (:mod:`.engines`: ``"detect-secrets"``).

    Examples
    --------
    >>> p = Policy().extend(keys=[r"pin"], values={"ticket": r"TKT-\\d{6}"})
    >>> "pin" in p.keys, "ticket" in p.values
    (True, True)
    """

    keys: tuple[str, ...] = DEFAULT_KEYS
    values: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_VALUES))
    keep_keys: tuple[str, ...] = DEFAULT_KEEP_KEYS
    all_cookies: bool = True
    query_keys: tuple[str, ...] = DEFAULT_QUERY_KEYS
    engines: tuple[str, ...] = ()

    def extend(self, keys: Iterable[str] = (), values: dict[str, str] | None = None,
               keep_keys: Iterable[str] = (), query_keys: Iterable[str] = (),
               engines: Iterable[str] = ()) -> Policy:
        """A copy with more key patterns, value shapes, kept names and engines."""
        return replace(self, keys=self.keys + tuple(keys),
                       values={**self.values, **(values or {})},
                       keep_keys=self.keep_keys + tuple(keep_keys),
                       query_keys=self.query_keys + tuple(query_keys),
                       engines=self.engines + tuple(e for e in engines
                                                    if e not in self.engines))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Policy:
        """A policy from plain data: ``{"keys": [...], "values": {...}, "keep_keys": [...],
        "query_keys": [...], "engines": [...], "all_cookies": bool, "replace": bool}``; without
        ``"replace": true`` it extends the default policy."""
        base = cls() if not data.get("replace") else cls(keys=(), values={}, keep_keys=(),
                                                        query_keys=())
        out = base.extend(data.get("keys", ()), data.get("values"), data.get("keep_keys", ()),
                          data.get("query_keys", ()), data.get("engines", ()))
        if "all_cookies" in data:
            out = replace(out, all_cookies=bool(data["all_cookies"]))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"keys": list(self.keys), "values": dict(self.values),
                "keep_keys": list(self.keep_keys), "query_keys": list(self.query_keys),
                "engines": list(self.engines), "all_cookies": self.all_cookies,
                "replace": True}


#: JSON-RPC members kept whatever their name: the id and what refers to ids.
KEEP_PATHS = {("jsonrpc",), ("id",), ("method",), ("params", "requestId"),
              ("params", "progressToken"), ("params", "_meta", "progressToken"),
              ("params", "protocolVersion"), ("result", "protocolVersion")}

