"""The rule catalogue: every envelope and exchange rule the checker knows, as data.

Each rule has a stable code, a severity, the protocol versions it applies to, the spec
sentence it enforces (quoted) with its source, and advice on what to do. The checks
themselves are in :mod:`mcp_notebook.engine.rules`; ``docs/rules.md`` is generated from
this table (``python -m mcp_notebook.protocol.rules``).

Sources: [JRPC] is the JSON-RPC 2.0 Specification (jsonrpc.org/specification, 2013-01-04);
[MCP <version>] is the Model Context Protocol specification of that version
(modelcontextprotocol.io/specification/<version>; github.com/modelcontextprotocol/
modelcontextprotocol, ``docs/specification/<version>/...`` and ``schema/<version>/schema.json``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from .versions import VERSIONS

__all__ = ["Rule", "RULES", "Catalogue", "rule", "render_markdown", "ALL", "UP_TO_2025_11_25"]

ALL: tuple[str, ...] = VERSIONS
UP_TO_2025_11_25: tuple[str, ...] = VERSIONS[:4]
ONLY_2026: tuple[str, ...] = VERSIONS[4:]


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str  # error | warning | info
    title: str
    spec: str  # the sentence, quoted
    source: str  # where it is
    advice: str  # what to do
    versions: tuple[str, ...] = ALL
    topic: str = "envelope"  # envelope | pairing | notifications | cancel-progress | lifecycle
    quoted: bool = True  # False: ``spec`` states a schema constraint, not a sentence of prose

    @property
    def cite(self) -> str:
        """The spec text with its source: quoted when it is the spec's own sentence."""
        text = f"“{self.spec}”" if self.quoted else self.spec
        return f"{text} ({self.source})"


#: packages that register rules and checks when imported, read with the engine's rule
#: modules on the catalogue's first read: the conversation checker (issue 17)
EXTENSIONS: list[str] = ["mcp_notebook.conversation"]


