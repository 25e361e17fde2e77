"""Every payload profile of the benchmark generator through every path, equal to the reference.

The benchmark (``benchmarks/bench_load.py``) measures the loader on traffic of several
shapes (``benchmarks/gen_profiles.py``: dense escapes, many small notifications, base64
blobs, long string ids, many sessions, 2026-style ``_meta`` on every request). A fast path
that is quick on one of them must still give the reference's frames, pairs and
violations on it: each profile's small capture (with the anomalies of a realistic file)
is loaded by ``mn.load`` with the C scanner and with the Python path (the autouse
``scanner`` fixture), text in memory and read lazily from disk, and compared with the
reference pipeline; and the C and Python loads are compared with each other in one test
through a child process with ``MCP_NOTEBOOK_NO_NATIVE=1``.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import _gen_capture
from oracle.pipeline import comparable, materialised
from test_equivalence import assert_same

import mcp_notebook as mn
from mcp_notebook.engine.native import NO_NATIVE_ENV

_GEN = _gen_capture()
PROFILES = list(_GEN.PROFILES)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def profile_captures(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    out = tmp_path_factory.mktemp("profiles")
    files = {}
    for profile in PROFILES:
        for fmt, ext in (("ndjson", "ndjson"), ("tap", "tap.jsonl")):
            path = out / f"{profile}.{ext}"
            # anomalies raised so that a small file holds each kind of odd line
            _GEN.generate(path, 1500, fmt, seed=5, anomaly_scale=20.0, profile=profile)
            files[(profile, fmt)] = path
    return files


def test_profiles_are_what_they_say() -> None:
    assert PROFILES[0] == "default" and len(PROFILES) == 7
    assert {"escapes", "notifications", "base64", "long_ids", "sessions", "meta2026"} \
        <= set(PROFILES)


# the C path against the reference; the Python path equals the C path on every profile's
# frames, pairs, violations and summary (test_native_and_python_paths_agree_on_every_profile,
# in a child without the extension), so it equals the reference by the same token
@pytest.mark.parametrize("scanner", ["c"], indirect=True)
@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
@pytest.mark.parametrize("profile", PROFILES)
def test_profile_equals_the_reference(profile_captures: dict[tuple[str, str], Path],
                                      text_mode: str, profile: str, fmt: str) -> None:
    t = assert_same([profile_captures[(profile, fmt)]])
    assert len(t.pairs) and len(t.violations)


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_split_over_two_threads(profile_captures: dict[tuple[str, str], Path],
                                        monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    """Each profile's NDJSON capture read by two threads over two byte ranges (the C scan
    without the GIL) gives the reference's tables, and the same store as one thread."""
    from mcp_notebook.fast import cores, parallel

    path = profile_captures[(profile, "ndjson")]
    one = mn.load(path)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "threads")
    reads: list[int] = []
    real = parallel._two_threads

    def count(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        reads.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(parallel, "_two_threads", count)
    two = assert_same([path])
    assert reads == [1]
    pd.testing.assert_frame_equal(materialised(two.frames), materialised(one.frames))
    a, b = one._store, two._store
    assert a.id_code[1] == b.id_code[1] and (a.id_code[0] == b.id_code[0]).all()
    assert [type(v) for v in a.id.tolist()] == [type(v) for v in b.id.tolist()]


_CHILD = """
import sys, pickle
import mcp_notebook as mn
from oracle.pipeline import comparable, materialised
from mcp_notebook.engine import native
out = {}
for path in sys.argv[2:]:
    t = mn.load(path)
    out[path] = (materialised(t.frames), t.pairs, comparable(t.violations), t.summary())
out["scanner"] = native.native is None
with open(sys.argv[1], "wb") as f:
    pickle.dump(out, f)
"""


def test_native_and_python_paths_agree_on_every_profile(
        profile_captures: dict[tuple[str, str], Path], tmp_path: Path, scanner: str) -> None:
    """The whole load in a process without the C extension, against this one's."""
    if scanner != "c":
        pytest.skip("compares the C path (this process) with the Python path (the child)")
    import pickle

    paths = [str(p) for p in profile_captures.values()]
    env = dict(os.environ, **{NO_NATIVE_ENV: "1"})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent),
                                         env.get("PYTHONPATH", "")])
    dump = tmp_path / "python-path.pickle"
    subprocess.run([sys.executable, "-c", _CHILD, str(dump), *paths], check=True, env=env,
                   cwd=tmp_path, timeout=600)
    theirs = pickle.loads(dump.read_bytes())
    assert theirs.pop("scanner") is True  # the child really ran without the C scanner
    for path in paths:
        t = mn.load(path)
        frames, pairs, violations, summary = theirs[path]
        pd.testing.assert_frame_equal(materialised(t.frames), frames)
        pd.testing.assert_frame_equal(t.pairs, pairs)
        pd.testing.assert_frame_equal(comparable(t.violations), violations)
        assert t.summary() == summary


