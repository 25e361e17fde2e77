"""The library leaves the user's process as it found it: the garbage collector's state, the
recursion limit, the allocator (no ``malloc_trim`` unless asked for), and no ``fork`` from
a process that runs other threads (as a Jupyter kernel does)."""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from helpers import INIT, ok, req, tap
from mcp_notebook import fast
from mcp_notebook.fast import cores, parallel


def _capture(tmp_path: Path) -> Path:
    rows = INIT + [(d, m) for i in range(200) for d, m in
                   (("c2s", req(i + 1, "tools/list")), ("s2c", ok(i + 1)))]
    return tap(tmp_path / "c.jsonl", rows)


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_and_recursion_limit_are_as_found(tmp_path: Path, enabled: bool) -> None:
    path = _capture(tmp_path)
    limit = sys.getrecursionlimit()
    (gc.enable if enabled else gc.disable)()
    try:
        t = mn.load(path)
        t.violations, t.to_otlp()  # noqa: B018 - the OTLP export also turns gc off a while
        assert gc.isenabled() is enabled
        assert sys.getrecursionlimit() == limit
    finally:
        gc.enable()


def test_no_malloc_trim_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(fast, "_TRIM", calls.append)
    mn.load(_capture(tmp_path)).violations  # noqa: B018
    assert calls == []
    monkeypatch.setattr(fast, "TRIM_MEMORY", True)
    mn.load(_capture(tmp_path)).violations  # noqa: B018
    assert calls


def test_no_fork_while_other_threads_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file large enough to be split is read in this process while another thread runs,
    with the same frames as when it is split over two processes."""
    path = _capture(tmp_path)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    if cores.workers() < 2 or not hasattr(os, "fork"):
        pytest.skip("one core or no fork: never split here")
    split = mn.load(path).frames

    def no_fork() -> int:
        raise AssertionError("forked while another thread runs")

    monkeypatch.setattr(os, "fork", no_fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.can_fork()
        got = mn.load(path).frames
    finally:
        stop.set()
        other.join()
    assert got.drop(columns=["raw"]).equals(split.drop(columns=["raw"]))


def test_the_users_frozen_objects_stay_frozen(tmp_path: Path) -> None:
    """An export freezes the heap a while (``gc.freeze``) and thaws it after; objects the
    user's process had frozen before stay frozen (``gc.unfreeze`` would thaw them too)."""
    t = mn.load(_capture(tmp_path))

    def tracked(obj: object) -> bool:  # in a generation the collector scans (not frozen)
        return any(o is obj for o in gc.get_objects())

    mine = [object()]
    gc.freeze()
    try:
        assert not tracked(mine)
        t.to_otlp(), t.boundary()  # noqa: B018 - both walk the boundary a chunk at a time
        list(mn.boundary.iter_boundary(t))
        assert not tracked(mine)
    finally:
        gc.unfreeze()
    assert tracked(mine)
    list(mn.boundary.iter_boundary(t))
    assert gc.get_freeze_count() == 0  # and what an export froze is thawed after it


def test_two_threads_where_no_fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a threaded process (a Jupyter kernel) a large bare NDJSON file is read by two
    threads over its two halves (the scan releases the GIL), never by a fork; the frames
    are those of one thread."""
    from mcp_notebook.engine import native

    if native.native is None:
        pytest.skip("two threads pay only with the C scanner")
    path = tmp_path / "c.ndjson"
    path.write_text("".join(json.dumps(m) + "\n" for _, m in
                            INIT + [("", req(i + 1, "tools/list")) for i in range(300)]))
    one = mn.load(path).frames
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "auto")
    used: list[str] = []
    real = parallel._two_threads

    def two_threads(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        used.append(threading.current_thread().name)
        return real(*args, **kw)

    def no_fork() -> int:
        raise AssertionError("forked while another thread runs")

    monkeypatch.setattr(parallel, "_two_threads", two_threads)
    monkeypatch.setattr(os, "fork", no_fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert parallel.split_by("ndjson") == "threads"
        got = mn.load(path).frames
    finally:
        stop.set()
        other.join()
    assert len(used) == 1
    pd.testing.assert_frame_equal(got, one)
