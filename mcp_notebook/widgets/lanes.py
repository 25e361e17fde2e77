"""Which timeline lanes are on screen: sessions shown or hidden, collapsed or expanded.

A trace of 30 sessions has up to 90 lanes (each session's client → server, server →
client and stderr lanes). The session picker hides sessions; collapsing a session draws
its lanes as one. :func:`lane_map` turns those two choices into a lookup from the
prepared lanes to the lanes drawn, which :func:`.viewport.view` applies to the visible
spans, ticks and markers (numpy indexing, whatever the trace's size).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["LaneMap", "lane_map"]


@dataclass
class LaneMap:
    """``lut[prepared lane] -> drawn lane`` (-1: hidden; ``lut[-1]`` is -1 too)."""

    lut: np.ndarray
    labels: list[str]
    session: list[int]  # per drawn lane: the session index, -1 for none
    collapsed: list[bool]  # per drawn lane: a collapsed session's lane


def lane_map(lanes: list[str], lane_session: np.ndarray, sessions: list[str],
             hidden: Iterable[int] = (), collapsed: Iterable[int] = ()) -> LaneMap:
    """The drawn lanes for ``hidden`` and ``collapsed`` session indexes.

    >>> m = lane_map(["a · c→s", "a · s→c", "b · c→s"], np.array([0, 0, 1]), ["a", "b"],
    ...              collapsed=[0])
    >>> m.lut.tolist(), m.labels
    ([0, 0, 1, -1], ['a · all lanes', 'b · c→s'])
    >>> lane_map(["a", "b"], np.array([0, 1]), ["a", "b"], hidden=[1]).lut.tolist()
    [0, -1, -1]
    """
    hide, fold = set(hidden), set(collapsed)
    lut = np.full(len(lanes) + 1, -1, dtype=np.int64)
    labels: list[str] = []
    sess: list[int] = []
    folded: list[bool] = []
    where: dict[int, int] = {}  # collapsed session -> its drawn lane
    for i, name in enumerate(lanes):
        k = int(lane_session[i]) if i < len(lane_session) else -1
        if k >= 0 and k in hide:
            continue
        if k >= 0 and k in fold:
            if k not in where:
                where[k] = len(labels)
                labels.append(f"{sessions[k]} · all lanes" if k < len(sessions) else name)
                sess.append(k)
                folded.append(True)
            lut[i] = where[k]
            continue
        lut[i] = len(labels)
        labels.append(name)
        sess.append(k)
        folded.append(False)
    return LaneMap(lut=lut, labels=labels, session=sess, collapsed=folded)
