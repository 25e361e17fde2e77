"""Generated traffic for the engine's property tests: random columns with a small id space
(so ids collide, repeat, cross sides and types), cancels, progress tokens, batches and
unknown directions."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from mcp_notebook.table import Columns

METHODS = ["tools/call", "initialize", "ping", "zz/custom", "sampling/createMessage",
           "notifications/message"]
KEYS = ["1", "2", '"1"', '"2"', "3", "null"]


def random_columns(rng: random.Random, n: int, unknown_dir: float = 0.15) -> Columns:
    c = Columns()
    for i in range(n):
        k = rng.choice(["request"] * 4 + ["result"] * 3 + ["error", "notification",
                                                          "notification", "invalid"])
        d = rng.choice(["c2s", "s2c", None] if rng.random() < unknown_dir else ["c2s", "s2c"])
        ik = rng.choice(KEYS + [None]) if k in ("result", "error") else rng.choice(KEYS)
        m = ref = prog = None
        if k == "request":
            m = rng.choice(METHODS)
            if rng.random() < 0.3:
                ref = rng.choice(["1", '"t"', "2"])
        elif k == "notification":
            m = rng.choice(["notifications/cancelled", "notifications/progress",
                            "notifications/progress", "x"])
            ik = None
            if m != "x" and rng.random() < 0.9:
                ref = rng.choice(["1", '"1"', "2", '"t"'])
            if m == "notifications/progress" and rng.random() < 0.8:
                prog = float(rng.choice([1, 2, 3, 2.5]))
        elif k == "invalid":
            ik = None
        batch = rng.choice([None] * 8 + [0, 1])
        for name, v in [("ts", float(i)), ("session", rng.choice(["a", "b", None])),
                        ("stream", "stdio"), ("direction", d), ("kind", k), ("id", None),
                        ("id_key", ik), ("method", m), ("error_code", None),
                        ("error_message", None),
                        ("is_tool_error", k == "result" and rng.random() < 0.2), ("size", 1),
                        ("raw", "{}"), ("source", "x"), ("batch", batch), ("reason", None),
                        ("local_time", False), ("flags", ()), ("ref", ref), ("progress", prog),
                        ("version", None)]:
            getattr(c, name).append(v)
    return c


#: a trace as (seed, length): shrinks towards short traces
traffic = st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 120))
