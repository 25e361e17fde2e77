# %% [markdown]
# # Share a capture safely: redaction and the boundary view
#
# **You will learn**
#
# - what a capture gives away: tokens in HTTP headers, keys inside arguments, and the
#   same keys echoed back in results;
# - how `t.redact()` and `mcp-notebook redact` replace secrets with salted hashes, and why
#   the redacted copy still pairs exactly like the original;
# - the server-boundary view, `t.boundary()`: one row per operation with method, tool,
#   timing, outcome, error type and sizes, and no payload at all;
# - which of the two to share for which question.
#
# *About 15 minutes (optional track: sharing and scale). Prerequisites: notebooks 01 and 03.*

# %%
import json
import tempfile
from pathlib import Path

import mcp_notebook as mn
import pandas as pd
from mcp_notebook.redact import redact_file

pd.set_option("display.max_colwidth", 110)

# %% [markdown]
# ## What is in a capture
#
# `everything-http-secrets` is a real session over Streamable HTTP between the Python SDK
# client and the reference server. The client sends a bearer token on every POST and, in
# one `echo` call, a string shaped like an API key; both are canned for this workshop,
# but a real capture holds real ones the same way. The raw call and its answer first:

# %%
t = mn.load(mn.sample_path("everything-http-secrets"))
call = mn.teach.find(t, method="tools/call", contains="api_key")[0]
mn.teach.show(t, call, mn.teach.answer_to(t, call))

# %% [markdown]
# The server echoed the key back: a secret the client sent now sits in a result too. And
# the HTTP layer carries one more in every request's headers, which the frames do not show:

# %%
har = mn.sample_path("everything-http-secrets")
entries = json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]
[h for h in entries[0]["request"]["headers"] if h["name"].lower() == "authorization"]

# %% [markdown]
# ## Redact before sharing
#
# `t.redact()` returns a copy with each secret replaced by `«redacted:sha256:…»`, a salted
# hash, and a report of what it replaced where. Equal secrets get equal hashes, so you can
# still see that the echoed key is the one that was sent:

# %%
clean, report = t.redact()
report[["seq", "where", "kind", "replacement"]]

# %%
mn.teach.show(clean, call, mn.teach.answer_to(clean, call))

# %% [markdown]
# Ids, methods and sessions are never touched, so the redacted copy pairs and checks
# exactly like the original:

# %%
same_pairs = clean.pairs[["request_seq", "response_seq", "outcome"]].equals(
    t.pairs[["request_seq", "response_seq", "outcome"]])
same_findings = clean.violations[["rule", "seq"]].equals(t.violations[["rule", "seq"]])
same_pairs, same_findings

# %% [markdown]
# For the file you attach to a bug report, `redact_file` (or `mcp-notebook redact CAPTURE
# -o shared.har` in a terminal) writes the redacted copy. A HAR stays a HAR, with its
# headers, cookies and URLs redacted too:

# %%
out = Path(tempfile.mkdtemp()) / "shared.har"
file_report = redact_file(har, out)
file_report.groupby("kind").size()

# %%
text = out.read_text(encoding="utf-8")
{"token left": "mcpnb-demo" in text, "key left": "sk-proj-" in text,
 "replacements": text.count("«redacted:sha256:")}

# %% [markdown]
# Redaction finds secrets by their shape and by the names around them; it cannot know that
# a customer's name in a result is private. Read the report, then read the copy, before
# you send it.

# %% [markdown]
# ## The server-boundary view: semantics without payloads
#
# Often the question is not "what did the tool return?" but "which tools are used, how
# long do they take, how often do they fail?". For that, no payload is needed.
# `t.boundary()` keeps one row per operation: who asked, the method and the tool, start,
# duration, outcome, error type and sizes, the protocol version and the peers. No
# arguments, no results, no error messages:

# %%
b = t.boundary()
b[["requester", "method", "name", "duration", "outcome", "error_type", "bytes_in",
   "bytes_out", "server_name"]]

# %% [markdown]
# Nothing of the payload is left, secrets included:

# %%
text_of_view = b.astype(str).to_csv()
{"token": "mcpnb-demo" in text_of_view, "key": "sk-proj-" in text_of_view,
 "echo text": "deploy with" in text_of_view}

# %% [markdown]
# And it is enough to answer the operational questions: a boundary file written on a
# server loads back as a payload-free trace with the same pairs and latencies:

# %%
path = mn.boundary.write_boundary(b, Path(tempfile.mkdtemp()) / "boundary.jsonl")
bounded = mn.Trace.from_boundary(path)
bounded.latency_by_method()[["count", "errors", "tool_errors"]]

# %% [markdown]
# Its checker has nothing to say (`violations` is empty): rules are about payloads, and
# there are none. Share the boundary view for usage and latency questions, the redacted
# capture for protocol bugs, and never the raw capture.

# %% [markdown]
# ## What you learned
#
# - secrets reach a capture through headers, arguments and echoed results;
# - `t.redact()` / `mcp-notebook redact` replace them with salted hashes and report what
#   they replaced; the copy pairs and checks like the original;
# - `t.boundary()` keeps the semantics of every operation (method, tool, timing, outcome,
#   error type, sizes) without any payload.
