"""A compact table of 64-bit keys and small values that only grows: what the streaming
walk remembers of every request id it has seen (a Python dict of tuples would hold about
a hundred bytes per id; this holds a byte an integer id, 13 to 26 another).

Two stores behind one interface, each a lookup in constant time at any size:

- **ids stored by value** (:func:`id_keys`): a non-negative integer id below 10¹² (what
  most clients send: 0, 1, 2, ... per session) has a key that *is* the id, its session
  and its side (:data:`TAG` set); the table keeps such ids in a byte array per (session,
  side) indexed by the id, one byte an id, grown as the ids grow (an id far past the ones
  held goes to the hashed store instead). Ids near each other (a chunk's) are bytes near
  each other.
- **hashed keys**, the other ids (strings, negative, large, ``-0``): 64-bit hashes of
  ``(session, side, id key)`` (:func:`mix`, bit 62 cleared) in an open-addressing table
  (linear probing, at most 70% full, doubled when fuller: each key is moved O(1) times in
  all), probed for a whole chunk's keys at once. Two distinct ids of one capture share a
  hash with a probability of about n²/2⁶⁴ (n = 10⁷ ids: 5·10⁻⁶).

Why: the table was sorted levels of at most 2¹⁹ hashed keys, whose number grew with the
file, and every new id (a miss) was searched in all of them: at 10,485,760 tiny frames
(2.6M ids, 7 levels) the lookups cost 12 ms a chunk against 2.5 ms at 1M frames, what
made the per-line cost of ``mn.summarize`` rise with the file
(``benchmarks/RESULTS-10m.md``). Measured on 17k keys a chunk, half of them misses: the
levels 2.3 ms at 262k keys and 8.0 ms at 2.6M; the hashed store 1.1 and 1.8 ms (the
difference: cache misses once the table leaves the caches); ids by value, an index.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["KeyTable", "mix", "mix_one", "id_keys", "key_of", "TAG"]

#: the bit of a key that stands for an integer id stored by value (bit 63 clear); a hashed
#: key has it clear
TAG = 1 << 62
_ID_BITS = 40
#: ids stored by value are below this (12 digits at most; < 2**40)
ID_LIMIT = 10**12
#: (session, side) groups stored by value: session * 3 + side + 1 below this (2**22)
GROUPS = 1 << (62 - _ID_BITS)
_ID_MASK = (1 << _ID_BITS) - 1
_CLEAR = ~TAG
_POW10 = 10 ** np.arange(1, 13, dtype=np.int64)
#: a byte array of a group grows to hold an id when the id is below twice the ids the
#: group would then hold plus this (else the id is hashed): at most about two
#: bytes of array an id
_SLACK = 64
#: the hashed store: no key is this (a key equal to it is kept aside), the fullest it gets
_EMPTY = -(2**63)
_LOAD = 0.7
_GOLD = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: 2**64 / the golden ratio

_M = 1000003
_WRAP = 1 << 64
_HALF = 1 << 63


def mix(str_hash: np.ndarray, session: np.ndarray | int, side: np.ndarray | int) -> np.ndarray:
    """The key of each ``(hash(id key), session number, side)`` (side: -1, 0 or 1), as
    int64 (wrapping: the same value :func:`mix_one` gives)."""
    with np.errstate(over="ignore"):
        k = np.asarray(str_hash, dtype=np.int64) * np.int64(_M)
        k = (k + np.asarray(session, dtype=np.int64)) * np.int64(3)
        return k + (np.asarray(side, dtype=np.int64) + 1)


def mix_one(str_hash: int, session: int, side: int) -> int:
    """:func:`mix` of one key, in Python integers."""
    k = ((str_hash * _M + session) * 3 + side + 1) % _WRAP
    return k - _WRAP if k >= _HALF else k


def id_keys(ids: np.ndarray, id_key: np.ndarray, session: np.ndarray,
            sides: tuple[int, ...] = (0, 1)) -> list[np.ndarray]:
    """The table keys of each id (``ids``: the ids as decoded, ``id_key``: their key text,
    both object arrays; ``session``: int64 codes) for each of ``sides`` (-1, 0 or 1): by
    value where the id is an integer whose key text is its digits (``0`` ..
    ``999999999999``, not ``-0``) and the session fits, else hashed. The same values
    :func:`key_of` gives."""
    n = len(ids)
    h = np.fromiter(map(hash, id_key), dtype=np.int64, count=n)
    value = _values(ids, id_key)
    out = []
    for side in sides:
        with np.errstate(over="ignore"):
            k = mix(h, session, side) & np.int64(_CLEAR)
        g = session * 3 + (side + 1)
        byval = (value >= 0) & (g >= 0) & (g < GROUPS)
        if byval.any():
            k[byval] = (g[byval] << _ID_BITS) | value[byval] | np.int64(TAG)
        out.append(k)
    return out


def _values(ids: np.ndarray, id_key: np.ndarray) -> np.ndarray:
    """Each id's value where it is stored by value, else -1."""
    n = len(ids)
    out = np.full(n, -1, dtype=np.int64)
    # (elementwise over an object array: a type equal to int, bool and subclasses not)
    isint = np.fromiter(map(type, ids), dtype=object, count=n) == int  # noqa: E721
    if not isint.any():
        return out
    sel = np.flatnonzero(isint)
    try:
        v = ids[sel].astype(np.int64)
    except OverflowError:  # an integer past 64 bits: the rows one at a time
        v = np.fromiter((x if -ID_LIMIT < x < ID_LIMIT else -1 for x in ids[sel]),
                        dtype=np.int64, count=len(sel))
    ok = (v >= 0) & (v < ID_LIMIT)
    if ok.any():  # the key text is the digits of the value (``-0`` is not ``0``)
        sel, v = sel[ok], v[ok]
        digits = np.searchsorted(_POW10, v, side="right") + 1
        ok = np.fromiter(map(len, id_key[sel]), dtype=np.int64, count=len(sel)) == digits
        out[sel[ok]] = v[ok]
    return out


