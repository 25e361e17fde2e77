"""Passive conformance: the official conformance suite's requirements, judged on a capture.

The suite (npm ``@modelcontextprotocol/conformance`` 0.1.16, ``dist/index.js``) drives a
peer and records checks by id (``tools-list``, ``tools-call-error``, ...), each citing a
spec reference id (``MCP-Tools-List``, ``MCP-Error-Handling``, ...). :data:`REQUIREMENTS`
maps the checks whose subject is visible in traffic to the methods that exercise them and
the rules of this checker that judge them. :func:`conformance` reports, per peer, each
requirement as ``kept`` (exercised, no finding), ``broken`` (a finding of one of its rules
on one of its exchanges) or ``not exercised`` (the capture holds no such exchange). It is
passive: only what the capture shows, not what the suite would have sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["REQUIREMENTS", "Requirement", "conformance", "conformance_ids", "COLUMNS"]

SUITE = "@modelcontextprotocol/conformance 0.1.16"


@dataclass(frozen=True)
class Requirement:
    id: str  # the suite's check id
    spec_ref: str  # the suite's specReferences id
    role: str  # the peer judged: server or client
    methods: tuple[str, ...]  # exchanges that exercise it
    rules: tuple[str, ...]  # the rules that judge it here


_SCHEMA = ("schema-result",)
_R = Requirement

#: the suite's checks that traffic shows, with the rules that judge them
REQUIREMENTS: tuple[Requirement, ...] = (
    _R("server-initialize", "MCP-Initialize", "server", ("initialize",), _SCHEMA),
    _R("mcp-client-initialization", "MCP-Initialize", "client", ("initialize",),
       ("schema-params", "lifecycle-order")),
    _R("ping", "MCP-Ping", "server", ("ping",), ("ping-result-not-empty", "schema-result")),
    _R("logging-set-level", "MCP-Logging", "server", ("logging/setLevel",),
       ("schema-result", "capability-server-undeclared")),
    _R("tools-list", "MCP-Tools-List", "server", ("tools/list",),
       ("schema-result", "capability-server-undeclared")),
    _R("tools-call-simple-text", "MCP-Tools-Call", "server", ("tools/call",),
       ("schema-result", "tool-output-schema")),
    _R("tools-call-error", "MCP-Error-Handling", "server", ("tools/call",),
       ("tool-input-error-as-protocol-error",)),
    _R("tools-call-with-progress", "MCP-Progress", "server", ("notifications/progress",),
       ("progress-unknown-token", "progress-after-response", "progress-not-increasing")),
    _R("tools-call-sampling", "MCP-Sampling", "server", ("sampling/createMessage",),
       ("capability-client-undeclared", "schema-params")),
    _R("tools-call-elicitation", "MCP-Elicitation", "server", ("elicitation/create",),
       ("capability-client-undeclared", "schema-params")),
    _R("tools-call-with-logging", "MCP-Logging", "server", ("notifications/message",),
       ("capability-notification-undeclared", "schema-params")),
    _R("completion-complete", "MCP-Completion", "server", ("completion/complete",),
       ("schema-result",)),
    _R("prompts-list", "MCP-Prompts-List", "server", ("prompts/list",),
       ("schema-result", "capability-server-undeclared")),
    _R("prompts-get-with-args", "MCP-Prompts-Get", "server", ("prompts/get",),
       ("schema-result",)),
    _R("resources-list", "MCP-Resources-List", "server", ("resources/list",),
       ("schema-result", "capability-server-undeclared")),
    _R("resources-read-text", "MCP-Resources-Read", "server", ("resources/read",),
       ("schema-result", "retired-error-code")),
    _R("resources-templates-read", "MCP-Resources-Templates", "server",
       ("resources/templates/list",), ("schema-result",)),
    _R("resources-subscribe", "MCP-Resources-Subscribe", "server",
       ("resources/subscribe", "resources/unsubscribe"),
       ("schema-result", "capability-server-undeclared")),
    _R("json-schema-2020-12-tool-found", "SEP-1613", "server", ("tools/list",),
       ("schema-result",)),
)

def conformance_ids(code: str) -> list[str]:
    """The suite's check ids (with their spec reference) that rule ``code`` judges.

    >>> conformance_ids("ping-result-not-empty")
    ['ping (MCP-Ping)']
    """
    return [f"{q.id} ({q.spec_ref})" for q in REQUIREMENTS if code in q.rules]


COLUMNS = ["peer", "role", "requirement", "spec_ref", "status", "rules", "first_seq",
           "exchanges"]


def _peers(trace: Any) -> dict[Any, dict[str, str]]:
    """session -> {"client": name, "server": name} from initialize (or 2026 _meta and
    server/discover)."""
    out: dict[Any, dict[str, str]] = {}
    p = trace.pairs
    for session, req, resp, method in zip(p["session"], p["request_seq"], p["response_seq"],
                                          p["method"], strict=True):
        if method not in ("initialize", "server/discover") or pd.isna(req):
            continue
        got = out.setdefault(session, {})
        q = trace.message(int(req)) or {}
        params = q.get("params") if isinstance(q, dict) else None
        info = params.get("clientInfo") if isinstance(params, dict) else None
        if isinstance(info, dict) and info.get("name"):
            got.setdefault("client", str(info["name"]))
        if not pd.isna(resp):
            r = trace.message(int(resp)) or {}
            result = r.get("result") if isinstance(r, dict) else None
            info = result.get("serverInfo") if isinstance(result, dict) else None
            if isinstance(info, dict) and info.get("name"):
                got.setdefault("server", str(info["name"]))
    return out


def conformance(trace: Any) -> pd.DataFrame:
    """One row per peer and requirement: ``kept``, ``broken`` or ``not exercised``."""
    from . import check

    f, p = trace.frames, trace.pairs
    method_of: dict[int, str] = {int(s): m for s, m, k in zip(f["seq"], f["method"], f["kind"],
                                                              strict=True)
                                 if isinstance(m, str) and k in ("request", "notification")}
    for r, m in zip(p["response_seq"], p["method"], strict=True):
        if not pd.isna(r) and isinstance(m, str):
            method_of[int(r)] = m
    session_of = dict(zip(f["seq"].astype(int), f["session"], strict=True))
    sent_by = {int(s): ("client" if d == "c2s" else "server" if d == "s2c" else None)
               for s, d in zip(f["seq"], f["direction"], strict=True)}
    found = [(str(r), int(s)) for r, s in zip(trace.violations["rule"], trace.violations["seq"],
                                              strict=True)]
    found += [(x.rule, x.seq) for x in check(trace)]
    peers = _peers(trace)
    by_peer: dict[tuple[str, str], dict[str, Any]] = {}
    for seq, method in method_of.items():
        names = peers.get(session_of.get(seq), {})
        for role in ("server", "client"):
            peer = names.get(role, f"unnamed {role}")
            by_peer.setdefault((peer, role), {}).setdefault(method, []).append(seq)
    for names in peers.values():
        for role, peer in names.items():
            by_peer.setdefault((peer, role), {})
    rows: list[tuple[Any, ...]] = []
    for (peer, role), methods in sorted(by_peer.items()):
        seqs_of_peer = {s for ss in methods.values() for s in ss if sent_by.get(s) == role}
        for req in REQUIREMENTS:
            if req.role != role:
                continue
            exchanges = sorted(s for m in req.methods for s in methods.get(m, []))
            if not exchanges:
                rows.append((peer, role, req.id, req.spec_ref, "not exercised", "", None, 0))
                continue
            mine = set(exchanges) & seqs_of_peer
            hits = sorted((s, r) for r, s in found if r in req.rules and s in mine)
            status = "broken" if hits else "kept"
            rules = ", ".join(sorted({r for _, r in hits}))
            rows.append((peer, role, req.id, req.spec_ref, status, rules,
                         hits[0][0] if hits else None, len(exchanges)))
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["first_seq"] = pd.array(out["first_seq"], dtype="Int64")
    return out
