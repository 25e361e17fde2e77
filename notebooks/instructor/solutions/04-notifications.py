# Instructor solution for 04-notifications (run in the notebook's namespace: `%run -i`).
# ruff: noqa: F821, B018
# A notifications/* method sent with an id is classified as a request; the answer to it
# pairs with it like any answer.
frames = ex.trace.frames
with_id = frames[(frames["kind"] == "request") & frames["method"].str.startswith("notifications/")]
answer = {int(s): "notification-with-id" for s in with_id["seq"]}
pairs = ex.trace.pairs
replies = pairs[pairs["request_seq"].isin(with_id["seq"]) & pairs["response_seq"].notna()]
answer.update({int(s): "notification-answered" for s in replies["response_seq"]})
print(answer)
display(ex.check(answer))
ANSWERS = [(ex, answer)]
