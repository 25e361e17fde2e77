# Solution to the exercise of 01-anatomy-of-a-frame.
# It runs in the notebook's namespace (`%load` or `%run -i`): `ex`, `mn`, `display`... are there.
# ruff: noqa: F821, B018
# Every request has a row in the pairs; a request that got no answer has no response_seq,
# and its outcome is "unanswered" (a cancelled request is "cancelled" instead).
pairs = ex.trace.pairs
waiting = pairs[pairs["outcome"] == "unanswered"]
answer = {int(seq): "unanswered-request" for seq in waiting["request_seq"]}
print(answer)
display(ex.check(answer))
