"""Which request a ``notifications/progress`` or ``notifications/cancelled`` names."""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["notification_targets"]


def notification_targets(trace: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``notifications/progress`` and ``notifications/cancelled`` that name a request of
    the pairs: their seqs, the request's seq, and whether each is a progress, in capture
    order.

    A progress names the last request before it, from the other side of its session,
    whose ``_meta.progressToken`` is its token; a cancel the last request before it, from
    its own side, whose id is its ``requestId``. Memory: the requests that carry a token
    or that a cancel names, and the notifications.
    """
    p, f = trace.pairs, trace.frames
    reqs = np.unique(p["request_seq"].dropna().to_numpy(dtype=np.int64))
    is_note = (f["kind"] == "notification").to_numpy()
    # session and direction as category codes: no object per frame
    session = f["session"].cat.codes.to_numpy()
    side = f["direction"].cat.codes.to_numpy()
    flip = {int(c): int(k) for c, k in _opposite_codes(f["direction"]).items()}
    out_notes: list[np.ndarray] = []
    out_reqs: list[np.ndarray] = []
    out_progress: list[np.ndarray] = []
    for name, progress in (("notifications/progress", True), ("notifications/cancelled", False)):
        notes = np.flatnonzero(is_note & (f["method"] == name).to_numpy())
        if not len(notes) or not len(reqs):
            continue
        refs, _ = trace.references(notes)
        if progress:
            keys, _ = trace.references(reqs)
        else:  # only the ids some cancel names
            wanted = {r for r in refs if r is not None}
            ids = f["id_key"].iloc[reqs].tolist()
            keys = np.array([k if k in wanted else None for k in ids], dtype=object)
        by: dict[tuple[int, int, Any], list[int]] = {}
        for seq, key in zip(reqs.tolist(), keys, strict=True):
            if key is not None:
                by.setdefault((int(session[seq]), int(side[seq]), key), []).append(seq)
        target = np.full(len(notes), -1, dtype=np.int64)
        for i, (seq, ref) in enumerate(zip(notes.tolist(), refs, strict=True)):
            if ref is None:
                continue
            asker = int(side[seq]) if not progress else flip.get(int(side[seq]), -2)
            mine = by.get((int(session[seq]), asker, ref))
            k = bisect.bisect_left(mine, seq) if mine else 0
            if mine and k:
                target[i] = mine[k - 1]
        hit = target >= 0
        out_notes.append(notes[hit])
        out_reqs.append(target[hit])
        out_progress.append(np.full(int(hit.sum()), progress, dtype=bool))
    if not out_notes:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros(0, dtype=bool))
    all_notes = np.concatenate(out_notes)
    order = np.argsort(all_notes, kind="stable")
    return (all_notes[order], np.concatenate(out_reqs)[order],
            np.concatenate(out_progress)[order])


def _opposite_codes(direction: pd.Series) -> dict[int, int]:
    """Category code of c2s -> that of s2c and back (those present)."""
    cats = list(direction.cat.categories)
    codes = {name: cats.index(name) for name in ("c2s", "s2c") if name in cats}
    return {codes[a]: codes[b] for a, b in (("c2s", "s2c"), ("s2c", "c2s"))
            if a in codes and b in codes}
