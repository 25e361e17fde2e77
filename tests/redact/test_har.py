"""HAR query strings, forms and headers: ``key``, ``sig`` and ``X-Amz-Signature`` are secrets
in a query (not as JSON members); near-miss parameters and headers are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_notebook.redact import TOKEN_RE, redact_file

from . import corpus as C

DATA = Path(__file__).resolve().parents[2] / "data"

QUERY = [("key", C.QUERY_KEY, True), ("X-Amz-Signature", C.AMZ_SIG, True),
         ("sig", "FAKEsasSig0123456789abcd%3D", True), ("access_token", "FAKEat-0001", True),
         ("page", "2", False), ("q", "key", False), ("sort", "signature", False),
         ("pageToken", "CAUQAA", False), ("X-Amz-Expires", "3600", False)]
FORM = [("client_secret", "FAKE-client-secret-01", True), ("grant_type", "authorization_code",
                                                          False),
        ("redirect_uri", "https://app.example/cb", False)]
HEADERS = [("x-api-key", C.CLI_KEY, True), ("Authorization", f"Basic {C.BASIC}", True),
           ("Accept", "application/json, text/event-stream", False),
           ("Sec-Fetch-Site", "same-origin", False), ("X-Request-Signature-Version", "2", False),
           ("x-ratelimit-remaining-tokens", "9000", False), ("X-Auth-Token", "FAKEauth0001", True)]


@pytest.fixture
def redacted(tmp_path: Path) -> dict:
    doc = json.loads((DATA / "demo-http.har").read_text("utf-8"))
    req = doc["log"]["entries"][0]["request"]
    req["queryString"] = [{"name": n, "value": v} for n, v, _ in QUERY]
    req["url"] = req["url"].split("?")[0] + "?" + "&".join(f"{n}={v}" for n, v, _ in QUERY)
    req["headers"] += [{"name": n, "value": v} for n, v, _ in HEADERS]
    req["postData"] = {"mimeType": "application/x-www-form-urlencoded",
                       "text": "&".join(f"{n}={v}" for n, v, _ in FORM),
                       "params": [{"name": n, "value": v} for n, v, _ in FORM]}
    src, out = tmp_path / "in.har", tmp_path / "out.har"
    src.write_text(json.dumps(doc), "utf-8")
    redact_file(src, out, salt="har")
    return json.loads(out.read_text("utf-8"))["log"]["entries"][0]["request"]


def _check(pairs: list[dict], table: list[tuple[str, str, bool]]) -> None:
    got = {p["name"]: p["value"] for p in pairs}
    for name, value, secret in table:
        if secret:
            assert TOKEN_RE.fullmatch(got[name]), (name, got[name])
        else:
            assert got[name] == value, (name, got[name])


def test_query_string_params(redacted: dict) -> None:
    _check(redacted["queryString"], QUERY)


def test_url_query(redacted: dict) -> None:
    url = redacted["url"]
    for name, value, secret in QUERY:
        assert (f"{name}={value}" in url) != secret, (name, url)


def test_form_params_and_body(redacted: dict) -> None:
    _check(redacted["postData"]["params"], FORM)
    body = redacted["postData"]["text"]
    assert "FAKE-client-secret-01" not in body and "grant_type=authorization_code" in body


def test_headers(redacted: dict) -> None:
    _check([h for h in redacted["headers"] if h["name"] in {n for n, _, _ in HEADERS}], HEADERS)
