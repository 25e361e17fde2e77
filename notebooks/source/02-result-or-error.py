# %% [markdown]
# # Result or error: the response envelope
#
# **You will learn**
#
# - that a response carries exactly one of `result` and `error`, and why `error` wins
#   when a broken peer sends both;
# - that `result` is always a JSON object, even the empty `{}` that answers `ping`;
# - what an `error` holds (`code`, `message`, `data`) and which codes mean what, by
#   protocol version;
# - the difference between a tool that fails (`isError: true`, a result) and a protocol
#   error.
#
# *About 15 minutes (core path; the bonus exercise is optional).*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 100)
t = mn.load(mn.sample_path("demo-stdio"))
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## Two ways to answer
#
# The demo session asks the server to add two numbers, and later to read a note that
# does not exist. The first answer is a `result`, the second an `error`:

# %%
def request_with(trace, text):
    """The seq of the first request whose raw text contains ``text``."""
    return mn.teach.find(trace, kind="request", contains=text)[0]


pairs = t.pairs.set_index("request_seq")
add_call = request_with(t, '"name":"add"')
missing_note = request_with(t, "notes/missing")
mn.teach.show(t, int(pairs.loc[add_call, "response_seq"]),
              int(pairs.loc[missing_note, "response_seq"]))

# %% [markdown]
# Never both, never neither:

# %%
mn.teach.cite("response-neither", "result-and-error")

# %% [markdown]
# ## `result` is always an object
#
# Base JSON-RPC allows any value as a result; MCP does not. Even an answer with nothing
# to say is an object: `ping` is answered with `{}`.

# %%
ping = mn.teach.find(t, method="ping", direction="c2s")[0]
mn.teach.show(t, ping, int(pairs.loc[ping, "response_seq"]))

# %%
mn.teach.cite("result-not-object", "ping-result-not-empty")

# %% [markdown]
# Is that true of every result in the bundled traces? Count the JSON type of every
# `result` member, trace by trace:

# %%
def result_types(trace):
    seqs = trace.frames.loc[trace.frames["kind"] == "result", "seq"]
    return pd.Series([type(trace.message(s)["result"]).__name__ for s in seqs]).value_counts()


data = mn.sample_path("demo-stdio").parent
pd.DataFrame({p.stem: result_types(mn.load(p)) for p in sorted(data.glob("*.jsonl"))}).T

# %% [markdown]
# ## The error object: `code`, `message` and `data`
#
# An error has an integer `code`, a short `message` for humans and, optionally, `data`
# with anything useful. Here is every error answer in the bundled traces:

# %%
rows = []
for p in sorted(data.glob("*.jsonl")) + sorted(data.glob("*.har")):
    trace = mn.load(p)
    for seq in trace.frames.loc[trace.frames["kind"] == "error", "seq"]:
        err = trace.message(seq)["error"]
        rows.append({"trace": p.name, "seq": seq, "code": err["code"],
                     "message": " ".join(err["message"].split())[:60],
                     "data": str(err.get("data", ""))[:40]})
errors = pd.DataFrame(rows)
errors

# %%
mn.teach.cite("error-not-object", "error-code-not-integer", "error-message-not-string")

# %% [markdown]
# ## Which codes mean what, by protocol version
#
# JSON-RPC defines five codes. MCP adds its own, and which ones depends on the protocol
# version the two peers agreed on in `initialize`. The table below is the checker's own
# (`mcp_notebook.protocol.versions.error_codes`):

# %%
from mcp_notebook.protocol import versions

codes = pd.DataFrame({v: pd.Series(versions.error_codes(v)) for v in versions.VERSIONS})
codes.index.name = "code"
codes.sort_index(ascending=False).fillna("")

# %% [markdown]
# What to notice:
#
# - `-32700` to `-32603` are JSON-RPC's own and mean the same in every version;
# - codes from `-32768` to `-32000` are reserved: a code from that range that neither
#   JSON-RPC nor the session's MCP version defines is worth a look (the checker reports it
#   as `info`), and the 2026 version forbids inventing codes in its own range;
# - the SDKs use `-32000` and `-32001` locally (connection closed, request timed out);
#   they are not in the specification, and the checker knows them;
# - a server chooses its code: both SDKs answer a missing resource with `-32602` (invalid
#   params), not with `-32002`, as the table of errors above shows.

# %%
mn.teach.cite("unknown-error-code", "reserved-error-code-2026")

# %% [markdown]
# ## When a broken peer sends both, `error` wins
#
# What if a server answers with both members? `mn.teach.what_if` replays a real trace with
# one frame changed, so we can see what the checker makes of it. Here the answer to the
# `add` call keeps its result and gains an error:

# %%
add_answer = int(pairs.loc[add_call, "response_seq"])
both = t.message(add_answer) | {"error": {"code": -32603, "message": "Internal error"}}
t2 = mn.teach.what_if(t, replace={add_answer: both})
t2.frames.loc[[add_call, add_answer], ["seq", "kind", "error_code", "raw"]]

