# Instructor solution for 08-follow-the-checklist (run in the notebook's namespace).
# ruff: noqa: F821
# 1. Classify by the members of each answer, as a learner reads them.
answer = {}
for seq in kinds.seqs:
    msg = kinds.trace.message(seq)
    if "error" in msg:
        answer[seq] = "protocol error"
    elif msg["result"].get("isError") is True:
        answer[seq] = "tool error"
    else:
        answer[seq] = "result"

# 2. The response: the request's own id, and what the case needs.
request = reply.trace.message(reply.request_seq)
method = request["method"]
params = request.get("params") or {}
if method == "ping":
    response = {"jsonrpc": "2.0", "id": request["id"], "result": {}}
elif method == "tools/call":  # the tool ran and failed: a tool error
    response = {"jsonrpc": "2.0", "id": request["id"], "result": {
        "content": [{"type": "text", "text": "division by zero"}], "isError": True}}
elif method == "resources/read" and "uri" not in params:
    response = {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32602, "message": "Missing required parameter: uri"}}
else:  # a method the server does not have
    response = {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
ANSWERS = [(kinds, answer), (reply, response)]
