"""A labelled redaction corpus: secrets of each kind, and non-secrets of each near-miss shape.

Each :class:`Case` is one frame of a tap capture: a JSON-RPC message (a dict) or a line of
text (the server's stderr, or the tap's ``meta`` record with the server's command line).
``secrets`` are the exact strings the redactor must replace; ``keep`` are strings that must
come out unchanged. A case with no secrets is a near miss: redacting anything in it is a
false redaction.

Every secret here is fake: the shape of the vendor's documented format, with ``FAKE``,
``test`` or a counting pattern where the format allows letters, so that none of them is a
live credential.
"""

from __future__ import annotations

import base64
import json
from typing import Any, NamedTuple


class Case(NamedTuple):
    kind: str
    frame: dict[str, Any] | str
    secrets: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    dir: str = ""  # "" : c2s for a message, stderr for text


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _msg(result: Any = None, **params: Any) -> dict[str, Any]:
    if result is not None:
        return {"jsonrpc": "2.0", "id": 7, "result": result}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "run", "arguments": params}}


def _text(text: str) -> dict[str, Any]:
    return _msg({"content": [{"type": "text", "text": text}]})


HEX32 = "0123456789abcdef" * 2
HEX64 = HEX32 * 2

# -- the vendors' shapes (from their documentation) ----------------------------------------
GITLAB = "glpat-FAKE0test0Token01234"                     # glpat- + 20
GITLAB_NEW = "glpat-FAKEtest0RoutableToken0123456789ab.01.0abcd1234"  # routable: .<ver>.<crc>
NPM = "npm_FAKEtest0000example1111token2222abcd"         # npm_ + 36
HF = "hf_FAKEtestExampleTokenAbcdefghijklmn"             # hf_ + 34
SENDGRID = "SG.FAKEtestSendGrid0Key01.FAKEtestSendGridSecretPart0123456789abcdefg"  # 22 . 43
DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GFAKE0.FAKEtestDiscordBotTokenPart0123456789a"  # id.ts.hmac
DISCORD_OLD = "OTg3NjU0MzIxMDk4NzY1NDMy.XFAKE0.FAKEtestDiscordToken0123456"
TWILIO_SK = "SK" + HEX32                                 # API key SID: SK + 32 hex
TWILIO_AC = "AC" + HEX32[::-1]                           # account SID: AC + 32 hex
SENTRY_KEY = "fa4e" + HEX32[4:]                          # DSN public key: 32 hex
AMZ_SIG = HEX64[::-1]
AKIA = "AKIAFAKETEST00000000"
QUERY_KEY = "k3yFAKEtest0123456789abcd"
CLI_PW, CLI_TOKEN, CLI_KEY = "FAKE-hunter2-pw", "FAKEtok_0123456789", "FAKEapikey0123456789"
ENV_PW, ENV_KEY = "FAKE-db-pw-0042", "FAKEenvApiKey00000001"
BEARER_NODIGIT = "FAKEabcdefGHIJKLmnopQRSTuvwx"
BEARER_ESC = "FAKEescapedBearer0123456789"
AZURE_KEY = base64.b64encode(b"FAKEtestAzureStorageKey".ljust(64, b"0")).decode()  # 88 chars
BASIC = "Y2ktYm90OkZBS0UtYmFzaWMtcHctMDA0Mg=="               # ci-bot:FAKE-basic-pw-0042

PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(48))).decode()

SCHEMA_TOOLS = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{
    "name": "login", "description": "Sign in with a password or an API key.",
    "inputSchema": {"type": "object", "required": ["username", "password"], "properties": {
        "username": {"type": "string", "description": "the account name"},
        "password": {"type": "string", "description": "the account password",
                     "minLength": 12, "writeOnly": True},
        "apiKey": {"type": "string", "description": "an API key instead of a password",
                   "format": "password"},
        "token": {"type": ["string", "null"], "title": "Session token"},
        "credentials": {"type": "object", "description": "user and secret",
                        "properties": {"secret": {"type": "string"}}}}}}]}}

