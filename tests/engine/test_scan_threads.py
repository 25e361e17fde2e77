"""The C scan of bare NDJSON without the GIL.

``_native.scan`` reads each batch of lines with the GIL released and makes their rows
with it held: another thread runs meanwhile, and two threads over two byte ranges of a
file share both cores (``fast/parallel.py``).
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


def _scan(lines: list[bytes]) -> tuple[Rows, int]:
    need_native()
    assert native.native is not None
    rows = Rows(per_row_context=False)
    buf, starts, ends = _block(lines)
    stop = native.native.scan(buf, starts, ends, 0, len(lines), 0, native.out_lists(rows))
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
                                 native.out_lists(rows))
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert got == len(lines) and len(rows.kind) == len(lines)
    ms = {int(v * 1000) for v in seen if t0 < v < t1}  # the milliseconds it ran in
    assert len(ms) > 4 * 1000 * sys.getswitchinterval(), (len(ms), t1 - t0)


def test_a_number_python_must_convert_is_read_with_the_gil() -> None:
    """A progress value beyond the quick conversion (more than 16 digits) stops the batch
    read without the GIL; the line is read again with it, in place."""
    lines = [b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
             b'{"progressToken":1,"progress":0.12345678901234567890123}}',
             b'{"jsonrpc":"2.0","id":3,"method":"ping"}']
    rows, stop = _scan(lines)
    assert stop == 2 and rows.prog_vals.tolist() == [0.12345678901234567890123]
    assert rows.kind.tolist() == [1, 0]


@pytest.mark.parametrize("at", [0, 4095, 4096, 4097, 8191])
def test_a_line_not_taken_at_a_batch_edge(at: int) -> None:
    """The scan stops at the first line it does not take wherever it falls against the
    batches read without the GIL, and goes on from the next (blank lines skipped)."""
    ok = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}'
    lines = [b"" if k % 7 == 3 else ok % (k + 1) for k in range(9000)]
    lines[at] = b'{"jsonrpc":"2.0","id":null,"method":"ping"}'
    rows, stop = _scan(lines)
    assert stop == at
    taken = [k for k in range(at) if lines[k]]
    assert rows.line.tolist() == taken and rows.id == [k + 1 for k in taken]
    buf, starts, ends = _block(lines)
    assert native.native.scan(buf, starts, ends, at + 1, len(lines), 0,  # type: ignore[union-attr]
                              native.out_lists(rows)) == len(lines)
    assert rows.line.tolist() == [k for k in range(len(lines)) if lines[k] and k != at]