# %%
t2.violations[["rule", "severity", "seq", "message"]]

# %% [markdown]
# The frame's `kind` is `error`, and the pair's outcome too. The reason: a response that
# carries an error says the call failed. Acting on the `result` half would mean trusting
# an answer that the peer itself marked as failed, so the checker reads such a frame as an
# error and reports the broken rule on it.
#
# **On a real pipe.** `everything-stdio-envelopes` was written by hand over a real pipe to
# the reference server: a client that declared `sampling` answers the server's
# `sampling/createMessage` requests with broken envelopes. The first answer carries both
# members. Raw lines first, then the picture:

# %%
env = mn.load(mn.sample_path("everything-stdio-envelopes"))
asks = mn.teach.find(env, method="sampling/createMessage")
mn.teach.sequence(env, *range(asks[0] - 3, asks[0] + 5))

# %%
env.violations[["rule", "severity", "seq", "message"]]

# %% [markdown]
# The checker reads the frame with both members as an error (`kind` says so) and flags
# it; the second answer, a bare string as `result`, is flagged too. And the server? Its
# schema refuses both answers, so it drops them, and the two tool calls that were waiting
# for a model answer never return (the `unanswered-request` findings). Only the fourth,
# well-formed answer completes its call. A broken envelope does not fail loudly: it hangs.

# %% [markdown]
# ## A tool that fails is not a protocol error
#
# Look at the outcomes of the demo session: there is one `error`, and two `tool_error`s.

# %%
t.pairs["outcome"].value_counts()

# %% [markdown]
# A `tool_error` is a **result**: the call worked at the protocol level, and the tool
# reports that it failed, with `isError: true` and a text that the model can read. The
# schema says so (MCP `schema.json` 2025-11-25, `CallToolResult.isError`):
#
# > Any errors that originate from the tool SHOULD be reported inside the result object,
# > with `isError` set to true, _not_ as an MCP protocol-level error response. Otherwise,
# > the LLM would not be able to see that an error occurred and self-correct.
#
# Dividing by zero is a tool error:

# %%
divide = request_with(t, '"name":"divide"')
mn.teach.show(t, divide, int(pairs.loc[divide, "response_seq"]))

# %% [markdown]
# The same description goes on: errors in *finding* the tool should be protocol errors.
# Real servers differ. Calling a tool that does not exist, or a call without a tool
# name, side by side in four traces:

# %%
def outcome_of(trace_name, needle):
    trace = mn.load(mn.sample_path(trace_name))
    row = trace.pairs.set_index("request_seq").loc[request_with(trace, needle)]
    return {"trace": trace_name, "call": needle, "outcome": row["outcome"],
            "error_code": row["error_code"]}


pd.DataFrame([
    outcome_of("demo-stdio", "no_such_tool"),
    outcome_of("everything-stdio-basics", "no-such-tool"),
    outcome_of("demo-stdio-raw-frames", '"name":"nope"'),
    outcome_of("everything-stdio-raw-frames", '"params":{"arguments":{}}'),
])

# %% [markdown]
# The Python SDK answers an unknown tool with a tool error; the TypeScript server answers
# a call without a name with a protocol error, but with the wrong code: `-32603` (internal
# error) says the server broke, while a missing parameter is `-32602` (invalid params, "Invalid
# method parameter(s)", JSON-RPC 2.0 §5.1). The checker counts the two apart
# (`tool_errors` and `errors` in `t.summary()`; `errors` and `tool_errors` in
# `t.latency_by_method()`):

# %%
t.latency_by_method()[["count", "errors", "tool_errors", "error_rate"]]

# %% [markdown]
# ## Exercise: both members
#
# In the trace below one response carries both `result` and `error`. Which frame, and
# which rule? Answer as `{seq: "rule-code"}`.

# %%
ex = mn.teach.exercise("reply-says-ok-and-fails", learner=LEARNER)
ex

# %%
# Your answer: {seq: "rule-code"}
answer = {}
ex.check(answer)

# %% [markdown]
# **Bonus.** Here one result is not an object at all:

# %%
ex2 = mn.teach.exercise("result-is-a-bare-value", learner=LEARNER)
ex2

# %%
answer2 = {}
ex2.check(answer2)

# %% [markdown]
# Stuck? `ex.hint()` gives a hint, and each graded try a narrower one. After two
# tries, `ex.solution()` shows the answer; your instructor has everyone's answers in the
# instructor guide. Once you are right, `ex.trace` shows the checker's findings too.

# %% [markdown]
# ## What you learned
#
# - a response carries exactly one of `result` and `error`; with both, `error` wins;
# - `result` is always an object, `{}` when there is nothing to say;
# - `error` has an integer `code` and a `message`, maybe `data`; the meaning of a code
#   depends on the protocol version;
# - a failing tool answers with a result that says `isError: true`; that is not a
#   protocol error, and the two are counted apart.
#
# **Next:** `03-pairing-by-id`, how each answer finds its question.
