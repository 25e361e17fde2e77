"""What counts as a secret (:class:`Policy`, plain data) and the engine that replaces them.

A :class:`Redactor` is a compiled policy plus a salt. It replaces every secret with
``«redacted:sha256:<16 hex>»``, an HMAC-SHA256 of the secret under the salt: equal
secrets get equal replacements (joins and group-bys still work), and without the salt
the replacement says nothing about the secret. Each replacement is recorded as a
:class:`Hit` (where, what kind, the replacement).

Three finders, applied in this order:

1. **keys**: a JSON member, a HAR header / cookie / query parameter, or a ``key: value``
   / ``key=value`` in text whose *name* marks a secret (``password``, ``apiKey``,
   ``Authorization``, ``client_secret``, ``*token``...) has its whole value replaced;
2. **values**: shapes that are secrets wherever they appear (``Bearer ...``, ``sk-...``,
   ``ghp_...``, ``AKIA...``, JWTs, private key blocks, ``user:password@`` in URLs);
3. JSON-RPC structure is never touched: ``jsonrpc``, ``id``, ``method``, and the ids
   a message refers to (``params.requestId``, ``progressToken``) are kept, so a
   redacted capture pairs exactly like the original.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets as _secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, NamedTuple

__all__ = ["Policy", "Redactor", "Hit", "TOKEN_RE", "DEFAULT_KEYS", "DEFAULT_VALUES",
           "DEFAULT_KEEP_KEYS"]

#: A replacement this module wrote (never redacted again: redaction is idempotent).
TOKEN_RE = re.compile(r"«redacted:sha256:[0-9a-f]{16}»")

#: Names whose values are secrets. Regexes matched in full, ignoring case, against the
#: name with ``-``, ``_``, ``.`` and spaces removed (``client_secret`` -> ``clientsecret``).
DEFAULT_KEYS: tuple[str, ...] = (
    r".*(password|passwd|passphrase|secret|apikey|privatekey|accesskey|authorization"
    r"|cookie|credential).*",
    r".*token",  # access_token, refresh_token, id_token, x-auth-token (not maxTokens)
    r"auth|pwd|pass|xapikey|apikeyid|signature|sig",
)

#: Names never redacted because of their name (the value shapes still apply).
DEFAULT_KEEP_KEYS: tuple[str, ...] = ("progresstoken", "nexttoken")

#: kind -> regex of a secret's shape; a group named ``secret`` narrows what is replaced.
DEFAULT_VALUES: dict[str, str] = {
    "private_key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    "jwt": r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    "bearer": r"(?i)\b(?:bearer|token)\s+(?P<secret>(?=[A-Za-z0-9._~+/-]{8})"
              r"[A-Za-z._~+/-]*\d[A-Za-z0-9._~+/-]*=*)",
    "basic_auth": r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
    "api_key": r"\bsk-[A-Za-z0-9_-]{16,}",
    "stripe_key": r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    "aws_secret_access_key": r"(?i)aws.{0,24}?secret.{0,24}?[\"']?\s*[:=]\s*[\"']?"
                             r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}",
    "url_password": r"(?<=://)[^/\s:@\"']{1,64}:(?P<secret>[^/\s@\"']{1,128})@",
}

# ``name: value`` / ``name=value`` / ``"name": "value"`` in free text: the name and separator,
# then the value (a JSON string, a quoted string, or a bare word)
_KEY_SEP = re.compile(r"""(?P<q>["']?)(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?P=q)"""
                      r"""[ \t]*(?::|=>|=)[ \t]*""")
_VALUE = re.compile(  # a quoted value may be cut (an unterminated frame): then to the line end
    r"""(?:"(?:[^"\\\r\n]|\\.)*"?|'[^'\r\n]*'?|[^\s"',;&)}\]<>{\[]+)""")
#: Lower-case text each default shape needs (a fast test before the regex runs over
#: megabytes); a shape a user redefines is always run.
_NEEDS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",), "jwt": ("eyj",), "bearer": ("bearer", "token"),
    "basic_auth": ("basic",), "api_key": ("sk-",), "stripe_key": ("k_live_", "k_test_"),
    "github_token": ("gh", "github_pat_"), "aws_access_key_id": ("akia", "asia"),
    "aws_secret_access_key": ("aws",), "slack_token": ("xox",), "google_api_key": ("aiza",),
    "url_password": ("://",),
}
_HEADER_NEEDS = ("authorization", "cookie", "x-")

