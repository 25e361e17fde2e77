# %% [markdown]
# # Write your own rule (optional)
#
# **You will learn**
#
# - what a rule of the checker is: a code, a severity, the versions it applies to, the spec
#   sentence it enforces with its source, and advice, plus a check;
# - how to write a check with pandas over `t.frames` and `t.pairs`;
# - how to test it on a real trace, and on a replayed trace with a fault planted by hand.
#
# *About 20 minutes (optional track: debugging in depth; after the workshop).*

# %%
import mcp_notebook as mn
import pandas as pd
from mcp_notebook.protocol.rules import Rule, rule

pd.set_option("display.max_colwidth", 110)

# %% [markdown]
# ## A rule is data
#
# Every rule of the checker is a row of one catalogue, `mcp_notebook.protocol.rules`.
# `mn.rules()` shows it as a DataFrame; `rule(code)` gives one row as a `Rule`:

# %%
mn.rules().groupby(["topic", "severity"], observed=True).size().unstack(fill_value=0)

# %%
rule("unanswered-request")

# %% [markdown]
# The check behind each rule sits beside it, in the engine (`mcp_notebook/engine/rules/`):
# a function registered with `@check(RULE)` that reads the frames' columns and yields, for each frame that breaks the rule, its
# `seq`, a related frame, and a short detail. The checker runs them all and keeps each
# finding only where the rule applies to the session's protocol version.

# %% [markdown]
# ## The rule we want
#
# Notebook 05 ended on an open question. The reference server kept sending progress for
# a call the client had cancelled, and the checker said nothing, because a cancelled
# request stays open until an answer comes. The cancellation page of the specification
# asks more of the receiver of a cancel (MCP 2025-06-18,
# `basic/utilities/cancellation.mdx`, *Behavior Requirements*); the checker quotes that
# sentence for its answer-after-cancel rule:

# %%
mn.teach.cite("response-after-cancel")

# %% [markdown]
# Progress after the cancel is a sign that the work did not stop. A SHOULD, so a
# `warning`. Here is the rule as data:

# %%
progress_after_cancel = Rule(
    code="progress-after-cancel",
    severity="warning",
    title="No progress for a cancelled request",
    spec="Receivers of cancellation notifications SHOULD: Stop processing the cancelled "
         "request; Free associated resources; Not send a response for the cancelled request",
    source="MCP 2025-06-18, basic/utilities/cancellation.mdx",
    advice="Stop the work, and its progress reports, when the request is cancelled.",
    topic="cancel-progress",
)
print(progress_after_cancel.cite)

# %% [markdown]
# ## The check
#
# A check takes a trace and yields `(seq, related_seq, detail)`. For this rule: for each
# cancelled request that carried a progress token, every progress notification with that
# token that comes after the cancel. The pieces are all in the tables: `t.pairs` has the
# cancelled requests and their `cancel_seq`, `t.message(seq)` decodes a frame.
#
# Write it here. The version below finds nothing yet; make it find the right frames.

# %%
def check_progress_after_cancel(t):
    """Progress notifications for a request after its cancel."""
    cancelled = t.pairs.dropna(subset=["cancel_seq"])
    progress = t.frames[t.frames["method"] == "notifications/progress"]
    for row in cancelled.itertuples():
        # Your code: find the progressToken of the request (t.message(row.request_seq)),
        # then the frames of `progress` with that token after row.cancel_seq, and for each:
        #     yield seq, row.cancel_seq, "a short detail"
        pass
    yield from ()  # (makes this function a generator while it finds nothing)


# %% [markdown]
# ## Try it
#
# `mn.teach.run_rule` runs a check and shapes its findings like `t.violations`;
# `mn.teach.with_rule` adds them to the checker's own. On the trace of notebook 05:

# %%
pc = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
mn.teach.with_rule(pc, progress_after_cancel, check_progress_after_cancel)

# %% [markdown]
# ## Test it
#
# A good rule finds what it should and nothing else. Three tests, each on a real trace:
#
# 1. the reference server's trace: every progress report after the cancel, and only those;
# 2. the demo session, where the Python SDK server stops reporting when cancelled: nothing;
# 3. the demo session replayed with one progress report moved after the cancel: exactly
#    that frame.

# %%
def expected_late_progress(t):
    """The answer key, the slow way: walk the frames in order."""
    cancelled_tokens, late = {}, []
    for seq in t.frames["seq"]:
        msg = t.message(seq)
        if not isinstance(msg, dict):
            continue
        if msg.get("method") == "notifications/cancelled":
            request = t.pairs.query("cancel_seq == @seq")["request_seq"]
            for req in request:
                token = (t.message(int(req)).get("params") or {}).get("_meta", {}).get(
                    "progressToken")
                if token is not None:
                    cancelled_tokens[token] = seq
        elif msg.get("method") == "notifications/progress":
            if msg["params"]["progressToken"] in cancelled_tokens:
                late.append(int(seq))
    return late


def test(t, check):
    found = sorted(int(s) for s in mn.teach.run_rule(t, progress_after_cancel, check)["seq"])
    want = expected_late_progress(t)
    return {"found": found, "expected": want, "ok": found == want}


demo = mn.load(mn.sample_path("demo-stdio"))
cancelled = demo.pairs.query("outcome == 'cancelled'").iloc[0]
progress = demo.frames.query("method == 'notifications/progress'")["seq"]
before_cancel = int(progress[progress < cancelled["cancel_seq"]].iloc[-1])
moved = mn.teach.what_if(demo, delete=[before_cancel],
                         insert_after={int(cancelled["cancel_seq"]): demo.message(before_cancel)})

pd.DataFrame({"reference server": test(pc, check_progress_after_cancel),
              "demo session": test(demo, check_progress_after_cancel),
              "demo, replayed": test(moved, check_progress_after_cancel)}).T


# %% [markdown]
# ## Going further
#
# - A rule that should join the catalogue is one module of `mcp_notebook/engine/rules/`:
#   its `Rule` row (code, severity, the spec sentence and its source, advice) and its
#   check, registered with `@check(RULE)`, which works on numpy columns, not DataFrames,
#   so it stays fast on a million frames (`initialize_in_batch.py` is a short example);
#   then one row of the rule table test `tests/protocol/test_rules.py` and a regenerated
#   `docs/rules.md`.
# - Other ideas to try: a `tools/call` whose `arguments` is not an object; a server that
#   answers `initialize` with a protocol version the client did not offer; a session where
#   a tool error is followed by the same call again and again.
#
# ## What you learned
#
# - a rule is data (code, severity, versions, spec sentence, source, advice) plus a check;
# - a check yields `(seq, related_seq, detail)`; pandas makes a first version quick;
# - test a rule on real traces, clean and broken, and on replays with `what_if`.
