"""The engine that replaces secrets: :class:`Redactor`, a compiled policy plus a salt.

It replaces every secret with ``«redacted:sha256:<16 hex>»``, an HMAC-SHA256 of the secret
under the salt: equal secrets get equal replacements (joins and group-bys still work), and
without the salt the replacement says nothing about the secret. Each replacement is recorded
as a :class:`~.policy.Hit` (where, what kind, the replacement). What counts as a secret is
the :class:`~.policy.Policy`; free text is scanned by :class:`~.text.TextRedactor`, and
decoded JSON walked here, member by member.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .names import SCHEMA_VALUES, is_schema
from .policy import TOKEN_RE, Hit
from .shapes import placeholder
from .text import TextRedactor

__all__ = ["Redactor", "json_path"]

#: a ``--flag`` before a value in a list of arguments (``["--api-key", "X"]``)
_FLAG_WORD = re.compile(r"--(?P<key>[A-Za-z][A-Za-z0-9_-]{0,60})")


class Redactor(TextRedactor):
    """A compiled :class:`~.policy.Policy` with its salt: secrets in text and in JSON.

    Parameters
    ----------
    policy
        What to look for (the default policy when None).
    salt
        Key of the replacement hashes; a random one per redactor when None, so that
        replacements cannot be matched across runs unless the same salt is given.
    """

    def json(self, value: Any, path: tuple[Any, ...], hits: list[Hit],
             keep: Callable[[tuple[Any, ...]], bool] | None = None) -> Any:
        """A decoded JSON value with secrets replaced (members named as secrets, shapes)."""
        if isinstance(value, dict):
            pair = self._pair_name(value) if "value" in value else None
            out = {}
            for k, v in value.items():
                sub = path + (k,)
                if keep is not None and keep(sub):
                    out[k] = v
                elif pair is not None and k == "value":
                    out[k] = self._all_leaves(v, sub, f"key:{pair}", hits)
                elif isinstance(k, str) and self.secret_key(k):
                    out[k] = self._secret_member(v, sub, f"key:{k}", hits)
                else:
                    out[k] = self.json(v, sub, hits, keep)
            return out
        if isinstance(value, list):
            items = []
            prev: Any = None
            for i, v in enumerate(value):
                flag = _FLAG_WORD.fullmatch(prev) if isinstance(prev, str) and prev[:2] == "--" \
                    else None
                prev = v
                if flag is not None and isinstance(v, str) and not v.startswith("-") \
                        and self.secret_key(flag.group("key")):
                    items.append(self._all_leaves(v, path + (i,), f"flag:{flag.group(0)}",
                                                  hits))  # ["--api-key", "X"]
                else:
                    items.append(self.json(v, path + (i,), hits, keep))
            return items
        if isinstance(value, str):
            n = len(hits)
            new = self.text(value, "", hits)
            if len(hits) > n:  # the path named only when it held a secret
                where = json_path(path)
                hits[n:] = [h._replace(where=where) for h in hits[n:]]
            return new
        return value

    def _pair_name(self, value: dict[str, Any]) -> str | None:
        """The name of a ``{"name": "Authorization", "value": "..."}`` pair whose name is a
        secret's, else None."""
        if "value" not in value:
            return None
        name = value.get("name", value.get("key"))
        return name if isinstance(name, str) and self.secret_key(name) else None

    def _secret_member(self, value: Any, path: tuple[Any, ...], kind: str,
                       hits: list[Hit]) -> Any:
        """The value of a member named as a secret: every leaf, unless it is a JSON Schema
        describing the secret (then only its example values)."""
        if isinstance(value, dict) and is_schema(value):
            return {k: self._all_leaves(v, path + (k,), kind, hits) if k in SCHEMA_VALUES
                    else self.json(v, path + (k,), hits) for k, v in value.items()}
        return self._all_leaves(value, path, kind, hits)

    def _all_leaves(self, value: Any, path: tuple[Any, ...], kind: str, hits: list[Hit]) -> Any:
        if isinstance(value, dict):
            return {k: self._all_leaves(v, path + (k,), kind, hits) for k, v in value.items()}
        if isinstance(value, list):
            return [self._all_leaves(v, path + (i,), kind, hits) for i, v in enumerate(value)]
        if value is None or isinstance(value, bool) or value == "":
            return value
        if isinstance(value, str) and (TOKEN_RE.fullmatch(value) or placeholder(value)):
            return value
        secret = value if isinstance(value, str) else json.dumps(value)
        return self._replace(secret, json_path(path), kind, hits)


_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def json_path(path: tuple[Any, ...]) -> str:
    """``("params", "headers", 0, "x-y")`` -> ``$.params.headers[0]["x-y"]``."""
    out = "$"
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.fullmatch(p):
            out += f".{p}"
        else:
            out += "[" + json.dumps(p, ensure_ascii=False) + "]"
    return out
