# %% [markdown]
# # Cancellation and progress
#
# **You will learn**
#
# - how a progress token links `notifications/progress` to the request that asked for it;
# - how a request is cancelled, and what may happen next: no answer, or a late answer;
# - why the receiver of a cancel SHOULD NOT answer, why an answer can still arrive (the
#   race), and what the checker shows for it;
# - what the real traces show, including a server that keeps reporting progress for a
#   call that was cancelled.
#
# *About 15 minutes (optional track: notifications and cancellation).*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 110)
t = mn.load(mn.sample_path("demo-stdio"))
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## Progress: a token in the request, notifications that name it
#
# A requester that wants progress reports puts a `progressToken` in the request's
# `params._meta`. The other side may then send `notifications/progress` naming that token,
# with a `progress` value that grows (and maybe a `total` and a `message`). In the demo
# session the client calls a slow tool with three steps:

# %%
with_progress = t.pairs.query("progress_count > 0 and outcome == 'result'")
slow = with_progress.iloc[0]
slow[["request_seq", "response_seq", "method", "progress_count", "latency"]]

# %%
req, resp = int(slow["request_seq"]), int(slow["response_seq"])
mn.teach.show(t, *range(req, resp + 1), max_lines=16)

# %% [markdown]
# The pairs count the progress notifications of each request (`progress_count`). The
# checker's rules for progress:

# %%
mn.teach.cite("progress-unknown-token", "progress-after-response", "progress-not-increasing")

# %% [markdown]
# ## Cancelling: a notification that names a request
#
# The requester cancels with `notifications/cancelled`, naming the request by its id in
# `requestId`. Later in the demo session the client starts a call of twenty steps, sees the
# first progress report, and cancels:

# %%
cancelled = t.pairs.query("outcome == 'cancelled'").iloc[0]
c_req, c_cancel = int(cancelled["request_seq"]), int(cancelled["cancel_seq"])
mn.teach.show(t, *range(c_req, c_cancel + 1), max_lines=16)

# %% [markdown]
# The pair's outcome is `cancelled`, its `cancel_seq` points at the cancel, and no answer
# ever came: over stdio, the Python SDK server stops the call and stays silent. A cancel
# must name a request of the same side that is still running, and `initialize` is never
# cancelled:

# %%
mn.teach.cite("cancel-unknown-request", "cancel-initialize")

# %% [markdown]
# ## The race: an answer after the cancel
#
# The receiver of a cancel SHOULD stop, free what it holds, and *not* answer: that is the
# rule. But a cancel travels while the answer may already be on its way, and the
# specification expects that race: the side that cancelled SHOULD ignore an answer that
# arrives afterward, and both sides MUST handle the race gracefully. So an answer after a
# cancel is either the race (sent before the cancel arrived) or a receiver that went
# against its SHOULD NOT; a capture alone cannot always tell which. The checker shows such
# answers as `info`:

# %%
mn.teach.cite("response-after-cancel", "cancel-after-response")

# %% [markdown]
# The same demo scenario over Streamable HTTP (`demo-http.har`) has one. The cancelled
# call is answered anyway, with an error `-32800` "Request cancelled" from the SDK:

# %%
http = mn.load(mn.sample_path("demo-http"))
late = http.pairs.query("outcome == 'cancelled'").iloc[0]
mn.teach.sequence(http, int(late["request_seq"]), int(late["cancel_seq"]),
                  int(late["response_seq"]), max_chars=80)

# %%
mn.teach.show(http, int(late["request_seq"]), int(late["cancel_seq"]), int(late["response_seq"]),
              max_lines=16)

# %%
http.violations[["rule", "severity", "seq", "related_seq", "message"]]

# %% [markdown]
# Three things to notice. This is not the race: the SDK read the cancel, stopped the call,
# and *then* answered, which is what the SHOULD NOT advises against (the same server over
# stdio stays silent, as the rule asks). The answer is an error with code `-32800`, which
# lies outside the reserved range `-32768` to `-32000` (notebook 02): an application code,
# not flagged. And the pair keeps the outcome `cancelled`, with the late answer in
# `response_seq`.

# %% [markdown]
# ## Progress after a cancel
#
# `everything-stdio-progress-cancel` records the reference server under the same
# scenario. The client cancels a call of six steps after the first progress report. The
# server does not answer, but it goes on reporting progress for the cancelled call, to
# the end, even after the client has closed its side of the pipe:

# %%
pc = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
gone = pc.pairs.query("outcome == 'cancelled'").iloc[0]
token = pc.message(int(gone["request_seq"]))["params"]["_meta"]["progressToken"]
progress = pc.frames.query("method == 'notifications/progress'").copy()
progress["token"] = progress["seq"].map(lambda s: pc.message(s)["params"]["progressToken"])
progress["after_cancel"] = progress["seq"] > int(gone["cancel_seq"])
progress.query("token == @token")[["seq", "ts", "token", "after_cancel"]]

# %% [markdown]
# The timeline makes the story plain: the cancelled call is the purple span, which stops
# at the cancel; in the server's lane the progress ticks keep coming long after it, and
# after the capture's note (in the log lane) that the client closed stdin.

# %%
mn.timeline(pc)

# %% [markdown]
# The sequence diagram tells it message by message: one arrow per frame, client on the
# left, server on the right. Each request's bar on the server's lifeline runs until its
# answer; the cancelled call's bar stops at the dash-dotted `notifications/cancelled`
# arrow, and the dotted progress arrows that follow still name it (`→ #14`). Hover an arrow
# for its details, click one to select it (`d.selected_seq`), save it with `d.save(...)`.

# %%
d = mn.sequence(pc)
d

# %% [markdown]
# Is that legal? The checker says nothing about it:

# %%
pc.violations

# %% [markdown]
# The checker keeps a cancelled request open until an answer comes (an answer may still
# still come in the race), so its progress token is still active and progress for it is not
# flagged.
# You could argue for a warning: a receiver should stop work on a cancelled request, and
# progress for it is a sign that it did not. Notebook 07 writes that rule.

# %% [markdown]
# ## Exercise: the answer that came anyway
#
# In the trace below a request was cancelled, but its answer still came. Which frame does
# the checker mark, with which rule, and is it an error? Answer as `{seq: "rule-code"}`.

# %%
ex = mn.teach.exercise("answer-after-cancel", learner=LEARNER)
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
# - a progress token in `params._meta` links progress notifications to their request;
#   progress grows, and stops with the answer;
# - `notifications/cancelled` names a request of the same side by its id;
# - the receiver of a cancel SHOULD NOT answer; an answer can still cross the cancel (the
#   race), and the canceller ignores it; the checker shows a late answer as `info`;
# - real servers differ: the Python SDK goes quiet over stdio, answers `-32800` over HTTP;
#   the reference server keeps reporting progress.
#
# **Next:** `06-debugging-a-real-failure`, all of this on a broken server.
