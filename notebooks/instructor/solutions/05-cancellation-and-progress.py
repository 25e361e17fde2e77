# Instructor solution for 05-cancellation-and-progress (run in the notebook's namespace: `%run -i`).
# ruff: noqa: F821, B018
# The cancel names a request by its id; an answer from the other side with that id,
# after the cancel, is the late answer (info: expected only as the race).
import json

answer = {}
for cancel in mn.teach.find(ex.trace, method="notifications/cancelled"):
    rid = json.dumps(ex.trace.message(cancel)["params"]["requestId"], separators=(",", ":"))
    sender = ex.trace.frames.loc[cancel, "direction"]
    for seq in mn.teach.find(ex.trace, direction="s2c" if sender == "c2s" else "c2s"):
        if seq > cancel and ex.trace.frames.loc[seq, "kind"] in ("result", "error") \
                and ex.trace.frames.loc[seq, "id_key"] == rid:
            answer[seq] = "response-after-cancel"
print(answer, "severity:", mn.rules().set_index("code").loc["response-after-cancel", "severity"])
display(ex.check(answer))
ANSWERS = [(ex, answer)]
