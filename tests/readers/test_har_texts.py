"""``_har_texts.distinct``: the distinct texts of a buffer's spans, a column at a time
for the few short ones most replies are, against a dict of their bytes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mcp_notebook.readers._har_texts import distinct


def _reference(buf: bytes, starts: list[int], ends: list[int]) -> tuple[list[int], list[bytes]]:
    seen: dict[bytes, int] = {}
    code = [seen.setdefault(buf[x:y], len(seen)) for x, y in zip(starts, ends, strict=True)]
    return code, list(seen)


@pytest.mark.parametrize("seed", range(200))
def test_distinct_as_a_dict(seed):
    rng = random.Random(seed)
    pool = [b"Accepted", b"", b" ", b"Accepted\n", b"Acceptee", b"\x00", b"\x00\x00",
            b"x" * 32, b"x" * 33, b"y" * 31 + b"z", "\u00e9t\u00e9".encode(), b"[1]",
            bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))]
    weights = [rng.random() ** 3 for _ in pool]
    texts = rng.choices(pool, weights, k=rng.randint(0, 300))
    gap = [bytes(rng.randrange(256) for _ in range(rng.randint(0, 3))) for _ in texts]
    buf, starts, ends = b"", [], []
    for t, g in zip(texts, gap, strict=True):
        buf += g
        starts.append(len(buf))
        buf += t
        ends.append(len(buf))
    code, out = distinct(np.frombuffer(buf, dtype=np.uint8),
                         np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64))
    want_code, want = _reference(buf, starts, ends)
    assert code.tolist() == want_code and out == want
