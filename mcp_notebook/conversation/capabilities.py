"""Negotiated capabilities, both ways.

The general rule is the lifecycle sentence "Only use capabilities that were successfully
negotiated"; :data:`TABLE` lists its cases: each method or notification that needs a
capability of the other side, with the sentence that asks for it. Up to 2025-11-25 the
capabilities are those of the ``initialize`` exchange (the client's in the request, the
server's in the result); in 2026-07-28 the client's are those of each request's
``_meta["io.modelcontextprotocol/clientCapabilities"]`` (an ``inputRequests`` member of an
``InputRequiredResult`` is checked against the request it answers) and the server's are
those of its ``server/discover`` result. A session whose exchange was not captured is not
judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Any

import numpy as np

from ..engine.checks import MARK, NO_TEXT
from ..protocol import versions as V
from ..protocol.rules import ALL, UP_TO_2025_11_25, Rule
from ..protocol.versions import VERSIONS
from ._view import NOTIFICATION, REQUEST, RESULT, Hit, View

__all__ = ["RULES", "CHECKS", "TABLE", "Need", "declared"]

_LIFE = "MCP 2025-06-18, basic/lifecycle.mdx §Operation"
_FROM_0326 = VERSIONS[1:]
_FROM_1125 = VERSIONS[3:]
_ONLY_2026 = VERSIONS[4:]
CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"

RULES: tuple[Rule, ...] = (
    Rule("capability-server-undeclared", "error", "The client uses only what the server declared",
         "Only use capabilities that were successfully negotiated", _LIFE,
         "The client sent a method that needs a server capability the server did not "
         "declare (see the detail for the row and its sentence). Check the server's "
         "capabilities before calling, or declare the capability on the server.",
         topic="capabilities"),
    Rule("capability-client-undeclared", "error", "The server uses only what the client declared",
         "Only use capabilities that were successfully negotiated", _LIFE,
         "The server asked for something the client did not declare (sampling, elicitation "
         "or its mode, roots, ...): do not send it, or have the client declare it.",
         topic="capabilities"),
    Rule("capability-notification-undeclared", "warning",
         "Change notifications only with the declared sub-capability",
         "When the list of available tools changes, servers that declared the listChanged "
         "capability SHOULD send a notification", "MCP 2025-06-18, server/tools.mdx "
         "§List Changed Notification (same sentence for prompts and resources)",
         "A list_changed/updated notification came from a side that did not declare "
         "listChanged/subscribe: declare it, or do not send the notification.",
         versions=UP_TO_2025_11_25, topic="capabilities"),
)


@dataclass(frozen=True)
class Need:
    """A row: ``method`` sent by ``sender`` needs ``path`` in the other side's capabilities
    (a change notification: in its sender's own)."""

    method: str
    sender: str  # c2s: the client sends it, needs a server capability; s2c: the reverse
    path: tuple[str, ...]
    spec: str
    source: str
    versions: tuple[str, ...] = UP_TO_2025_11_25
    when: str | None = None  # a condition on the params (see _WHEN)
    rule: str = ""

    @property
    def code(self) -> str:
        if self.rule:
            return self.rule
        return "capability-server-undeclared" if self.sender == "c2s" else \
            "capability-client-undeclared"


_T = "MCP 2025-06-18, server/tools.mdx §Capabilities"
_P = "MCP 2025-06-18, server/prompts.mdx §Capabilities"
_RS = "MCP 2025-06-18, server/resources.mdx §Capabilities"
_TOOLS = "Servers that support tools MUST declare the tools capability"
_PROMPTS = "Servers that support prompts MUST declare the prompts capability during initialization"
_RES = "Servers that support resources MUST declare the resources capability"
_SUB = ("subscribe: whether the client can subscribe to be notified of changes to individual "
        "resources.")
_LOG = "Servers that emit log message notifications MUST declare the logging capability"
_COMP = "Servers that support completions MUST declare the completions capability"
_SAMP = "Clients that support sampling MUST declare the sampling capability during initialization"
_ELIC = "Clients that support elicitation MUST declare the elicitation capability during initialization"
_ROOTS = "Clients that support roots MUST declare the roots capability during initialization"
_LISTCH = ("listChanged: whether the server will emit notifications when the list of "
           "available {x} changes.")
_NOTIFY = "capability-notification-undeclared"

#: the cases of "only use capabilities that were successfully negotiated", by version
TABLE: tuple[Need, ...] = (
    Need("tools/list", "c2s", ("tools",), _TOOLS, _T, ALL),
    Need("tools/call", "c2s", ("tools",), _TOOLS, _T, ALL),
    Need("prompts/list", "c2s", ("prompts",), _PROMPTS, _P, ALL),
    Need("prompts/get", "c2s", ("prompts",), _PROMPTS, _P, ALL),
    Need("resources/list", "c2s", ("resources",), _RES, _RS, ALL),
    Need("resources/read", "c2s", ("resources",), _RES, _RS, ALL),
    Need("resources/templates/list", "c2s", ("resources",), _RES, _RS, ALL),
    Need("resources/subscribe", "c2s", ("resources", "subscribe"), _SUB, _RS),
    Need("resources/unsubscribe", "c2s", ("resources", "subscribe"), _SUB, _RS),
    Need("logging/setLevel", "c2s", ("logging",), _LOG,
         "MCP 2025-06-18, server/utilities/logging.mdx §Capabilities"),
    Need("notifications/message", "s2c", ("logging",), _LOG,
         "MCP 2025-06-18, server/utilities/logging.mdx §Capabilities", rule=_NOTIFY),
    Need("completion/complete", "c2s", ("completions",), _COMP,
         "MCP 2025-06-18, server/utilities/completion.mdx §Capabilities", _FROM_0326),
    Need("notifications/tools/list_changed", "s2c", ("tools", "listChanged"),
         _LISTCH.format(x="tools"), _T, rule=_NOTIFY),
    Need("notifications/prompts/list_changed", "s2c", ("prompts", "listChanged"),
         _LISTCH.format(x="prompts"), _P, rule=_NOTIFY),
    Need("notifications/resources/list_changed", "s2c", ("resources", "listChanged"),
         _LISTCH.format(x="resources"), _RS, rule=_NOTIFY),
    Need("notifications/resources/updated", "s2c", ("resources", "subscribe"), _SUB, _RS,
         rule=_NOTIFY),
    Need("sampling/createMessage", "s2c", ("sampling",), _SAMP,
         "MCP 2025-06-18, client/sampling.mdx §Capabilities"),
    Need("sampling/createMessage", "s2c", ("sampling", "tools"),
         "Servers MUST NOT send tool-enabled sampling requests to Clients that have not "
         "declared support for tool use via the sampling.tools capability.",
         "MCP 2025-11-25, client/sampling.mdx §Capabilities", _FROM_1125, when="tools"),
    Need("elicitation/create", "s2c", ("elicitation",), _ELIC,
         "MCP 2025-06-18, client/elicitation.mdx §Capabilities", VERSIONS[2:4]),
    Need("elicitation/create", "s2c", ("elicitation", "url"),
         "Servers MUST NOT send elicitation requests with modes that are not supported by "
         "the client.", "MCP 2025-11-25, client/elicitation.mdx §Capabilities", _FROM_1125,
         when="url"),
    Need("roots/list", "s2c", ("roots",), _ROOTS, "MCP 2025-06-18, client/roots.mdx §Capabilities"),
    Need("notifications/roots/list_changed", "c2s", ("roots", "listChanged"),
         "listChanged indicates whether the client will emit notifications when the list "
         "of roots changes.", "MCP 2025-06-18, client/roots.mdx §Capabilities", rule=_NOTIFY),
    Need("tasks/list", "c2s", ("tasks", "list"),
         "capabilities.tasks.list controls if the tasks/list operation is supported by the "
         "party.", "MCP 2025-11-25, basic/utilities/tasks.mdx §Capabilities", VERSIONS[3:4]),
    Need("tasks/cancel", "c2s", ("tasks", "cancel"),
         "capabilities.tasks.cancel controls if the tasks/cancel operation is supported by "
         "the party.", "MCP 2025-11-25, basic/utilities/tasks.mdx §Capabilities",
         VERSIONS[3:4]),
    Need("tools/call", "c2s", ("tasks", "requests", "tools", "call"),
         "If a server's capabilities do not include tasks.requests.tools.call, then clients "
         "MUST NOT attempt to use task augmentation on that server's tools",
         "MCP 2025-11-25, basic/utilities/tasks.mdx §Capabilities", VERSIONS[3:4], when="task"),
    # 2026-07-28: what an InputRequiredResult may ask, against the request's own _meta
    Need("sampling/createMessage", "s2c", ("sampling",),
         "Servers MUST NOT send an inputRequests that the client has not declared support "
         "for in its capabilities.", "MCP 2026-07-28, basic/patterns/mrtr.mdx", _ONLY_2026),
    Need("elicitation/create", "s2c", ("elicitation",),
         "Servers MUST NOT send an inputRequests that the client has not declared support "
         "for in its capabilities.", "MCP 2026-07-28, basic/patterns/mrtr.mdx", _ONLY_2026),
    Need("roots/list", "s2c", ("roots",),
         "Servers MUST NOT send an inputRequests that the client has not declared support "
         "for in its capabilities.", "MCP 2026-07-28, basic/patterns/mrtr.mdx", _ONLY_2026),
)

_WHEN: dict[str, Callable[[dict[str, Any]], bool]] = {
    "tools": lambda p: "tools" in p or "toolChoice" in p,
    "url": lambda p: p.get("mode") == "url",
    "task": lambda p: "task" in p,
}


#: what the text of a frame holds when its condition can be true (the members' names)
_NEEDLES: dict[str, tuple[str, ...]] = {"tools": ('"tools"', '"toolChoice"'), "url": ('"mode"',)}


def declared(caps: Any, path: tuple[str, ...]) -> bool:
    """Whether ``path`` is declared: every step an object member, a boolean leaf true."""
    node = caps
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return node is not False and node is not None


@lru_cache(maxsize=1024)
def _rows(version: str, method: str, sender: str) -> tuple[Need, ...]:
    """The rows of :data:`TABLE` of a method sent by ``sender`` in ``version`` (asked once
    per group of frames: a capture of thousands of sessions has thousands of groups)."""
    return tuple(n for n in TABLE if n.method == method and n.sender == sender
                 and version in n.versions)


def _detail(n: Need, who: str) -> str:
    cap = ".".join(n.path)
    return f"{n.method} needs the {who}'s {cap} capability, not declared: “{n.spec}” ({n.source})"


def _session_caps(view: View) -> dict[int, tuple[Any, Any]]:
    """session -> (client capabilities, server capabilities) of its initialize exchange
    (None for a side not captured)."""
    out: dict[int, tuple[Any, Any]] = {}
    for s, (params, result, _, _) in view.initialize.items():
        client = params.get("capabilities") if isinstance(params, dict) else None
        server = result.get("capabilities") if isinstance(result, dict) else None
        out[s] = (client, server)
    discover = view.answered(["server/discover"], kind="result")
    view.prefetch([resp for _, resp in discover])  # their texts read in one pass
    for req, resp in discover:
        res = view.result(resp) or {}
        if isinstance(res.get("capabilities"), dict):
            out.setdefault(view.session(req), (None, res["capabilities"]))
    return out


_METHODS = sorted({n.method for n in TABLE})


def _text(caps: Any) -> Any:
    """A capabilities object (decoded JSON) as a key: equal keys, equal verdicts of
    :func:`declared` (``repr`` tells every JSON value apart, ``inf`` from ``null`` too);
    one nested past the recursion limit is a key of its own."""
    try:
        return repr(caps)
    except RecursionError:
        return object()
#: up to this many (session, method) pairs, the methods that can break a row of the table are
#: found first and only their rows read; above it, every row of a method of the table is
#: grouped by (session, method, direction, kind)
_FEW_GROUPS = 4096


def _all(view: View) -> dict[str, list[Hit]]:
    """The findings of the three rules, by code: decided once per (session, method,
    direction, kind) group; only rows a row of the table has a condition on (the params
    say tool use, URL mode, a task) are decoded, in one batch."""
    caps = _session_caps(view)
    out: dict[str, list[Hit]] = {c: [] for c in CHECKS}
    out["capability-client-undeclared"].extend(_input_requests(view))
    vi = view.vi
    if not caps:
        return out
    found: list[tuple[str, np.ndarray, str]] = []  # (code, rows, detail)
    versions: dict[int, str] = {}

    fired: dict[tuple[Any, ...], list[tuple[Need, bool]]] = {}
    alike: dict[int, Any] = {}  # session code -> what its verdicts depend on

    def firing(values: tuple[int, ...]) -> list[tuple[Need, bool]]:
        """The rows of the table a group of these (session, method, direction, kind)
        codes breaks (a condition on the params aside), each with whether the server's
        capabilities judge it. Decided once per (version and capabilities of the session,
        method, direction, kind): a capture of thousands of sessions has a group per
        session, most of them alike."""
        s_code = values[0]
        like = alike.get(s_code)
        if like is None:
            like = alike[s_code] = _alike(s_code)
        key = (like, *values[1:])
        got = fired.get(key)
        if got is None:
            got = fired[key] = _firing(values)
        return got

    def _alike(s_code: int) -> Any:
        if s_code not in caps:
            return ()
        client, server = caps[s_code]
        return (vi.version_of(s_code), _text(client), _text(server))

    def _firing(values: tuple[int, ...]) -> list[tuple[Need, bool]]:
        s_code, m_code, d_code, kind = values
        if s_code not in caps or m_code < 0:
            return []
        method = vi.method_cats[m_code]
        sender = {0: "c2s", 1: "s2c"}.get(d_code)
        version = versions.get(s_code)
        if version is None:
            version = versions[s_code] = V.normalise(vi.version_of(s_code))
        if sender is None or method.startswith("notifications/") and kind != NOTIFICATION:
            return []  # a notifications/* method sent with an id is notification-with-id
        if version == "2026-07-28" and sender == "s2c":
            return []  # judged on the InputRequiredResult (_input_requests)
        client, server = caps[s_code]
        out = []
        for n in _rows(version, method, sender):
            # a change notification needs its sender's own capability, a request the other's
            judge = (sender == "c2s") != (n.rule == _NOTIFY)
            caps_of = server if judge else client
            if caps_of is not None and not declared(caps_of, n.path):
                out.append((n, judge))
        return out

    # the methods some (session, direction, kind) of them can break, decided before any
    # row is taken (when the sessions are few): only those methods' rows are read
    here = view.methods_present(_METHODS)
    if len(caps) * len(here) <= _FEW_GROUPS:
        maybe = [m for m in here.tolist() if any(
            firing((s, m, d, k)) for s in caps for d in (0, 1) for k in (REQUEST, NOTIFICATION))]
        rows = view.row_array([vi.method_cats[m] for m in maybe])
    else:
        rows = view.row_array(_METHODS)
    if not len(rows):
        return out
    groups = view.groups(rows, vi.session, vi.method, vi.direction, vi.kind,
                         want=lambda v: bool(firing(v)))
    meets = _conditions(view, groups, firing)
    for values, group in groups:
        members = group.tolist()
        done: set[str] = set()
        for n, judge in firing(values):
            if n.code in done:
                continue
            hit_rows = members
            if n.when and view.light:
                continue  # a condition on the params: every such call decoded (deferred)
            if n.when == "task":  # the loader's call column (the tools/call rules' too)
                hit_rows = group[view.call_flags(group) & 1 > 0].tolist()
            elif n.when:
                hit_rows = [r for r in members if r in meets[n.when]]
            code = n.code
            found.append((code, np.asarray(hit_rows, dtype=np.int64),
                          _detail(n, "server" if judge else "client")))
            if hit_rows == members:
                done.add(code)
    # per rule: its rows in frame order, each row once (the first detail found for it)
    for code in out:
        mine = [(rows, detail) for c, rows, detail in found if c == code and len(rows)]
        if not mine:
            continue
        rows = np.concatenate([r for r, _ in mine])
        which = np.repeat(np.arange(len(mine)), [len(r) for r, _ in mine])
        order = np.argsort(rows, kind="stable")
        rows, which = rows[order], which[order]
        first = np.concatenate(([True], rows[1:] != rows[:-1]))
        details = [d for _, d in mine]
        out[code].extend(map(Hit, rows[first].tolist(), repeat(None),
                             map(details.__getitem__, which[first].tolist())))
    return out


def _conditions(view: View, groups: list[tuple[tuple[int, ...], np.ndarray]],
                firing: Callable[[tuple[int, ...]], list[tuple[Need, bool]]]
                ) -> dict[str, set[int]]:
    """For each condition on the params (``tools``, ``url``) some group's rows are judged
    by, the rows of those groups that meet it: only a frame whose text names the member
    the condition reads is decoded, and the texts of every group are read in one pass (a
    capture of thousands of sessions has a group per session and method)."""
    asked: dict[str, list[np.ndarray]] = {}
    if not view.light:  # (light: the conditions are deferred)
        for values, group in groups:
            for when in {n.when for n, _ in firing(values) if n.when and n.when != "task"}:
                asked.setdefault(when, []).append(group)
    meets: dict[str, set[int]] = {}
    for when, parts in asked.items():
        rows = np.unique(np.concatenate(parts)).tolist()
        maybe = view.containing(rows, _NEEDLES[when])
        view.prefetch(maybe)
        meets[when] = {r for r in maybe if _WHEN[when](view.params(r))}
    return meets


def _input_requests(view: View) -> list[Hit]:
    """2026-07-28: each inputRequests member against the client capabilities of the
    request it answers."""
    out: list[Hit] = []
    s2026 = view.sessions_of("2026-07-28")
    if not s2026:
        return out
    answered = [(req, resp) for req, resp
                in view.answered(["tools/call", "prompts/get", "resources/read"], "result")
                if int(view.vi.session[resp]) in s2026 and view.vi.kind[resp] == RESULT]
    # only a result that names inputRequests (or may spell it) can hold them: decode
    # those, all at once
    resps = np.asarray([resp for _, resp in answered], dtype=np.int64)
    m = view.vi.marks(resps)
    asking = set(resps[((m & NO_TEXT) == 0)
                       & ((m & (MARK["inputRequests"] | MARK["\\u"])) != 0)].tolist())
    answered = [(req, resp) for req, resp in answered if resp in asking]
    view.prefetch([resp for _, resp in answered])
    for req, resp in answered:
        result = view.result(resp) or {}
        asks = result.get("inputRequests")
        if not isinstance(asks, dict):
            continue
        meta = view.params(req).get("_meta")
        caps = meta.get(CLIENT_CAPS) if isinstance(meta, dict) else None
        for key, ask in asks.items():
            method = ask.get("method") if isinstance(ask, dict) else None
            ask_params = ask.get("params") if isinstance(ask, dict) else None
            ask_params = ask_params if isinstance(ask_params, dict) else {}
            for n in _rows("2026-07-28", str(method), "s2c"):
                if n.when and not _WHEN[n.when](ask_params):
                    continue
                if not declared(caps, n.path):
                    out.append(Hit(resp, req, f"inputRequests[{key!r}] is {method}, but "
                                   f"the request's {CLIENT_CAPS} has no {'.'.join(n.path)}: "
                                   f"“{n.spec}” ({n.source})", f"/result/inputRequests/{key}"))
                    break
    return out


CHECKS = {code: (lambda view, code=code: view.memo("capabilities", _all)[code]) for code in
          ("capability-server-undeclared", "capability-client-undeclared",
           "capability-notification-undeclared")}
