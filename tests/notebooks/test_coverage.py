"""Every point of the seed texts is taught on a real frame that passes and one that fails.

The list is the table "Seed coverage" of ``notebooks/README.md``: point, seed, notebook,
check, the passing frame and the failing frame (``trace@seq``). For each row the notebook
must exist and open both traces, and the check must hold: the passing frame passes it and
the failing frame fails it. A check is a rule of the checker (``rule:code``: the failing
frame carries that finding, the passing one does not) or one of the checks below, each
computed from the frames themselves.
"""

from __future__ import annotations

import json
import re
from functools import cache

import jsonschema
import pytest

import mcp_notebook as mn

from .conftest import NB_DIR

README = NB_DIR / "README.md"
MESSAGES = ("request", "result", "error", "notification", "invalid")


def coverage_rows() -> list[dict[str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Seed coverage", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, [c.strip() for c in ln.strip("|").split("|")], strict=True))
            for ln in lines[2:]]


ROWS = coverage_rows()


@cache
def trace(name: str):
    return mn.load(mn.sample_path(name))


def frame(ref: str):
    """``trace@seq`` (or ``trace@seq (raw capture)``: the frame as captured, not a view)."""
    name, seq = ref.split(" ", 1)[0].rsplit("@", 1)
    return trace(name), int(seq)


def _name(ref: str) -> str:
    return ref.split(" ", 1)[0].rsplit("@", 1)[0]


def _rules_at(t, seq: int) -> set[str]:
    v = t.violations
    return set(v.loc[v["seq"] == seq, "rule"])


def _request(t, seq: int):
    req = mn.teach.request_of(t, seq)
    assert req is not None, f"seq {seq} answers no request"
    return t.message(req)


# -- the checks: each returns True when the frame passes ----------------------------------------

def check_tool_error(t, seq: int) -> bool:
    """A tool's failure travels as a result with isError, not as a protocol error."""
    assert _request(t, seq)["method"] == "tools/call"
    msg = t.message(seq)
    return "error" not in msg and msg["result"].get("isError") is True


def check_error_code(t, seq: int) -> bool:
    """A request with a missing or invalid parameter is answered -32602."""
    msg, req = t.message(seq), _request(t, seq)
    params = req.get("params") or {}
    missing = (req["method"] == "resources/read" and "uri" not in params) or (
        req["method"] == "tools/call" and "name" not in params)
    issued = {str(t.message(s).get("result", {}).get("nextCursor"))
              for s in mn.teach.find(t, kind="result")}
    bad_cursor = "cursor" in params and params["cursor"] not in issued
    assert missing or bad_cursor, "the request's parameters are fine"
    return msg["error"]["code"] == -32602


def _schemas(t) -> dict[str, dict]:
    out = {}
    for seq in mn.teach.find(t, method="tools/list"):
        answer = mn.teach.answer_to(t, seq)
        for tool in t.message(answer)["result"]["tools"]:
            out[tool["name"]] = tool["inputSchema"]
    return out


def check_schema(t, seq: int) -> bool:
    """A call's arguments fit the inputSchema its server announced in tools/list."""
    params = t.message(seq)["params"]
    schema = _schemas(t)[params["name"]]
    return not list(jsonschema.Draft7Validator(schema).iter_errors(params.get("arguments", {})))


NEEDS = {"tools/": ("server", "tools"), "resources/": ("server", "resources"),
         "prompts/": ("server", "prompts"), "logging/setLevel": ("server", "logging"),
         "completion/complete": ("server", "completions"),
         "sampling/createMessage": ("client", "sampling"),
         "elicitation/create": ("client", "elicitation"), "roots/list": ("client", "roots")}


def check_capability(t, seq: int) -> bool:
    """A request uses only what the other side declared at initialize."""
    init = mn.teach.find(t, method="initialize")[0]
    declared = {"client": t.message(init)["params"].get("capabilities", {}),
                "server": t.message(mn.teach.answer_to(t, init))["result"]["capabilities"]}
    method = t.message(seq)["method"]
    side, name = next(v for k, v in NEEDS.items()
                      if method == k or (k.endswith("/") and method.startswith(k)))
    return name in declared[side]


def check_size(t, seq: int) -> bool:
    """A result stays under 1 MiB (the Python SDK's default SSE event limit)."""
    assert t.frames.loc[seq, "kind"] == "result"
    return int(t.frames.loc[seq, "size"]) <= 1 << 20


def check_cursor(t, seq: int) -> bool:
    """A page request sends back a nextCursor the server gave, and gets its page."""
    msg = t.message(seq)
    cursor = (msg.get("params") or {}).get("cursor")
    assert cursor is not None, "not a request for a later page"
    issued = {t.message(s)["result"].get("nextCursor") for s in mn.teach.find(t, kind="result")
              if s < seq}
    answer = t.message(mn.teach.answer_to(t, seq))
    return cursor in issued and "result" in answer


def check_redact(t, seq: int) -> bool:
    """Nothing in the frame is a secret the redactor finds."""
    _, report = t.redact(salt="coverage")
    return seq not in set(report["seq"])


def check_boundary(t, seq: int, raw: bool = False) -> bool:
    """What is shared of the operation (its boundary row, or the raw frame) carries none
    of the frame's payload."""
    args = json.dumps(t.message(seq)["params"].get("arguments", {}))
    words = set(re.findall(r"[A-Za-z0-9_-]{6,}", args))
    assert words, "the frame carries no payload to look for"
    shared = [str(t.frames.loc[seq, "raw"])] if raw else [
        str(v) for v in t.boundary().set_index("request_seq").loc[seq].values]
    return not any(w in text for w in words for text in shared)


CHECKS = {name[len("check_"):].replace("_", "-"): fn for name, fn in globals().items()
          if name.startswith("check_")}


def holds(check: str, ref: str) -> bool:
    t, seq = frame(ref)
    if check.startswith("rule:"):
        assert t.frames.loc[seq, "kind"] in MESSAGES
        return check[5:] not in _rules_at(t, seq)
    if check == "boundary":
        return check_boundary(t, seq, raw=ref.endswith("(raw capture)"))
    return CHECKS[check](t, seq)


def test_the_list_covers_both_seeds_and_every_checklist_step():
    assert {r["seed"] for r in ROWS} == {"000", "002"} and len(ROWS) >= 18
    checks = {r["check"] for r in ROWS}
    for step in ("rule:parse-error", "rule:id-type-mismatch", "tool-error", "rule:unknown-method",
                 "schema", "capability", "redact", "boundary", "size", "cursor",
                 "rule:result-and-error", "rule:duplicate-response", "rule:big-id"):
        assert step in checks, step
    assert all(c in CHECKS or c.startswith("rule:") for c in checks)


@pytest.mark.parametrize("row", ROWS, ids=[r["point"][:40] for r in ROWS])
def test_point_is_taught_on_a_passing_and_a_failing_real_frame(row):
    notebook = NB_DIR / "source" / f"{row['notebook']}.py"
    assert notebook.exists(), row["notebook"]
    text = notebook.read_text(encoding="utf-8")
    for ref in (row["passes"], row["fails"]):
        name = _name(ref)
        assert f'sample_path("{name}")' in text, f"{row['notebook']} does not open {name}"
    if row["check"].startswith("rule:"):
        assert row["check"][5:] in _rules_at(*frame(row["fails"]))
    assert holds(row["check"], row["passes"]), f"{row['passes']} should pass"
    assert not holds(row["check"], row["fails"]), f"{row['fails']} should fail"


@pytest.mark.parametrize("check", ["tool-error", "error-code", "schema", "capability", "size",
                                   "cursor", "redact"])
def test_each_check_refuses_the_frames_of_another_row(check):
    """A check is not always true: on the failing frame of its row it says so, and on a
    frame of the right shape from elsewhere in the list it gives an answer of its own."""
    row = next(r for r in ROWS if r["check"] == check)
    assert holds(check, row["passes"]) != holds(check, row["fails"])
