# Solution to the exercise of 06-debugging-a-real-failure.
# The pairs give every extra answer a row of its own, with the outcome "duplicate".
pairs = ex.trace.pairs
extra = pairs[pairs["outcome"] == "duplicate"]
answer = {int(s): "duplicate-response" for s in extra["response_seq"]}
print(answer)
display(ex.check(answer))