def _reference_versions(path: Path) -> dict[object, str]:
    from oracle import checks as oracle_checks
    from oracle.pipeline import reference_columns

    from mcp_notebook.engine.walks import pair
    c = reference_columns([path])
    rows, _ = pair(range(len(c)), c.session, c.direction, c.kind, c.id_key, c.method,
                   c.is_tool_error, c.ref, c.progress)
    return oracle_checks.session_versions(c.kind, c.session, c.direction, c.method,
                                          c.version, rows)


def _tied_sessions(path: Path, sessions: int) -> Path:
    """A tap capture of many sessions whose ``_meta`` versions tie, lead or come with an
    initialize request (some answered, with another version) among ordinary requests."""
    import json
    import random
    rnd = random.Random(3)
    names = ["2026-07-28", "2025-06-18", "2025-11-25", "2024-11-05"]
    lines = []
    for s in range(sessions):
        sid, nid = f"s{s}", 0
        if s % 5 == 0:
            lines.append({"dir": "c2s", "session": sid, "raw": json.dumps(
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": rnd.choice(names), "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}})})
            if s % 10 == 0:
                lines.append({"dir": "s2c", "session": sid, "raw": json.dumps(
                    {"jsonrpc": "2.0", "id": 0, "result": {
                        "protocolVersion": rnd.choice(names), "capabilities": {},
                        "serverInfo": {"name": "t", "version": "1"}}})})
        for _ in range(rnd.randrange(0, 7)):
            nid += 1
            lines.append({"dir": "c2s", "session": sid, "raw": json.dumps(
                {"jsonrpc": "2.0", "id": nid, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": rnd.choice(names[:3])}}})})
    rnd.shuffle(lines)  # sessions interleave: first mentions and counts by row order
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.mark.parametrize("case", ["meta2026", "sessions", "tied"])
def test_session_versions_equal_the_reference(
        profile_captures: dict[tuple[str, str], Path], tmp_path: Path, case: str) -> None:
    """The versions found by the columnar walk (most common ``_meta`` version per session,
    a tie to the first named; initialize result, then request) equal the reference's
    request-by-request walk, on many sessions."""
    path = (_tied_sessions(tmp_path / "tied.tap.jsonl", 400) if case == "tied"
            else profile_captures[(case, "tap")])
    found = mn.load(path).versions_named()
    want = _reference_versions(path)
    assert found == want
    assert len(want) > (100 if case == "tied" else 0)


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
def test_version_column_shares_one_str_per_version(tmp_path: Path, fmt: str) -> None:
    """A capture with 2026-style ``_meta`` names a version on every request: the C scanner
    gives the rows of one call the same str for the same text (not one str per request),
    and the column still equals the reference's."""
    from mcp_notebook.engine import native

    if native.native is None:
        pytest.skip("the C scanner is not built or switched off")
    path = tmp_path / f"meta.{'ndjson' if fmt == 'ndjson' else 'tap.jsonl'}"
    _GEN.generate(path, 3000, fmt, clean=True, seed=11, profile="meta2026")
    t = mn.load(path)
    values = t._store.version.values
    assert len(values) > 500
    assert len({id(v) for v in values}) <= len(values) // 20
    assert t.versions_named() == _reference_versions(path)
    assert_same([path])


@pytest.mark.parametrize("profile", ["default", "meta2026"])
def test_violations_leave_no_cycle_for_the_collector(
        profile_captures: dict[tuple[str, str], Path], profile: str) -> None:
    """What the rules decoded for ``t.violations`` is freed when they are done, not left in
    a reference cycle (the conversation view and its input) for the cyclic collector to
    walk and free at the user's next collection or at exit."""
    was = gc.isenabled()
    gc.disable()  # no automatic collection may free the cycle before it is counted
    try:
        t = mn.load(profile_captures[(profile, "ndjson")])
        _ = t.frames, t.pairs
        gc.collect()
        assert len(t.violations)
        from mcp_notebook.conversation._view import View

        assert not [o for o in gc.get_objects() if isinstance(o, View)]
    finally:
        if was:
            gc.enable()


def test_profile_table_takes_the_whole_process_from_the_work_only_children() -> None:
    """The benchmark's process ratio compares the children that do only the work
    (``ours_process``, ``polars_process``) when the run has them, the timed children's
    processes otherwise (a run from before they existed)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_report
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def res(timed: float, process: float) -> dict[str, float]:
        return {"timed_s": timed, "process_s": process}

    n = 1_000_000
    doc = {"main_size": n, "results": {
        f"ours|ndjson_clean|{n}": res(2.0, 6.0), f"polars_scan|ndjson_clean|{n}": res(1.0, 2.0),
        f"ours|profile_meta2026|{n}": res(3.0, 9.0),
        f"polars_scan|profile_meta2026|{n}": res(1.5, 3.0),
        f"ours_process|profile_meta2026|{n}": res(4.0, 4.5),
        f"polars_process|profile_meta2026|{n}": res(1.6, 1.8)}}
    prof = bench_report.profile_table(doc)
    assert prof["meta2026"]["process_over_polars"] == pytest.approx(4.5 / 1.8)
    assert prof["meta2026"]["timed_over_polars"] == pytest.approx(2.0)
    assert prof["default"]["process_over_polars"] == pytest.approx(3.0)
