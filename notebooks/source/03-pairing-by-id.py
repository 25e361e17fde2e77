# %% [markdown]
# # Pairing by id
#
# **You will learn**
#
# - that a response carries its request's `id` back exactly, in type and in value;
# - that both sides number their own requests (often from 0 or 1), so an id alone never
#   pairs: the side that asked is part of the key;
# - that `1` and `"1"` are two different ids, and any string is an id too;
# - why ids above 2^53 are a trap for peers that read numbers as floats;
# - how concurrent requests are answered out of order, and paired anyway.
#
# *About 15 minutes (core path; the bonus exercise is optional).*

# %%
import json

import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 100)
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## The answer brings the id back
#
# A client may have several requests in flight; the `id` is the only thing that tells it
# which answer belongs to which request. So the server copies the id, unchanged:

# %%
mn.teach.cite("id-type-mismatch")

# %% [markdown]
# `t.pairs` is the result of that matching: one row per request, with the frame that
# answered it.

# %%
t = mn.load(mn.sample_path("demo-stdio"))
t.pairs[["request_seq", "response_seq", "requester", "id", "method", "outcome"]].head(8)

# %% [markdown]
# ## Both sides count
#
# In `everything-stdio-server-requests` the server asks the client for things (its roots,
# a model answer, a user's answer). The client numbers its requests from 1, the server
# from 0, each with its own counter, so the same id shows up in both directions:

# %%
sr = mn.load(mn.sample_path("everything-stdio-server-requests"))
requests = sr.frames.loc[mn.teach.find(sr, kind="request"), ["seq", "direction", "id", "method"]]
requests

# %%
shared = set(requests.loc[requests["direction"] == "c2s", "id"]) & set(
    requests.loc[requests["direction"] == "s2c", "id"])
print("ids used by both sides:", sorted(shared))

# %% [markdown]
# An answer from the client with id 1 answers the *server's* request 1, not the client's.
# That is why the pairing key is `(session, requester, id)`: pairing on the id alone would
# match answers to the wrong questions. The `requester` column says who asked:

# %%
sr.pairs[["request_seq", "response_seq", "requester", "id", "method"]]

# %% [markdown]
# Uniqueness is per sender, too. Before the 2026 version the sender never reuses an id in
# a session; in every version it never reuses one that is still waiting for its answer:

# %%
mn.teach.cite("request-id-reused", "request-id-in-flight")

# %% [markdown]
# ## `1` and `"1"` are different ids
#
# In MCP an id is a string or an integer (the schema's `RequestId`; no fractions, never
# `null`), and the type is part of it. `demo-stdio-raw-frames` was
# written by hand over a real pipe: it sends one request with id `1` and one with id
# `"1"`, both in flight at once. The server answers both, each with its own id:

# %%
rf = mn.load(mn.sample_path("demo-stdio-raw-frames"))
rf.frames.loc[rf.frames["id_key"].isin(["1", '"1"']), ["seq", "direction", "kind", "id", "id_key", "raw"]]

# %% [markdown]
# `id` holds the id as sent (a Python `int` or `str`); `id_key` is its JSON text, so
# `1` and `"1"` stay apart when you group or join on it. Both pairs are right:

# %%
rf.pairs.loc[rf.pairs["id_key"].isin(["1", '"1"']),
             ["request_seq", "response_seq", "id_key", "outcome"]]

# %% [markdown]
# Strings work as ids like any number: this session opened with `"init-1"` and pings with
# `"ping-7"`. What matters is that the answer brings back exactly what was sent.
#
# What if the server had turned the number into a string? `what_if` replays the trace
# with the answer to request `1` carrying `"1"` instead (and, to keep things simple,
# without the real `"1"` request and its answer):

# %%
number_req = int(rf.frames.query("id_key == '1' and kind == 'request'")["seq"].iloc[0])
number_ans = int(rf.pairs.set_index("request_seq").loc[number_req, "response_seq"])
string_pair = rf.frames.query("id_key == '\"1\"'")["seq"].tolist()
flipped = rf.message(number_ans) | {"id": "1"}
rf2 = mn.teach.what_if(rf, replace={number_ans: flipped}, delete=string_pair)
rf2.violations[["rule", "severity", "seq", "message"]]

# %% [markdown]
# The client never recognises its answer: the request stays unanswered, and the answer
# matches no request. (The last two findings were in the original capture already, see
# notebook 01; seqs after the deleted frames moved up by two.)

# %% [markdown]
# ## Never `null` in a result
#
# A response carries its request's id, so it is never `null`; JSON-RPC keeps `"id": null`
# for an *error* about a request whose id could not be read. In `everything-stdio-envelopes`
# (written by hand over a real pipe) a client answers one of the server's sampling requests
# with `"id": null`:

# %%
env = mn.load(mn.sample_path("everything-stdio-envelopes"))
null_answer = mn.teach.find(env, contains='"id":null')[0]
mn.teach.show(env, null_answer, max_lines=8)

# %%
env.violations.loc[env.violations["seq"] == null_answer, ["rule", "severity", "message"]]

