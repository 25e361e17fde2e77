# Instructor solution for 03-pairing-by-id (run in the notebook's namespace: `%run -i`).
# ruff: noqa: F821, B018
# 1. The flipped id: an answer whose id_key matches no request from the other side, but
#    would match one if its type were changed ("4" <-> 4). Its request stays unanswered.
frames = ex.trace.frames
requests = frames[frames["kind"] == "request"]
asked = set(zip(requests["direction"], requests["id_key"], strict=True))
answer = {}
for row in frames[frames["kind"].isin(["result", "error"])].itertuples():
    asker = {"c2s": "s2c", "s2c": "c2s"}[row.direction]
    if (asker, row.id_key) in asked:
        continue
    other_type = row.id_key[1:-1] if row.id_key.startswith('"') else f'"{row.id_key}"'
    if (asker, other_type) in asked:
        answer[int(row.seq)] = "id-type-mismatch"
        request = requests[(requests["direction"] == asker) & (requests["id_key"] == other_type)]
        answer[int(request["seq"].iloc[0])] = "unanswered-request"  # the consequence
print("exercise 1:", answer)
display(ex.check(answer))

# 2. The id reused in flight: a second request from the same side with the same id_key,
#    sent before the first one was answered. The answer goes to the first one (first in,
#    first out); the second one is the client's fault alone.
frames2 = ex2.trace.frames
requests2 = frames2[frames2["kind"] == "request"]
repeated = requests2[requests2.duplicated(["session", "direction", "id_key"], keep="first")]
answer2 = {int(s): "request-id-in-flight" for s in repeated["seq"]}
print("exercise 2:", answer2)
display(ex2.check(answer2))
ANSWERS = [(ex, answer), (ex2, answer2)]
