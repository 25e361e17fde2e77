"""Two exercises that ask for more than a rule code, both on real traces, both blind.

:func:`classify`: a few answers from a real session; for each, is it a result, a tool
error (a result with ``isError: true``) or a protocol error (a JSON-RPC ``error``)?

:func:`respond`: a real request whose answer is missing; write the response the server
should have sent. The checker grades it: the response goes into the trace in place of the
real one, and must pair with the request, break no rule, and say what the case needs
(``{}`` for a ping, ``-32602`` for a missing parameter, ``-32601`` for an unknown method,
``isError`` for a tool that failed).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from .blind import BlindTrace
from .exercise import Feedback, Hint, _md

__all__ = ["Classify", "Respond", "classify", "respond"]

_LABELS = {"result": "result", "ok": "result", "success": "result",
           "tool error": "tool error", "tool_error": "tool error", "tool": "tool error",
           "iserror": "tool error", "protocol error": "protocol error",
           "protocol_error": "protocol error", "protocol": "protocol error",
           "error": "protocol error", "jsonrpc error": "protocol error"}
_WHY = {"result": "a `result` without `isError: true`: the call worked",
        "tool error": "a `result` whose `isError` is true: the protocol worked, the tool failed",
        "protocol error": "an `error` member with a `code`: the request itself failed"}
CLASSIFY_BASES = ("demo-stdio-raw-frames", "everything-stdio-raw-frames", "demo-stdio",
                  "everything-stdio-basics", "filesystem-stdio", "memory-stdio")


def _pick(seed: int, names: tuple[str, ...]) -> tuple[Any, random.Random]:
    from .. import load, sample_path

    rng = random.Random(seed)
    return load(sample_path(names[seed % len(names)])), rng


def _label(trace: Any, seq: int) -> str:
    msg = trace.message(seq)
    if "error" in msg:
        return "protocol error"
    result = msg.get("result")
    return "tool error" if isinstance(result, dict) and result.get("isError") is True \
        else "result"


class _Task:
    question = ""

    def __init__(self, trace: Any, seed: int, name: str) -> None:
        self.solved = False
        self.seed = seed
        self.attempts = 0
        self.trace = BlindTrace(trace, lambda: self.solved, name)
        self.name = name

    def __repr__(self) -> str:
        return f"Exercise {self.name!r} (seed {self.seed}): {self.question}"

    def _repr_html_(self) -> str:
        return (f"<div class='mn-exercise' style='border-left:4px solid #8250df;"
                f"padding:2px 10px'><b>Exercise: {self.name}</b> <small>(seed {self.seed})"
                f"</small><p>{_md(self.question)}</p></div>")


class Classify(_Task):
    """Which answers are results, tool errors, protocol errors? (see :func:`classify`)"""

    def __init__(self, trace: Any, seed: int, seqs: list[int]) -> None:
        super().__init__(trace, seed, "tool-or-protocol-error")
        self.seqs = seqs
        self._key = {s: _label(trace, s) for s in seqs}
        self.question = (f"The answers at seqs {seqs} came back from the other side. For each, "
                         "is it a `result`, a `tool error` or a `protocol error`? Answer "
                         "`{seq: 'result' | 'tool error' | 'protocol error'}`.")

    def check(self, answer: dict[Any, str] | None = None) -> Feedback:
        if not answer:
            return Feedback(False, ["Nothing to grade yet.",
                                    "Answer with `ex.check({seq: 'tool error', ...})`."])
        self.attempts += 1
        right, wrong = [], []
        for seq in self.seqs:
            said = str(answer.get(seq, answer.get(str(seq), ""))).strip().lower()
            label = _LABELS.get(said)
            if not said:
                wrong.append(f"seq {seq}: no answer yet.")
            elif label is None:
                wrong.append(f"seq {seq}: `{said}` is not one of result, tool error, "
                             "protocol error.")
            elif label == self._key[seq]:
                right.append(f"seq {seq}: {label} ✓")
            else:
                wrong.append(f"seq {seq}: not a {label}. Read the frame's members: "
                             f"{_WHY[label]}, is that what it carries?")
        if not wrong:
            self.solved = True
            return Feedback(True, ["Correct! Each answer is what its members say.", *right,
                                   "The two failures are counted apart: a client retries or "
                                   "fixes a protocol error, and shows a tool error to the "
                                   "model (MCP, server/tools.mdx §Error Handling)."], 1.0)
        return Feedback(False, [f"Not yet (attempt {self.attempts}).", *right, *wrong,
                                "Hint: `mn.teach.show(ex.trace, seq)` decodes a frame; look "
                                "for `error`, and for `isError` inside `result`."],
                        len(right) / len(self.seqs) / 2)


def classify(learner: str | None = None, seed: int | None = None) -> Classify:
    """Tell a result, a tool error and a protocol error apart, on a real trace.

    ``learner`` (or ``seed``) picks the trace and four answers in it, at least one of
    each kind the trace has.
    """
    from ._seed import seed_for

    seed = seed if seed is not None else seed_for(learner, "classify") if learner else 0
    trace, rng = _pick(seed, CLASSIFY_BASES)
    p = trace.pairs
    p = p[p["response_seq"].notna() & (p["method"] != "initialize")]
    by: dict[str, list[int]] = {}
    for s in p["response_seq"]:
        by.setdefault(_label(trace, int(s)), []).append(int(s))
    chosen = [rng.choice(v) for _, v in sorted(by.items())]
    rest = [s for v in by.values() for s in v if s not in chosen]
    rng.shuffle(rest)
    return Classify(trace, seed, sorted(chosen + rest[:max(0, 4 - len(chosen))]))


@dataclass(frozen=True)
class Case:
    """A request to answer: where it is, and what a right answer must be."""

    name: str
    trace: str
    method: str
    needle: str  # a piece of the request's raw text
    kind: str  # result | protocol error | tool error
    code: int | None
    why: str


CASES = (
    Case("ping", "everything-stdio-basics", "ping", '"ping"', "result", None,
         "A ping is answered promptly with an empty result, `{}` (MCP basic/utilities/"
         "ping.mdx); `result` is always an object."),
    Case("missing-parameter", "everything-stdio-raw-frames", "resources/read", '"params":{}',
         "protocol error", -32602, "`uri` is required and missing: invalid params, -32602 (JSON-RPC "
         "2.0 §5.1: \"Invalid method parameter(s).\"). The real server said -32603 (internal "
         "error), which blames itself."),
    Case("unknown-method", "demo-stdio-raw-frames", "no/such/method", "no/such/method", "protocol error",
         -32601, "No such method: -32601 (JSON-RPC 2.0 §5.1: \"The method does not exist / "
         "is not available.\")."),
    Case("tool-failed", "demo-stdio", "tools/call", '"divide"', "tool error", None,
         "The call reached the tool, and the tool failed (division by zero): a result with "
         "`isError: true` and content that says why (MCP server/tools.mdx §Error "
         "Handling), not a protocol error."),
)


class Respond(_Task):
    """Write the response a request should have had (see :func:`respond`)."""

    def __init__(self, case: Case, full: Any, shown: Any, request_seq: int,
                 response_seq: int, seed: int) -> None:
        super().__init__(shown, seed, "write-the-response")
        self.case = case
        self.request_seq = request_seq
        self._full = full
        self._response_seq = response_seq
        self.question = (f"Request seq {request_seq} (`{case.method}`) has no answer in this "
                         "trace. Write the response the server should send, as a dict: "
                         "`ex.check({'jsonrpc': '2.0', 'id': ..., ...})`.")

    def check(self, response: Any = None) -> Feedback:
        from ._records import what_if

        if response is None or response == {}:
            return Feedback(False, ["Nothing to grade yet.",
                                    "Answer with the response itself: `ex.check({...})`."])
        self.attempts += 1
        if isinstance(response, str):
            try:
                response = json.loads(response)
            except ValueError as exc:
                return Feedback(False, [f"Not yet (attempt {self.attempts}).",
                                        f"That is not JSON: {exc}."])
        t = what_if(self._full, replace={self._response_seq: response})
        seq = self._response_seq
        wrong = []
        v = t.violations
        for code, spec in zip(v.loc[v["seq"] == seq, "rule"], v.loc[v["seq"] == seq, "spec"],
                              strict=True):
            wrong.append(f"The checker flags it, `{code}`: {spec}")
        pair = t.pairs[t.pairs["request_seq"] == self.request_seq]
        if pair.empty or pair["response_seq"].isna().all() or int(
                pair["response_seq"].iloc[0]) != seq:
            wrong.append("It does not answer the request: the `id` must be the request's, "
                         "same type and value.")
        got = _label(t, seq) if isinstance(response, dict) and (
            "result" in response or "error" in response) else None
        if got != self.case.kind:
            wrong.append(f"It should be a {self.case.kind}" + (f" (yours reads as a {got})"
                                                               if got else "") + ".")
        elif self.case.code is not None and response["error"].get("code") != self.case.code:
            wrong.append(f"Right kind of answer, but code {response['error'].get('code')!r} "
                         "says something else.")
        if not wrong:
            self.solved = True
            return Feedback(True, ["Correct! The checker finds nothing wrong with it, and it "
                                   "says what the case needs.", self.case.why], 1.0)
        return Feedback(False, [f"Not yet (attempt {self.attempts}).", *wrong,
                                "Hint: " + self.hint()], 0.0)

    def hint(self) -> Hint:
        return Hint({"result": "what does an empty success look like?",
                     "protocol error": "which JSON-RPC code names this failure? (JSON-RPC 2.0 §5.1)",
                     "tool error": "did the protocol fail, or the tool?"}[self.case.kind])


def respond(learner: str | None = None, seed: int | None = None) -> Respond:
    """Write the response to a real request (one of :data:`CASES`, by ``learner``/``seed``)."""
    from .. import load, sample_path
    from ._records import what_if
    from ._seed import seed_for

    seed = seed if seed is not None else seed_for(learner, "respond") if learner else 0
    case = CASES[seed % len(CASES)]
    full = load(sample_path(case.trace))
    p = full.pairs
    rows = p[(p["method"] == case.method) & p["response_seq"].notna()]
    rows = rows[[case.needle in str(full.frames.loc[int(s), "raw"])
                 for s in rows["request_seq"]]]
    row = rows.iloc[random.Random(seed).randrange(len(rows))]
    req, resp = int(row["request_seq"]), int(row["response_seq"])
    shown = what_if(full, delete=[resp])
    return Respond(case, full, shown, req, resp, seed)
