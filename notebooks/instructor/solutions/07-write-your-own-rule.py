# One solution to 07-write-your-own-rule: progress for a request after its cancel.
# It runs in the notebook's namespace (`%load` or `%run -i`): `ex`, `mn`, `display`... are there.
# ruff: noqa: F821, B018
def check_progress_after_cancel(t):
    """Progress notifications for a request after its cancel."""
    cancelled = t.pairs.dropna(subset=["cancel_seq"])
    progress = t.frames[t.frames["method"] == "notifications/progress"]
    tokens = {seq: t.message(seq)["params"].get("progressToken") for seq in progress["seq"]}
    for row in cancelled.itertuples():
        params = t.message(int(row.request_seq)).get("params") or {}
        token = params.get("_meta", {}).get("progressToken")
        if token is None:
            continue
        for seq, tok in tokens.items():
            if tok == token and seq > row.cancel_seq:
                yield int(seq), int(row.cancel_seq), f"progress for token {token!r} after the cancel"


pd.DataFrame({"reference server": test(pc, check_progress_after_cancel),
              "demo session": test(demo, check_progress_after_cancel),
              "demo, replayed": test(moved, check_progress_after_cancel)}).T
