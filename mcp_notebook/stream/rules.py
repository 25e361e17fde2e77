"""Which rules of the catalogue run in streaming mode (see :mod:`mcp_notebook.stream`)."""

from __future__ import annotations

from ..protocol.rules import RULES

__all__ = ["FRAME_RULES", "WALK_RULES", "STREAMED", "not_streamed"]

#: the rules of one frame, run on each chunk by the catalogue's own checks
FRAME_RULES = (
    "parse-error", "not-an-object", "not-a-message", "jsonrpc-version", "method-not-string",
    "reserved-method", "params-not-object", "mixed-request-response", "response-neither",
    "result-and-error", "result-not-object", "error-not-object", "error-code-not-integer",
    "error-message-not-string", "request-id-type", "batch-empty", "error-id-null",
    "error-id-absent", "batch-not-allowed", "big-id", "notification-with-id",
    "unknown-method", "wrong-direction", "unknown-error-code", "reserved-error-code-2026",
    "result-type-missing", "request-meta-missing", "server-request-2026", "stdout-noise",
    "ambiguous-pairing", "sse-non-message-event", "unreadable-record", "initialize-in-batch")
WALK_RULES = (
    "id-type-mismatch", "request-id-reused", "request-id-in-flight", "duplicate-response",
    "orphan-response", "response-after-cancel", "cancel-after-response",
    "cancel-unknown-request", "cancel-initialize", "progress-unknown-token",
    "progress-after-response", "progress-not-increasing", "unanswered-request",
    "unanswered-after-close", "notification-answered", "ping-result-not-empty",
    "lifecycle-order", "result-id-null")
STREAMED = frozenset(FRAME_RULES + WALK_RULES)


def not_streamed() -> list[str]:
    """The catalogue's rules that do not run in streaming mode."""
    return [r.code for r in RULES if r.code not in STREAMED]
