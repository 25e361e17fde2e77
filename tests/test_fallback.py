"""The fast paths cannot hide behind the fallback (mcp_notebook/engine/fallback.py).

A fast path that raises, a worker process that dies, a C scanner that is not built: the
trace carries a note and one warning is issued; under MCP_NOTEBOOK_STRICT=1 (set for the
whole suite by tests/conftest.py) the load raises. Switching a path off on purpose, as
tests/perf does, is not a fallback.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

import mcp_notebook as mn
from helpers import INIT, need_native, ok, req, tap
from mcp_notebook import fast
from mcp_notebook.engine import native
from mcp_notebook.engine.fallback import STRICT_ENV, FallbackWarning, FastPathError
from mcp_notebook.fast import cores, parallel

DATA = Path(__file__).resolve().parents[1] / "data"
ROWS = INIT + [("c2s", req(i, "tools/list")) for i in range(1, 40)] + \
    [("s2c", ok(i, {"tools": []})) for i in range(1, 40)]


class Spy:
    """The C module with every call counted; ``fail`` names functions that raise."""

    def __init__(self, real, fail=()):  # noqa: ANN001
        self.real, self.fail, self.calls = real, set(fail), {}

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        fn = getattr(self.real, name)

        def call(*args, **kw):  # noqa: ANN002, ANN003, ANN202
            self.calls[name] = self.calls.get(name, 0) + 1
            if name in self.fail:
                raise IndexError(f"injected failure in {name}")
            return fn(*args, **kw)

        return call


def _fallbacks(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, FallbackWarning)]


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fallbacks noted and warned, not raised (as a user gets them)."""
    monkeypatch.delenv(STRICT_ENV, raising=False)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    return [tap(tmp_path / "a.jsonl", ROWS), tap(tmp_path / "b.jsonl", ROWS, session="b")]


def _reference(paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> list:
    with monkeypatch.context() as m:
        m.setattr(fast, "ENABLED", False)
        return mn.load(paths).frames["raw"].tolist()


def test_the_suite_runs_strict_with_the_native_walks(tmp_path: Path) -> None:
    """The suite is strict, the C extension is built (say so clearly if not), and a load
    with its tables runs the C scanner, the C direction walk and the C pairing walk."""
    assert os.environ.get(STRICT_ENV) == "1", "tests/conftest.py sets MCP_NOTEBOOK_STRICT=1"
    need_native()
    spy = Spy(native.native)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(native, "native", spy)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FallbackWarning)
            t = mn.load(tap(tmp_path / "a.jsonl", ROWS))
            assert len(t.pairs) == 40
            bare = tmp_path / "b.ndjson"  # no directions: the C direction walk infers them
            bare.write_text("".join(json.dumps(m) + "\n" for _, m in ROWS))
            assert len(mn.load(bare).pairs) == 40
    for name in ("scan", "newlines", "pair", "directions"):
        assert spy.calls.get(name, 0) > 0, (name, spy.calls)


def test_a_failing_fast_path_is_noted_and_warned_once(files, lenient, monkeypatch):
    need_native()
    want = _reference(files, monkeypatch)
    monkeypatch.setattr(native, "native", Spy(native.native, fail={"scan"}))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(files)
    got = _fallbacks(record)
    assert len(got) == 1, got  # two files failed: one warning for the load
    assert "injected failure in scan" in got[0] and "1 more" in got[0]
    assert [n for n in t.notes if "fast loader failed" in n and "IndexError" in n] == [
        n for n in t.notes if "fast loader failed" in n] and len(
        [n for n in t.notes if "fast loader failed" in n]) == 2
    assert t.frames["raw"].tolist() == want  # the user still gets every frame


def test_a_failing_fast_path_raises_when_strict(files, monkeypatch):
    need_native()
    monkeypatch.setattr(native, "native", Spy(native.native, fail={"scan"}))
    with pytest.raises(FastPathError, match=r"MCP_NOTEBOOK_STRICT=1: a\.jsonl: the fast "
                                            r"loader failed.*injected failure in scan"):
        mn.load(files)


