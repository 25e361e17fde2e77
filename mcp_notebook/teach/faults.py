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

__all__ = ["FAULTS", "Fault", "Key", "plant", "found"]

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
    Fault("duplicate-response", "duplicate-response",
          "One request in this trace was answered twice. Which frame is the extra answer, "
          "and which rule does it break?",
          ("Count the responses each request got: `ex.trace.pairs` has a row per answer.",
           "Look for a pair whose `outcome` is not result, error or tool_error."), _duplicate),
    Fault("id-type-flipped", "id-type-mismatch",
          "One response echoes its request's id with the wrong JSON type. Which frames does "
          "the checker mark, and with which rules?",
          ("Compare `id_key` of requests and responses: `4` and `\"4\"` are different ids.",
           "A response that answers no request, and a request left waiting."), _id_flip),
    Fault("result-and-error", "result-and-error",
          "One response carries both `result` and `error`. Which frame, and which rule?",
          ("When both are present, `kind` says `error`: error wins. Read the `raw` text.",
           "Look at the rows of `ex.trace.frames` whose kind is `error`."), _both, "results"),
    Fault("reply-to-notification", "notification-answered",
          "Someone sent a notification with an id, and the other side answered it. Which "
          "two frames break which rules?",
          ("A notification has a `method` and no `id`. Is there a `notifications/...` request?",
           "Filter `ex.trace.frames` on `method.str.startswith('notifications/')`."), _reply,
          "notifications"),
    Fault("missing-response", "unanswered-request",
          "One request never got its response. Which frame, and which rule?",
          ("`ex.trace.pairs` has a row per request: which one has no `response_seq`?",
           "Filter the pairs on `outcome == 'unanswered'`."), _missing),
    Fault("result-not-object", "result-not-object",
          "One result is not a JSON object. Which frame, and which rule?",
          ("Decode the results with `ex.trace.message(seq)` and look at the type of `result`.",
           "An empty answer is `{}`: never null, a string, a boolean or a list."), _not_object,
          "results"),
    Fault("id-reused-in-flight", "request-id-in-flight",
          "A client sent a request again with an id that was still waiting for its answer. "
          "Which frames does the checker mark, and with which rules?",
          ("Look for two requests from the same side with the same `id_key`.",
           "Group the requests by `direction` and `id_key`, and count."), _retry),
    Fault("late-result-after-cancel", "response-after-cancel",
          "A request was cancelled, but its answer still came. Which frame does the checker "
          "mark, and with which rule? Is it an error?",
          ("Find the `notifications/cancelled` and the `requestId` it names.",
           "Pairs with `outcome == 'cancelled'` have a `cancel_seq`: what came after it?"),
          _late),
)}


def found(trace: Any) -> set[tuple[int, str]]:
    """The checker's findings on a trace, as ``(seq, rule)``."""
    v = trace.violations
    return {(int(s), str(r)) for s, r in zip(v["seq"], v["rule"], strict=True)}


def _sites(fault: Fault, trace: Any) -> list[pd.Series]:
    if fault.sites == "notifications":
        f = trace.frames
        keep = (f["kind"] == "notification") & ~f["method"].isin(
            ["notifications/cancelled", "notifications/progress"])
        return [row for _, row in f[keep].iterrows()]
    outcomes = ["result", "tool_error"] + (["error"] if fault.sites == "answered" else [])
    p = trace.pairs
    p = p[p["outcome"].isin(outcomes) & p["request_seq"].notna() & p["response_seq"].notna()
          & (p["method"] != "initialize") & p["cancel_seq"].isna()]
    return [row for _, row in p.iterrows()]


def plant(base: Any, fault: str, seed: int = 0) -> tuple[Any, dict[int, dict[str, bool]]]:
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
    f = FAULTS[fault]
    before = found(base)
    sites = _sites(f, base)
    rng = random.Random(seed)
    rng.shuffle(sites)
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
