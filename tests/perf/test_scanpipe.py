"""The C scanner's worker thread (``_native.scan(pipe=...)``, ``csrc/scanpipe.h``) changes
no row: the rows, and the lines where the scan stops, are those of the one-thread loop.

Compared on every payload profile, on the benchmark's 100k captures and the readers' 100k
files where they are present, and on lines built to stop the scan (or to need the GIL)
at every place a batch can cut: the first line, the middle of a batch, either side of a
batch edge, the last line. Then what decides whether a read asks for the worker
(:func:`mcp_notebook.fast.cores.scan_pipe`).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import _gen_capture

import mcp_notebook as mn
from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.fast import cores, parallel
from mcp_notebook.fast.rows import Rows

ROOT = Path(__file__).resolve().parents[2]
BENCH_OUT = ROOT / "benchmarks" / "out"


@pytest.fixture(autouse=True)
def scanner() -> str:
    """These tests are of the C scanner (tests/perf/conftest.py fails them if it is not built)."""
    need_native()
    return "c"


def _bounds(buf: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The starts and ends of the lines of buf (the last one without its newline too)."""
    nl = np.frombuffer(native.native.newlines(buf, len(buf)), dtype=np.int64)
    ends = np.append(nl, len(buf)) if not buf.endswith(b"\n") else nl.copy()
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    return starts, ends.astype(np.int64)


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, bytearray | bytes):
        return bytes(value)
    if isinstance(value, dict):
        return sorted(value.items(), key=repr)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def scan_all(buf: bytes, pipe: int, file_base: int = -1) -> tuple[list, list[int]]:
    """Every row the scanner makes of buf's lines, as the NDJSON reader calls it (a line it
    does not take is skipped here, then the scan goes on after it), and where it stopped."""
    starts, ends = _bounds(buf)
    rows = Rows(per_row_context=False)
    stops = []
    i, n = 0, len(starts)
    while i < n:
        i = native.native.scan(buf, starts, ends, i, n, 0, native.out_lists(rows),
                               file_base=file_base, pipe=pipe)
        if i < n:
            stops.append(i)
            i += 1
    return [_plain(v) for v in native.out_lists(rows)], stops


def assert_same_scan(buf: bytes) -> tuple[list, list[int]]:
    """The rows and stops of buf with the worker (forced; then where it pays: the first
    call, of every line, has PIPE_MIN lines or more) equal those without; returns them."""
    one = scan_all(buf, 0)
    runs = native.native.pipe_stats()[0]
    two = scan_all(buf, 2)
    assert native.native.pipe_stats()[0] > runs
    assert two[1] == one[1]
    assert two[0] == one[0]
    runs = native.native.pipe_stats()[0]
    auto = scan_all(buf, 1)
    assert auto == one
    piped = len(_bounds(buf)[0]) >= native.native.PIPE_MIN
    assert (native.native.pipe_stats()[0] > runs) == piped
    return one


# ---- generated and recorded traffic -------------------------------------------------------

_GEN = _gen_capture()


@pytest.mark.parametrize("profile", list(_GEN.PROFILES))
def test_every_profile_scans_alike_with_the_worker(tmp_path: Path, profile: str) -> None:
    path = tmp_path / f"{profile}.ndjson"
    # anomalies raised: lines the scanner does not take, in many batches
    _GEN.generate(path, 12000, "ndjson", seed=3, anomaly_scale=10.0, profile=profile)
    rows, stops = assert_same_scan(path.read_bytes())
    assert len(rows[0]) > 10000 and stops


@pytest.mark.parametrize("profile", list(_GEN.PROFILES))
def test_the_scanner_takes_every_clean_line_itself(tmp_path: Path, profile: str) -> None:
    """A line the C scanner declines is read by the Python path, to the same rows but
    several times slower, and no equivalence test can tell: on every payload profile's
    clean traffic it declines only the id 0 (and -0) lines it leaves to Python on purpose
    (``envelope.h``), the first initialize of a session."""
    path = tmp_path / f"{profile}.ndjson"
    _GEN.generate(path, 6000, "ndjson", seed=5, clean=True, profile=profile)
    buf = path.read_bytes()
    lines = buf.split(b"\n")
    rows, stops = scan_all(buf, 0)
    assert len(rows[0]) + len(stops) == 6000
    assert all(json.loads(lines[i]).get("id") == 0 for i in stops), \
        [lines[i][:120] for i in stops if json.loads(lines[i]).get("id") != 0][:3]
    assert len(stops) <= 20


def _head(path: Path, lines: int) -> bytes:
    with open(path, "rb") as f:
        return b"".join(itertools.islice(f, lines))


def _bench_files(pattern: str) -> list[Path]:
    return sorted(BENCH_OUT.glob(pattern)) if BENCH_OUT.is_dir() else []