def test_a_scanner_that_is_not_built_is_said(files, lenient, monkeypatch):
    monkeypatch.setattr(native, "native", None)
    monkeypatch.setattr(native, "IMPORT_ERROR", "ImportError: no module named _native")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(files)
    got = _fallbacks(record)
    assert len(got) == 1 and "not built" in got[0] and "build_ext" in got[0]
    assert any("not built" in n for n in t.notes)
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(FastPathError, match="C scanner .* is not built.*build_ext"):
        mn.load(files)


def test_switching_a_path_off_is_not_a_fallback(files, monkeypatch):
    """What tests/perf does to compare the paths: no note, no warning, even when strict."""
    for attr, obj, value in [("native", native, None), ("ENABLED", fast, False)]:
        with monkeypatch.context() as m:
            m.setattr(obj, attr, value)
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                t = mn.load(files)
        assert not _fallbacks(record) and len(t.frames) == 2 * len(ROWS)
        assert not [n for n in t.notes if "fast" in n or "scanner" in n]


@pytest.fixture
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork here: the loader reads in one process")
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # whatever threads others left


def test_a_worker_that_dies_is_noted(tmp_path, lenient, two_workers, monkeypatch):
    """The second half of a split file is read here when its worker fails, and said so."""
    from mcp_notebook.fast.rows import Rows

    path = tap(tmp_path / "big.jsonl", ROWS)
    want = _reference([path], monkeypatch)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)

    def pack(self):  # noqa: ANN001, ANN202 - called only in the worker
        raise ZeroDivisionError("injected worker failure")

    monkeypatch.setattr(Rows, "pack", pack)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(path)
    got = _fallbacks(record)
    assert len(got) == 1 and "worker process" in got[0] and "injected worker failure" in got[0]
    assert t.frames["raw"].tolist() == want
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(FastPathError, match="worker process.*injected worker failure"):
        mn.load(path)


@pytest.mark.parametrize("how", ["killed", "cut short", "silent"])
def test_a_worker_whose_answer_is_lost_is_noted(tmp_path, lenient, two_workers, monkeypatch,
                                                how):
    """The worker sends its rows back pickled: killed while working, leaving half
    an answer, or none at all, its half is read here, with the reason said."""
    import pickle

    from mcp_notebook.fast.rows import Rows

    path = tap(tmp_path / "big.jsonl", ROWS)
    want = _reference([path], monkeypatch)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    if how == "cut short":
        def dump(obj, out, protocol=None):  # noqa: ANN001, ANN202 - in the worker
            out.write(pickle.dumps(obj, protocol=protocol)[:100])
            out.flush()
            os._exit(0)  # the worker ends as if its answer were whole
        monkeypatch.setattr(parallel.pickle, "dump", dump)
        reason = "its message was cut short"
    else:
        def pack(self):  # noqa: ANN001, ANN202 - called only in the worker
            if how == "killed":
                os.kill(os.getpid(), 9)
            os._exit(0)  # a clean exit before a byte of its answer
        monkeypatch.setattr(Rows, "pack", pack)
        reason = "killed by signal 9" if how == "killed" else "it sent nothing"
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(path)
    got = _fallbacks(record)
    assert len(got) == 1 and "worker process" in got[0] and reason in got[0], got
    assert t.frames["raw"].tolist() == want


def test_notes_of_a_worker_come_back(files, lenient, two_workers, monkeypatch):
    """Files shared out to a worker: a fallback there reaches the parent's trace."""
    parent = os.getpid()
    real = fast.load_file

    def load_file(path, *args):  # noqa: ANN001, ANN002, ANN202
        if os.getpid() != parent:
            raise KeyError("injected in the worker")
        return real(path, *args)

    monkeypatch.setattr(parallel, "MIN_MANY_BYTES", 0)
    monkeypatch.setattr(fast, "load_file", load_file)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(files)
    assert len(_fallbacks(record)) == 1
    assert any("injected in the worker" in n for n in t.notes)
    assert len(t.frames) == 2 * len(ROWS)
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(FastPathError, match="worker process.*injected in the worker"):
        mn.load(files)
