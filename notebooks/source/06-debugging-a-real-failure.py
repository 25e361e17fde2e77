# %% [markdown]
# # Debugging a real failure
#
# **You will learn**
#
# - a way to work through a broken exchange: the summary, the checker, the timeline, the
#   inspector, and then the frames themselves;
# - how a duplicate response, an id that changed type and an orphan look in a real capture;
# - how to turn the findings into a bug report, and how to run the same check in CI.
#
# *About 20 minutes (optional track: debugging in depth).*

# %%
import subprocess
import sys

import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 120)
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## The report
#
# > "With our client, the `lookup` tool never returns. With the Python SDK it works.
# > And `echo` seems to answer twice."
#
# A capture of one session was recorded with the stdio tap: the official Python SDK client
# against the server in question, `scripts/broken_server.py` (a small server written with
# bugs on purpose, for this notebook). Load it:

# %%
path = mn.sample_path("broken-duplicate-response")
bt = mn.load(path)
bt

# %% [markdown]
# The whole session, raw lines first, and the exchange beside them:

# %%
mn.teach.sequence(bt, max_chars=70)

# %% [markdown]
# ## Step 1: what does the checker say?

# %%
bt.violations[["rule", "severity", "seq", "related_seq", "message"]]

# %% [markdown]
# Four findings on a session of five requests. Take them in order of severity, but first
# get the picture.

# %% [markdown]
# ## Step 2: the timeline
#
# Requests are spans from the question to its answer; violations are marked on their
# frames. One span never closes: the `lookup` call, which by the checker's reading never
# got its answer.

# %%
mn.timeline(bt)

# %% [markdown]
# ## Step 3: the duplicate response
#
# The inspector, on the frame the checker flagged as a duplicate: the frame on the left,
# the request it answers on the right, and the rule with its spec sentence below.

# %%
dup = int(bt.violations.query("rule == 'duplicate-response'")["seq"].iloc[0])
first = int(bt.violations.query("rule == 'duplicate-response'")["related_seq"].iloc[0])
inspector = mn.inspect(bt)
inspector.selected_seq = dup
inspector

# %% [markdown]
# Read the two answers side by side. They are the same bytes: the server wrote its answer
# twice.

# %%
mn.teach.show(bt, first, dup)

# %%
bt.frames.loc[first, "raw"] == bt.frames.loc[dup, "raw"]

# %%
mn.teach.cite("duplicate-response")

# %% [markdown]
# What does the client do with the second one? It already has its answer, so the second
# one matches nothing it is waiting for. A careful client drops it (and may log it); a
# careless one may hand it to whatever request next reuses the id. In `t.pairs` the second
# answer gets a row of its own, with the outcome `duplicate`:

# %%
bt.pairs[["request_seq", "response_seq", "id", "method", "outcome"]]

# %% [markdown]
# ## Step 4: why `lookup` never returns (for some clients)
#
# The checker leaves the lookup call `unanswered`, and flags the answer right after it:
# its id has the wrong type.

# %%
mismatch = bt.violations.query("rule == 'id-type-mismatch'").iloc[0]
mn.teach.show(bt, int(mismatch["related_seq"]), int(mismatch["seq"]))

# %%
mn.teach.cite("id-type-mismatch", "unanswered-request")

# %% [markdown]
# The request said `4`; the answer says `"4"`. By the rule these are two different ids
# (notebook 03), so a strict client never sees its answer, waits, and times out: that is
# the report. But the Python SDK client did not wait. Look at the clock: its next request
# went out a fraction of a millisecond after the wrong answer arrived.

# %%
answer_ts = bt.frames.loc[int(mismatch["seq"]), "ts"]
next_request = bt.frames[(bt.frames["seq"] > mismatch["seq"]) & (bt.frames["kind"] == "request")].iloc[0]
next_request["method"], next_request["ts"] - answer_ts

# %% [markdown]
# The Python SDK forgives this bug on purpose. Its dispatcher turns a string id that
# looks like a number back into a number before it looks for the pending request (`mcp`
# 2.3.0, `mcp/shared/dispatcher.py`, `coerce_request_id`, whose docstring says it "matches
# the TS SDK"). A lenient client hides the bug; a strict one, or one in another language,
# hangs. The checker follows the specification, so it shows the bug whichever client was
# used: a capture is the place to find what one client forgives and another does not.

# ## Step 5: an answer to nobody
#
# The last finding is an orphan: an answer with id `9999`, which the client never used, sent
# right after the answer to `tools/list`. No harm done this time (the client ignores it),
# but it is the same bug family: the server does not track what it was asked.

# %%
orphan = int(bt.violations.query("rule == 'orphan-response'")["seq"].iloc[0])
mn.teach.show(bt, orphan - 1, orphan, max_lines=8)

# %% [markdown]
# ## Everything at once: the explorer
#
# The explorer links the views: click a violation mark on the timeline and the inspector
# shows that frame; filter the table with `has:violation`.

# %%
mn.explore(bt, query="has:violation")

# %% [markdown]
# ## Step 6: the bug report
#
# Each finding already holds what a bug report needs: where, what, and the sentence of the
# specification that says so.

# %%
for row in bt.violations.itertuples():
    frame = bt.frames.loc[row.seq]
    print(f"- frame {row.seq} ({frame.source}), {row.severity}: {row.message}\n"
          f"  spec: {row.spec}")

# %% [markdown]
# ## Step 7: the same check in CI
#
# The command line runs the same checker and exits non-zero when it finds an error, so a
# test suite can record a session against the server and fail on the first broken rule.
# In a terminal: `mcp-notebook check data/broken-duplicate-response.jsonl`. From here:

# %%
run = subprocess.run([sys.executable, "-m", "mcp_notebook.cli", "check", str(path)],
                     capture_output=True, text=True)
print(run.stdout + run.stderr + f"exit status: {run.returncode}")

# %% [markdown]
# ## Exercise: find the duplicate yourself
#
# Now a fault planted in a healthy trace: one answer was sent twice. Find the extra answer
# without the checker first (`ex.trace.pairs`, `mn.inspect(ex.trace)`), then answer as
# `{seq: "rule-code"}`.

# %%
ex = mn.teach.exercise("answered-twice", learner=LEARNER)
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
# - start from the checker's findings and the timeline, then read the frames;
# - a duplicate response is the same answer twice; an id of the wrong type leaves the
#   request unanswered and the answer an orphan; an answer to an unused id is an orphan;
# - every finding carries its spec sentence, ready for a bug report;
# - `mcp-notebook check` runs the same rules in CI.
#
# **Next (optional):** `07-write-your-own-rule`, teach the checker something new.
