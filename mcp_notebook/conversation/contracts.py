"""Tool, prompt and resource contracts within a session.

What a server listed is the contract of its later calls: ``tools/call`` arguments against
the ``inputSchema`` of that tool in the latest ``tools/list`` answer before the call (in
the tool schema's own dialect: its ``$schema``, else JSON Schema 2020-12 as 2025-11-25
says), a call of a tool the list did not hold, ``structuredContent`` against the tool's
``outputSchema`` (not when ``isError``), ``prompts/get`` arguments against the prompt's
declared arguments, and ``resources/read`` of a URI neither listed nor matching a listed
template. Up to 2025-11-25 the scope is the session; in 2026-07-28 (no sessions) it is the
capture. Nothing is judged before the first list of its kind was answered.

This module holds the rules and their checks (:data:`RULES`, :data:`CHECKS`, one check per
rule); the checks are in ``_contract_tools`` (``tools/call``) and ``_contract_prompts``
(``prompts/get``, ``resources/read``), built on the list walks (``_contract_lists``) and
the schema validation (``_contract_shapes``).
"""

from __future__ import annotations

import json as json  # the tests read contracts.json, as before the split

from ..protocol.rules import Rule
from ._contract_lists import _at as _at  # the helpers named here before the split
from ._contract_lists import _latest as _latest
from ._contract_lists import _latest_at as _latest_at
from ._contract_lists import listed
from ._contract_prompts import _prompts, _resources
from ._contract_shapes import _accepts_all as _accepts_all
from ._contract_shapes import _array_validator as _array_validator
from ._contract_shapes import tool_validator
from ._contract_tools import _arguments, _not_listed, _output

__all__ = ["RULES", "CHECKS", "listed", "tool_validator"]

_TOOLS = "MCP 2025-06-18, server/tools.mdx"

RULES: tuple[Rule, ...] = (
    Rule("tool-arguments-schema", "warning", "tools/call arguments match the tool's inputSchema",
         "inputSchema: JSON Schema defining expected parameters", f"{_TOOLS} §Tool",
         "The arguments break the inputSchema the server listed for this tool (pointer and "
         "expectation in the detail): a model or client sent the wrong shape. Fix the call; "
         "the server should answer it as a tool error (isError) it can correct.",
         topic="contracts"),
    Rule("tool-not-listed", "warning", "tools/call names a listed tool",
         "Unknown tools", f"{_TOOLS} §Error Handling (protocol errors)",
         "The session's latest tools/list did not hold this tool: a typo, a stale list, or "
         "a tool removed (listen for notifications/tools/list_changed and list again).",
         topic="contracts"),
    Rule("tool-output-schema", "error", "structuredContent matches the tool's outputSchema",
         "Servers MUST provide structured results that conform to this schema.",
         f"{_TOOLS} §Output Schema",
         "The tool declared an outputSchema; its structuredContent is missing or breaks it "
         "(not checked when isError is true).", versions=("2025-06-18", "2025-11-25",
                                                           "2026-07-28"),
         topic="contracts"),
    Rule("prompt-arguments", "warning", "prompts/get arguments match the prompt's arguments",
         "arguments: Optional list of arguments for customization",
         "MCP 2025-06-18, server/prompts.mdx §Prompt",
         "A required argument of the listed prompt is missing, or an argument it does not "
         "declare was sent (the detail says which). Send the declared arguments as strings.",
         topic="contracts"),
    Rule("resource-not-listed", "info", "resources/read of a listed URI or template",
         "Resource templates allow servers to expose parameterized resources using URI "
         "templates.", "MCP 2025-06-18, server/resources.mdx §Resource Templates",
         "The URI is neither in the latest resources/list nor matches a listed template. "
         "Legal (servers may serve more than they list), but worth a look.",
         topic="contracts"),
)


CHECKS = {"tool-arguments-schema": lambda view: view.memo("tool-arguments-schema", _arguments), "tool-not-listed": _not_listed,
          "tool-output-schema": _output, "prompt-arguments": _prompts,
          "resource-not-listed": _resources}
