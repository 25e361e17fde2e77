# Solution to the exercise of 05-cancellation-and-progress.
# It runs in the notebook's namespace (`%load` or `%run -i`): `ex`, `mn`, `display`... are there.
# ruff: noqa: F821, B018
# A cancelled pair that still has a response_seq was answered after its cancel: the race
# (or a receiver going against its SHOULD NOT), reported as info.
pairs = ex.trace.pairs
late = pairs[(pairs["outcome"] == "cancelled") & pairs["response_seq"].notna()]
answer = {int(s): "response-after-cancel" for s in late["response_seq"]}
print(answer, "severity:", mn.rules().set_index("code").loc["response-after-cancel", "severity"])
display(ex.check(answer))
