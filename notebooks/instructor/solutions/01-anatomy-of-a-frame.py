# Instructor solution for 01-anatomy-of-a-frame (run in the notebook's namespace: `%run -i`).
# ruff: noqa: F821, B018
# A request with no answer from the other side, and no cancel that would explain it.
import json

frames = ex.trace.frames
cancelled = {json.dumps(ex.trace.message(s)["params"].get("requestId"))
             for s in mn.teach.find(ex.trace, method="notifications/cancelled")}
answer = {}
for seq in mn.teach.find(ex.trace, kind="request"):
    if mn.teach.answer_to(ex.trace, seq) is None and frames.loc[seq, "id_key"] not in cancelled:
        answer[seq] = "unanswered-request"
print(answer)
display(ex.check(answer))
ANSWERS = [(ex, answer)]
