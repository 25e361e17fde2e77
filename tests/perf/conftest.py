"""Fixtures of the fast-path tests: the engine switches, and the generated captures."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from mcp_notebook import fast
from mcp_notebook.fast import cores, parallel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
_BENCH = HERE.parents[1] / "benchmarks"


def _gen_capture():  # noqa: ANN202
    sys.path.insert(0, str(_BENCH))
    spec = importlib.util.spec_from_file_location("gen_capture", _BENCH / "gen_capture.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.fixture(scope="session")
def edge_captures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Generated captures with raised anomaly rates (malformed lines, odd ids, duplicates)."""
    gen = _gen_capture()
    out = tmp_path_factory.mktemp("edge")
    files = {}
    for name, fmt, frames, scale, sessions in [("edge.ndjson", "ndjson", 3000, 40.0, None),
                                               ("edge.tap.jsonl", "tap", 3000, 40.0, 4),
                                               ("plain.tap.jsonl", "tap", 2000, 1.0, None)]:
        path = out / name
        gen.generate(path, frames, fmt, seed=11, sessions=sessions, anomaly_scale=scale)
        files[name] = path
    return files


@pytest.fixture(params=["memory", "lazy"])
def text_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the frame text kept in memory, then read from disk by offset."""
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0 if request.param == "lazy" else 1 << 62)
    return request.param


@pytest.fixture(params=["fork", "threads"])
def split(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Split every file in two, however small: over two processes (and fork even when an
    earlier test left a thread running: the loader would rightly not; these test the split,
    the guard is tests/engine/test_process_state.py's), then over two threads."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", request.param)
    if request.param == "fork":
        if not hasattr(os, "fork"):
            pytest.skip("no fork here")
        monkeypatch.setattr(parallel, "can_fork", lambda: True)
    return request.param


@pytest.fixture(autouse=True, params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every fast-path test with the C envelope scanner, then with the Python path."""
    from mcp_notebook.engine import native

    if request.param == "python":
        monkeypatch.setattr(native, "native", None)
    else:
        from helpers import need_native

        need_native()
    return request.param
