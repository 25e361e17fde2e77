"""The C scan of bare NDJSON without the GIL, and its id table (``csrc/keys.h``).

``_native.scan`` reads each batch of lines with the GIL released and makes their rows
with it held: another thread runs meanwhile, and two threads over two byte ranges of a
file share both cores (``fast/parallel.py``). The id table gives every row of an id key
met before that key's one key str and id object, the ids staying exact.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.fast.rows import Rows


def _block(lines: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    buf = b"\n".join(lines)
    ends = np.cumsum([len(u) + 1 for u in lines], dtype=np.int64) - 1
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    return buf, starts, ends


def _scan(lines: list[bytes], keys: bool = True, rows: Rows | None = None) -> tuple[Rows, int]:
    need_native()
    assert native.native is not None
    rows = Rows(per_row_context=False) if rows is None else rows
    buf, starts, ends = _block(lines)
    stop = native.native.scan(buf, starts, ends, 0, len(lines), 0, native.out_lists(rows),
                              keys=native.key_args(rows) if keys else None)
    return rows, stop


def test_another_thread_runs_during_a_scan() -> None:
    """The GIL is released while the lines are read: a thread that notes the time now and
    then runs during one call of scan, over much more than the switch intervals at its two
    ends (with the GIL held throughout, it could run only there)."""
    line = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}'
    lines = [line % (i, b"x" * (i % 900)) for i in range(1, 120_001)]
    need_native()
    buf, starts, ends = _block(lines)
    seen: list[float] = []
    stop = threading.Event()

    def spin() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            if k % 64 == 0:
                seen.append(time.perf_counter())

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        time.sleep(0.01)
        rows = Rows(per_row_context=False)
        t0 = time.perf_counter()
        got = native.native.scan(buf, starts, ends, 0, len(lines), 0,  # type: ignore[union-attr]
                                 native.out_lists(rows), keys=native.key_args(rows))
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert got == len(lines) and len(rows.kind) == len(lines)
    ms = {int(v * 1000) for v in seen if t0 < v < t1}  # the milliseconds it ran in
    assert len(ms) > 4 * 1000 * sys.getswitchinterval(), (len(ms), t1 - t0)


IDS = [b"1", b'"1"', b"123456789012345678901234567890", b'"abc"', b"-7", b'"-7"',
       b"9007199254740993"]


def test_the_id_table_keeps_ids_exact_and_shared() -> None:
    """Equal id texts share one key and one id object; ids of different JSON types or
    texts stay apart (``1`` and ``"1"``, ``-7`` and ``"-7"``), big integers whole."""
    lines = []
    for _ in range(3):
        for i in IDS:
            lines.append(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % i)
            lines.append(b'{"jsonrpc":"2.0","id":%s,"result":{}}' % i)
    rows, stop = _scan(lines)
    assert stop == len(lines)
    plain, _ = _scan(lines, keys=False)
    assert [(type(v), v) for v in rows.id] == [(type(v), v) for v in plain.id]
    assert rows.id_key == plain.id_key
    n = len(IDS)
    for k in range(n):
        group = [2 * (rep * n + k) + r for rep in range(3) for r in (0, 1)]
        assert len({id(rows.id[g]) for g in group}) == 1
        assert len({id(rows.id_key[g]) for g in group}) == 1
    assert rows.id[:2 * n:2] == [1, "1", 123456789012345678901234567890, "abc", -7, "-7",
                                 9007199254740993]
    assert len(rows.key_table) == n


def test_the_id_table_takes_the_objects_the_python_path_numbered() -> None:
    """A key numbered before (by the Python path, in the Codes' dict) is not made again:
    the scanner's rows get the Codes' first objects."""
    rows = Rows(per_row_context=False)
    first_key, first_id = "".join(["4", "2"]), 42  # objects of their own
    rows.keys.index[first_key] = 0
    rows.keys.values.append(first_key)
    rows.keys.paired.append(first_id)
    rows, _ = _scan([b'{"jsonrpc":"2.0","id":42,"method":"ping"}'] * 2, rows=rows)
    assert all(k is first_key for k in rows.id_key)
    assert all(v is first_id for v in rows.id)


def test_the_id_table_grows() -> None:
    """Many distinct keys (past several doublings of the table), each found again."""
    lines = [b'{"jsonrpc":"2.0","id":"k%d","method":"ping"}' % i for i in range(20_000)]
    rows, stop = _scan(lines + lines[::-1])
    assert stop == 2 * len(lines) and len(rows.key_table) == len(lines)
    half = len(lines)
    assert all(rows.id[k] is rows.id[2 * half - 1 - k] for k in range(0, half, 97))


def test_scan_takes_no_key_table_of_another_type() -> None:
    need_native()
    rows = Rows(per_row_context=False)
    buf, starts, ends = _block([b'{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    with pytest.raises(TypeError, match="KeyTable"):
        native.native.scan(buf, starts, ends, 0, 1, 0,  # type: ignore[union-attr]
                           native.out_lists(rows), keys=({}, {}, [], []))


def test_a_number_python_must_convert_is_read_with_the_gil() -> None:
    """A progress value beyond the quick conversion (more than 16 digits) stops the batch
    read without the GIL; the line is read again with it, in place."""
    lines = [b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
             b'{"progressToken":1,"progress":0.12345678901234567890123}}',
             b'{"jsonrpc":"2.0","id":3,"method":"ping"}']
    rows, stop = _scan(lines)
    assert stop == 2 and rows.prog_vals == [0.12345678901234567890123]
    assert rows.kind == [1, 0]
