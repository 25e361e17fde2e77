"""Error semantics: which error answers which fault, by version.

A request whose params break the method's schema is answered with -32602 (Invalid
params), a method the version does not define with -32601 (Method not found), and, from
2025-11-25 on, a ``tools/call`` whose arguments break the tool's ``inputSchema`` with a
result that sets ``isError`` (a tool execution error the model can correct), not with a
JSON-RPC error.
"""

from __future__ import annotations

import numpy as np

from ..protocol import versions as V
from ..protocol.rules import Rule
from ._view import ERROR, Hit, View
from .schemas import params_hits

__all__ = ["RULES", "CHECKS"]

_JRPC = "JSON-RPC 2.0 Specification, §5.1"
_FROM_1125 = V.VERSIONS[3:]

RULES: tuple[Rule, ...] = (
    Rule("invalid-params-code", "warning", "Invalid params are answered with -32602",
         "-32602 Invalid params: Invalid method parameter(s).", _JRPC,
         "The request broke the method's schema (see its schema-params finding) and the "
         "answer is an error with another code: answer invalid params with -32602.",
         topic="errors"),
    Rule("unknown-method-code", "warning", "Unknown methods are answered with -32601",
         "-32601 Method not found: The method does not exist / is not available.", _JRPC,
         "The method is not one of this version's and the answer is an error with another "
         "code: answer methods you do not implement with -32601.", topic="errors"),
    Rule("tool-input-error-as-protocol-error", "warning",
         "Tool input validation failures are tool results with isError",
         "Tool Execution Errors: Reported in tool results with isError: true: ... Input "
         "validation errors (e.g., date in wrong format, value out of range)",
         "MCP 2025-11-25, server/tools.mdx §Error Handling",
         "The arguments broke the tool's inputSchema and the server answered with a JSON-RPC "
         "error; from 2025-11-25 return a CallToolResult with isError: true and a message "
         "the model can act on (2025-06-18 and before listed invalid arguments as a "
         "protocol error).", versions=_FROM_1125, topic="errors"),
)


def _code(view: View, seq: int) -> int | None:
    return view.error_code(seq)


def _invalid_params(view: View) -> list[Hit]:
    out: list[Hit] = []
    for h in params_hits(view):
        resp = view.response_of.get(h.seq)
        if resp is None or view.vi.kind[resp] != ERROR:
            continue
        code = _code(view, resp)
        if code is not None and code != -32602:
            out.append(Hit(resp, h.seq, f"{view.method(h.seq)} with invalid params answered "
                           f"with {code}"))
    return out


def _unknown_method(view: View) -> list[Hit]:
    out: list[Hit] = []
    req, resp = view.answered_arrays(None, kind="error")
    if not len(req):
        return out
    vi = view.vi
    pairs = list(zip(vi.method[req].tolist(), np.asarray(vi.session)[req].tolist(),
                     strict=True))
    # decided once per distinct (method, session): a method no version has
    unknown: dict[tuple[int, int], bool] = {}
    for m, s in set(pairs):
        method = vi.method_cats[m] if m >= 0 else None
        unknown[(m, s)] = method is not None and \
            method not in V.methods(V.normalise(vi.version_of(s))) and \
            not any(method in V.methods(v) for v in V.VERSIONS)  # else removed-method's
    pick = [k for k, ms in enumerate(pairs) if unknown[ms]]
    for k in pick:
        q, r = int(req[k]), int(resp[k])
        code = _code(view, r)
        if code is not None and code != -32601:
            out.append(Hit(r, q, f"{view.method(q)} answered with {code}"))
    return out


def _tool_input(view: View) -> list[Hit]:
    from .contracts import CHECKS as contract_checks

    out: list[Hit] = []
    for h in view.memo("tool-arguments-schema", contract_checks["tool-arguments-schema"]):
        resp = view.response_of.get(h.seq)
        if resp is None or view.vi.kind[resp] != ERROR:
            continue
        out.append(Hit(resp, h.seq, f"{h.detail}; answered with error {_code(view, resp)}"))
    return out


CHECKS = {"invalid-params-code": _invalid_params, "unknown-method-code": _unknown_method,
          "tool-input-error-as-protocol-error": _tool_input}