@pytest.mark.slow
@pytest.mark.parametrize("path", _bench_files("capture-1m-clean*.ndjson")
                         + _bench_files("capture-100k.ndjson"), ids=lambda p: p.name)
def test_benchmark_captures_scan_alike_with_the_worker(path: Path) -> None:
    """The benchmark's NDJSON captures: every payload profile's (the first 100,000 lines),
    and the default profile's with its anomalies."""
    rows, _ = assert_same_scan(_head(path, 100_000))
    assert len(rows[0]) > 90_000


@pytest.mark.slow
@pytest.mark.parametrize("path", _bench_files("formats/100000/*"), ids=lambda p: p.name)
def test_reader_formats_load_alike_with_the_worker(path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reader's 100k file (benchmarks/gen_formats.py) loads to the same frames and
    pairs with the worker (forced on every call) as without."""
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "PIPE", 0)
    base = mn.load(path, progress=False)
    monkeypatch.setattr(cores, "PIPE", 2)
    runs = native.native.pipe_stats()[0]
    got = mn.load(path, progress=False)
    assert native.native.pipe_stats()[0] > runs or path.suffix == ".jsonl"
    assert got.frames.equals(base.frames)
    assert got.pairs.equals(base.pairs)


# ---- lines built to stop the scan, or to need the GIL, where a batch cuts ------------------

B = native.native.PIPE_BATCH if native.native is not None else 1024


def _line(k: int) -> bytes:  # ids from 1 (an id 0 is the Python path's)
    return json.dumps({"jsonrpc": "2.0", "id": k + 1, "method": "tools/call",
                       "params": {"name": f"t{k % 7}", "arguments": {"k": k}}},
                      separators=(",", ":")).encode()


def _reply(k: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": k + 1, "result": {"content": [], "k": k}},
                      separators=(",", ":")).encode()


BAD = b'{"jsonrpc":"2.0","id":null,"method":"ping"}'  # a null id: the Python path's
# a progress value only Python's correctly rounded conversion reads (the GIL)
GIL = (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t",'
       b'"progress":0.1000000000000000055511151231257827021181583404541015625}}')

EDGES = [0, 1, B // 2, B - 1, B, B + 1, 2 * B - 1, 2 * B, 3 * B + 7, 5 * B - 1]


def _lines(n: int, special: dict[int, bytes]) -> bytes:
    return b"\n".join(special.get(k, _line(k) if k % 2 else _reply(k)) for k in range(n))


@pytest.mark.parametrize("at", [*EDGES, 5 * B])
def test_a_line_not_taken_stops_the_scan_where_it_is(at: int) -> None:
    n = 5 * B + 1  # the last line: 5 * B
    buf = _lines(n, {at: BAD})
    starts, ends = _bounds(buf)
    for pipe in (0, 2):
        rows = Rows(per_row_context=False)
        assert native.native.scan(buf, starts, ends, 0, n, 0, native.out_lists(rows),
                                  pipe=pipe) == at
        assert rows.line.tolist() == list(range(at))
    assert_same_scan(buf)


@pytest.mark.parametrize("at", EDGES)
def test_a_line_needing_the_gil_is_read_with_it(at: int) -> None:
    n = 5 * B
    special = {at: GIL, (at + 3) % n: GIL, (at + B) % n: GIL, n - 1: GIL}
    buf = _lines(n, special)
    rows, stops = assert_same_scan(buf)
    assert stops == [] and rows[4] == list(range(n))  # every line taken, in order
    assert rows[13] == [0.1] * len(special)  # prog_vals


def test_gil_lines_in_every_batch_and_lines_not_taken_after_them() -> None:
    n = 9 * B + 5
    special = {k: GIL for k in range(3, n, B // 3)}
    special.update({k: BAD for k in range(B + 11, n, 2 * B + 1)})
    special.update({k: b"" for k in range(B - 4, B + 4)})  # blank lines across an edge
    special.update({k: b"" for k in range(6 * B, 7 * B + 1)})  # a whole batch of blank lines
    rows, stops = assert_same_scan(_lines(n, special))
    assert stops == sorted(k for k, v in special.items() if v == BAD)


def test_random_cuts_scan_alike(tmp_path: Path) -> None:
    """Captures cut at random bytes (a line torn in two, the file's end mid-line)."""
    path = tmp_path / "edge.ndjson"
    _GEN.generate(path, 6000, "ndjson", seed=9, anomaly_scale=30.0)
    data = path.read_bytes()
    rnd = np.random.default_rng(4)
    for _ in range(6):
        a, b = sorted(rnd.integers(0, len(data), 2).tolist())
        cut = data[:a] + data[b:b + 2 * len(data) // 3]
        assert_same_scan(cut)


def test_few_lines_run_on_one_thread() -> None:
    """Below PIPE_MIN lines, pipe=1 starts no worker (its start would cost more)."""
    n = native.native.PIPE_MIN - 1
    buf = _lines(n, {})
    runs = native.native.pipe_stats()[0]
    assert scan_all(buf, 1) == scan_all(buf, 0)
    assert native.native.pipe_stats()[0] == runs
    assert scan_all(_lines(n + 1, {}), 1)[0][4] == list(range(n + 1))
    assert native.native.pipe_stats()[0] == runs + 1


def test_no_worker_started_reads_on_the_calling_thread() -> None:
    """Where no worker can be started (pipe=3 plays it), the calling thread reads the
    lines, as on one core, and the call is counted as such."""
    buf = _lines(3 * B, {B: GIL, 2 * B + 3: BAD})
    runs, fell = native.native.pipe_stats()
    assert scan_all(buf, 3) == scan_all(buf, 0)
    assert native.native.pipe_stats() == (runs, fell + 2)  # two calls: before and after BAD


def test_a_row_that_cannot_be_made_stops_the_scan_with_its_error() -> None:
    """A failed row (here a method index holding no int) ends the call with the error,
    the worker joined, the rows made before it kept: as on one thread."""
    n = 4 * B
    buf = _lines(n, {})
    starts, ends = _bounds(buf)
    got = []
    for pipe in (0, 2):
        rows = Rows(per_row_context=False)
        rows.methods.index["tools/call"] = "not a code"  # type: ignore[assignment]
        rows.methods.values.append("tools/call")
        with pytest.raises(TypeError):
            native.native.scan(buf, starts, ends, 0, n, 0, native.out_lists(rows), pipe=pipe)
        got.append([_plain(v) for v in native.out_lists(rows)])
    assert got[0] == got[1] and got[0][4] == [0]  # the first reply's row, then line 1 failed


# ---- who asks for the worker -------------------------------------------------------------

def test_the_worker_is_asked_for_only_where_a_core_is_free(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "auto")
    assert cores.scan_pipe() == cores.PIPE == 1
    with cores.split():  # a read split in two: each half has its core
        assert cores.scan_pipe() == 0
    assert cores.scan_pipe() == 1
    monkeypatch.setattr(cores, "SPLIT", "none")
    assert cores.scan_pipe() == 0
    monkeypatch.setattr(cores, "SPLIT", "auto")
    monkeypatch.setattr(cores, "workers", lambda: 1)
    assert cores.scan_pipe() == 0


@pytest.mark.parametrize("how", ["none", "fork", "threads"])
def test_a_split_read_starts_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       how: str) -> None:
    """An NDJSON file read whole asks for the worker; split over two processes or two
    threads, neither half does (the forked half asks in its own process, under the mark
    it inherits: not seen here; the threads case sees both halves ask)."""
    path = tmp_path / "c.ndjson"
    _GEN.generate(path, 3 * native.native.PIPE_MIN, "ndjson", seed=2, clean=True)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "auto")
    asked: list[int] = []
    real = cores.scan_pipe

    def spy() -> int:
        asked.append(real())
        return asked[-1]

    monkeypatch.setattr(cores, "scan_pipe", spy)
    if how != "none":
        monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
        monkeypatch.setattr(cores, "SPLIT", how)
        if how == "fork":
            monkeypatch.setattr(parallel, "can_fork", lambda: True)
    runs = native.native.pipe_stats()[0]
    t = mn.load(path, progress=False)
    assert len(t.frames) == 3 * native.native.PIPE_MIN
    if how == "none":
        assert asked == [1] and native.native.pipe_stats()[0] > runs
    else:
        assert asked == [0] * (2 if how == "threads" else 1)
        assert native.native.pipe_stats()[0] == runs


def _asked_in_worker() -> int:

    cores.workers = lambda: 2  # type: ignore[assignment]  # (this worker process only)
    return cores.scan_pipe()


def test_a_process_pool_worker_starts_no_worker_thread() -> None:
    """mn.load_many's process pool marks each of its workers (cores.share): they read
    their files side by side, a core each."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1) as pool:
        assert pool.submit(_asked_in_worker).result() == cores.PIPE
    with ProcessPoolExecutor(1, initializer=cores.share) as pool:
        assert pool.submit(_asked_in_worker).result() == 0


def test_a_negative_first_line_is_refused() -> None:
    """lo < 0 would read before the line arrays: a clear error, nothing added."""
    buf = _lines(3, {})
    starts, ends = _bounds(buf)
    rows = Rows(per_row_context=False)
    with pytest.raises(ValueError, match="lo must not be negative"):
        native.native.scan(buf, starts, ends, -1, 3, 0, native.out_lists(rows), pipe=2)
    assert len(rows.kind) == 0
