"""The vocabulary, declared once: frame kinds, directions, pair outcomes and the pairing
walk's findings, as enums whose values are the codes of the column store and of the C
extension.

The C header ``csrc/vocab.h`` is generated from this module (:func:`c_header`; setup.py
writes it before each build, and a test holds the committed file equal to it), so the C
walks and the Python side cannot drift apart. The names are the strings of the tables'
categorical columns (``frames.kind``, ``pairs.outcome``, ``violations.rule``).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Kind", "Direction", "Outcome", "PairFinding", "KINDS", "DIRECTIONS",
           "OUTCOMES", "FINDINGS", "c_header"]


class Kind(IntEnum):
    """What a frame is (``frames.kind``)."""

    REQUEST = 0
    NOTIFICATION = 1
    RESULT = 2
    ERROR = 3
    INVALID = 4  # not a JSON-RPC message (its reason says why)
    STDERR = 5  # a server's stderr line
    LOG = 6  # a capture tool's own record

    @property
    def label(self) -> str:
        return self.name.lower()


class Direction(IntEnum):
    """Who sent a frame (``frames.direction``); code -1 is unknown (no side)."""

    C2S = 0
    S2C = 1

    @property
    def label(self) -> str:
        return self.name.lower()


class Outcome(IntEnum):
    """How a request ended, or what a response row is (``pairs.outcome``)."""

    RESULT = 0
    ERROR = 1
    TOOL_ERROR = 2
    UNANSWERED = 3
    CANCELLED = 4
    ORPHAN = 5
    DUPLICATE = 6

    @property
    def label(self) -> str:
        return self.name.lower()


class PairFinding(IntEnum):
    """The findings of the pairing walk, as the C walk numbers them; ``label`` is the rule
    code each is reported under."""

    REQUEST_ID_IN_FLIGHT = 0
    REQUEST_ID_REUSED = 1
    RESPONSE_AFTER_CANCEL = 2
    DUPLICATE_RESPONSE = 3
    ID_TYPE_MISMATCH = 4
    ORPHAN_RESPONSE = 5
    CANCEL_INITIALIZE = 6
    CANCEL_AFTER_RESPONSE = 7
    CANCEL_UNKNOWN_REQUEST = 8
    PROGRESS_NOT_INCREASING = 9
    PROGRESS_AFTER_RESPONSE = 10
    PROGRESS_UNKNOWN_TOKEN = 11

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


#: the labels by code: ``KINDS[code]``
KINDS: tuple[str, ...] = tuple(k.label for k in Kind)
DIRECTIONS: tuple[str, ...] = tuple(d.label for d in Direction)
OUTCOMES: tuple[str, ...] = tuple(o.label for o in Outcome)
FINDINGS: tuple[str, ...] = tuple(f.label for f in PairFinding)

_C_PREFIX = {Kind: "K", Direction: "D", Outcome: "O", PairFinding: "PF"}

#: the methods whose requests the loader's call column keeps (the conversation rules read
#: their names, URIs and arguments)
CALL_METHODS: tuple[str, ...] = ("tools/call", "prompts/get", "resources/read", "tools/list",
                                 "prompts/list", "resources/list", "resources/templates/list")
#: the members of a result the loader's list column keeps (what a list answer lists)
LISTED: tuple[str, ...] = ("tools", "prompts", "resources", "resourceTemplates")
_C_STRINGS = {"CALL_METHODS": CALL_METHODS, "LISTED": LISTED}


def c_header() -> str:
    """The text of ``csrc/vocab.h``: one C enum per enum here, same names, same codes, and
    the string tables (``CALL_METHODS``, ``LISTED``) in their order."""
    out = ["/* Generated from mcp_notebook/protocol/vocab.py by setup.py: do not edit. */",
           "#ifndef MCP_NOTEBOOK_VOCAB_H", "#define MCP_NOTEBOOK_VOCAB_H", ""]
    for enum, prefix in _C_PREFIX.items():
        out.append(f"/* {enum.__name__} */")
        out.append("enum {")
        out += [f"    {prefix}_{m.name} = {int(m)}," for m in enum]
        out += ["};", ""]
    for name, texts in _C_STRINGS.items():
        out.append(f"/* {name} */")
        out.append(f"#define N_{name} {len(texts)}")
        out.append(f"static const char *const {name}[N_{name}] = {{")
        out += [f'    "{t}",' for t in texts]
        out += ["};", ""]
    out.append("#endif")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(c_header(), end="")
