"""The faults an exercise can plant, and :func:`plant`, which plants one and checks it.

A plant edits real frames of a trace (:class:`~._records.Work`) and says which frames now
break which rules. :func:`plant` keeps a plant only when the checker, run on the planted
trace, finds exactly those findings on top of what it found on the original: so the answer
key is the checker's own verdict, and nothing else in the trace changed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ._records import Origin, Work

__all__ = ["ALIASES", "FAULTS", "Fault", "Key", "plant", "found"]

Key = dict[tuple[Origin, str], bool]  # (frame, rule) -> required (False: a consequence)
Planter = Callable[[Work, pd.Series, random.Random], "Key | None"]


@dataclass(frozen=True)
class Fault:
    """One kind of planted fault: the rule it breaks, the question, hints, and the plant."""

    name: str
    rule: str  # the rule the exercise is about
    question: str
    hints: tuple[str, ...]  # from general to specific; none names a seq
    plant: Planter
    sites: str = "answered"  # answered | results | notifications


def _duplicate(w: Work, p: pd.Series, rng: random.Random) -> Key:
    resp = int(p["response_seq"])
    w.insert(resp, "dup", w.msg(resp))  # the same answer written twice
    return {("dup", "duplicate-response"): True}


def _id_flip(w: Work, p: pd.Series, rng: random.Random) -> Key | None:
    resp, req = int(p["response_seq"]), int(p["request_seq"])
    msg = w.msg(resp)
    if type(msg.get("id")) is not int:
        return None
    msg["id"] = str(msg["id"])  # 4 -> "4": the bug of scripts/broken_server.py
    w.replace(resp, msg)
    return {(resp, "id-type-mismatch"): True, (req, "unanswered-request"): False}


def _both(w: Work, p: pd.Series, rng: random.Random) -> Key:
    resp = int(p["response_seq"])
    msg = w.msg(resp)
    msg["error"] = {"code": -32603, "message": "Internal error"}
    w.replace(resp, msg)
    return {(resp, "result-and-error"): True}


def _missing(w: Work, p: pd.Series, rng: random.Random) -> Key:
    w.delete(int(p["response_seq"]))
    return {(int(p["request_seq"]), "unanswered-request"): True}


def _not_object(w: Work, p: pd.Series, rng: random.Random) -> Key:
    resp = int(p["response_seq"])
    msg = w.msg(resp)
    lists = [v for v in msg["result"].values() if isinstance(v, list)]
    choices: list[Any] = [None, "ok", True, *lists[:1]]  # a bare list: the */list slip
    msg["result"] = rng.choice(choices)
    w.replace(resp, msg)
    return {(resp, "result-not-object"): True}


def _retry(w: Work, p: pd.Series, rng: random.Random) -> Key:
    req = int(p["request_seq"])
    w.insert(req, "retry", w.msg(req))  # re-sent with the same id before the answer came
    return {("retry", "request-id-in-flight"): True}


def _late(w: Work, p: pd.Series, rng: random.Random) -> Key:
    req, resp = int(p["request_seq"]), int(p["response_seq"])
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": w.msg(req)["id"],
                         "reason": rng.choice(["timeout", "user cancelled"])}}
    w.insert(w.rows[w.pos(resp) - 1][0], "cancel", cancel, direction=str(p["requester"]))
    return {(resp, "response-after-cancel"): True}


def _reply(w: Work, n: pd.Series, rng: random.Random) -> Key | None:
    seq, side = int(n["seq"]), str(n["direction"])
    other = {"c2s": "s2c", "s2c": "c2s"}.get(side)
    if other is None:
        return None
    ids = [w.msg(o).get("id") for o, r in w.rows if r["dir"] == side
           and r.get("session") == n["session"] and '"method"' in r["raw"] and '"id"' in r["raw"]]
    new_id = max([i for i in ids if type(i) is int], default=0) + 1  # the sender's next id
    msg = w.msg(seq)
    w.replace(seq, {"jsonrpc": "2.0", "id": new_id, **{k: v for k, v in msg.items()
                                                       if k != "jsonrpc"}})
    w.insert(seq, "reply", {"jsonrpc": "2.0", "id": new_id, "result": {}}, direction=other)
    return {(seq, "notification-with-id"): True, ("reply", "notification-answered"): True}


FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault("answered-twice", "duplicate-response",
          "The client says one of its calls \"seems to get two answers\". Which frame is the "
          "extra answer, and which rule does it break?",
          ("Line the answers up with their requests: each request may get one answer. Which "
           "`id_key` comes back from the other side more often than it was asked?",
           "Compare the `raw` text of answers that share an id."), _duplicate),
    Fault("id-type-flipped", "id-type-mismatch",
          "A strict client waits forever for one of its calls, while the server says it "
          "answered. Which frames does the checker mark, and with which rules?",
          ("Compare `id_key` of requests and responses: `4` and `\"4\"` are different ids.",
           "An answer whose id matches no request, and a request whose answer never came."),
          _id_flip),
    Fault("reply-says-ok-and-fails", "result-and-error",
          "One reply reads as a success to one client and as a failure to another. Which "
          "frame, and which rule?",
          ("Read the `raw` text of the replies: which members does each one carry?",
           "A reply has `result` or `error`. Look for one with both."), _both, "results"),
    Fault("reply-to-notification", "notification-answered",
          "Someone sent a notification with an id, and the other side answered it. Which "
          "two frames break which rules?",
          ("A notification has a `method` and no `id`. Is there a `notifications/...` request?",
           "Which frames have a method that starts with `notifications/` and an `id`?"), _reply,
          "notifications"),
    Fault("call-never-returns", "unanswered-request",
          "A user reports that one call \"hangs\". Which frame is it, and which rule does the "
          "capture show broken?",
          ("Every request from one side should have an answer from the other with the same "
           "`id_key`. Which one has none?",
           "In `ex.trace.pairs`, a request with no answer has no `response_seq`."), _missing),
    Fault("result-is-a-bare-value", "result-not-object",
          "A client's schema validation rejects one reply that \"looks fine\". Which frame, "
          "and which rule?",
          ("Decode the replies with `ex.trace.message(seq)` and look at the type of `result`.",
           "An empty answer is `{}`: never null, a string, a boolean or a list."), _not_object,
          "results"),
    Fault("same-id-twice-in-flight", "request-id-in-flight",
          "A client retried a call that was slow, and now two calls wait on one answer. "
          "Which frames does the checker mark, and with which rules?",
          ("Look for two requests from the same side with the same `id_key`.",
           "Was the first of them answered before the second was sent?"), _retry),
    Fault("answer-after-cancel", "response-after-cancel",
          "A request was cancelled, but its answer still came. Which frame does the checker "
          "mark, and with which rule? Who should have done what?",
          ("Find the `notifications/cancelled` and the `requestId` it names.",
           "What came from the other side with that id after the cancel?"),
          _late),
)}

#: the names of the first edition (rule codes, mostly): still accepted, for old sheets
ALIASES = {"duplicate-response": "answered-twice", "result-and-error": "reply-says-ok-and-fails",
           "missing-response": "call-never-returns", "result-not-object": "result-is-a-bare-value",
           "id-reused-in-flight": "same-id-twice-in-flight",
           "late-result-after-cancel": "answer-after-cancel"}


def found(trace: Any) -> set[tuple[int, str]]:
    """The checker's findings on a trace, as ``(seq, rule)``."""
    v = trace.violations
    return {(int(s), str(r)) for s, r in zip(v["seq"], v["rule"], strict=True)}