# ``Authorization: Bearer abc`` (a header line, curl -H, a log): the value runs to the line end
_HEADER_LINE = re.compile(
    r"(?im)\b(?P<key>(?:proxy-)?authorization|cookie|set-cookie"
    r"|x-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)[ \t]*:[ \t]*(?P<val>[^\r\n\"'\\]+)")


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
        parameters, ``key=value`` in text), matched in full against the lower-cased
        name without ``-_.`` and spaces.
    values
        ``kind -> regex`` of secret shapes found anywhere in text; a group named
        ``secret`` narrows the part replaced.
    keep_keys
        Normalised names never redacted for their name.
    all_cookies
        Redact every cookie value of a HAR, whatever its name.

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

    def extend(self, keys: Iterable[str] = (), values: dict[str, str] | None = None,
               keep_keys: Iterable[str] = ()) -> Policy:
        """A copy with more key patterns, value shapes and kept names."""
        return replace(self, keys=self.keys + tuple(keys),
                       values={**self.values, **(values or {})},
                       keep_keys=self.keep_keys + tuple(keep_keys))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Policy:
        """A policy from plain data: ``{"keys": [...], "values": {...}, "keep_keys": [...],
        "all_cookies": bool, "replace": bool}``; without ``"replace": true`` it extends the
        default policy."""
        base = cls() if not data.get("replace") else cls(keys=(), values={}, keep_keys=())
        out = base.extend(data.get("keys", ()), data.get("values"), data.get("keep_keys", ()))
        if "all_cookies" in data:
            out = replace(out, all_cookies=bool(data["all_cookies"]))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"keys": list(self.keys), "values": dict(self.values),
                "keep_keys": list(self.keep_keys), "all_cookies": self.all_cookies,
                "replace": True}


def normalise(name: str) -> str:
    """A key as the key patterns see it: lower case, no ``-``, ``_``, ``.`` or spaces."""
    return re.sub(r"[-_.\s]", "", name).lower()


#: JSON-RPC members kept whatever their name: the id and what refers to ids.
KEEP_PATHS = {("jsonrpc",), ("id",), ("method",), ("params", "requestId"),
              ("params", "progressToken"), ("params", "_meta", "progressToken"),
              ("params", "protocolVersion"), ("result", "protocolVersion")}


