"""Properties of redaction over generated messages mixing corpus secrets, near misses and
random text: the output is JSON of the same shape with the same ids, no planted secret is
left, a second pass finds nothing, and near misses alone are never touched."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_notebook.redact import Redactor
from mcp_notebook.redact.frames import redact_frame

from . import corpus as C
from .corpus import CASES

#: secrets whose shape alone gives them away, and any secret after a context that does
SHAPED = [C.GITLAB, C.GITLAB_NEW, C.NPM, C.HF, C.SENDGRID, C.DISCORD, C.DISCORD_OLD,
          C.TWILIO_SK, C.TWILIO_AC, C.AKIA, "ghp_FAKEtestGithubToken0123456789abcdef"]
NEAR = sorted({k for c in CASES for k in c.keep if not c.secrets})
SECRETS = sorted({s for c in CASES for s in c.secrets if len(s) >= 12 and " " not in s
                  and not any(s in k for k in NEAR)})  # (hex that a near-miss digest holds)
KEYS = ["text", "note", "password", "apiKey", "pageToken", "signature", "secretary",
        "description", "args", "headers", "type", "value", "name"]

words = st.one_of(st.sampled_from(NEAR), st.text(max_size=30))
planted = st.one_of(
    st.tuples(st.sampled_from(["", "see ", "("]), st.sampled_from(SHAPED),
              st.sampled_from(["", " ok", "\n", ")"])),
    st.tuples(st.sampled_from(["?key=", "&sig=", "password=", "--token=", "--api-key ",
                               "Authorization: ", "api_key: "]),
              st.sampled_from(SECRETS), st.sampled_from(["", " ok", "\n", "&x=1"])),
    # a bare "Bearer" in text is followed by a token when it has a digit (or is long and
    # mixes case): "Bearer tokens" is prose
    st.tuples(st.just("Bearer "), st.sampled_from([s for s in SECRETS if re.search(r"\d", s)]),
              st.sampled_from(["", " ok", "\n"])))
leaf = st.one_of(words, planted.map("".join), st.integers(), st.booleans(), st.none())
doc = st.recursive(leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=12)
near_doc = st.recursive(st.one_of(st.sampled_from(NEAR), st.integers()), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(
        ["text", "description", "signature", "secretary", "pageToken", "note"]), inner,
        max_size=4)), max_leaves=10)

R = Redactor(salt="prop")
SETTINGS = settings(max_examples=150, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _shape(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_shape(x) for x in v]
    return None


def _strings(v: Any) -> list[str]:
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return [v] if isinstance(v, str) else []


@SETTINGS
@given(body=doc, rid=st.one_of(st.integers(), st.sampled_from(SECRETS)))
def test_json_shape_ids_kept_and_no_secret_left(body: Any, rid: Any) -> None:
    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"arguments": body}}
    raw = json.dumps(msg, separators=(",", ":"))
    hits: list[Any] = []
    out = redact_frame(raw, R, hits)
    new = json.loads(out)
    assert new["id"] == rid and new["method"] == "tools/call"  # ids never redacted
    assert _shape(new) == _shape(msg)
    planted_here = [s for s in SECRETS if any(s in x for x in _strings(body))]
    rest = json.dumps(new["params"], ensure_ascii=False)  # the id is kept whatever it is
    assert not [s for s in planted_here if s in rest], out
    again: list[Any] = []
    assert redact_frame(out, R, again) == out and not again  # idempotent


@SETTINGS
@given(body=near_doc)
def test_near_misses_never_touched(body: Any) -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": body}, separators=(",", ":"))
    hits: list[Any] = []
    assert redact_frame(raw, R, hits) == raw and not hits, hits


@SETTINGS
@given(text=st.lists(st.one_of(st.sampled_from(NEAR), planted.map("".join)), max_size=6))
def test_text_lines(text: list[str]) -> None:
    line = " ".join(text)
    hits: list[Any] = []
    out = R.text(line, "text", hits)
    assert not [s for s in SECRETS if s in line and s in out], out
    again: list[Any] = []
    assert R.text(out, "text", again) == out and not again
