# Solution to the exercise of 05-cancellation-and-progress.
# A cancelled pair that still has a response_seq was answered after its cancel: legal,
# reported as info.
pairs = ex.trace.pairs
late = pairs[(pairs["outcome"] == "cancelled") & pairs["response_seq"].notna()]
answer = {int(s): "response-after-cancel" for s in late["response_seq"]}
print(answer, "severity:", mn.rules().set_index("code").loc["response-after-cancel", "severity"])
display(ex.check(answer))
