# %% [markdown]
# # Follow the checklist: a captured exchange, step by step
#
# **You will learn**
#
# - a checklist for any captured MCP exchange, in the order that saves time: valid
#   JSON-RPC, every id matched, protocol error or `isError`, method names, argument shapes
#   against the tool's `inputSchema`, negotiated capabilities, and redaction before you share;
# - what each step looks like on real traces, passing and failing;
# - how to write the answer a server should have sent, and have the checker grade it.
#
# *About 20 minutes (core path). Prerequisites: notebooks 01 to 03.*

# %%
import json

import jsonschema
import mcp_notebook as mn
import pandas as pd

pd.set_option("display.max_colwidth", 110)
LEARNER = "your name"  # type your name: your exercises are planted for you

# %% [markdown]
# ## Step 1: is it valid JSON-RPC?
#
# Every line must parse as JSON, and every message must say `"jsonrpc": "2.0"`. In
# `everything-stdio-raw-frames`, written by hand over a real pipe, one line is cut short.
# The raw lines first, then the picture of the same frames:

# %%
raw = mn.load(mn.sample_path("everything-stdio-raw-frames"))
bad = mn.teach.find(raw, kind="invalid")
mn.teach.sequence(raw, *range(bad[0] - 2, bad[0] + 4))

# %% [markdown]
# The line never closes its brace. The server cannot even read an id from it, so it stays
# silent (over stdio, JSON-RPC's `-32700` parse error answer with `"id": null` is allowed
# but not required of it). The checker says so, and quotes the rule:

# %%
raw.violations[["rule", "severity", "seq", "message"]]

# %%
mn.teach.cite("parse-error")

# %% [markdown]
# ## Step 2: does every answer match a request?
#
# Pair each answer with its request by (who asked, id), same type and value (notebook 03).
# A clean session pairs completely; the broken server of notebook 06 does not:

# %%
bt = mn.load(mn.sample_path("broken-duplicate-response"))
mn.teach.sequence(bt)

# %%
bt.pairs[["request_seq", "response_seq", "id_key", "method", "outcome"]]

# %% [markdown]
# Three kinds of mismatch in one capture: an answer to id 9999, which nobody sent (an
# orphan), a request answered twice, and an answer whose id `"4"` is a string where the
# request said `4`. A duplicate breaks the rule even when the first answer was an error: a
# server that fails again after answering logs the second failure locally, and never sends
# a second message for one request.

# %%
mn.teach.cite("orphan-response", "duplicate-response", "id-type-mismatch")

# %% [markdown]
# ## Step 3: a protocol error, or a tool that failed?
#
# A JSON-RPC `error` says the request itself failed (unknown method, bad parameters). A
# `result` with `isError: true` says the protocol worked and the tool failed: the client
# shows that to the model, which may try again. Both look like "it failed" in a log. Side
# by side, from `everything-stdio-raw-frames` and `everything-stdio-basics`:

# %%
basics = mn.load(mn.sample_path("everything-stdio-basics"))
unknown_method = mn.teach.find(raw, method="no/such/method")[0]
unknown_tool = mn.teach.find(basics, contains="no-such-tool", kind="request")[0]
mn.teach.show(raw, unknown_method, mn.teach.answer_to(raw, unknown_method))

# %%
mn.teach.show(basics, unknown_tool, mn.teach.answer_to(basics, unknown_tool))

# %% [markdown]
# The codes say what failed: `-32601` is "method not found", `-32602` "invalid params",
# `-32603` "internal error" (JSON-RPC 2.0 §5.1). The same raw trace has a `resources/read`
# without its `uri`, answered `-32603`: the server blames itself for the client's missing
# parameter. The right code is `-32602`.

# %%
no_uri = mn.teach.find(raw, method="resources/read")[0]
mn.teach.show(raw, no_uri, mn.teach.answer_to(raw, no_uri))

