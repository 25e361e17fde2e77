"""``docs/conversation.md``: the conversation checker, its rules and its capability table,
generated (``python -m mcp_notebook.conversation.docs``; a test keeps the page current)."""

from __future__ import annotations

from ..protocol.rules import ALL
from . import _DEFAULT_DEEP, PARTIAL, RULES
from .capabilities import TABLE
from .conformance import REQUIREMENTS, SUITE, conformance_ids
from .payload import BYTES_PER_TOKEN, LIMIT

__all__ = ["render_markdown"]

_INTRO = """\
# The conversation checker

Generated from `mcp_notebook/conversation/` by `python -m mcp_notebook.conversation.docs`;
a test keeps it current.

The envelope rules (`docs/rules.md`) check that each frame is JSON-RPC; these check what
the messages say, one level up, where the bugs people chase live: arguments a tool's
schema rejects, a capability the other side never declared, a result that breaks its
method's schema, a `tools/list` that eats the context window, the 2026-07-28 patterns.
They are catalogue rules like the others (`mn.rules()`, `t.violations`), each citing the
sentence or schema constraint it enforces.

```python
import mcp_notebook as mn
from mcp_notebook import conversation

t = mn.load("capture.jsonl")
t.violations                 # the envelope rules and the conversation rules
conversation.check(t)        # the conversation findings, schema rules included, each with
                             # the JSON pointer of the failing member (Finding.pointer)
t.context_cost()             # bytes and estimated tokens of each listed tool, largest first
t.conformance()              # per peer, the conformance suite's requirements
conversation.calls(t)        # the pairs with `call` and `round` (2026 MRTR retries)
```

`mcp-notebook check` runs every rule. `t.violations` runs every conversation rule at any
size but the schema ones: validating every message against the official schema, and the
`tools/call` arguments that are objects against the tool's `inputSchema`, is computed when
asked (`conversation.check(t)`, `with conversation.deep():`, `mcp-notebook check`).
`tool-arguments-schema` and `tool-input-error-as-protocol-error` (built on it) keep their
structural part in `t.violations`: a call of a tool the list did not hold
(`tool-not-listed`) and arguments that are no object are reported there; arguments that
are objects are validated when asked (at a million frames that validation is most of what
the conversation rules cost: `benchmarks/RESULTS-conversation.md`).
`conversation.DEEP` holds, per rule, the most messages a capture may hold for
`t.violations` to run it whole; a user may add a rule there to opt out of it on large
captures, or take one out (`conversation.DEEP.pop("tool-arguments-schema")`) to have it
run whole in `t.violations` (the default):

"""

_VALIDATOR = """\
## The validator

Messages are validated with **jsonschema-rs** (PyPI `jsonschema-rs`, Rust, MIT), each
definition compiled once per version and cached (`schemas.validator`), each tool's
`inputSchema`/`outputSchema` once per listed schema. Measured by
`benchmarks/bench_validators.py` on the 752 messages of the bundled traces that name a
definition (48 definitions; 2 cores shared with other work, so the times are rough):

| validator | compile 48 | validate 752 | per message | error detail |
|---|---:|---:|---:|---|
| jsonschema-rs 0.61.2 | 377 ms | 1.0 ms | 1.3 µs | every error, each with its instance path (a JSON pointer) and message |
| fastjsonschema 2.22.3 | 2,392 ms | 17.8 ms | 23.7 µs | the first error only, as a dotted path (`data.params.arguments`) |
| jsonschema 4.26.0 | 8,523 ms | 507.5 ms | 674.9 µs | every error with its path, but 500× slower |

jsonschema-rs is the fastest to compile and to validate, reports every error with its
pointer, and implements both dialects the schemas declare (draft-07 up to 2025-06-18,
2020-12 from 2025-11-25, which is also the default dialect of a tool schema with no
`$schema` from 2025-11-25 on). fastjsonschema implements drafts 4, 6 and 7 only: it
compiled the 2020-12 schemas without complaint but read them as draft-07 (it found one
invalid message more than the other two).

"""


def _versions(vs: tuple[str, ...]) -> str:
    return "all" if vs == ALL else ", ".join(vs)


def render_markdown() -> str:
    lines = [_INTRO, "| rule | limit (messages) |", "|---|---:|"]
    for code, limit in _DEFAULT_DEEP.items():
        shown = "none (only `check`)" if limit == 0 else f"{limit:,}" if limit else "no limit"
        if code in PARTIAL:
            shown += "; the structural part always"
        lines.append(f"| `{code}` | {shown} |")
    lines += ["", "## Rules", "", "| code | severity | versions | rule | spec | conformance "
              "suite checks |", "|---|---|---|---|---|---|"]
    for r in RULES:
        ids = ", ".join(f"`{i}`" for i in conformance_ids(r.code))
        lines.append(f"| `{r.code}` | {r.severity} | {_versions(r.versions)} | {r.title} | "
                     f"{r.cite.replace('|', '/')} | {ids} |")
    lines += ["", "## Negotiated capabilities", "",
              "The rows of “Only use capabilities that were successfully negotiated” (MCP "
              "2025-06-18, basic/lifecycle.mdx §Operation): a method sent by one side needs "
              "the other side's capability (a change notification: its sender's own). Up to "
              "2025-11-25 from the `initialize` exchange; in 2026-07-28 the client's from "
              "each request's `_meta` `io.modelcontextprotocol/clientCapabilities` and the "
              "server's from `server/discover`.", "",
              "| method | sent by | needs | when | versions | rule | sentence |",
              "|---|---|---|---|---|---|---|"]
    for n in TABLE:
        sender = "client" if n.sender == "c2s" else "server"
        lines.append(f"| `{n.method}` | {sender} | `{'.'.join(n.path)}` | {n.when or ''} | "
                     f"{_versions(n.versions)} | `{n.code}` | “{n.spec}” ({n.source}) |")
    lines += ["", "## Payload size and context cost", "",
              f"`large-payload` is a notice above {LIMIT['bytes']:,} bytes "
              "(`conversation.payload.LIMIT[\"bytes\"]`). `t.context_cost()` counts the "
              "compact JSON bytes of each tool definition of the latest complete "
              f"`tools/list` of each session, and estimates tokens as bytes / "
              f"{BYTES_PER_TOKEN} (a rule of thumb, not a tokeniser).", "",
              "## Passive conformance", "",
              f"The checks of the official suite ({SUITE}) whose subject traffic shows, "
              "with the rules that judge them; `t.conformance()` says per peer: kept, "
              "broken or not exercised.", "",
              "| suite check | spec reference | peer | exercised by | rules |",
              "|---|---|---|---|---|"]
    for q in REQUIREMENTS:
        lines.append(f"| `{q.id}` | {q.spec_ref} | {q.role} | "
                     f"{', '.join(f'`{m}`' for m in q.methods)} | "
                     f"{', '.join(f'`{r}`' for r in q.rules)} |")
    lines += ["", _VALIDATOR.rstrip(), ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(render_markdown(), end="")
