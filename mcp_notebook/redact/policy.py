"""What counts as a secret (:class:`Policy`, plain data) and the engine that replaces them.

A :class:`Redactor` is a compiled policy plus a salt. It replaces every secret with
``«redacted:sha256:<16 hex>»``, an HMAC-SHA256 of the secret under the salt: equal
secrets get equal replacements (joins and group-bys still work), and without the salt
the replacement says nothing about the secret. Each replacement is recorded as a
:class:`Hit` (where, what kind, the replacement).

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
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets as _secrets
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, NamedTuple

from .engines import engine_shapes
from .names import (
    DEFAULT_KEEP_KEYS,
    DEFAULT_KEYS,
    DEFAULT_QUERY_KEYS,
    SCHEMA_VALUES,
    is_schema,
    normalise,
)
from .shapes import BASE64_RUN, CHECKS, DEFAULT_VALUES, NEEDS, b64_text, placeholder, prose_word

__all__ = ["Policy", "Redactor", "Hit", "TOKEN_RE", "DEFAULT_KEYS", "DEFAULT_QUERY_KEYS",
           "DEFAULT_VALUES", "DEFAULT_KEEP_KEYS", "normalise"]

#: A replacement this module wrote (never redacted again: redaction is idempotent).
TOKEN_RE = re.compile(r"«redacted:sha256:[0-9a-f]{16}»")

# ``name: value`` / ``name=value`` / ``"name": "value"`` in free text: the name and separator,
# then the value (a JSON string, a quoted string, or a bare word); a name and a value may
# be quoted with escaped quotes (JSON inside a log line)
_KEY_SEP = re.compile(r"""(?P<q>(?:\\?["'])?)(?<![A-Za-z0-9_.\-])"""
                      r"""(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?P=q)"""
                      r"""[ \t]*(?P<sep>:|=>|=)[ \t]*""")
_VALUE = re.compile(  # a quoted value may be cut (an unterminated frame): then to the line end
    r"""(?:\\"(?:[^"\\\r\n]|\\[^"])*\\"|"(?:[^"\\\r\n]|\\.)*"?|'[^'\r\n]*'?"""
    r"""|[^\s"',;&)}\]<>{\[]+)""")
# ``--password=X``, ``--api-key X`` on a command line (the tap's meta record, a log)
_FLAG = re.compile(r"""(?<![\w-])--(?P<key>[A-Za-z][A-Za-z0-9_-]{0,60})(?:=|[ \t]+(?=[^\s-]))"""
                   r"""(?P<val>"(?:[^"\\\r\n]|\\.)*"|'[^'\r\n]*'|[^\s"'\\]+)""")
# a query inside a percent-encoded URL (``next=https%3A%2F%2Fa%2Fcb%3Fapi_key%3DX``)
_ENC_KV = re.compile(r"(?i)(?:%3F|%26)(?P<key>[A-Za-z0-9_.\-]{1,80})%3D"
                     r"(?P<val>(?:(?!%26)[^&\s\"'<>#\\])+)")
_FLAG_WORD = re.compile(r"--(?P<key>[A-Za-z][A-Za-z0-9_-]{0,60})")
_HEADER_NEEDS = ("authorization", "cookie", "x-")
_ONE_BLOB = re.compile(r"[A-Za-z0-9+/]+={0,2}")

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


_PLAIN_NAME = re.compile(r"[\w\-. ]+")


def _any(patterns: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{k})" for k in patterns) or r"(?!)", re.IGNORECASE)


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
        self._keys = _any(self.policy.keys)
        self._query = _any(self.policy.query_keys)
        self._keep = _any(normalise(k) if _PLAIN_NAME.fullmatch(k) else k
                          for k in self.policy.keep_keys)
        # (kind, regex, text it needs, check of the secret, secret = first group matched)
        self._values: list[tuple[str, re.Pattern[str], tuple[str, ...],
                                 Callable[[str], bool] | None, bool]] = []
        for kind, rx in self.policy.values.items():
            default = rx == DEFAULT_VALUES.get(kind)
            self._values.append((kind, re.compile(rx), NEEDS.get(kind, ()) if default else (),
                                 CHECKS.get(kind) if default else None, False))
        for name in self.policy.engines:
            self._values.extend((kind, rx, (), None, True) for kind, rx in engine_shapes(name))
        # one scan of a text tells which shapes can match it: the needles it holds (found
        # overlapping, and a needle inside a longer one found with it)
        needles = sorted({n for v in self._values for n in v[2]} | set(_HEADER_NEEDS),
                         key=len, reverse=True)
        self._needles = re.compile("(?=(" + "|".join(map(re.escape, needles)) + "))")
        self._within = {n: frozenset(m for m in needles if m in n) for n in needles}
        self._by_needle: dict[str, set[int]] = {n: set() for n in needles}
        for i, v in enumerate(self._values):
            for n in v[2]:
                self._by_needle[n].add(i)
        self._always = frozenset(i for i, v in enumerate(self._values) if not v[2])
        self._cache: dict[tuple[str, bool], bool] = {}

    # -- names and tokens ----------------------------------------------------------------
    def secret_key(self, name: str, query: bool = False) -> bool:
        """True when a member / header / parameter of this name holds a secret
        (``query``: a URL query or form parameter, where ``key`` and ``sig`` do too)."""
        hit = self._cache.get((name, query))
        if hit is None:
            norm = normalise(name)
            hit = self._keep.fullmatch(norm) is None and (
                self._keys.fullmatch(norm) is not None
                or (query and self._query.fullmatch(norm) is not None))
            self._cache[(name, query)] = hit
        return hit

    def token(self, secret: str) -> str:
        """The replacement of ``secret``: equal secrets give equal replacements."""
        digest = hmac.new(self.salt, secret.encode("utf-8", "surrogateescape"),
                          hashlib.sha256).hexdigest()
        return f"«redacted:sha256:{digest[:16]}»"

    # -- text --------------------------------------------------------------------------------
    def text(self, text: str, where: str, hits: list[Hit], depth: int = 0) -> str:
        """``text`` with every secret in it replaced (headers, shapes, ``--flag value``,
        ``key=value``, then base64 blobs of text holding any of these)."""
        if not text or text.isspace():
            return text
        if len(text) >= 256 and _ONE_BLOB.fullmatch(text):
            # a blob (an image, a file): no shape is told apart inside base64; only the text
            # it may decode to is looked at
            return BASE64_RUN.sub(lambda m: self._blob(m, where, hits, depth), text) \
                if depth < 2 else text
        low = text.lower()
        if len(low) > 4096:  # a substring test per needle beats one regex over a big text
            found = {n for n in self._within if n in low}
        else:
            found = {m for n in set(self._needles.findall(low)) for m in self._within[n]}
        if not found.isdisjoint(_HEADER_NEEDS):
            text = _HEADER_LINE.sub(lambda m: self._header_line(m, where, hits), text)
        run = self._always.union(*(self._by_needle[n] for n in found)) if found else self._always
        for i in sorted(run):
            kind, rx, _, check, first = self._values[i]
            text = rx.sub(partial(self._shape, kind=kind, where=where, hits=hits,
                                  check=check, first=first), text)
        if "--" in text:
            text = _FLAG.sub(lambda m: self._flag(m, where, hits), text)
        if ":" in text or "=" in text:
            text = self._kvs(text, where, hits)
        if "%3D" in text or "%3d" in text:
            text = _ENC_KV.sub(lambda m: self._enc_kv(m, where, hits), text)
        if depth < 2 and len(text) >= 20:
            text = BASE64_RUN.sub(lambda m: self._blob(m, where, hits, depth), text)
        return text

    def _replace(self, secret: str, where: str, kind: str, hits: list[Hit]) -> str:
        tok = self.token(secret)
        hits.append(Hit(where, kind, tok))
        return tok

    def _header_line(self, m: re.Match[str], where: str, hits: list[Hit]) -> str:
        key, val = m.group("key"), m.group("val")
        value = val.strip()
        if key[:2].lower() == "x-" and not self.secret_key(key):
            return m.group(0)  # x-ratelimit-remaining-tokens, x-auth-type: not secrets
        if not value or TOKEN_RE.search(value) or placeholder(value) or prose_word(
                value.split(None, 1)[0]):
            return m.group(0)  # "Authorization: see the docs" is prose
        start = m.start("val") - m.start(0)
        lead = val[: len(val) - len(val.lstrip())]
        tail = val[len(val.rstrip()):]
        tok = self._replace(value, where, f"header:{key.lower()}", hits)
        return m.group(0)[:start] + lead + tok + tail

    def _shape(self, m: re.Match[str], kind: str, where: str, hits: list[Hit],
               check: Callable[[str], bool] | None, first: bool = False) -> str:
        s, e = m.span()
        if "secret" in m.re.groupindex and m.group("secret") is not None:
            s, e = m.span("secret")
        elif first:
            s, e = next((m.span(g) for g in range(1, m.re.groups + 1) if m.group(g)), (s, e))
        secret = m.string[s:e]
        if not secret or TOKEN_RE.search(m.group(0)) or (check is not None and not check(secret)):
            return m.group(0)
        tok = self._replace(secret, where, kind, hits)
        whole = m.group(0)
        return whole[: s - m.start()] + tok + whole[e - m.start():]

    def _flag(self, m: re.Match[str], where: str, hits: list[Hit]) -> str:
        key, val = m.group("key"), m.group("val")
        q = val[0] if val[0] in "\"'" and len(val) > 1 else ""
        inner = val[len(q): len(val) - len(q)]
        if not self.secret_key(key) or TOKEN_RE.search(val) or placeholder(inner):
            return m.group(0)
        tok = self._replace(inner, where, f"flag:--{key}", hits)
        return m.group(0)[: m.start("val") - m.start()] + q + tok + q

    def _enc_kv(self, m: re.Match[str], where: str, hits: list[Hit]) -> str:
        key, val = m.group("key"), m.group("val")
        secret = urllib.parse.unquote(val)
        if not self.secret_key(key, query=True) or TOKEN_RE.search(secret) or placeholder(secret):
            return m.group(0)
        tok = self._replace(secret, where, f"key:{key}", hits)
        return m.group(0)[: m.start("val") - m.start()] + tok  # readable, like the others

    def _kvs(self, text: str, where: str, hits: list[Hit]) -> str:
        out: list[str] = []
        pos = 0
        for m in _KEY_SEP.finditer(text):
            if m.start() < pos:
                continue
            key = m.group("key")
            query = (m.group("sep") == "=" and not m.group("q") and m.start() > 0
                     and text[m.start() - 1] in "?&")
            if not self.secret_key(key, query):
                continue
            v = _VALUE.match(text, m.end())
            if v is None:
                continue
            new = self._kv(key, v.group(0), m.group("q"), m.group("sep"), where, hits)
            out.append(text[pos:v.start()])
            out.append(new)
            pos = v.end()
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)

    def _kv(self, key: str, val: str, q: str, sep: str, where: str, hits: list[Hit]) -> str:
        opener = val[:2] if val[:2] == '\\"' else val[:1] if val[:1] in ("'", '"') else ""
        closed = bool(opener) and len(val) >= 2 * len(opener) and val.endswith(opener)
        inner = val[len(opener):-len(opener)] if closed else val[len(opener):]
        if not inner or TOKEN_RE.search(val) or placeholder(inner) or (
                sep == ":" and not q and not opener and prose_word(inner)):
            return val  # "password: the account password" is prose
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

    def _blob(self, m: re.Match[str], where: str, hits: list[Hit], depth: int) -> str:
        """A base64 run that decodes to text: redacted inside, encoded again."""
        run = m.group(0)
        if b64_text(run, prefix=256) is None:
            return run
        decoded = b64_text(run)
        if decoded is None:
            return run
        inner: list[Hit] = []
        new = self.text(decoded, where, inner, depth + 1)
        if not inner:
            return run
        hits.extend(h._replace(kind=f"base64:{h.kind}") for h in inner)
        return base64.b64encode(new.encode("utf-8", "surrogateescape")).decode("ascii")

    # -- JSON ------------------------------------------------------------------------------
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
