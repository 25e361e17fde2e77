"""The streaming walk's table of request ids (``mcp_notebook/stream/keys.py``): integer ids
stored by value beside hashed keys, under growth, far ids, collisions and updates."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_notebook.stream.keys import TAG, KeyTable, id_keys, key_of, mix, mix_one


def _objects(values: list[object]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


#: (id as decoded, its key text, stored by value): what the scanner gives for each
IDS = [(0, "0", True), (7, "7", True), (10**12 - 1, "999999999999", True),
       (10**12, "1000000000000", False), (2**61 - 1 + 5, str(2**61 - 1 + 5), False),
       (2**70, str(2**70), False), (0, "-0", False), (-1, "-1", False), ("7", '"7"', False),
       ("", '""', False), (7.0, "7.0", False), (100.0, "1e2", False), (True, "true", False),
       (None, "null", False)]


@pytest.mark.parametrize("session", [0, 5, (1 << 20) - 1, 1 << 20])
def test_id_keys_agree_with_key_of_and_tag_only_small_integers(session: int) -> None:
    ids = _objects([i for i, _, _ in IDS])
    text = _objects([k for _, k, _ in IDS])
    for side in (-1, 0, 1):
        (got,) = id_keys(ids, text, np.full(len(IDS), session, dtype=np.int64), (side,))
        want = [key_of(k, session, side) for _, k, _ in IDS]
        assert got.tolist() == want
        fits = session * 3 + side + 1 < 1 << 22
        assert [(k >> 62) == 1 for k in want] == [by and fits for _, _, by in IDS]


def test_keys_differ_by_id_type_session_and_side() -> None:
    texts = ["7", '"7"', "-0", "0", "7.0"]
    keys = {key_of(t, s, d) for t in texts for s in (0, 1, 2) for d in (-1, 0, 1)}
    assert len(keys) == len(texts) * 3 * 3
    h = np.asarray([hash("a"), hash('"b"'), -(2**63)], dtype=np.int64)
    assert mix(h, 3, 1).tolist() == [mix_one(int(x), 3, 1) for x in h.tolist()]


def test_by_value_ids_grow_in_one_byte_each_and_are_never_hashed() -> None:
    t = KeyTable(by_value=True)
    n, per = 300_000, 8_192
    for a in range(0, n, per):
        t.update({key_of(str(i), 0, 0): i % 3 for i in range(a, min(n, a + per))})
    assert len(t) == n and not len(t._hashed)  # noqa: SLF001
    assert t.nbytes <= 1.3 * n + KeyTable().nbytes  # against 13 bytes a hashed key
    ask = np.asarray([key_of(str(i), 0, 0) for i in (0, 1, n - 1, n, n + 5)]
                     + [key_of(str(5), 0, 1), key_of(str(5), 1, 0)], dtype=np.int64)
    assert t.lookup(ask).tolist() == [0, 1, (n - 1) % 3, -1, -1, -1, -1]
    assert [t.get(int(k)) for k in ask] == [0, 1, (n - 1) % 3, -1, -1, -1, -1]


def test_far_ids_and_strings_are_hashed_and_later_values_win() -> None:
    t = KeyTable(by_value=True)
    near = {key_of(str(i), 2, 1): 1 for i in range(100)}
    far = key_of("500000", 2, 1)  # far past the ids held: not an array of 500k bytes
    text = key_of('"abc"', 2, 1)
    t.update({**near, far: 0, text: 0})
    assert t.nbytes < 2_000 + KeyTable().nbytes and len(t._hashed) == 2  # noqa: SLF001
    assert t.get(far) == 0 and t.get(text) == 0
    # the array grows past the far id: its later value is in the array, and wins
    for a in range(100, 500_001, 100_000):
        t.update({key_of(str(i), 2, 1): 1 for i in range(a, a + 100_000)})
    t.update({far: 2})
    assert t.get(far) == 2 and t.lookup(np.asarray([far, text]))[0] == 2
    # a value the array cannot hold (255) moves the id to the hashed store, and wins there
    t.update({key_of("7", 2, 1): 255})
    assert t.get(key_of("7", 2, 1)) == 255
    assert t.lookup(np.asarray([key_of("7", 2, 1), key_of("8", 2, 1)])).tolist() == [255, 1]
    t.update({key_of("7", 2, 1): 1})
    assert t.get(key_of("7", 2, 1)) == 1


def test_mixed_batches_keep_every_kind_of_key() -> None:
    t = KeyTable(by_value=True)
    rng = np.random.default_rng(3)
    want: dict[int, int] = {}
    for step in range(40):
        batch = {}
        for i in rng.integers(0, 3_000, size=200).tolist():
            batch[key_of(str(i), int(i % 3), int(i % 2))] = int(rng.integers(0, 256))
        for i in rng.integers(0, 500, size=50).tolist():
            batch[key_of(f'"s{i}"', 0, 0)] = int(rng.integers(0, 256))
        batch[key_of(str(10**9 + step), 0, 0)] = step  # far ids
        t.update(batch)
        want.update(batch)
    keys = np.asarray(list(want), dtype=np.int64)
    assert t.lookup(keys).tolist() == list(want.values())
    assert [t.get(int(k)) for k in keys[::17]] == list(want.values())[::17]
    missing = np.asarray([key_of(str(i), 0, 0) for i in range(3_000, 3_100)]
                         + [key_of(f'"t{i}"', 0, 0) for i in range(20)], dtype=np.int64)
    assert (t.lookup(missing) == -1).all()


def test_tagged_keys_are_plain_keys_without_by_value() -> None:
    t = KeyTable()
    t.update({TAG | 12345: 4, 99: 1})
    assert t.get(TAG | 12345) == 4 and t.lookup(np.asarray([TAG | 12345, 99])).tolist() == [4, 1]
    with pytest.raises(ValueError, match="uint8"):
        KeyTable(np.int32, by_value=True)


def test_the_hashed_store_under_growth_and_collisions() -> None:
    from mcp_notebook.stream.keys import _EMPTY, _Hashed

    t = _Hashed(bits=4)  # 16 slots: grown many times over
    rng = np.random.default_rng(7)
    want: dict[int, int] = {}
    for _ in range(60):
        # keys that share their slot's high bits (collisions), random ones, the sentinel
        same = (np.arange(50, dtype=np.int64) << 20) ^ int(rng.integers(0, 1 << 20))
        keys = np.unique(np.concatenate([same, rng.integers(-2**63, 2**63 - 1, 200,
                                                             dtype=np.int64), [_EMPTY]]))
        vals = rng.integers(0, 256, len(keys)).astype(np.uint8)
        t.update(keys, vals)
        want.update(zip(keys.tolist(), vals.tolist(), strict=True))
    assert len(t) == len(want) and (1 << t._bits) * 0.7 >= len(want)  # noqa: SLF001
    keys = np.asarray(list(want), dtype=np.int64)
    assert t.lookup(keys).tolist() == list(want.values())
    assert [t.get(k) for k in list(want)[::7]] == list(want.values())[::7]
    absent = rng.integers(-2**63, 2**63 - 1, 1000, dtype=np.int64)
    absent = absent[~np.isin(absent, keys)]
    assert (t.lookup(absent) == -1).all() and t.get(int(absent[0])) == -1
