"""The usual Inspector export and cassette compacted and read in one C pass.

For the usual document, ``_native.inspector_doc`` / ``recorder_doc`` (``csrc/docscan.h``)
read the file once: they check it as JSON and write it compact, as
``msgspec.json.format(indent=-1)`` does (the same bytes), and give where every message is
in it and the few members the readers' column paths read, as arrays: no separate
compaction, no typed decoding, no Python object per entry but the extras. They take a
document only where their answer is the one of the compaction and the typed decoding
followed by the column paths (:func:`.inspector._columns`, :func:`.recorder._columns`);
for any other they say None, and :func:`inspector_columns` / :func:`recorder_columns`
say None too: the reader goes on with that compaction and decoding. Without the
extension they say None as well (a switch, not a different result: the tests compare
both ways).

A document of at least :data:`~..fast.cores.MIN_SECOND_THREAD` is read on two threads
where a second core is free (:func:`.cores.free`; ``csrc/docsplit.h``: the second starts at an entry a
little before the middle, verified by the first; the answer is the one-thread pass's,
byte for byte). ``MCP_NOTEBOOK_SPLIT=none`` keeps every document on one thread,
``MCP_NOTEBOOK_SPLIT=threads`` reads any document on two (as the tests do).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ._docspans import Columns, DocLabels
from ._jsondoc import read_mapped
from ._time import read_time

__all__ = ["inspector_columns", "recorder_columns", "min_split"]


def _scanner(name: str) -> Any:
    from ..engine.native import native

    return getattr(native, name, None) if native is not None else None


def min_split() -> int:
    """The least document the C passes read on two threads (``-1``: none):
    :func:`.cores.min_second_thread`."""
    from ..fast import cores

    return cores.min_second_thread()


def _scan(path: Path, name: str) -> Any:
    """``_native.<name>`` of the file's bytes: a plain file through a read-only map of it
    (the pass lets its pages go behind it), a compressed one read whole; None without the
    extension, for an empty file or for a document the pass does not take."""
    scan = _scanner(name)
    if scan is None:
        return None
    least = min_split()
    return read_mapped(path, lambda data, mapped: scan(data, mapped, least))


_I64, _F64, _I8 = np.int64, np.float64, np.int8
_BACK_CODE = np.array([-1, 1, 0], dtype=np.int8)  # by code + 1: none, c2s -> s2c, s2c -> c2s


def inspector_columns(path: Path, sess: str, name: str) -> Columns | None:
    """The records of an Inspector export whose every entry has a message and no client
    error, as the Inspector's column path makes them; None for any other export, or
    without the C extension."""
    got = _scan(path, "inspector_doc")
    if got is None:
        return None
    flat, got = got[0], got[1:]
    ms, ml, rs, rl, stamps, durations, state, ss, sl = (
        np.frombuffer(b, dtype=t) for b, t in zip(got[:9], (
            _I64, _I64, _I64, _I64, _F64, _F64, _I8, _I64, _I64), strict=True))
    origin, kind = np.frombuffer(got[9], dtype=_I8), np.frombuffer(got[10], dtype=_I8)
    kinds: list[str] = got[11]
    n = len(ms)
    answered = rl > 0
    m = n + int(answered.sum())  # each entry's message, and its response where it has one
    slots = np.zeros(n, dtype=np.int64)  # each entry's message's record
    np.cumsum(1 + answered[:-1], out=slots[1:])
    second = slots[answered] + 1  # the responses' records
    starts, ends = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    starts[slots], ends[slots] = ms, ms + ml
    starts[second], ends[second] = rs[answered], rs[answered] + rl[answered]
    # the stamps the C pass left (not the usual one): read_time of the decoded value, as
    # _time.read_times reads them
    stamps = stamps.copy()
    problems: dict[int, str] = {}
    for k in np.flatnonzero(state == 2).tolist():
        a = int(ss[k])
        t, problem = read_time(msgspec.json.decode(flat[a:a + int(sl[k])]), numbers=False)
        if t is not None:
            stamps[k] = t
        if problem:
            problems[k] = problem
    ts = np.empty(m, dtype=np.float64)
    ts[slots] = stamps
    ts[second] = (stamps + durations / 1000)[answered]
    direction = np.empty(m, dtype=np.int8)
    direction[slots] = origin
    direction[second] = _BACK_CODE[origin[answered] + 1]
    # the extras as the column path makes them (the C pass's), those of a stamp that
    # cannot be read made here
    extras: dict[int, dict[str, Any]] = got[12]
    for i, problem in problems.items():
        k = int(kind[i])
        extras[int(slots[i])] = ({"entry_kind": kinds[k], "ts_error": problem} if k >= 0
                                 else {"ts_error": problem})
    labels = DocLabels.of_pairs(f"{name}#entry", answered)
    return Columns(flat, starts, ends, ts, direction, np.zeros(m, dtype=np.int64), (sess,),
                   np.zeros(m, dtype=np.int64), ("stdio",), labels, extras)


def recorder_columns(path: Path, sess: str, name: str) -> Columns | None:
    """The records of a cassette whose every interaction has a request, as the recorder's
    column path makes them; None for any other cassette, or without the C extension."""
    got = _scan(path, "recorder_doc")
    if got is None:
        return None
    flat, got = got[0], got[1:]
    qs, ql, rs, rl = (np.frombuffer(b, dtype=_I64) for b in got[:4])
    sse = np.frombuffer(got[4], dtype=_I8)
    n = len(qs)
    answered = rl > 0
    first = np.zeros(n, dtype=np.int64)  # each interaction's request's record
    np.cumsum(1 + answered[:-1], out=first[1:])
    second = first[answered] + 1  # the responses' records
    m = n + len(second)
    starts, ends = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    starts[first], ends[first] = qs, qs + ql
    starts[second], ends[second] = rs[answered], rs[answered] + rl[answered]
    extras: dict[int, dict[str, Any]] = got[5]  # by record, as the column path's
    stream = np.zeros(m, dtype=np.int64)  # 1: the response came as an event stream
    stream[second] = sse[answered] == 1
    labels = DocLabels.of_pairs(f"{name}#interaction", answered)
    direction = np.ones(m, dtype=np.int8)
    direction[first] = 0
    return Columns(flat, starts, ends, np.full(m, np.nan), direction,
                   np.zeros(m, dtype=np.int64), (sess,), stream, ("http", "sse"),
                   labels, extras)
