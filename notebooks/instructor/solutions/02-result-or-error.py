# Instructor solution for 02-result-or-error (run in the notebook's namespace: `%run -i`).
# ruff: noqa: F821, B018
# 1. Both members: decode every response and look for the two keys together.
frames = ex.trace.frames
responses = frames[frames["kind"].isin(["result", "error"])]
both = [int(s) for s in responses["seq"]
        if {"result", "error"} <= set(ex.trace.message(s))]
answer = {seq: "result-and-error" for seq in both}
print("exercise 1:", answer)
display(ex.check(answer))

# 2. Not an object: a result whose value is not a dict (None, a string, a bool, a list).
frames2 = ex2.trace.frames
results = frames2[frames2["kind"] == "result"]
not_object = [int(s) for s in results["seq"]
              if not isinstance(ex2.trace.message(s)["result"], dict)]
answer2 = {seq: "result-not-object" for seq in not_object}
print("exercise 2:", answer2)
display(ex2.check(answer2))
ANSWERS = [(ex, answer), (ex2, answer2)]
