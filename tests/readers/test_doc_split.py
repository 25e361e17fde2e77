"""A large document's records made into rows by two processes give the one-process table.

``fast.records.parts_of`` shares the records of a document read as spans of its buffer
(the Inspector export, a HAR of either transport, a cassette) with a forked child, cut at
the middle run of records (that run cut in two), as a large NDJSON file is read in two
halves. Here the least size is lowered so that small generated documents are shared: the
child is a real forked process, and the table, the pairs, the findings and the notes are
held to those of one process (``MCP_NOTEBOOK_SPLIT=none``'s reading).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.engine.fallback import STRICT_ENV, FallbackWarning
from mcp_notebook.fast import cores, parallel, records
from mcp_notebook.fast.rows import Rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_formats  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")

DOCS = ["har-streamable", "har-sse", "inspector", "recorder"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    return gen_formats.write_all(3000, tmp_path_factory.mktemp("docs"), seed=21, only=DOCS)


def _one_process(path: Path, monkeypatch: pytest.MonkeyPatch) -> mn.Trace:
    with monkeypatch.context() as m:
        m.setattr(cores, "SPLIT", "none")
        return mn.load(path)


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Documents of any size shared with a real forked child; the forks made, counted."""
    monkeypatch.setattr(records, "MIN_SPLIT_BYTES", 0)
    monkeypatch.setattr(cores, "SPLIT", "fork")
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # whatever threads others left
    forks: list[int] = []
    real = parallel._fork

    def fork(work):  # type: ignore[no-untyped-def]
        child = real(work)
        forks.append(child.pid if child is not None else -1)
        return child

    monkeypatch.setattr(parallel, "_fork", fork)
    return forks


def _same(got: mn.Trace, want: mn.Trace) -> None:
    pd.testing.assert_frame_equal(got.frames, want.frames)
    pd.testing.assert_frame_equal(got.pairs, want.pairs)
    pd.testing.assert_frame_equal(got.violations, want.violations)
    assert list(got.notes) == list(want.notes)
    assert got.contexts() == want.contexts()  # every row's extra (HTTP status, headers...)
    # the texts, labels and extras the table keeps beside its columns
    for k in (0, len(got.frames) // 2, len(got.frames) - 1):
        assert got.frames["raw"].iloc[k] == want.frames["raw"].iloc[k]
        assert got.frames["source"].iloc[k] == want.frames["source"].iloc[k]
        assert got.frames["info"].iloc[k] == want.frames["info"].iloc[k]


@pytest.mark.parametrize("fmt", DOCS)
def test_two_processes_make_the_one_process_table(written, fmt, shared, monkeypatch):
    want = _one_process(written[fmt], monkeypatch)
    got = mn.load(written[fmt])
    assert len(shared) == 1 and shared[0] > 0  # a real child made half the rows
    _same(got, want)
    # the halves meet in the middle: the rows on each side of the cut are both there
    assert len(got.frames) == len(want.frames) > 1000


def test_a_small_document_stays_in_one_process(written, monkeypatch):
    forks: list[int] = []
    monkeypatch.setattr(parallel, "_fork", lambda work: forks.append(1))
    monkeypatch.setattr(cores, "SPLIT", "fork")
    mn.load(written["inspector"])  # below MIN_SPLIT_BYTES
    assert forks == []


def test_a_child_that_fails_is_noted_and_its_half_made_here(written, shared, monkeypatch):
    want = _one_process(written["har-streamable"], monkeypatch)

    def broken(self: Rows) -> None:  # only the child packs its rows
        raise RuntimeError("made to fail")

    monkeypatch.setattr(Rows, "pack", broken)
    monkeypatch.delenv(STRICT_ENV)  # noted and warned (strict: raised)
    with pytest.warns(FallbackWarning, match="made to fail"):
        got = mn.load(written["har-streamable"])
    assert len(shared) == 1
    assert any("second half of the records" in n for n in got.notes)
    pd.testing.assert_frame_equal(got.frames, want.frames)
    pd.testing.assert_frame_equal(got.violations, want.violations)


def test_a_child_that_fails_raises_when_strict(written, shared, monkeypatch):
    from mcp_notebook.engine.fallback import FastPathError

    monkeypatch.setattr(Rows, "pack", lambda self: 1 / 0)
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(FastPathError, match="second half of the records"):
        mn.load(written["inspector"])