class Catalogue(Sequence[Rule]):
    """The rules, in the order they were declared: those of this module, then those
    registered (:meth:`register`) by the rule modules of the engine
    (:mod:`mcp_notebook.engine.rules`, imported on first read) and by other packages."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules: list[Rule] = []
        self._by_code: dict[str, Rule] = {}
        self._complete = False
        for r in rules:
            self.register(r)

    def register(self, r: Rule) -> Rule:
        """Add a rule (its code must be new, or name this very rule); returns it."""
        had = self._by_code.get(r.code)
        if had is not None and had != r:
            raise ValueError(f"rule code {r.code!r} is taken by another rule")
        if had is None:
            self._rules.append(r)
            self._by_code[r.code] = r
        return r

    def _all(self) -> list[Rule]:
        if not self._complete:  # the engine's rule modules register theirs on import
            self._complete = True
            importlib.import_module("mcp_notebook.engine.checks").load_rule_modules()
            for name in EXTENSIONS:  # packages of rules above the engine (they read payloads)
                importlib.import_module(name)
        return self._rules

    def get(self, code: str) -> Rule | None:
        self._all()
        return self._by_code.get(code)

    @overload
    def __getitem__(self, i: int) -> Rule: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Rule]: ...
    def __getitem__(self, i: int | slice) -> Rule | Sequence[Rule]:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Rule]:
        return iter(list(self._all()))

    def __repr__(self) -> str:
        return f"<Catalogue of {len(self)} rules>"


_R = Rule
_JRPC = "JSON-RPC 2.0 Specification"

RULES: Catalogue = Catalogue((
    # -- one frame, one JSON value -------------------------------------------------------
    _R("parse-error", "error", "A frame is one parsable JSON value",
       "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
       "MCP 2025-06-18, basic/index.mdx",
       "The frame is not valid JSON (truncated, NaN, trailing comma, junk on stdout). "
       "A stdio peer must write only JSON-RPC messages, one per line; logs go to stderr."),
    _R("not-an-object", "error", "A message is a JSON object",
       "A rpc call is represented by sending a Request object to a Server.",
       f"{_JRPC}, §4",
       "Send each message as one JSON object (an array only as a batch in 2025-03-26)."),
    _R("not-a-message", "error", "An object is a request, notification or response",
       "A message is a Request (method and id), a Notification (method, no id) or a Response "
       "(id, with result or error).", f"{_JRPC}, §4-§5",
       "The object has none of method, id, result or error: it is not JSON-RPC.", quoted=False),
    _R("jsonrpc-version", "error", "jsonrpc is exactly \"2.0\"",
       "A String specifying the version of the JSON-RPC protocol. MUST be exactly \"2.0\".",
       f"{_JRPC}, §4 and §5",
       "Add \"jsonrpc\": \"2.0\" to every message."),
    _R("method-not-string", "error", "method is a string",
       "method: A String containing the name of the method to be invoked.",
       f"{_JRPC}, §4", "Send the method name as a JSON string."),
    _R("reserved-method", "warning", "rpc.* method names are reserved",
       "Method names that begin with the word rpc followed by a period character (U+002E or "
       "ASCII 46) are reserved for rpc-internal methods and extensions and MUST NOT be used for "
       "anything else.", f"{_JRPC}, §4", "Rename the method."),
    _R("params-not-object", "error", "params is an object",
       "params?: { [key: string]: unknown; }",
       "MCP 2025-06-18, basic/index.mdx §Requests and §Notifications (the message shapes)",
       "Send params as a JSON object (positional arrays are not MCP), or leave them out."),
    _R("mixed-request-response", "error", "A message is a request or a response, not both",
       "Either the result member or error member MUST be included, but both members MUST NOT be "
       "included.", f"{_JRPC}, §5",
       "A message with method is a request or notification; it must not carry result/error."),
    # -- the response envelope -----------------------------------------------------------
    _R("response-neither", "error", "A response carries result or error",
       "Either the result member or error member MUST be included, but both members MUST NOT be "
       "included.", f"{_JRPC}, §5",
       "Answer with {\"result\": {...}} on success or {\"error\": {code, message}} on failure."),
    _R("result-and-error", "error", "A response carries exactly one of result and error",
       "Either the result member or error member MUST be included, but both members MUST NOT be "
       "included.", f"{_JRPC}, §5",
       "The response has both; the checker treats error as authoritative. Send only one."),
    _R("result-not-object", "error", "result is an object, even when empty",
       "Results MAY follow any JSON object structure, while errors MUST include an error code "
       "and message at minimum.", "MCP 2025-06-18, basic/index.mdx §Responses",
       "Return an object, {} when there is nothing to say (e.g. ping). Never null, a "
       "string, a number or an array."),
    _R("error-not-object", "error", "error is an object",
       "The value for this member MUST be an Object as defined in section 5.1.",
       f"{_JRPC}, §5 (error)", "Send error as {\"code\": <int>, \"message\": <string>}."),
    _R("error-code-not-integer", "error", "error.code is an integer",
       "Error codes MUST be integers.", "MCP 2025-06-18, basic/index.mdx §Responses", "Use an integer code such as -32602 (Invalid params)."),
    _R("error-message-not-string", "error", "error.message is a string",
       "Results MAY follow any JSON object structure, while errors MUST include an error code "
       "and message at minimum.", "MCP 2025-06-18, basic/index.mdx §Responses", "Add a short human-readable message string."),
    _R("unknown-error-code", "info", "error codes by version",
       "The error codes from and including -32768 to -32000 are reserved for pre-defined errors.",
       f"{_JRPC}, §5.1",
       "This reserved-range code is not defined by JSON-RPC or by this MCP version; "
       "use a defined code or one outside -32768..-32000."),
    _R("reserved-error-code-2026", "error", "MCP's reserved error range (2026)",
       "-32020 to -32099 is reserved for the MCP specification; codes it does not define must not "
       "be emitted.", "MCP 2026-07-28, basic/index.mdx §Error Codes",
       "Use a code the 2026-07-28 spec defines, or an application code outside the range.",
       versions=ONLY_2026, quoted=False),
    # -- ids --------------------------------------------------------------------------------
    _R("request-id-type", "error", "Request ids are strings or integers, never null",
       "Requests MUST include a string or integer ID. Unlike base JSON-RPC, the ID MUST NOT be "
       "null.", "MCP 2025-06-18, basic/index.mdx §Requests",
       "Use a string or an integer id (not null, a fraction, a boolean, an array or an object)."),
    _R("result-id-null", "error", "A result names its request",
       "Responses MUST include the same ID as the request they correspond to.",
       "MCP 2025-06-18, basic/index.mdx §Responses",
       "Only an error for a request whose id could not be read may have a null or no id."),
    _R("error-id-null", "info", "A null id only when the request id could not be read",
       "If there was an error in detecting the id in the Request object (e.g. Parse "
       "error/Invalid Request), it MUST be Null.", f"{_JRPC}, §5",
       "Legal for -32700/-32600 errors; for any other error, echo the request's id."),
    _R("error-id-absent", "warning", "An error response has an id (before 2025-11-25)",
       "JSONRPCError requires jsonrpc, id and error.",
       "MCP schema.json 2024-11-05 to 2025-06-18, JSONRPCError.required",
       "Send \"id\": null when the request id could not be read.",
       versions=VERSIONS[:3], quoted=False),
    _R("big-id", "warning", "Ids above 2^53 are at risk",
       "Note that when such software is used, numbers that are integers and are in the range "
       "[-(2**53)+1, (2**53)-1] are interoperable in the sense that implementations will agree "
       "exactly on their numeric values.", "RFC 8259, §6 Numbers",
       "An integer id above 2^53 is silently rounded by peers that parse JSON numbers as "
       "doubles (JavaScript, many JSON libraries). Prefer small integers or strings."),
    _R("id-type-mismatch", "error", "A response id mirrors the request id in type and value",
       "id: ... It MUST be the same as the value of the id member in the Request Object.",
       f"{_JRPC}, §5",
       "Echo the id exactly as received: 1 and \"1\" are different ids."),
    _R("request-id-reused", "error", "Request ids are unique per sender per session",
       "The request ID MUST NOT have been previously used by the requestor within the same "
       "session.", "MCP 2025-06-18, basic/index.mdx §Requests",
       "Use a fresh id for every request (a counter per side is the usual way).",
       versions=UP_TO_2025_11_25, topic="pairing"),
    _R("request-id-in-flight", "error", "No two requests in flight share an id",
       "MUST NOT match the ID of any other request the sender has issued and not yet received "
       "a response for", "MCP 2026-07-28, basic/index.mdx §Requests",
       "The same side reused an id that is still waiting for its response; the two answers "
       "cannot be told apart.", topic="pairing"),
    # -- one response per request -------------------------------------------------------
    _R("duplicate-response", "error", "One response per request, never two",
       "When a rpc call is made, the Server MUST reply with a Response, except for in the case "
       "of Notifications. The Response is expressed as a single JSON Object", f"{_JRPC}, §5",
       "The request was already answered: one request, one Response. A failure after the "
       "answer went out is logged locally, never sent as a second message. Look for a "
       "retried write or a replayed stream.",
       topic="pairing"),
    _R("orphan-response", "warning", "Every response answers a request",
       "Responses MUST include the same ID as the request they correspond to.",
       "MCP 2025-06-18, basic/index.mdx §Responses",
       "No request with this id was seen from the other side. The capture may have started "
       "late, or the id was changed.", topic="pairing"),
    _R("unanswered-request", "warning", "Every request gets a response",
       "When a rpc call is made, the Server MUST reply with a Response, except for in the case "
       "of Notifications.", f"{_JRPC}, §5",
       "No response was captured. The call may hang, have timed out, or the capture ended "
       "first.", topic="pairing"),
    _R("unanswered-after-close", "info", "No answer once the other side has closed",
       "For the stdio transport, the client SHOULD initiate shutdown by: First, closing the "
       "input stream to the child process (the server)",
       "MCP 2025-06-18, basic/lifecycle.mdx §Shutdown",
       "The request was sent after the side that should answer it had closed (the capture "
       "tool recorded it, e.g. the client closing the server's input at shutdown): no answer "
       "could come. Nothing to fix unless the request should have been sent earlier.",
       topic="pairing"),
    # -- notifications -------------------------------------------------------------------------
    _R("notification-with-id", "error", "Notifications carry no id",
       "Notifications MUST NOT include an ID.", "MCP 2025-06-18, basic/index.mdx §Notifications",
       "A notifications/* method was sent with an id, which makes it a request. Drop the id.",
       topic="notifications"),
    _R("notification-answered", "error", "Notifications get no reply",
       "The receiver MUST NOT send a response.", "MCP 2025-06-18, basic/index.mdx §Notifications",
       "A response was sent to a notification. Do not answer notifications.",
       topic="notifications"),
    _R("batch-not-allowed", "error", "Batches only in 2025-03-26",
       "Implementations MAY support sending JSON-RPC batches, but MUST support receiving "
       "JSON-RPC batches.", "MCP 2025-03-26, basic/index.mdx §Batching (removed in 2025-06-18)",
       "Batching exists only in 2025-03-26; send one message per frame.",
       versions=("2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28")),
    _R("batch-empty", "error", "A batch is never empty",
       "If the batch rpc call itself fails to be recognized as an valid JSON or as an Array "
       "with at least one value, the response from the Server MUST be a single Response "
       "object.", f"{_JRPC}, §6", "Do not send []."),
    # -- cancellation and progress ---------------------------------------------------------
    _R("response-after-cancel", "info", "A response after a cancel: expected only as a race",
       "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; "
       "Free associated resources; Not send a response for the cancelled request",
       "MCP 2025-06-18, basic/utilities/cancellation.mdx §Behavior Requirements",
       "The receiver SHOULD NOT answer a cancelled request; an answer already on its way when "
       "the cancel arrived is the expected race, and the sender of the cancel SHOULD ignore "
       "it. Answering after reading the cancel (as an SDK's -32800 does) goes against the "
       "SHOULD NOT.",
       topic="cancel-progress"),
    _R("cancel-after-response", "info", "A cancel after the response is a race",
       "Due to network latency, cancellation notifications may arrive after request processing "
       "has completed, and potentially after a response has already been sent.",
       "MCP 2025-06-18, basic/utilities/cancellation.mdx",
       "Legal race: the cancel crossed the answer. Nothing to fix.", topic="cancel-progress"),
    _R("cancel-unknown-request", "warning", "A cancel names a request of the same side",
       "Cancellation notifications MUST only reference requests that: Were previously issued "
       "in the same direction; Are believed to still be in-progress",
       "MCP 2025-06-18, basic/utilities/cancellation.mdx",
       "requestId names no request this side sent. Check the id and its type.",
       topic="cancel-progress"),
    _R("cancel-initialize", "error", "initialize is never cancelled",
       "The initialize request MUST NOT be cancelled by clients",
       "MCP 2025-06-18, basic/utilities/cancellation.mdx",
       "Do not cancel initialize; close the connection instead.", versions=UP_TO_2025_11_25,
       topic="cancel-progress"),
    _R("progress-unknown-token", "warning", "Progress names an active request's token",
       "Progress notifications MUST only reference tokens that: Were provided in an active "
       "request; Are associated with an in-progress operation.",
       "MCP 2025-06-18, basic/utilities/progress.mdx",
       "No request in flight from the other side carries this progressToken.",
       topic="cancel-progress"),
    _R("progress-after-response", "warning", "No progress after the response",
       "Progress notifications MUST only reference tokens that: Were provided in an active "
       "request; Are associated with an in-progress operation.",
       "MCP 2025-06-18, basic/utilities/progress.mdx",
       "The request already got its response; stop sending progress for it.",
       topic="cancel-progress"),
    _R("progress-not-increasing", "warning", "Progress increases",
       "The progress value MUST increase with each notification, even if the total is unknown.",
       "MCP 2025-06-18, basic/utilities/progress.mdx",
       "Send a larger progress value each time.", topic="cancel-progress"),
    # -- methods, directions, lifecycle ---------------------------------------------------
    _R("unknown-method", "info", "Methods the version defines",
       "The method is in none of this version's ClientRequest, ServerRequest, ClientNotification "
       "or ServerNotification unions.", "MCP schema.json of the version",
       "A custom or misspelled method, or one from another protocol version.",
       topic="lifecycle", quoted=False),
    _R("wrong-direction", "warning", "Each method travels in its direction",
       "The method belongs to the other side's union (ClientRequest vs ServerRequest, "
       "ClientNotification vs ServerNotification).", "MCP schema.json of the version",
       "Check which side sent it (e.g. sampling/createMessage is a server-to-client request).",
       topic="lifecycle", quoted=False),
    _R("lifecycle-order", "warning", "initialize comes first",
       "The initialization phase MUST be the first interaction between client and server.",
       "MCP 2025-06-18, basic/lifecycle.mdx", "The client sent requests (other than ping) "
       "before initialize.", versions=UP_TO_2025_11_25, topic="lifecycle"),
    _R("ping-result-not-empty", "warning", "ping is answered with an empty result",
       "The receiver MUST respond promptly with an empty response",
       "MCP 2025-06-18, basic/utilities/ping.mdx", "Answer ping with {\"result\": {}}.",
       versions=UP_TO_2025_11_25),
    _R("result-type-missing", "error", "A 2026 result says its resultType",
       "Result.required includes resultType (\"complete\" or \"input_required\").",
       "MCP 2026-07-28, basic/index.mdx §ResultType; schema.json Result",
       "Add \"resultType\": \"complete\" to every result.", versions=ONLY_2026, quoted=False),
    _R("request-meta-missing", "error", "A 2026 request carries its _meta",
       "RequestParams.required includes _meta, which carries "
       "io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities.",
       "MCP 2026-07-28, basic/index.mdx §_meta; schema.json RequestParams",
       "Send params._meta with the protocol version and client capabilities.",
       versions=ONLY_2026, quoted=False),
    _R("server-request-2026", "error", "In 2026 the server sends no requests",
       "In 2026-07-28 servers never send JSON-RPC requests; they return InputRequiredResult "
       "instead.", "MCP 2026-07-28, basic/patterns/mrtr.mdx; basic/transports/streamable-http.mdx",
       "Return an InputRequiredResult instead of a server-to-client request.",
       versions=ONLY_2026, topic="lifecycle", quoted=False),
    # -- what capture readers report ---------------------------------------------------------
    _R("stdout-noise", "error", "Only MCP messages on the server's stdout",
       "The server MUST NOT write anything to its stdout that is not a valid MCP message.",
       "MCP 2025-06-18, basic/transports.mdx §stdio",
       "Send logs to stderr; the client cannot parse this line."),
    _R("sse-non-message-event", "warning", "Server messages travel as SSE message events",
       "Server messages are sent as SSE `message` events, with the message content encoded as "
       "JSON in the event data.", "MCP 2024-11-05, basic/transports.mdx §HTTP with SSE",
       "This SSE event has another event type, so a client listening for `message` events "
       "drops it. Send JSON-RPC messages as `message` events (or with no event field)."),
    _R("ambiguous-pairing", "warning", "Overlapping connections cannot be told apart",
       "The request ID MUST NOT have been previously used by the requestor within the same "
       "session.", "MCP 2025-06-18, basic/index.mdx §Requests",
       "Two connections to the same server overlap in this log and reuse the same ids; "
       "pairs in the overlap are a best guess.", topic="pairing"),
    _R("unreadable-record", "error", "Every record of the capture can be read",
       "A capture holds records of its format only (a tap file: one JSON object "
       "{ts, dir, raw} per line); a record that cannot be read is neither side's message "
       "and cannot be checked.", "mcp-notebook capture formats (`mcp-notebook formats`)",
       "The reason says what is wrong. A tap file holds only what `mcp-notebook record` "
       "wrote: look for a file that was edited, cut short or joined with other text.",
       quoted=False),
))


def rule(code: str) -> Rule:
    """The rule with this code.

    >>> rule("result-and-error").severity
    'error'
    """
    got = RULES.get(code)
    if got is None:
        raise KeyError(code)
    return got


def render_markdown() -> str:
    """``docs/rules.md``: the catalogue as a page."""
    lines = [
        "# Rules",
        "",
        "Generated from `mcp_notebook/protocol/rules.py` by `python -m mcp_notebook.protocol.rules`;"
        " a test keeps it current. Severity: **error** a MUST broken, **warning** a SHOULD or a"
        " likely bug, **info** legal but worth seeing.",
        "",
        "| code | severity | versions | rule | spec |",
        "|---|---|---|---|---|",
    ]
    for r in RULES:
        versions = "all" if r.versions == ALL else ", ".join(r.versions)
        spec = r.cite.replace("|", "\\|")
        lines.append(f"| `{r.code}` | {r.severity} | {versions} | {r.title} | {spec} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(render_markdown(), end="")
