# %% [markdown]
# # Notifications: no id, no reply
#
# **You will learn**
#
# - what notifications are for, and which ones travel in a real session;
# - the two rules: a notification carries no `id`, and nobody answers it;
# - what a reply to a notification looks like on the wire, and why it is wrong;
# - what an orphan is: an answer that matches no request.
#
# *About 10 minutes (optional track: notifications and cancellation).*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 100)
t = mn.load(mn.sample_path("demo-stdio"))
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## Fire and forget
#
# A notification tells the other side something and expects nothing back: the client is
# ready (`notifications/initialized`), a log line (`notifications/message`), how far a long
# call has got (`notifications/progress`), a call is no longer wanted
# (`notifications/cancelled`). In the demo session:

# %%
notes = t.frames.query("kind == 'notification'")
notes.groupby(["direction", "method"]).size()

# %%
mn.teach.show(t, int(notes["seq"].iloc[0]), int(notes["seq"].iloc[1]))

# %% [markdown]
# The two rules, from the checker's catalogue:

# %%
mn.teach.cite("notification-with-id", "notification-answered")

# %% [markdown]
# In a healthy trace, no answer ever points at a notification: there is nothing to point
# with. None of the pairs is about a notification:

# %%
bool(t.pairs["method"].str.startswith("notifications/").any())

# %% [markdown]
# On the timeline, notifications are ticks, not spans: they start nothing that ends.

# %%
mn.timeline(t)

# %% [markdown]
# ## What a reply to a notification looks like
#
# A peer can only answer something that has an id. So a reply to a notification shows up
# in one of two shapes.
#
# **1. The sender put an id on it, and the receiver answered.** This happens in real
# code: servers built with the Ruby SDK answered `result: null` to a
# `notifications/cancelled` that carried an id, until `modelcontextprotocol/ruby-sdk`
# PR #435 fixed it. Replay the demo session as if the client had sent
# `notifications/initialized` with an id, and the server had answered it:

# %%
initialized = int(notes["seq"].iloc[0])
with_id = {"jsonrpc": "2.0", "id": 99, "method": "notifications/initialized"}
reply = ("s2c", {"jsonrpc": "2.0", "id": 99, "result": {}})
shape1 = mn.teach.what_if(t, replace={initialized: with_id}, insert_after={initialized: reply})
shape1.violations[["rule", "severity", "seq", "message"]]

# %% [markdown]
# With an id, the "notification" is really a request (look at its `kind`), and the reply
# pairs with it. The checker reports both halves. It happens on a real pipe too: in
# `everything-stdio-envelopes` a hand-written client sends `notifications/initialized` with
# an id, and the reference server, seeing an id, treats it as a request and answers
# `-32601`:

# %%
env = mn.load(mn.sample_path("everything-stdio-envelopes"))
sent = mn.teach.find(env, method="notifications/initialized", kind="request")[0]
mn.teach.sequence(env, sent, mn.teach.answer_to(env, sent))

# %%
env.violations.loc[env.violations["seq"] >= sent, ["rule", "severity", "seq", "message"]]
#
# **2. A true notification, answered anyway.** The receiver has no id to send back, so it
# sends `"id": null`:

# %%
null_reply = ("s2c", {"jsonrpc": "2.0", "id": None, "result": {}})
shape2 = mn.teach.what_if(t, insert_after={initialized: null_reply})
shape2.violations[["rule", "severity", "seq", "message"]]

# %%
mn.teach.cite("result-id-null", "error-id-null")

# %% [markdown]
# Why is a reply wrong? The sender of a notification is not waiting for anything. At best
# the reply is noise; at worst the sender treats it as an answer to one of its own
# requests with the same id, or fails on an answer it cannot place. A `null` id is kept
# for one case only: an **error** about a request whose id could not even be read (a
# parse error, say).

# %% [markdown]
# ## Orphans: answers to nobody
#
# An answer whose id matches no request from the other side is an orphan. The broken
# server of notebook 06 sends two: an answer to id `9999`, which nobody used, and an answer
# whose id came back as a string (notebook 03; the checker names that one after its cause,
# `id-type-mismatch`):

# %%
broken = mn.load(mn.sample_path("broken-duplicate-response"))
orphans = broken.pairs.query("outcome == 'orphan'")
orphans[["response_seq", "requester", "id", "outcome"]]

# %%
mn.teach.show(broken, *orphans["response_seq"].astype(int))

# %%
mn.teach.cite("orphan-response")

# %% [markdown]
# An orphan is a warning, not an error: a capture that started late misses the requests
# of the first answers. In a capture that covers the whole session, like this one, it
# points at a bug in the peer.

# %% [markdown]
# ## An unknown notification is ignored, not answered
#
# The raw-frames trace sends a notification that no MCP version defines. The reference
# server does the right thing: it says nothing at all.

# %%
ev = mn.load(mn.sample_path("everything-stdio-raw-frames"))
unknown = int(ev.frames.query("method == 'notifications/no-such-notification'")["seq"].iloc[0])
ev.frames.loc[unknown - 1:unknown + 2, ["seq", "direction", "kind", "method", "raw"]]

# %%
ev.violations.query("seq == @unknown")[["rule", "severity", "message"]]

# %% [markdown]
# ## Exercise: a notification with a reply
#
# In the trace below somebody sent a notification with an id, and the other side answered
# it. Which two frames break which rules? Answer as `{seq: "rule-code", ...}`.

# %%
ex = mn.teach.exercise("reply-to-notification", learner=LEARNER)
ex

# %%
answer = {}
ex.check(answer)

# %% [markdown]
# Stuck? `ex.hint()` gives a hint, and each graded try a narrower one. After two
# tries, `ex.solution()` shows the answer; your instructor has everyone's answers in the
# instructor guide. Once you are right, `ex.trace` shows the checker's findings too.

# %% [markdown]
# ## What you learned
#
# - a notification has a method, maybe params, and no id; nobody answers it;
# - a reply to a notification shows up as an answer to an id-bearing "notification", or as
#   a result with a `null` id; both are wrong;
# - an answer to no request is an orphan: a late capture, or a bug in the peer.
#
# **Next:** `05-cancellation-and-progress`, two notifications that point at a request.
