# %% [markdown]
# # Large results and pagination
#
# **You will learn**
#
# - that MCP sets no size limit on a result, and what a multi-megabyte result costs on a
#   real pipe: one line of 8 MB, a second of waiting, and every byte in the client's memory;
# - how cursor pagination works on a real server: `nextCursor`, `cursor`, the last page,
#   and a cursor the server never issued;
# - the alternatives to one huge answer: pages, a smaller request, a resource reference.
#
# *About 15 minutes (optional track: sharing and scale). Prerequisites: notebooks 01 and 02.*

# %%
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 100)

# %% [markdown]
# ## An 8 MB result on one line
#
# `filesystem-stdio-large` is a real session with the reference filesystem server: the
# client reads a small file, then a 3.9 MB log, then only its first 5 lines. The capture
# is stored gzipped (`.jsonl.gz`); `mn.load` reads it as it is. The raw lines, cut short,
# and the exchange beside them:

# %%
big = mn.load(mn.sample_path("filesystem-stdio-large.jsonl"))
calls = mn.teach.find(big, method="tools/call")
mn.teach.sequence(big, *[s for c in calls for s in (c, mn.teach.answer_to(big, c))],
                  max_chars=70)

# %% [markdown]
# Sizes and times of the four calls (`size` is the frame's bytes on the wire):

# %%
# by hand (the checker: large-payload, and t.context_cost() for tool definitions)
rows = []
for c in calls:
    answer = mn.teach.answer_to(big, c)
    rows.append({"call": big.message(c)["params"]["arguments"],
                 "request bytes": int(big.frames.loc[c, "size"]),
                 "answer bytes": int(big.frames.loc[answer, "size"]),
                 "ms": round((big.frames.loc[answer, "ts"] - big.frames.loc[c, "ts"])
                             .total_seconds() * 1000, 1)})
pd.DataFrame(rows)

# %% [markdown]
# The 3.9 MB file became an 8 MB answer: the server sends the text twice, once in
# `content` (for the model) and once in `structuredContent` (for programs):

# %%
result = big.message(mn.teach.answer_to(big, calls[1]))["result"]
{member: len(str(value)) for member, value in result.items()}

# %% [markdown]
# Nothing in the protocol forbids this; MCP sets no limit on a result's size. But a
# client holds the whole line in memory before it can parse it, a model's context is far
# smaller than 8 MB, and over streaming transports a message in the megabytes can stall a
# stream or hit a limit: the Python SDK's Streamable HTTP client, for one, refuses SSE
# events above 1 MiB by default (`max_sse_event_size=1048576` in `mcp` 2.3.0,
# `streamable_http_client`). The same server offers a smaller request: `head` returned
# 5 lines in 624 bytes.

# %% [markdown]
# ## Pages: `nextCursor` and `cursor`
#
# List methods (`tools/list`, `resources/list`, `prompts/list`,
# `resources/templates/list`) may answer a page at a time. A page that has more after it
# carries `nextCursor`, an opaque string; the client sends it back as `params.cursor` to
# get the next page; the last page has no `nextCursor`. `pages-stdio` is a real session
# with a server of ours that pages 10 items at a time, read page by page by the Python
# SDK client:

# %%
pages = mn.load(mn.sample_path("pages-stdio"))
mn.teach.sequence(pages)

# %% [markdown]
# Follow the cursors, request by request:

# %%
chain = []
for seq in mn.teach.find(pages, kind="request"):
    method = pages.frames.loc[seq, "method"]
    if not method.endswith("/list"):
        continue
    answer = pages.message(mn.teach.answer_to(pages, seq))
    items = next((v for v in answer.get("result", {}).values() if isinstance(v, list)), [])
    chain.append({"seq": seq, "method": method,
                  "cursor sent": (pages.message(seq).get("params") or {}).get("cursor"),
                  "items": len(items),
                  "nextCursor": answer.get("result", {}).get("nextCursor"),
                  "error": answer.get("error", {}).get("code")})
pd.DataFrame(chain)

# %% [markdown]
# Three pages of resources (10, 10, 5) and two of tools (10, 2); each request sends the
# cursor of the page before it, and the last page of each list has no `nextCursor`.
# The cursor is opaque: a client must not make one up or change it. The last request
# sends `"page-2"`, a cursor the server never issued, and the server answers `-32602`
# (invalid params), as the specification advises (MCP `server/utilities/pagination.mdx`,
# *Error Handling*: invalid cursors SHOULD get `-32602`):

# %%
last = mn.teach.find(pages, kind="request")[-1]
mn.teach.show(pages, last, mn.teach.answer_to(pages, last))

# %% [markdown]
# ## What you learned
#
# - a result has no size limit in MCP, but a multi-megabyte line costs memory, time and
#   context, and transports and SDKs put limits of their own on it;
# - list methods page with an opaque `nextCursor` the client sends back as `cursor`;
#   the last page has none, and an unknown cursor is `-32602`;
# - ask for less (`head`, a page) or point at a resource instead of embedding a blob.