# %% [markdown]
# A server that gets it right: `pages-stdio` (notebook 10) is sent a page cursor it never
# issued, an invalid parameter, and answers `-32602`:

# %%
pages = mn.load(mn.sample_path("pages-stdio"))
bad_cursor = mn.teach.find(pages, contains='"cursor":"page-2"')[0]
mn.teach.show(pages, bad_cursor, mn.teach.answer_to(pages, bad_cursor))

# %% [markdown]
# **Exercise: which kind of failure?** Four answers from a real session, planted for you:
# for each, is it a `result`, a `tool error` or a `protocol error`? The trace is blind:
# the library's outcome column is hidden until you are right, so read the frames.

# %%
kinds = mn.teach.classify(LEARNER)
kinds

# %%
mn.teach.show(kinds.trace, *kinds.seqs, max_lines=8)

# %%
answer = {}  # {seq: "result" | "tool error" | "protocol error"}
kinds.check(answer)

# %% [markdown]
# ## Step 4a: method names
#
# A method is spelled exactly as the specification spells it, and exists in the session's
# protocol version. The checker knows the methods of every version; an unknown method is a
# finding of its own, and the server answers `-32601`:

# %%
mn.teach.cite("unknown-method")

# %% [markdown]
# ## Step 4b: argument shapes against the tool's `inputSchema`
#
# `tools/list` tells the client each tool's arguments as a JSON Schema. A call whose
# arguments do not fit that schema fails however well the envelope is formed. In
# `filesystem-stdio` the client calls `write_file` without `content`. The raw call first:

# %%
fs = mn.load(mn.sample_path("filesystem-stdio"))
call = mn.teach.find(fs, method="tools/call", contains="x.txt")[0]
mn.teach.show(fs, call)

# %% [markdown]
# The schema the server announced for `write_file`, from its `tools/list` answer:

# %%
listed = fs.message(mn.teach.answer_to(fs, mn.teach.find(fs, method="tools/list")[0]))
schemas = {tool["name"]: tool["inputSchema"] for tool in listed["result"]["tools"]}
schemas["write_file"]

# %% [markdown]
# Validate the call's arguments against it, the way a careful client would before
# sending (`jsonschema` is installed with the toolkit):

# %%
# by hand first; the checker's rule tool-arguments-schema does this for every call
# (conversation.check(fs) or mcp-notebook check; fs.violations shows only the calls
# whose arguments are no object, the schema validation of the rest is computed when asked)
arguments = fs.message(call)["params"]["arguments"]
problems = [e.message for e in jsonschema.Draft7Validator(schemas["write_file"]).iter_errors(
    arguments)]
problems

# %% [markdown]
# The server found the same thing, and answered with a tool error (from the 2025-11-25
# revision, the specification asks servers to report invalid arguments this way, so the
# model can correct itself):

# %%
mn.teach.show(fs, mn.teach.answer_to(fs, call))

# %% [markdown]
# The same check on every call in the session: one row per call, the schema's complaints
# (none for a call that fits):

# %%
# every call of the trace, by hand (the checker's rule: tool-arguments-schema, in
# conversation.check(fs))
rows = []
for seq in mn.teach.find(fs, method="tools/call"):
    params = fs.message(seq)["params"]
    validator = jsonschema.Draft7Validator(schemas[params["name"]])
    rows.append({"seq": seq, "tool": params["name"],
                 "problems": [e.message for e in validator.iter_errors(params["arguments"])]})
pd.DataFrame(rows)

# %% [markdown]
# ## Step 4c: negotiated capabilities
#
# At `initialize` each side says what it can do, and neither may use a feature the other
# did not declare: a server sends `sampling/createMessage` only to a client that declared
# `sampling`; a client calls `logging/setLevel` only on a server that declared `logging`.
# The initialize exchange of `everything-stdio-server-requests`, raw lines first:

# %%
sr = mn.load(mn.sample_path("everything-stdio-server-requests"))
init = mn.teach.find(sr, method="initialize")[0]
mn.teach.show(sr, init, mn.teach.answer_to(sr, init), max_lines=40)