def _site_rows(fault: Fault, trace: Any) -> pd.DataFrame:
    """The frames (notifications) or pairs (answered requests) ``fault`` may be planted at."""
    if fault.sites == "notifications":
        f = trace.frames
        keep = (f["kind"] == "notification") & ~f["method"].isin(
            ["notifications/cancelled", "notifications/progress"])
        return f[keep]
    outcomes = ["result", "tool_error"] + (["error"] if fault.sites == "answered" else [])
    p = trace.pairs
    return p[p["outcome"].isin(outcomes) & p["request_seq"].notna() & p["response_seq"].notna()
             & (p["method"] != "initialize") & p["cancel_seq"].isna()]


def _sites(fault: Fault, trace: Any) -> list[pd.Series]:
    return [row for _, row in _site_rows(fault, trace).iterrows()]


def sites(base: Any, fault: str) -> int:
    """How many places ``base`` offers for ``fault`` (before checking that it plants cleanly)."""
    return len(_site_rows(FAULTS[ALIASES.get(fault, fault)], base))


def plant(base: Any, fault: str, seed: int = 0, first: int | None = None
          ) -> tuple[Any, dict[int, dict[str, bool]]]:
    """Plant ``fault`` in the trace ``base``; return ``(planted trace, key)``.

    The key maps each frame of the planted trace that the fault touches to
    ``{rule code: required}``; a consequence (``False``) may be named but need not be.
    Sites are tried in an order drawn from ``seed`` until one where the checker finds
    exactly the planted findings and every finding of the original, moved, and no more.

    Raises
    ------
    KeyError
        ``fault`` is not a name of :data:`FAULTS`.
    ValueError
        The trace has no site where this fault plants cleanly.
    """
    f = FAULTS[ALIASES.get(fault, fault)]
    before = found(base)
    sites = _sites(f, base)
    in_order = list(sites)
    rng = random.Random(seed)
    rng.shuffle(sites)
    if first is not None and sites:  # start at one site, then the others in seeded order
        sites = [in_order[first % len(sites)], *sites]
    for site in sites:
        w = Work(base)
        key = f.plant(w, site, rng)
        if not key:
            continue
        where = w.where()
        moved = {(where[s], r) for s, r in before if s in where}
        if len(moved) != len(before):
            continue  # a deleted frame carried a finding of its own
        planted = w.load()
        expect = {(where[o], r) for o, r in key}
        now = found(planted)
        if now - moved == expect and moved <= now:
            out: dict[int, dict[str, bool]] = {}
            for (o, r), required in key.items():
                out.setdefault(where[o], {})[r] = required
            return planted, out
    raise ValueError(f"no site in this trace where {fault!r} plants cleanly")
