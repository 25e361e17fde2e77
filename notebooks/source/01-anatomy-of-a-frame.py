# %% [markdown]
# # Anatomy of a frame
#
# **You will learn**
#
# - the three kinds of JSON-RPC message: request, notification and response;
# - what each one carries (`jsonrpc`, `id`, `method`, `params`, `result`, `error`), as it
#   appears in a real capture;
# - how `mcp_notebook` decides the `kind` of a captured line, and what happens to lines
#   that are not messages at all.
#
# *About 15 minutes (core path).*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 110)
t = mn.load(mn.sample_path("demo-stdio"))
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## One line, one message
#
# On the stdio transport, client and server write one JSON-RPC message per line. The
# `raw` column keeps each line exactly as it was written. Here are the first lines of the
# demo session (the first row is a note by the capture tool, not a message):

# %%
t.frames[["seq", "direction", "kind", "raw"]].head(6)

# %% [markdown]
# The same opening as a picture: the raw lines on the left, and beside them one arrow per
# message, from the side that wrote it to the side that read it (requests solid, answers
# coming back, notifications dashed):

# %%
mn.teach.sequence(t, *mn.teach.find(t)[:8], max_chars=70)

# %% [markdown]
# ## A request
#
# The client opens every session with `initialize`. A request carries four members:
#
# - `jsonrpc`: the version of JSON-RPC, always the string `"2.0"`;
# - `id`: a string or an integer chosen by the sender, so it can tell the answers apart
#   (JSON-RPC also allows fractions and `null`; MCP does not: its schema's `RequestId` is
#   `string` or `integer`, and its prose says the id MUST NOT be `null`);
# - `method`: what to do;
# - `params`: the arguments, an object (it may be left out when there are none).
#
# `t.message(seq)` decodes one frame; `mn.teach.show(t, seq)` prints it indented.

# %%
first_request = mn.teach.find(t, kind="request")[0]
mn.teach.show(t, first_request)

# %% [markdown]
# These are the rules about requests that the checker enforces, each with the sentence of
# the specification it comes from (`mn.teach.cite` reads them from the checker's own
# catalogue, `mn.rules()`):

# %%
mn.teach.cite("jsonrpc-version", "request-id-type", "method-not-string", "params-not-object")

# %% [markdown]
# ## A response
#
# The answer has no `method`. It carries the same `id` as the request (that is how the
# client knows which question it answers; notebook 03 is about this) and either a
# `result` or an `error` (notebook 02). `t.pairs` finds it for us:

# %%
response = mn.teach.answer_to(t, first_request)
mn.teach.show(t, response, max_lines=14)

# %% [markdown]
# ## A notification
#
# Right after the handshake the client says `notifications/initialized`. A notification
# has a `method` (and maybe `params`) but **no `id`**: nobody will answer it, so there is
# nothing to match an answer to.

# %%
initialized = mn.teach.find(t, method="notifications/initialized")[0]
mn.teach.show(t, initialized)

# %%
mn.teach.cite("notification-with-id")

# %% [markdown]
# ## How the kind is decided
#
# The members decide, nothing else: `method` and `id` make a request, `method` without
# `id` a notification, `id` with `result` or `error` a response (`kind` says which of
# the two). Let us check that on every message of the trace by listing the top-level
# members of each kind:

# %%
def members(seq):
    msg = t.message(seq)
    return ", ".join(sorted(msg)) if isinstance(msg, dict) else "(not a message)"


t.frames.assign(members=t.frames["seq"].map(members)).groupby(["kind", "members"]).size()

# %% [markdown]
# ## The order of the members does not matter
#
# JSON objects have no order. The Python SDK writes `jsonrpc` first; the reference
# servers, written with the TypeScript SDK, put `result` first. Here is the answer to a
# `ping` from each: same members, same kind.

# %%
everything = mn.load(mn.sample_path("everything-stdio-basics"))


def ping_answer(trace):
    ping = mn.teach.find(trace, method="ping")[0]
    answer = mn.teach.answer_to(trace, ping)
    return trace.frames.loc[answer, ["kind", "raw"]]


pd.DataFrame({"Python SDK server": ping_answer(t), "TypeScript SDK server": ping_answer(everything)}).T

# %% [markdown]
# ## Both sides send requests
#
# MCP is not only client asks, server answers. In this session the server pings the
# client, asks it for a model answer (`sampling/createMessage`) and asks the user to
# confirm something (`elicitation/create`). These are requests from the server, and the
# client answers them:

# %%
t.frames.loc[mn.teach.find(t, kind="request", direction="s2c"), ["seq", "direction", "id", "method"]]

# %% [markdown]
# ## Not every line is a message
#
# A capture also holds lines that are not JSON-RPC: the capture tool's own notes (`log`),
# what the server printed on stderr (`stderr`), and lines that cannot be read as a message
# at all (`invalid`, with the `reason`). `demo-stdio-raw-frames` was written by hand over
# the real pipe, and one of its lines is cut short:

# %%
raw_frames = mn.load(mn.sample_path("demo-stdio-raw-frames"))
raw_frames.frames.query("kind in ['log', 'stderr', 'invalid']")[["seq", "kind", "reason", "raw"]]

# %%
raw_frames.violations[["rule", "seq", "message"]]

# %%
mn.teach.cite("parse-error")

# %% [markdown]
# ## See it: the inspector
#
# The inspector is a table of frames that you can filter; the selected frame is shown
# beside its pair. Click any row; try the filter `kind:notification`, or `dir:s2c`.

# %%
inspector = mn.inspect(t)
inspector.selected_seq = first_request
inspector

# %% [markdown]
# ## Exercise: a request left hanging
#
# A request expects an answer; a notification does not. In the trace below, one answer
# was removed. Find the request that is left waiting, and name the rule the checker uses
# for it. Answer as `{seq: "rule-code"}`; the codes are in `mn.rules()`.
# (`ex.trace.violations` would tell you straight away: try without it first.)

# %%
ex = mn.teach.exercise("call-never-returns", learner=LEARNER)
ex

# %%
# Your answer: {seq: "rule-code"}
answer = {}
ex.check(answer)

# %% [markdown]
# Stuck? `ex.hint()` gives a hint, and each graded try a narrower one. After two
# tries, `ex.solution()` shows the answer; your instructor has everyone's answers in the
# instructor guide. Once you are right, `ex.trace` shows the checker's findings too.

# %% [markdown]
# ## What you learned
#
# - a request has `jsonrpc`, `id`, `method` and (usually) `params`;
# - a notification has no `id`, and a response has no `method`;
# - the members decide the kind, not their order nor the direction;
# - both sides can send requests;
# - lines that are not messages are kept (`log`, `stderr`, `invalid`), never dropped.
#
# **Next:** `02-result-or-error`, the two ways to answer a request.
