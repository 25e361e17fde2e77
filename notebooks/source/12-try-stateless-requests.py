# %% [markdown]
# # The 2026-07-28 revision: stateless requests and input-required rounds
#
# **You will learn**
#
# - what changes on the wire in the 2026-07-28 revision: no `initialize`, and every
#   request carries the protocol version and the client's capabilities in `params._meta`;
# - how a server asks the client for input without a request of its own: an
#   `input_required` result, and a retry that carries the answer and the server's state;
# - what the checker says about a request that forgets its `_meta`.
#
# *About 15 minutes (optional track: the 2026 revision). Prerequisites: notebooks 01, 03
# and 08.*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 110)

# %% [markdown]
# ## A session with no handshake
#
# `pages-stdio-2026` is a real session between the Python SDK client, pinned to
# `2026-07-28`, and a small server of ours on the SDK's low-level `Server`. There is no
# `initialize` and no `notifications/initialized`: the first frame is already a
# `tools/list`. The raw lines, and the exchange beside them:

# %%
modern = mn.load(mn.sample_path("pages-stdio-2026"))
mn.teach.sequence(modern)

# %% [markdown]
# What an older session agreed once, at `initialize`, now travels with every request,
# in `params._meta`; and every result says which kind of result it is (`resultType`):

# %%
first = mn.teach.find(modern, kind="request")[0]
modern.message(first)["params"]["_meta"]

# %%
{seq: modern.message(seq)["result"].get("resultType")
 for seq in mn.teach.find(modern, kind="result")}

# %% [markdown]
# The checker reads the version from that `_meta` and checks the session by the 2026
# rules:

# %%
modern.versions, len(modern.violations)

# %% [markdown]
# ## An input-required round
#
# Before 2026, a server that needed the user's confirmation sent its own request,
# `elicitation/create`, to the client. In 2026-07-28 only the client sends requests.
# The server answers the call with `resultType: "input_required"`, the questions it has
# (`inputRequests`) and an opaque `requestState`; the client asks the user, then sends
# the call again, under a **new id**, with `inputResponses` and the state:

# %%
calls = mn.teach.find(modern, method="tools/call")
mn.teach.show(modern, calls[0], mn.teach.answer_to(modern, calls[0]), calls[1],
              mn.teach.answer_to(modern, calls[1]), max_lines=14)

# %% [markdown]
# Two requests, two answers, one operation. The pairs show two complete pairs; what ties
# them is the `requestState`, not the id (a retry with the same id would reuse an id still
# in flight, or one already answered):

# %%
modern.pairs[["request_seq", "response_seq", "id_key", "method"]]

# %% [markdown]
# ## A request without its `_meta`
#
# `pages-stdio-2026-raw` was written by hand over a real pipe to the same server: a
# `tools/list` with its `_meta`, one without, and a call with it. The server refuses the
# bare one with `-32602`, and the checker flags it:

# %%
raw = mn.load(mn.sample_path("pages-stdio-2026-raw"))
mn.teach.sequence(raw)

# %%
raw.violations[["rule", "severity", "seq", "message"]]

# %%
mn.teach.cite("request-meta-missing", "result-type-missing")

# %% [markdown]
# ## What you learned
#
# - 2026-07-28 sessions have no handshake: each request carries its version and the
#   client's capabilities in `params._meta`, and each result a `resultType`;
# - a server asks for input with an `input_required` result; the client retries under a
#   new id with `inputResponses` and the `requestState`;
# - a request without its `_meta` is refused (`-32602`) and flagged by the checker.
