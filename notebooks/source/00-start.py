# %% [markdown]
# # Start here: real MCP traffic in a notebook
#
# **You will learn**
#
# - what `mcp_notebook` is for, and what it reads;
# - how to load a real capture and read its three tables: frames, pairs and violations;
# - how to look around a trace with the explorer widget;
# - how to check that your machine is ready for the workshop, and the plan of the day.
#
# *About 5 minutes (core path). Instructors: the plan of the workshop is below.*

# %% [markdown]
# ## What this toolkit is
#
# The Model Context Protocol (MCP) connects an AI application, the **client**, to a
# **server** that offers tools, resources and prompts. Every message between the two is a
# JSON-RPC 2.0 message: over stdio, one JSON object per line; over HTTP, in request and
# response bodies. When something goes wrong ("my tool call hangs", "the client rejects
# the answer"), the explanation is in those messages.
#
# `mcp_notebook` turns a capture of that traffic into pandas DataFrames, pairs every
# request with its response, and checks every message against the rules of JSON-RPC and
# MCP, each rule with the sentence of the specification behind it. Widgets show the
# exchange as a timeline and let you read any frame beside its pair.
#
# The traces that come with the package were recorded from real MCP peers: the official MCP
# Python SDK as the client, and as servers the reference servers published on npm and a
# small demo server. `mn.datasets()` lists them, and the README beside them
# (`data/README.md` in a clone) says what each one contains. Everything you see in these
# notebooks went over a real pipe or a real HTTP connection.

# %% [markdown]
# ## The workshop: a 90-minute core path, and tracks to choose from
#
# | start | notebook | the idea |
# |---|---|---|
# | 0:00 | `00-start` | the toolkit, a first trace, the explorer (5 min) |
# | 0:05 | `01-anatomy-of-a-frame` | request, notification, response: what each one carries (15 min) |
# | 0:20 | `02-result-or-error` | the response envelope: exactly one of `result` and `error` (15 min) |
# | 0:35 | `03-pairing-by-id` | how a response finds its request: the id, in type and value (15 min) |
# | 0:50 | *break* | 10 min |
# | 1:00 | `08-follow-the-checklist` | the debugging checklist, end to end on real traces (20 min) |
# | 1:20 | *slack* | 10 min for questions, or the start of a track |
#
# Optional tracks, for the time after or a second session: *notifications and
# cancellation* (`04`, 10 min; `05`, 15 min), *debugging in depth* (`06`, 20 min; `07`,
# 20 min), *sharing and scale* (`09` redaction and the boundary view, `10` large results
# and pagination, `11` ids above 2^53; 15 min each), *the 2026 revision* (`12`, 15 min).
#
# Each notebook holds one idea: the raw lines first, a picture beside them, then the
# checker's reading, and most end with an exercise that grades itself. You need basic
# Python; pandas helps (the tables are DataFrames), but the notebooks use small helpers
# (`mn.teach.find`, `mn.teach.answer_to`, `mn.teach.show`, `mn.teach.sequence`) where
# pandas plumbing would get in the way.
#
# **Your name.** Exercises are planted for you from your name: type it into the
# `LEARNER = "..."` line near the top of each notebook, and your neighbours get
# different answers.
#
# For the instructor: the guide, with the plan, what to stress and every learner's
# answers, is in `notebooks/instructor/` in a clone (it is not copied to learners). Run
# *Kernel → Restart and run all* on each notebook before the session; each runs offline
# on the bundled traces in a few seconds. Learners need only `pip install
# "mcp_notebook[lab]"` and `mcp-notebook notebooks FOLDER` (in a clone, `make lab`).
# `make handouts` writes every notebook, executed, as HTML that opens offline.

# %% [markdown]
# ## Check your install
#
# Run the next cell. Every row should say `True`; a `False` row says what to do about it.

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 80)
mn.teach.check_install()

# %% [markdown]
# ## Load a real trace
#
# `demo-stdio` is one session between the Python SDK client and the demo server, over
# stdio: it initializes, calls tools (one succeeds, two fail), pings in both directions,
# lets the server ask the client for a model answer and a user confirmation, streams log
# messages and progress, cancels a call, and reads resources and prompts.
#
# `mn.sample_path(name)` finds a bundled trace by name; `mn.load` reads it (the format is
# recognised by itself) and returns a `Trace`. Its summary shows first.

# %%
t = mn.load(mn.sample_path("demo-stdio"))
t

# %% [markdown]
# ## Table 1: frames
#
# One row per captured line, in capture order; nothing is dropped. `direction` says who
# sent it (`c2s` is client to server), `kind` what it is, `id` and `method` come from the
# message itself, and `raw` keeps the exact text that went over the wire.

# %%
t.frames[["seq", "ts", "direction", "kind", "id", "method", "size"]].head(12)

# %% [markdown]
# ## Table 2: pairs
#
# One row per request, with the frame that answered it. `requester` is the side that
# sent the request, `outcome` says how it ended, and `latency` how long the answer took.

# %%
t.pairs[["request_seq", "response_seq", "requester", "id", "method", "outcome",
         "latency"]].head(12)

# %% [markdown]
# ## Table 3: violations
#
# Every finding of the checker: the rule's code, how serious it is, the frame, what is
# wrong, and the spec sentence it breaks. This session is clean, so the table is empty:

# %%
t.violations

# %% [markdown]
# A server written with bugs on purpose (`broken-duplicate-response`, the subject of
# notebook 06) gives the checker something to say:

# %%
broken = mn.load(mn.sample_path("broken-duplicate-response"))
broken.violations[["rule", "severity", "seq", "message"]]

# %% [markdown]
# ## Explore
#
# The explorer puts it all together: counts and latency per method at the top, a timeline
# of the session (one lane per direction; a request and its answer are one span,
# notifications are ticks), and a table of frames with the selected frame beside its pair.
#
# Things to try:
#
# - click a span in the timeline: the table below jumps to that frame;
# - type `method:tools/call outcome:tool_error` in the filter box;
# - select the cancelled call and press *go to cancel*.

# %%
mn.explore(t)

# %% [markdown]
# ## Every bundled trace at a glance
#
# The same summary for every bundled trace. The notebooks use most of them; come back
# to this table when you want a trace that shows something in particular.

# %%
rows = []
for path in sorted(mn.sample_path("demo-stdio").parent.iterdir()):
    if path.suffix in (".jsonl", ".har"):
        s = mn.load(path).summary()
        rows.append({"trace": path.name, **{k: s[k] for k in (
            "frames", "requests", "notifications", "results", "errors", "tool_errors",
            "unanswered", "cancelled", "orphans", "duplicates")},
            "violations": s["violations"]["total"]})
pd.DataFrame(rows)

# %% [markdown]
# ## What you learned
#
# - `mn.load(path)` reads a capture into a `Trace`;
# - `t.frames`, `t.pairs` and `t.violations` are ordinary pandas DataFrames;
# - `mn.explore(t)` shows the session; `t.summary()` and `t.latency_by_method()` count it.
#
# **Next:** `01-anatomy-of-a-frame`, what each of those messages is made of.