# %% [markdown]
# A table of which capability each method needs (from the specification's
# capability sections), and a check of every frame of the session against what was
# declared:

# %%
# by hand (the checker's rules: capability-server-undeclared and its kin)
NEEDS = {"tools/": ("server", "tools"), "resources/": ("server", "resources"),
         "prompts/": ("server", "prompts"), "logging/setLevel": ("server", "logging"),
         "completion/complete": ("server", "completions"),
         "notifications/message": ("server", "logging"),
         "notifications/tools/list_changed": ("server", "tools"),
         "sampling/createMessage": ("client", "sampling"),
         "elicitation/create": ("client", "elicitation"), "roots/list": ("client", "roots")}


def capability_check(trace):
    first = mn.teach.find(trace, method="initialize")[0]
    declared = {"client": trace.message(first)["params"].get("capabilities", {}),
                "server": trace.message(mn.teach.answer_to(trace, first))
                .get("result", {}).get("capabilities", {})}
    out = []
    for seq in mn.teach.find(trace):
        method = trace.frames.loc[seq, "method"]
        need = next((v for k, v in NEEDS.items() if isinstance(method, str) and (
            method == k or (k.endswith("/") and method.startswith(k)))), None)
        if need:
            side, name = need
            out.append({"seq": seq, "method": method, "needs": f"{side}: {name}",
                        "declared": name in declared[side]})
    return pd.DataFrame(out)


capability_check(sr)

# %% [markdown]
# Everything used was declared. Now a client that declares nothing, talking to a server
# that declared only tools and resources (`pages-stdio-undeclared`): it asks for logging
# and prompts anyway, and the server answers `-32601`:

# %%
undeclared = mn.load(mn.sample_path("pages-stdio-undeclared"))
mn.teach.sequence(undeclared)

# %%
capability_check(undeclared)

# %% [markdown]
# Servers also adapt to what the client declared. The same reference server, talking to a
# client with no capabilities (`everything-stdio-capabilities`), lists fewer tools than it
# lists for the SDK client, which declared sampling, elicitation and roots: the tools that
# would need them are simply not there.

# %%
bare = mn.load(mn.sample_path("everything-stdio-capabilities"))
tools_of = {name: {t_["name"] for t_ in trace.message(mn.teach.answer_to(
    trace, mn.teach.find(trace, method="tools/list")[0]))["result"]["tools"]}
    for name, trace in {"no capabilities": bare, "SDK client": sr}.items()}
sorted(tools_of["SDK client"] - tools_of["no capabilities"])

# %% [markdown]
# ## Step 5: redact before you share
#
# A capture holds whatever went over the wire: tokens in headers, keys in arguments,
# a user's data in results. Before it goes into a bug report, `t.redact()` replaces
# secrets with salted hashes and says what it replaced (notebook 09 goes further):

# %%
secrets = mn.load(mn.sample_path("everything-http-secrets"))
clean, report = secrets.redact()
report[["seq", "where", "kind"]]

# %% [markdown]
# ## Exercise: write the answer the server should have sent
#
# Below is a real request whose answer is missing from your copy of the trace. Write the
# response as a dict; the checker grades it in place of the real one: it must pair with
# the request, break no rule, and be the right kind of answer.

# %%
reply = mn.teach.respond(LEARNER)
reply

# %%
mn.teach.show(reply.trace, reply.request_seq)

# %%
response = {}  # {"jsonrpc": "2.0", "id": ..., "result": ...} or {..., "error": {...}}
reply.check(response)

# %% [markdown]
# ## What you learned
#
# - the checklist: valid JSON-RPC, ids matched, protocol error or `isError`, method
#   names, arguments against `inputSchema`, negotiated capabilities, redaction;
# - a `-32603` blames the server; a missing parameter is `-32602`; a failing tool is a
#   result with `isError`;
# - capabilities bind both sides, and a server may shape what it offers by them.
