"""A compact table of 64-bit keys and small values that only grows: what the streaming
walk remembers of every request id it has seen (a Python dict of tuples would hold about
a hundred bytes per id; this holds nine).

Sorted levels, merged as a binary counter merges (each key is copied O(log n) times in
all) up to :data:`RUN_MAX` keys a level; a lookup of many keys is one ``searchsorted`` per level, newest level first. The
keys are 64-bit hashes of ``(session, side, id key)`` (:func:`mix`): two distinct ids of
one capture share a hash with a probability of about n²/2⁶⁵ (n = 10⁷ ids: 3·10⁻⁶).
"""

from __future__ import annotations

import numpy as np

__all__ = ["KeyTable", "mix", "mix_one", "RUN_MAX"]

#: keys of the largest level: levels this large are not merged further (a merge copies
#: both levels, so this bounds what a merge adds to the peak: 4.5 MB)
RUN_MAX = 1 << 19

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


class KeyTable:
    """``key -> value`` (int64 -> ``dtype``, uint8 by default: nine bytes a key); a later
    :meth:`update` of a key wins."""

    def __init__(self, dtype: type = np.uint8) -> None:
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []
        self.dtype = dtype

    def __len__(self) -> int:
        return sum(len(k) for k, _ in self._levels)

    @property
    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self._levels)

    def lookup(self, keys: np.ndarray, missing: int = -1) -> np.ndarray:
        """The value of each key (``missing`` where absent)."""
        keys = np.asarray(keys, dtype=np.int64)
        out = np.full(len(keys), missing, dtype=np.int32)
        if not self._levels or not len(keys):
            return out
        # sorted needles: each level is searched in order, not at random places
        order = np.argsort(keys, kind="stable")
        want = keys[order]
        got = np.full(len(keys), missing, dtype=np.int32)
        todo = np.ones(len(keys), dtype=bool)
        for lk, lv in reversed(self._levels):  # newest first
            idx = np.flatnonzero(todo)
            if not len(idx):
                break
            sub = want[idx]
            at = np.searchsorted(lk, sub)
            at[at == len(lk)] = 0
            hit = lk[at] == sub
            got[idx[hit]] = lv[at[hit]]
            todo[idx[hit]] = False
        out[order] = got
        return out

    def get(self, key: int, missing: int = -1) -> int:
        for lk, lv in reversed(self._levels):
            i = int(np.searchsorted(lk, key))
            if i < len(lk) and lk[i] == key:
                return int(lv[i])
        return missing

    def update(self, items: dict[int, int]) -> None:
        """Add or replace ``key: value`` pairs."""
        if not items:
            return
        k = np.fromiter(items.keys(), dtype=np.int64, count=len(items))
        v: np.ndarray = np.fromiter(items.values(), dtype=self.dtype, count=len(items))
        order = np.argsort(k, kind="stable")
        self._levels.append((k[order], v[order]))
        while (len(self._levels) > 1 and len(self._levels[-2][0]) <= 2 * len(self._levels[-1][0])
               and len(self._levels[-2][0]) + len(self._levels[-1][0]) <= RUN_MAX):
            new = self._levels.pop()
            old = self._levels.pop()
            self._levels.append(_merge(old, new))


def _merge(old: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray]
           ) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted levels as one (``new``'s value wins for a key in both)."""
    ok, ov = old
    nk, nv = new
    at = np.searchsorted(ok, nk)
    safe = np.minimum(at, len(ok) - 1) if len(ok) else at
    same = (ok[safe] == nk) if len(ok) else np.zeros(len(nk), dtype=bool)
    if same.any():
        ov = ov.copy()
        ov[safe[same]] = nv[same]
        nk, nv, at = nk[~same], nv[~same], at[~same]
    return np.insert(ok, at, nk), np.insert(ov, at, nv)