class Redactor:
    """A compiled :class:`Policy` with its salt.

    Parameters
    ----------
    policy
        What to look for (the default policy when None).
    salt
        Key of the replacement hashes; a random one per redactor when None, so that
        replacements cannot be matched across runs unless the same salt is given.
    """

    def __init__(self, policy: Policy | None = None, salt: str | bytes | None = None) -> None:
        self.policy = policy or Policy()
        if salt is None:
            salt = _secrets.token_bytes(16)
        self.salt = salt.encode("utf-8") if isinstance(salt, str) else bytes(salt)
        self._keys = re.compile("|".join(f"(?:{k})" for k in self.policy.keys) or r"(?!)",
                                re.IGNORECASE)
        self._keep = {normalise(k) for k in self.policy.keep_keys}
        self._values = [(kind, re.compile(rx), _NEEDS.get(kind, ()) if rx == DEFAULT_VALUES.get(
            kind) else ()) for kind, rx in self.policy.values.items()]
        self._cache: dict[str, bool] = {}

    # -- names and tokens ----------------------------------------------------------------
    def secret_key(self, name: str) -> bool:
        """True when a member / header / parameter of this name holds a secret."""
        hit = self._cache.get(name)
        if hit is None:
            norm = normalise(name)
            hit = norm not in self._keep and self._keys.fullmatch(norm) is not None
            self._cache[name] = hit
        return hit

    def token(self, secret: str) -> str:
        """The replacement of ``secret``: equal secrets give equal replacements."""
        digest = hmac.new(self.salt, secret.encode("utf-8", "surrogateescape"),
                          hashlib.sha256).hexdigest()
        return f"«redacted:sha256:{digest[:16]}»"

    # -- text --------------------------------------------------------------------------------
    def text(self, text: str, where: str, hits: list[Hit]) -> str:
        """``text`` with every secret in it replaced (headers, shapes, ``key=value``)."""
        if not text or text.isspace():
            return text
        low = text.lower()
        if any(n in low for n in _HEADER_NEEDS):
            text = _HEADER_LINE.sub(lambda m: self._header_line(m, where, hits), text)
        for kind, rx, needs in self._values:
            if not needs or any(n in low for n in needs):
                text = rx.sub(partial(self._shape, kind=kind, where=where, hits=hits), text)
        if ":" not in text and "=" not in text:
            return text
        return self._kvs(text, where, hits)

    def _replace(self, secret: str, where: str, kind: str, hits: list[Hit]) -> str:
        tok = self.token(secret)
        hits.append(Hit(where, kind, tok))
        return tok

    def _header_line(self, m: re.Match[str], where: str, hits: list[Hit]) -> str:
        key, val = m.group("key"), m.group("val")
        value = val.strip()
        if not value or TOKEN_RE.search(value):
            return m.group(0)
        start = m.start("val") - m.start(0)
        lead = val[: len(val) - len(val.lstrip())]
        tail = val[len(val.rstrip()):]
        tok = self._replace(value, where, f"header:{key.lower()}", hits)
        return m.group(0)[:start] + lead + tok + tail

    def _shape(self, m: re.Match[str], kind: str, where: str, hits: list[Hit]) -> str:
        if "secret" in m.re.groupindex and m.group("secret") is not None:
            s, e = m.span("secret")
        else:
            s, e = m.span()
        secret = m.string[s:e]
        if not secret or TOKEN_RE.search(m.group(0)):
            return m.group(0)
        tok = self._replace(secret, where, kind, hits)
        whole = m.group(0)
        return whole[: s - m.start()] + tok + whole[e - m.start():]

    def _kvs(self, text: str, where: str, hits: list[Hit]) -> str:
        out: list[str] = []
        pos = 0
        for m in _KEY_SEP.finditer(text):
            if m.start() < pos or not self.secret_key(m.group("key")):
                continue
            v = _VALUE.match(text, m.end())
            if v is None:
                continue
            new = self._kv(m.group("key"), v.group(0), m.group("q"), where, hits)
            out.append(text[pos:v.start()])
            out.append(new)
            pos = v.end()
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    def _kv(self, key: str, val: str, q: str, where: str, hits: list[Hit]) -> str:
        opener = val[:1] if val[:1] in ("'", '"') else ""
        closed = bool(opener) and len(val) >= 2 and val[-1] == opener
        inner = val[1:-1] if closed else val[len(opener):]
        if not inner or TOKEN_RE.search(val):
            return val
        secret = inner
        if closed and opener == '"':
            try:
                decoded = json.loads(val)
                secret = decoded if isinstance(decoded, str) else inner
            except ValueError:
                pass
        tok = self._replace(secret, where, f"key:{key}", hits)
        if not opener and q == '"':
            return f'"{tok}"'  # "key": 1234 in a cut JSON text stays JSON-like
        return opener + tok + (opener if closed else "")

    # -- JSON ------------------------------------------------------------------------------
    def json(self, value: Any, path: tuple[Any, ...], hits: list[Hit],
             keep: Callable[[tuple[Any, ...]], bool] | None = None) -> Any:
        """A decoded JSON value with secrets replaced (members named as secrets, shapes)."""
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                sub = path + (k,)
                if keep is not None and keep(sub):
                    out[k] = v
                elif isinstance(k, str) and self.secret_key(k):
                    out[k] = self._all_leaves(v, sub, f"key:{k}", hits)
                else:
                    out[k] = self.json(v, sub, hits, keep)
            return out
        if isinstance(value, list):
            return [self.json(v, path + (i,), hits, keep) for i, v in enumerate(value)]
        if isinstance(value, str):
            return self.text(value, json_path(path), hits)
        return value

    def _all_leaves(self, value: Any, path: tuple[Any, ...], kind: str, hits: list[Hit]) -> Any:
        if isinstance(value, dict):
            return {k: self._all_leaves(v, path + (k,), kind, hits) for k, v in value.items()}
        if isinstance(value, list):
            return [self._all_leaves(v, path + (i,), kind, hits) for i, v in enumerate(value)]
        if value is None or isinstance(value, bool) or value == "":
            return value
        if isinstance(value, str) and TOKEN_RE.fullmatch(value):
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
