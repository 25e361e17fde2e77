# Solution to the exercise of 06-debugging-a-real-failure.
# It runs in the notebook's namespace (`%load` or `%run -i`): `ex`, `mn`, `display`... are there.
# ruff: noqa: F821, B018
# The pairs give every extra answer a row of its own, with the outcome "duplicate".
pairs = ex.trace.pairs
extra = pairs[pairs["outcome"] == "duplicate"]
answer = {int(s): "duplicate-response" for s in extra["response_seq"]}
print(answer)
display(ex.check(answer))
