"""Names whose values are secrets, names that only look like it, and JSON Schemas.

A name is judged after :func:`normalise` (lower case, no ``-_.`` or spaces); the secret
word must end it, so that ``db_password`` is a secret's name and ``password_policy`` is
not. A JSON Schema under a secret's name (a ``tools/list`` parameter called ``password``)
describes the secret and holds none, except its example values.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DEFAULT_KEYS", "DEFAULT_QUERY_KEYS", "DEFAULT_KEEP_KEYS", "SCHEMA_VALUES",
           "normalise", "is_schema"]

#: Names whose values are secrets. Regexes matched in full, ignoring case, against the
#: name with ``-``, ``_``, ``.`` and spaces removed (``client_secret`` -> ``clientsecret``).
#: The secret word ends the name: ``db_password``, ``apiKey``, ``x-auth-token`` are secret
#: names; ``password_policy``, ``secretary``, ``authorization_url``, ``maxTokens`` are not.
DEFAULT_KEYS: tuple[str, ...] = (
    r".*(?:passwords?|passwd|passphrase|secrets?|credentials?|authorization|cookies?"
    r"|(?:api|private|access|signing|encryption|master|auth|client|session|license|secret"
    r"|sentry|subscription|app|consumer|account|storage|shared|service|admin|deploy)keys?)",
    r"(?!(?:old)?pwd$).*pwd",  # db_pwd, not the shell's PWD / OLDPWD
    r".*token",  # access_token, refresh_token, id_token, x-auth-token (not maxTokens)
    r"x?auth|pass|apikeyid|(?:code|pkce)verifier",  # OAuth PKCE code_verifier
)

#: Names that hold secrets in a URL query or a form only (``?key=``, ``&sig=``,
#: ``X-Amz-Signature=``); as JSON members they are everyday words.
DEFAULT_QUERY_KEYS: tuple[str, ...] = (
    r"key|sig|signature|xamzsignature|xamzsecuritytoken|xgoogsignature|xgoogcredential",
)

#: Names never redacted because of their name (the value shapes still apply): ids a
#: message refers to, pagination cursors, token counts. Regexes (a plain name is normalised first).
DEFAULT_KEEP_KEYS: tuple[str, ...] = (
    "progresstoken", "nexttoken",
    r"(?:next|prev|previous)?pagetoken|continuationtoken|synctoken|resumetoken",
    r"(?:max|min|num|total|input|output|prompt|completion|reasoning)tokens?",
)

#: Members of a JSON Schema; an object under a secret name that has only these (and
#: ``x-...``) describes a parameter. Its example values are the secret's.
_SCHEMA_WORDS = frozenset((
    "type", "$ref", "$id", "$schema", "$comment", "anyOf", "oneOf", "allOf", "not",
    "properties", "items", "required", "additionalProperties", "patternProperties",
    "description", "title", "format", "pattern", "minLength", "maxLength", "minimum",
    "maximum", "writeOnly", "readOnly", "deprecated", "nullable", "contentEncoding",
    "contentMediaType", "default", "const", "enum", "examples", "example"))
_SCHEMA_MARKS = ("type", "$ref", "anyOf", "oneOf", "allOf", "properties", "description")
SCHEMA_VALUES = frozenset(("default", "const", "enum", "examples", "example"))


def normalise(name: str) -> str:
    """A key as the key patterns see it: lower case, no ``-``, ``_``, ``.`` or spaces."""
    return re.sub(r"[-_.\s]", "", name).lower()


def is_schema(value: dict[str, Any]) -> bool:
    """True when ``value`` is a JSON Schema (it describes a value, it holds none)."""
    return any(k in value for k in _SCHEMA_MARKS) and all(
        isinstance(k, str) and (k in _SCHEMA_WORDS or k.startswith("x-")) for k in value)
