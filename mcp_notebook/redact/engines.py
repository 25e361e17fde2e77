"""Optional engines: more secret shapes from other tools, added to the default policy's.

``detect-secrets`` (``pip install mcp_notebook[redact]``): the vendor patterns of its
regex plugins (Artifactory, Azure storage, IBM, Mailchimp, PyPI, Square, Telegram... and
the ones the default policy has too). Its keyword and high-entropy plugins are not used:
on the labelled corpus in ``tests/redact`` they flag schema names, prose and hashes (its
default plugin set found 83% of the 58 corpus secrets at 26% precision; its regex plugins
alone 21% at 100%). Its public-IP plugin is left out too: an address is not a secret.
Nothing it has is needed for the default policy, which works without it.
"""

from __future__ import annotations

import re

__all__ = ["ENGINES", "engine_shapes"]

#: engine name -> what it adds
ENGINES = {"detect-secrets": "the vendor regexes of detect-secrets' plugins "
                             "(pip install mcp_notebook[redact])"}

_SKIP = {"IPPublicDetector"}


def engine_shapes(name: str) -> list[tuple[str, re.Pattern[str]]]:
    """``(kind, regex)`` of an engine's shapes; the first group that matched, else the whole
    match, is the secret (detect-secrets' own rule).

    Raises
    ------
    ValueError
        For an unknown engine name.
    ImportError
        When the engine's package is not installed (the message says how to install it).
    """
    if name != "detect-secrets":
        raise ValueError(f"unknown redaction engine {name!r} (known: {', '.join(ENGINES)})")
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError as exc:
        raise ImportError("the detect-secrets engine needs the detect-secrets package: "
                          "pip install 'mcp_notebook[redact]'") from exc
    out: list[tuple[str, re.Pattern[str]]] = []
    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    for cls in sorted(classes, key=lambda c: c.__name__):
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _SKIP:
            continue
        kind = "detect-secrets:" + re.sub(r"Detector$", "", cls.__name__)
        out.extend((kind, rx) for rx in cls().denylist)
    return out