# %% [markdown]
# The server cannot tell which of its requests this answers; it drops it, and the tool
# call behind that request never returns.

# %% [markdown]
# ## Ids above 2^53: the float trap
#
# JSON numbers have no size limit, but a parser may read them as 64-bit floats, which hold
# integers exactly only up to 2^53. JavaScript's own `JSON.parse` does (its numbers are
# floats), and so do many JSON libraries elsewhere; others keep big integers exactly
# (Python's `json`, or JavaScript with a `BigInt`-aware parser). RFC 8259 promises
# agreement only inside ±(2^53 − 1). Above that, two different ids may become the same
# number:

# %%
big = 2**53 + 1
as_float = json.loads(str(big), parse_int=float)  # what a float-parsing peer reads
print(big, "->", int(as_float), "equal:", big == int(as_float))

# %% [markdown]
# A peer like that answers with an id that is not the one it was sent. `mcp_notebook`
# reads ids exactly (a Python `int` of any size, and `id_key` from the raw text) and warns
# about ids in the danger zone:

# %%
mn.teach.cite("big-id")

# %% [markdown]
# Replay the demo session with one request sent with id 2^53 + 1; first answered
# correctly, then answered by a peer that rounded the id:

# %%
call = mn.teach.find(t, method="tools/call")[0]
answer = int(t.pairs.set_index("request_seq").loc[call, "response_seq"])
exact = mn.teach.what_if(t, replace={call: t.message(call) | {"id": big},
                                     answer: t.message(answer) | {"id": big}})
rounded = mn.teach.what_if(t, replace={call: t.message(call) | {"id": big},
                                       answer: t.message(answer) | {"id": int(as_float)}})
pd.concat({"exact": exact.violations, "rounded": rounded.violations})[["rule", "seq", "message"]]

# %% [markdown]
# Small integers avoid the problem, and so do strings, with one catch: both official SDKs
# turn a string id that looks like a number back into a number when they look up the
# request it answers. The TypeScript SDK's `Protocol._onresponse` starts with
# `const messageId = Number(response.id)` (`modelcontextprotocol/typescript-sdk`,
# `src/shared/protocol.ts`), and the Python SDK's `coerce_request_id` does the same
# ("Coerce a stringified int request id back to int so a peer-echoed id still
# correlates (matches the TS SDK)", `mcp` 2.3.0, `mcp/shared/dispatcher.py`). So `"4"` and
# `4` are the same request to them, and different ones to the rule. If you choose string
# ids, choose ones that do not look like numbers (`"req-4"`, a UUID). Notebook 11 sends an
# id above 2^53 to real servers and records what each side does.

# %% [markdown]
# ## Concurrency: answers out of order
#
# Nothing says answers come back in the order of the requests. In
# `everything-stdio-progress-cancel` the client sends three calls and a ping at once.
# Compare `request_order` with `answer_order`: the ping, sent last of the four, is
# answered first, and the slow call, sent first, is answered last.

# %%
pc = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
p = pc.pairs[pc.pairs["response_seq"].notna()].copy()
p["answer_order"] = p["response_seq"].rank().astype(int)
p["request_order"] = p["request_seq"].rank().astype(int)
p[["request_seq", "response_seq", "id", "method", "request_order", "answer_order", "latency"]]

# %% [markdown]
# The timeline shows it better: each request and its answer are one span, and spans that
# overlap were in flight together. The whole session first (the purple span is a call that
# was cancelled, notebook 05):

# %%
mn.timeline(pc)

# %% [markdown]
# The four requests overlap for a few milliseconds only, so here is the same timeline with
# its window set to the 11 ms after the first of them was sent. The long call's span runs
# off the right edge; the ping, sent last, closes first. (In a live notebook, scroll to
# zoom and drag to pan; double-click fits the whole session again.)

# %%
start = p.loc[p["answer_order"] != p["request_order"], "t_request"].min()
mn.timeline(pc).zoom(start - pd.Timedelta("1ms"), start + pd.Timedelta("10ms"))

# %% [markdown]
# ## Exercise: the id that changed type
#
# In the trace below one answer came back with its id in the wrong JSON type. Which frames
# does the checker mark, and with which rules? Answer as `{seq: "rule-code"}`.

# %%
ex = mn.teach.exercise("id-type-flipped", learner=LEARNER)
ex

# %%
answer = {}
ex.check(answer)

# %% [markdown]
# **Bonus.** A client sent a request again, with the same id, before the first one was
# answered:

# %%
ex2 = mn.teach.exercise("same-id-twice-in-flight", learner=LEARNER)
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
# - the answer carries the request's id back exactly: same type, same value;
# - each side numbers its own requests; pair on (session, who asked, id), never on the id;
# - `1` and `"1"` are different ids; `id_key` keeps them apart in pandas;
# - ids above 2^53 get rounded by peers that parse numbers as floats;
# - answers can come in any order; the id is what pairs them.
#
# **Next:** `04-notifications`, the messages that get no answer at all.
