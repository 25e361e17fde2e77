# %% [markdown]
# # Ids above 2^53, sent to real servers
#
# **You will learn**
#
# - what two real servers do with a request id above 2^53 (the largest integer a double
#   holds exactly): one echoes it exactly, the other never answers;
# - why: how each SDK reads the line, and where the id is lost;
# - which ids to choose so that no peer can get them wrong.
#
# *About 15 minutes (optional track: sharing and scale). Prerequisites: notebook 03.*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 100)

# %% [markdown]
# ## The experiment
#
# The same five pings, written by hand over a real pipe, to two servers: the TypeScript
# reference server (`everything-stdio-big-id`) and our Python SDK demo server
# (`demo-stdio-big-id`). The ids: 2^53 − 1 (the largest safe integer), 2^53 + 1,
# 2^53 + 3, the string `"9007199254740993"` (the digits of 2^53 + 1) and 3. Each capture,
# raw lines first:

# %%
ts = mn.load(mn.sample_path("everything-stdio-big-id"))
py = mn.load(mn.sample_path("demo-stdio-big-id"))
mn.teach.sequence(ts)

# %%
mn.teach.sequence(py)

# %% [markdown]
# Ping by ping, what came back:

# %%
def answers(trace):
    out = {}
    for seq in mn.teach.find(trace, method="ping"):
        sent = trace.frames.loc[seq, "id_key"]
        answer = mn.teach.answer_to(trace, seq)
        out[sent] = "no answer" if answer is None else trace.frames.loc[answer, "id_key"]
    return pd.Series(out)


pd.DataFrame({"TypeScript server": answers(ts), "Python server": answers(py)})

# %% [markdown]
# The Python server answers everything, exactly. The TypeScript server answers the safe
# integer, the string and 3, and says nothing at all to 2^53 + 1 and 2^53 + 3: no result,
# no error. A client waiting for those answers waits forever.

# %% [markdown]
# ## Why
#
# Python's `json` reads an integer of any size exactly, so the demo server's SDK sees the
# id that was sent and echoes it. The TypeScript SDK reads each stdio line with
# `JSON.parse`, which turns every number into a double: 2^53 + 1 becomes 2^53, and
# 2^53 + 3 becomes 2^53 + 4.

# %%
as_double = float(2**53 + 1)
int(as_double), int(as_double) == 2**53 + 1

# %% [markdown]
# A rounded id would already be a wrong answer. But the message never gets that far: the
# SDK then validates it against its schema, where a request id is
# `z.union([z.string(), z.number().int()])` (`RequestIdSchema`, `@modelcontextprotocol/sdk`
# 1.32.2, `types.js`), and zod 4's `int()` accepts only safe integers. The check fails,
# the transport reports an error on the server's side, and the request is dropped before
# any handler sees it. On the wire that is silence; in the capture, a request that stays
# unanswered. The checker flags both ids in the danger zone, and the missing answers:

# %%
ts.violations[["rule", "severity", "seq", "message"]]

# %%
mn.teach.cite("big-id")

# %% [markdown]
# The Python capture has the warnings only: its server answered, but any other peer on
# the way (a proxy, a JavaScript client, a log pipeline) could still round them.

# %%
py.violations[["rule", "severity", "seq"]]

# %% [markdown]
# ## Which ids to use
#
# - small integers, counted per side from 0 or 1, as both SDKs do: exact everywhere;
# - or strings; but not strings of digits: both SDKs turn a numeric-looking string id back
#   into a number when they match an answer to its request (notebook 03), so `"4"` and `4`
#   become one id to them. `"req-4"` or a UUID cannot be confused with a number;
# - never integers above 2^53 − 1: some peer will read them as doubles.

# %% [markdown]
# ## What you learned
#
# - a TypeScript SDK peer drops a request whose id is above 2^53 (its schema refuses the
#   rounded double); a Python SDK peer echoes it exactly;
# - the checker warns about such ids wherever they appear;
# - use small integers, or strings that do not look like numbers.