def key_of(id_key: str, session: int, side: int) -> int:
    """The table key of one id key text (:func:`id_keys` of one id)."""
    g = session * 3 + side + 1
    if (len(id_key) <= 12 and id_key.isascii() and id_key.isdigit() and 0 <= g < GROUPS
            and (id_key[0] != "0" or id_key == "0")):
        return TAG | (g << _ID_BITS) | int(id_key)
    return mix_one(hash(id_key), session, side) & _CLEAR


class KeyTable:
    """``key -> value`` (int64 -> ``dtype``, uint8 by default); a later :meth:`update` of a
    key wins. ``by_value``: keys with :data:`TAG` set are ids stored by value
    (:func:`id_keys`), one byte each (uint8 values only); the others are hashed."""

    def __init__(self, dtype: type = np.uint8, by_value: bool = False) -> None:
        self.dtype = dtype
        self._hashed = _Hashed(dtype)
        if by_value and dtype is not np.uint8:
            raise ValueError("ids stored by value hold uint8 values")
        self.by_value = by_value
        # group -> value + 1 of each id (0: absent); a value of 255 is hashed
        self._groups: dict[int, np.ndarray] = {}
        self._held: dict[int, int] = {}  # group -> ids present in its array
        self._spilled: set[int] = set()  # groups with ids hashed too

    def __len__(self) -> int:
        return len(self._hashed) + sum(self._held.values())

    @property
    def nbytes(self) -> int:
        return self._hashed.nbytes + sum(a.nbytes for a in self._groups.values())

    def lookup(self, keys: np.ndarray, missing: int = -1) -> np.ndarray:
        """The value of each key (``missing`` where absent)."""
        keys = np.asarray(keys, dtype=np.int64)
        out = np.full(len(keys), missing, dtype=np.int32)
        if not len(keys):
            return out
        rest = None
        if self.by_value:
            tagged = np.flatnonzero((keys >> 62) == 1)
            if len(tagged):
                ask = np.ones(len(keys), dtype=bool)  # asked of the hashed store
                for g, rows, ids in _by_group(keys, tagged):
                    arr = self._groups.get(g)
                    if arr is not None:
                        inside = ids < len(arr)
                        got = arr[ids[inside]].astype(np.int32) - 1
                        hit = got >= 0
                        at = rows[inside][hit]
                        out[at] = got[hit]
                        ask[at] = False
                    if g not in self._spilled:  # absent here is absent
                        ask[rows] = False
                ask[out != missing] = False
                rest = np.flatnonzero(ask)
        if rest is None:
            out[:] = self._hashed.lookup(keys, missing)
        elif len(rest):
            out[rest] = self._hashed.lookup(keys[rest], missing)
        return out

    def get(self, key: int, missing: int = -1) -> int:
        if self.by_value and key >> 62 == 1:
            g, i = key >> _ID_BITS & (GROUPS - 1), key & _ID_MASK
            arr = self._groups.get(g)
            if arr is not None and i < len(arr) and arr[i]:
                return int(arr[i]) - 1
            if g not in self._spilled:
                return missing
        return self._hashed.get(key, missing)

    def update(self, items: dict[int, int]) -> None:
        """Add or replace ``key: value`` pairs."""
        if not items:
            return
        k = np.fromiter(items.keys(), dtype=np.int64, count=len(items))
        v: np.ndarray = np.fromiter(items.values(), dtype=self.dtype, count=len(items))
        if self.by_value:
            tagged = np.flatnonzero((k >> 62) == 1)
            if len(tagged):
                spill = np.ones(len(k), dtype=bool)  # what is hashed
                for g, rows, ids in _by_group(k, tagged):
                    kept = self._store(g, ids, v[rows])
                    spill[rows[kept]] = False
                if not spill.any():
                    return
                k, v = k[spill], v[spill]
        self._hashed.update(k, v)

    def _store(self, g: int, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Store what fits of one group's ids in its array; which of them it took."""
        arr = self._groups.get(g)
        size = 0 if arr is None else len(arr)
        held = self._held.get(g, 0)
        # an id past what the array holds, and far past the ids held, is hashed; so is a
        # value of 255 (the array keeps value + 1 in a byte)
        take = (ids < max(size, 2 * (held + len(ids)) + _SLACK)) & (values < 255)
        if not take.all():
            self._spilled.add(g)
            drop = ids[~take]
            if arr is not None:  # a value that moved to the hashed store is not kept here
                drop = drop[drop < size]
                gone = arr[drop] > 0
                arr[drop[gone]] = 0
                held -= int(gone.sum())
            ids, values = ids[take], values[take]
        if len(ids):
            top = int(ids.max()) + 1
            if top > size:  # grown by a quarter at least: O(1) a byte in all
                grown = np.zeros(max(top, size + size // 4, _SLACK), dtype=np.uint8)
                if arr is not None:
                    grown[:size] = arr
                arr = self._groups[g] = grown
            assert arr is not None
            held += int(np.count_nonzero(arr[ids] == 0))
            arr[ids] = values + 1
        self._held[g] = held
        return take


class _Hashed:
    """``int64 -> dtype`` by open addressing (linear probing), probed for many keys at once:
    a round looks at one slot of every key still probing."""

    def __init__(self, dtype: type = np.uint8, bits: int = 10) -> None:
        self.dtype = dtype
        self._n = 0
        self._aside: dict[int, int] = {}  # the key _EMPTY, if ever given
        self._alloc(bits)

    def _alloc(self, bits: int) -> None:
        self._bits = bits
        self._keys = np.full(1 << bits, _EMPTY, dtype=np.int64)
        self._vals: np.ndarray = np.zeros(1 << bits, dtype=self.dtype)

    def __len__(self) -> int:
        return self._n + len(self._aside)

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._vals.nbytes)

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((keys.view(np.uint64) * _GOLD) >> np.uint64(64 - self._bits)
                    ).astype(np.int64)

    def lookup(self, keys: np.ndarray, missing: int = -1) -> np.ndarray:
        out = np.full(len(keys), missing, dtype=np.int32)
        if not len(keys) or not len(self):
            return out
        mask = (1 << self._bits) - 1
        slot = self._slot(keys)
        todo = np.arange(len(keys))
        table, vals = self._keys, self._vals
        while len(todo):
            s = slot[todo]
            cur = table[s]
            hit = cur == keys[todo]
            if hit.any():
                out[todo[hit]] = vals[s[hit]]
            on = ~hit & (cur != _EMPTY)  # an empty slot ends the probe: absent
            todo = todo[on]
            slot[todo] = (s[on] + 1) & mask
        if self._aside:
            out[keys == _EMPTY] = self._aside[_EMPTY]
        return out

    def get(self, key: int, missing: int = -1) -> int:
        if key == _EMPTY:
            return self._aside.get(key, missing)
        mask = (1 << self._bits) - 1
        s = int(self._slot(np.asarray([key], dtype=np.int64))[0])
        table = self._keys
        while True:
            cur = int(table[s])
            if cur == key:
                return int(self._vals[s])
            if cur == _EMPTY:
                return missing
            s = (s + 1) & mask

    def update(self, keys: np.ndarray, vals: np.ndarray) -> None:
        """Add or replace ``keys`` (distinct) with ``vals``."""
        odd = keys == _EMPTY
        if odd.any():
            self._aside[_EMPTY] = int(vals[odd][-1])
            keys, vals = keys[~odd], vals[~odd]
        if not len(keys):
            return
        need = self._n + len(keys)
        if need > _LOAD * (1 << self._bits):  # doubled (or more): the keys put again
            bits = self._bits
            while need > _LOAD * (1 << bits):
                bits += 1
            old_keys, old_vals = self._keys, self._vals
            self._alloc(bits)
            self._n = 0
            for a in range(0, len(old_keys), 1 << 16):  # a piece at a time: no copy of all
                k = old_keys[a:a + (1 << 16)]
                used = k != _EMPTY
                self._put(k[used], old_vals[a:a + (1 << 16)][used])
            del old_keys, old_vals
        self._put(keys, vals)

    def _put(self, keys: np.ndarray, vals: np.ndarray) -> None:
        mask = (1 << self._bits) - 1
        slot = self._slot(keys)
        todo = np.arange(len(keys))
        table, store = self._keys, self._vals
        while len(todo):
            s = slot[todo]
            cur = table[s]
            want = keys[todo]
            same = cur == want
            if same.any():
                store[s[same]] = vals[todo[same]]
            free = cur == _EMPTY
            if free.any():
                # keys of this round that want the same free slot: one of them takes it
                # (the last written), the others probe on from it
                table[s[free]] = want[free]
                won = free & (table[s] == want)
                store[s[won]] = vals[todo[won]]
                self._n += int(won.sum())
                same |= won
            on = ~same
            todo = todo[on]
            slot[todo] = (s[on] + 1) & mask


def _by_group(keys: np.ndarray, rows: np.ndarray
              ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(group, rows, ids)`` of the keys stored by value at ``rows``, one group at a time
    (a chunk has few: its sessions times two sides)."""
    k = keys[rows]
    g = (k >> _ID_BITS) & np.int64(GROUPS - 1)
    ids = k & np.int64(_ID_MASK)
    first = int(g[0])
    if (g == first).all():
        yield first, rows, ids
        return
    order = np.argsort(g, kind="stable")
    g, rows, ids = g[order], rows[order], ids[order]
    cut = np.flatnonzero(np.diff(g)) + 1
    for a, b in zip([0, *cut.tolist()], [*cut.tolist(), len(g)], strict=True):
        yield int(g[a]), rows[a:b], ids[a:b]
