"""The free-text half of a redactor: secret shapes, header lines, ``--flag value``,
``key=value`` and percent-encoded queries in any text, and base64 blobs of text.

:class:`TextRedactor` compiles a :class:`~.policy.Policy` with its salt, tells secret names
(:meth:`~TextRedactor.secret_key`) and makes the replacements (:meth:`~TextRedactor.token`);
:class:`~.redactor.Redactor` adds the walk over decoded JSON.
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
from functools import partial

from .engines import engine_shapes
from .names import normalise
from .policy import TOKEN_RE, Hit, Policy
from .shapes import BASE64_RUN, CHECKS, DEFAULT_VALUES, NEEDS, b64_text, placeholder, prose_word

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
_HEADER_NEEDS = ("authorization", "cookie", "x-")
_ONE_BLOB = re.compile(r"[A-Za-z0-9+/]+={0,2}")

# ``Authorization: Bearer abc`` (a header line, curl -H, a log): the value runs to the line end
_HEADER_LINE = re.compile(
    r"(?im)\b(?P<key>(?:proxy-)?authorization|cookie|set-cookie"
    r"|x-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)[ \t]*:[ \t]*(?P<val>[^\r\n\"'\\]+)")


_PLAIN_NAME = re.compile(r"[\w\-. ]+")


def _any(patterns: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{k})" for k in patterns) or r"(?!)", re.IGNORECASE)


class TextRedactor:
    """A compiled :class:`~.policy.Policy` with its salt, for text (see
    :class:`~.redactor.Redactor`, which also walks JSON)."""

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

