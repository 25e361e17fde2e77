"""The shapes of secrets that are secrets wherever they appear, and how each is told apart.

Each default shape is a regex (a group named ``secret`` narrows what is replaced), the
lower-case text it needs (a fast test before the regex runs over megabytes) and, for the
shapes that everyday text can take, a check of the match itself: a ``Basic`` credential
must decode to ``user:password``, a Discord token's first part to a user id. The token
formats are the vendors' documented ones.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

__all__ = ["DEFAULT_VALUES", "NEEDS", "CHECKS", "b64_text", "placeholder", "prose_word"]

# a token after "Bearer": 8+ characters with a digit, or 16+ mixing upper and lower case
# ("Bearer tokens", "a bearer of news" are words, not tokens)
_TOK = r"[A-Za-z0-9._~+/-]"
_BEARER_TOKEN = (rf"(?:(?={_TOK}*\d){_TOK}{{8,}}|(?={_TOK}*[a-z])(?={_TOK}*[A-Z]){_TOK}{{16,}})"
                 r"=*(?![A-Za-z0-9._~+/=-])")

#: kind -> regex of a secret's shape; a group named ``secret`` narrows what is replaced.
DEFAULT_VALUES: dict[str, str] = {
    "private_key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    "jwt": r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    "bearer": rf"(?i:\bbearer)[ \t]+(?P<secret>{_BEARER_TOKEN})",
    # "token <x>" in prose only with a long token mixing upper case, lower case and digits,
    # or 32+ hex ("token 12345678", "token large-model-3-5-20241022" stay)
    "token_word": rf"(?i:\btoken)[ \t]+(?P<secret>(?:(?={_TOK}*\d)(?={_TOK}*[a-z])(?={_TOK}*[A-Z])"
                  rf"{_TOK}{{20,}}|[0-9a-f]{{32,}})=*)(?![A-Za-z0-9._~+/=-])",
    "basic_auth": r"(?i:\bbasic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
    "api_key": r"\bsk-[A-Za-z0-9_-]{16,}",
    "stripe_key": r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    # GitLab: personal, deploy, feed, runner, CI job... tokens; the routable form ends
    # in .<version>.<crc>
    "gitlab_token": r"\bgl(?:pat|dt|ft|soat|rt|cbt|ptt|oas|imt|agent)-[A-Za-z0-9_-]{20,}"
                    r"(?:\.[0-9]{1,4}\.[0-9A-Za-z]{6,12})?(?![A-Za-z0-9_-])",
    "npm_token": r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
    "huggingface_token": r"\b(?:hf_|api_org_)[A-Za-z0-9]{34}(?![A-Za-z0-9_])",  # 34 letters
    "sendgrid_key": r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
    # Discord bot token: base64 of the bot's user id . timestamp . HMAC
    "discord_token": r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\."
                     r"[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])",
    "discord_webhook": r"discord(?:app)?\.com/api/webhooks/\d+/(?P<secret>[A-Za-z0-9_-]{60,70})",
    "slack_webhook": r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[A-Z0-9]+/"
                     r"(?P<secret>[A-Za-z0-9]{20,40})",
    # Twilio: account SID AC + 32 hex, API key SID SK + 32 hex
    "twilio_sid": r"\b(?:AC|SK)[0-9a-f]{32}\b",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    "aws_secret_access_key": r"(?i)aws.{0,24}?secret.{0,24}?[\"']?\s*[:=]\s*[\"']?"
                             r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}",
    # Sentry DSN https://<32 hex key>[:<secret>]@o<org>.ingest.sentry.io/<project>: a 32-hex
    # user of any URL is such a key
    "sentry_dsn": r"://(?P<secret>[0-9a-f]{32}(?::[0-9a-f]{32})?)@",
    "url_password": r"(?<=://)[^/\s:@\"']{1,64}:(?P<secret>[^/\s@\"']{1,128})@",
    # curl -u user:password / --user 'user:password'
    "curl_user": r"(?<![\w-])(?:-u|--user)(?:[ \t]+|=)(?P<q>['\"]?)[^\s:'\"@]{1,64}:"
                 r"(?P<secret>[^\s'\"]{1,128})(?P=q)",
}

#: Lower-case text each default shape needs; a shape a user redefines is always run.
NEEDS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",), "jwt": ("eyj",), "bearer": ("bearer",),
    "token_word": ("token",), "basic_auth": ("basic",), "api_key": ("sk-",),
    "stripe_key": ("k_live_", "k_test_"), "github_token": ("gh", "github_pat_"),
    "gitlab_token": ("gl",), "npm_token": ("npm_",), "huggingface_token": ("hf_", "api_org_"),
    "sendgrid_key": ("sg.",), "discord_token": (".",), "discord_webhook": ("discord",),
    "twilio_sid": ("ac", "sk"), "aws_access_key_id": ("akia", "asia"),
    "aws_secret_access_key": ("aws",), "slack_token": ("xox",), "google_api_key": ("aiza",),
    "sentry_dsn": ("://",), "url_password": ("://",), "slack_webhook": ("hooks.slack",),
    "curl_user": ("-u", "--user"),
}


def b64_text(s: str, prefix: int = 0) -> str | None:
    """``s`` decoded when it is standard base64 of printable UTF-8 text, else None.

    ``prefix`` > 0 decodes only that many leading characters (a quick look at a big blob).

    >>> b64_text("aGVsbG8gd29ybGQ="), b64_text("iVBORw0KGgoAAAANSUhEUg==")
    ('hello world', None)
    """
    if prefix and len(s) > prefix:
        s = s[: prefix - prefix % 4]
    elif len(s) % 4:
        return None
    try:
        text = base64.b64decode(s, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        if not prefix:
            return None
        try:  # the prefix may cut a character in two
            text = base64.b64decode(s, validate=True)[:-3].decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    if not text or not all(c.isprintable() or c in "\r\n\t" for c in text):
        return None
    return text


def _basic(secret: str) -> bool:
    text = b64_text(secret)
    return text is not None and ":" in text


def _discord(secret: str) -> bool:
    head = secret.split(".", 1)[0]
    try:
        uid = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return uid.isdigit() and 15 <= len(uid) <= 21


#: kind -> a check of the matched secret for the shapes everyday text can take
CHECKS: dict[str, Callable[[str], bool]] = {"basic_auth": _basic, "discord_token": _discord}

#: standard base64 of 20 or more characters, padded to a multiple of 4
BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){5,}"
                        r"(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=_-])")


# a value standing for a secret, not one: a mask, a variable, a template, a type name,
# the fetch API's credentials modes
_PLACEHOLDER = re.compile(
    r"(?i)\*{3,}|x{3,}|\.{3}|•+|<[^<>\s][^<>]{0,60}>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"
    r"|%[A-Za-z_][A-Za-z0-9_]*%|\{\{[^{}]{1,60}\}\}|\[(?:redacted|hidden|masked|secret)\]"
    r"|include|same-origin|omit|none|null|nil|undefined|required|optional|string"
    r"|your[-_ ]?\w+")


def placeholder(value: str) -> bool:
    """True when ``value`` stands for a secret without being one (``********``,
    ``${TOKEN}``, ``<your-api-key>``, ``{{ secret }}``, ``string``, ``include``...).

    >>> placeholder("${GITHUB_TOKEN}"), placeholder("hunter2")
    (True, False)
    """
    return _PLACEHOLDER.fullmatch(value.strip()) is not None


#: words that start prose, not a secret: ``password: the account password``
_PROSE = frozenset("""a an the is are be must should can may will your you see for to of and
or not no if when this that it its as in on by with from which optional required none see
use set same""".split())


def prose_word(value: str) -> bool:
    """True when a bare ``key: value`` value is a word that starts prose."""
    return value.rstrip(".,;:!?").lower() in _PROSE