CASES: list[Case] = [
    # ---- recall: the kinds issue 14 lists -------------------------------------------------
    Case("gitlab", _text(f"export GITLAB_PAT={GITLAB}"), (GITLAB,)),
    Case("gitlab", _text(f"token is {GITLAB_NEW} (routable)"), (GITLAB_NEW,)),
    Case("npm", _text(f"//registry.npmjs.org/:_authToken={NPM}"), (NPM,)),
    Case("npm", f"npm publish with {NPM} failed", (NPM,)),
    Case("huggingface", _text(f"login with {HF}"), (HF,)),
    Case("huggingface", _msg(repo="org/model", hub=HF), (HF,)),
    Case("huggingface", "legacy org token api_org_FAKEtestExampleTokenAbcdefghijklmn in use",
         ("api_org_FAKEtestExampleTokenAbcdefghijklmn",)),
    Case("sendgrid", _text(f"SENDGRID={SENDGRID}"), (SENDGRID,)),
    Case("sendgrid", f"mail: using {SENDGRID}", (SENDGRID,)),
    Case("discord", _text(f"bot {DISCORD} connected"), (DISCORD,)),
    Case("discord", f"DISCORD_BOT={DISCORD_OLD}", (DISCORD_OLD,)),
    Case("twilio", _text(f"api key {TWILIO_SK} for account {TWILIO_AC}"),
         (TWILIO_SK, TWILIO_AC)),
    Case("sentry_dsn", _text(f"dsn https://{SENTRY_KEY}@o450123.ingest.sentry.io/4504000000001"),
         (SENTRY_KEY,), ("@o450123.ingest.sentry.io/4504000000001",)),
    Case("sentry_dsn", f"Sentry init https://{SENTRY_KEY}@o450123.ingest.us.sentry.io/77",
         (SENTRY_KEY,)),
    Case("x_amz_signature", _text(
        "https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={AKIA}%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
        f"&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        f"&X-Amz-Signature={AMZ_SIG}"), (AKIA, AMZ_SIG), ("X-Amz-Expires=3600",)),
    Case("query_key", _text(
        f"GET https://maps.example.com/api/geocode/json?address=Paris&key={QUERY_KEY}"),
         (QUERY_KEY,), ("address=Paris",)),
    Case("query_key", f"fetch https://api.example.com/v1/items?key={QUERY_KEY}&page=2",
         (QUERY_KEY,), ("page=2",)),
    Case("cli_flag", f"started node server.js --password={CLI_PW} --token={CLI_TOKEN} "
         f"--api-key {CLI_KEY} --port 8080", (CLI_PW, CLI_TOKEN, CLI_KEY),
         ("--port 8080", "node server.js"), dir="meta"),
    Case("cli_flag", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "spawn", "arguments": {"command": "server", "args": [
            "--api-key", CLI_KEY, "--verbose", f"--token={CLI_TOKEN}"]}}},
         (CLI_KEY, CLI_TOKEN), ("--verbose", "--api-key")),
    Case("bearer_json", _text(f"Bearer {BEARER_NODIGIT}"), (BEARER_NODIGIT,)),
    Case("bearer_json", '{"headers":{"Authorization":"Bearer ' + BEARER_ESC + '"}}',
         (BEARER_ESC,)),
    Case("bearer_json", _msg(headers=[{"name": "Authorization",
                                       "value": f"Bearer {BEARER_NODIGIT}"}]),
         (BEARER_NODIGIT,), ("Authorization",)),
    Case("base64_blob", _msg({"contents": [{
        "uri": "file:///app/.env", "mimeType": "text/plain",
        "blob": _b64(f"DB_PASSWORD={ENV_PW}\nAPI_KEY={ENV_KEY}\nPORT=8080\n")}]}),
         (ENV_PW, ENV_KEY), ("PORT=8080",)),
    Case("base64_blob", f"config blob {_b64('token: ' + GITLAB)} loaded", (GITLAB,)),
    Case("base64_blob", _msg({"kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
                              "data": {".dockerconfigjson": _b64(json.dumps({"auths": {
                                  "ghcr.io": {"auth": _b64("ci-bot:FAKE-registry-pw-7")}}}))}}),
         (_b64("ci-bot:FAKE-registry-pw-7"),), ("kubernetes.io/dockerconfigjson", "ghcr.io")),
    # ---- recall: kinds that were already found (kept found) --------------------------------
    Case("key_value", _msg(password="hunter2", api_key="FAKE-key-1"), ("hunter2", "FAKE-key-1")),
    Case("key_value", f"DB_PASSWORD={ENV_PW} PORT=5432", (ENV_PW,), ("PORT=5432",)),
    Case("key_value", "environment:\n  POSTGRES_PASSWORD: secret\n  POSTGRES_USER: app",
         ("secret",), ("POSTGRES_USER: app",)),  # weak passwords are passwords too
    Case("key_value", _msg(password="changeme", token="12345678"), ("changeme", "12345678")),
    Case("basic_auth", f"Authorization: Basic {BASIC}", (f"Basic {BASIC}",)),
    Case("basic_auth", _text(f"curl sent basic {BASIC}"), (BASIC,)),
    Case("url_password", _text("postgres://admin:FAKE-pg-pw@db:5432/app"), ("FAKE-pg-pw",),
         ("postgres://admin:",)),
    Case("github_token", _text("ghp_FAKEtestGithubToken0123456789abcdef"),
         ("ghp_FAKEtestGithubToken0123456789abcdef",)),
    Case("jwt", _text("id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsig0123"),
         ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsig0123",)),
    # ---- recall: the same classes in other places ---------------------------------------
    Case("escaped_json", 'request body: {\\"password\\":\\"FAKE-esc-pw\\",\\"apiKey\\":'
         '\\"FAKEescKey0001\\",\\"user\\":\\"bob\\"}', ("FAKE-esc-pw", "FAKEescKey0001"),
         ('\\"user\\":\\"bob\\"',)),
    Case("escaped_json", _text('{"auth":{"password":"FAKE-inner-pw"},"note":"ok"}'),
         ("FAKE-inner-pw",), ('\\"note\\":\\"ok\\"',)),
    Case("vendor_keys", _text(f"POST https://o1.ingest.sentry.io/api/2/envelope/?sentry_key="
                              f"{SENTRY_KEY}&sentry_version=7"), (SENTRY_KEY,),
         ("sentry_version=7",)),
    Case("vendor_keys", "DefaultEndpointsProtocol=https;AccountName=devstore;AccountKey="
         f"{AZURE_KEY};EndpointSuffix=core.windows.net", (AZURE_KEY,),
         ("AccountName=devstore", "EndpointSuffix=core.windows.net")),
    Case("vendor_keys", "curl -H 'Ocp-Apim-Subscription-Key: FAKEsubKey0123456789abcdef' "
         "https://api.example.com", ("FAKEsubKey0123456789abcdef",), ("https://api.example.com",)),
    Case("webhook_url", _text("notify https://hooks.slack.com/services/TFAKE0001/BFAKE0002/"
                              "FAKEtestSlackHook0123456"), ("FAKEtestSlackHook0123456",),
         ("https://hooks.slack.com/services/",)),
    Case("webhook_url", "posting to https://discord.com/api/webhooks/123456789012345678/"
         "FAKEtestDiscordWebhookToken0123456789abcdefghijklmnopqrstuvwxyzABCDEF",
         ("FAKEtestDiscordWebhookToken0123456789abcdefghijklmnopqrstuvwxyzABCDEF",),
         ("discord.com/api/webhooks/123456789012345678/",)),
    Case("curl_user", "curl -u ci-bot:FAKE-curl-pw-01 https://ci.example.com/api",
         ("FAKE-curl-pw-01",), ("ci-bot:", "https://ci.example.com/api")),
    Case("curl_user", "curl --user 'deploy:FAKE-curl-pw-02' -X POST https://x.example",
         ("FAKE-curl-pw-02",), ("deploy:", "-X POST")),
    Case("oauth", "POST /token grant_type=authorization_code&code_verifier="
         "FAKEpkceVerifier0123456789abcdefghijklmnopq&client_secret=FAKE-cs-42&"
         "redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcallback",
         ("FAKEpkceVerifier0123456789abcdefghijklmnopq", "FAKE-cs-42"),
         ("grant_type=authorization_code", "redirect_uri=http%3A%2F%2Flocalhost%3A3000")),
    Case("oauth", _msg({"access_token": "FAKEaccess0001", "refresh_token": "FAKErefresh0002",
                        "token_type": "Bearer", "expires_in": 3600, "scope": "mcp:tools"}),
         ("FAKEaccess0001", "FAKErefresh0002"), ('"token_type":"Bearer"', '"scope":"mcp:tools"')),
    Case("encoded_query", _text("GET /login?next=https%3A%2F%2Fapp.example%2Fcb%3Fapi_key%3D"
                                "FAKEencKey0123456789%26lang%3Den&x=1"),
         ("FAKEencKey0123456789",), ("%26lang%3Den&x=1", "next=https%3A%2F%2Fapp.example%2Fcb")),
    # ---- precision: near misses that are not secrets ----------------------------------------
    Case("schema", SCHEMA_TOOLS, keep=(
        '"password":{"type":"string","description":"the account password"',
        '"apiKey":{"type":"string","description":"an API key instead of a password"',
        '"token":{"type":["string","null"],"title":"Session token"}',
        '"secret":{"type":"string"}', '"format":"password"')),
    Case("password_policy", _msg({"password_policy": "at least 12 characters and one digit",
                                  "passwordPolicy": {"minLength": 12, "requireDigit": True}}),
         keep=("at least 12 characters and one digit", '"minLength":12')),
    Case("password_policy", "password_policy: min length 12", keep=("min length 12",)),
    Case("secretary", _msg({"secretary": "Jane Doe", "secretary_phone": "555-0100"}),
         keep=("Jane Doe", "555-0100")),
    Case("secretary", "secretary: Jane Doe", keep=("Jane Doe",)),
    Case("signature", _msg({"signature": "def search(query: str, limit: int = 10) -> list",
                            "signatures": [{"label": "search(query)"}]}),
         keep=("def search(query: str, limit: int = 10) -> list", "search(query)")),
    Case("signature", "signature: (path: str) -> bytes", keep=("(path: str) -> bytes",)),
    Case("authorization_url", _msg({
        "authorization_url": "https://auth.example.com/oauth/authorize",
        "token_url": "https://auth.example.com/oauth/token",
        "authorization_servers": ["https://auth.example.com"]}),
         keep=("https://auth.example.com/oauth/authorize", "https://auth.example.com/oauth/token",
               '["https://auth.example.com"]')),
    Case("page_token", _msg({"items": [], "nextPageToken": "eyJvZmZzZXQiOjUwfQ==",
                             "pageToken": "CAUQAA"}),
         keep=("eyJvZmZzZXQiOjUwfQ==", "CAUQAA")),
    Case("page_token", _msg(query="cats", pageToken="CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA")
         , keep=("CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA",)),
    Case("prose_basic", _text("This is a basic introduction to MCP."),
         keep=("a basic introduction",)),
    Case("prose_basic", "Basic authentication is disabled; see basic usage",
         keep=("Basic authentication", "basic usage")),
    Case("prose_token", _text("the token 12345678 is only the request number"),
         keep=("token 12345678",)),
    Case("prose_token", _text("price per token large-model-3-5-20241022 and per token "
                              "mini-model-4o-2024-07-18"), keep=("token large-model-3-5-20241022",
                                                             "token mini-model-4o-2024-07-18")),
    Case("token_word", _text(f"use token {HEX32}{HEX32[:8]} or token FAKEtok3nMixedCase0123xyz"),
         (HEX32 + HEX32[:8], "FAKEtok3nMixedCase0123xyz")),
    Case("prose_token", "Bearer tokens are described in RFC 6750; a bearer of news",
         keep=("Bearer tokens", "a bearer of news")),
    Case("token_fields", _msg({"maxTokens": 1000, "token_type": "Bearer", "expires_in": 3600,
                               "tokenCount": 42, "token_url": "https://x.example/t"}),
         keep=('"maxTokens":1000', '"token_type":"Bearer"', '"tokenCount":42')),
    Case("hashes_ids", _msg({"commit": "3f786850e387550fdab836ed7e6dc881de23001b",
                             "digest": "sha256:" + HEX64,
                             "uuid": "123e4567-e89b-12d3-a456-426614174000"}),
         keep=("3f786850e387550fdab836ed7e6dc881de23001b", HEX64,
               "123e4567-e89b-12d3-a456-426614174000")),
    Case("vendor_words", _text("set npm_config_registry, call hf_hub_download; GitLab tokens "
                               "start with glpat- and SendGrid keys with SG. (see SG.1)"),
         keep=("npm_config_registry", "hf_hub_download", "glpat-", "SG.1")),
    Case("vendor_words", "ACCOUNT SKU12345 ACK SKIPPED", keep=("ACCOUNT SKU12345 ACK SKIPPED",)),
    Case("url_user", _text("clone git@github.com:org/repo.git or ssh://git@example.com/r.git; "
                           "mail user@example.com; https://docs.sentry.io/platforms/python/"),
         keep=("git@github.com:org/repo.git", "ssh://git@example.com/r.git",
               "https://docs.sentry.io/platforms/python/")),
    Case("cli_near", "started server --password-file=/run/secrets/db --token-limit 4096 "
         "--max-tokens 100 --no-auth", keep=("--password-file=/run/secrets/db",
                                            "--token-limit 4096", "--max-tokens 100"),
         dir="meta"),
    Case("query_near", _text("https://example.com/search?q=key&page=2&sort=signature"),
         keep=("?q=key&page=2&sort=signature",)),
    Case("query_near", "redirect to /login?next=%2Fdocs%3Fpage%3D2%26sort%3Dsignature%26key%3D",
         keep=("next=%2Fdocs%3Fpage%3D2%26sort%3Dsignature%26key%3D",)),
    Case("base64_plain", _msg({"contents": [{"uri": "file:///a.txt", "mimeType": "text/plain",
                                             "blob": _b64("hello world, no secrets here\n")},
                                            {"uri": "file:///a.png", "mimeType": "image/png",
                                             "blob": PNG_B64}]}),
         keep=(_b64("hello world, no secrets here\n"), PNG_B64)),
    Case("placeholders", _msg({"password": "********", "token": "${GITHUB_TOKEN}",
                               "apiKey": "<your-api-key>", "secret": "{{ secret }}",
                               "credentials": "include", "client_secret": "string"}),
         keep=('"********"', '"${GITHUB_TOKEN}"', '"<your-api-key>"', '"{{ secret }}"',
               '"credentials":"include"', '"client_secret":"string"')),
    Case("placeholders", "export API_KEY=$OPENAI_API_KEY; password=%DB_PASSWORD%",
         keep=("$OPENAI_API_KEY", "%DB_PASSWORD%")),
    Case("tool_prose", _msg({"tools": [{"name": "login", "description": (
        "Arguments: password: the account password; token: optional, apiKey: required. "
        "Authorization: see the docs for scopes.")}]}),
         keep=("password: the account password; token: optional, apiKey: required",
               "Authorization: see the docs for scopes.")),
    Case("www_authenticate", "HTTP/1.1 401\r\nWWW-Authenticate: Bearer realm=\"mcp\", "
         "error=\"invalid_token\", resource_metadata=\"https://mcp.example.com/.well-known/"
         "oauth-protected-resource\"", keep=('Bearer realm="mcp", error="invalid_token"',
                                             "oauth-protected-resource")),
    Case("working_dir", _msg({"env": {"PWD": "/home/dev/app", "OLDPWD": "/home/dev",
                                      "HOME": "/home/dev"}}),
         keep=('"PWD":"/home/dev/app"', '"OLDPWD":"/home/dev"')),
    Case("working_dir", "PWD=/home/dev/app OLDPWD=/home/dev", keep=("PWD=/home/dev/app",
                                                                   "OLDPWD=/home/dev")),
    Case("secret_refs", _msg({"secretName": "prod-db", "secret_ref": "vault:kv/app",
                              "is_secret": True, "token_count": 12, "keyId": "kid-1",
                              "primaryKey": "id", "key": "name"}),
         keep=('"secretName":"prod-db"', '"secret_ref":"vault:kv/app"', '"keyId":"kid-1"',
               '"primaryKey":"id"', '"key":"name"')),
    Case("header_names", "HTTP/1.1 200 OK\nx-ratelimit-remaining-tokens: 9000\n"
         "x-ratelimit-limit-tokens: 10000\nx-auth-type: oauth\nx-request-id: req_0123456789",
         keep=("x-ratelimit-remaining-tokens: 9000", "x-ratelimit-limit-tokens: 10000",
               "x-auth-type: oauth")),
    Case("description", _text("Pass your API key in the Authorization header; the password "
                              "field is write-only."),
         keep=("Pass your API key in the Authorization header",)),
]


def kinds() -> list[str]:
    """Kinds in corpus order."""
    return list(dict.fromkeys(c.kind for c in CASES))
