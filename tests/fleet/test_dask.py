"""engine="dask" on a real dask.distributed LocalCluster (two worker processes on
127.0.0.1): the same tables and aggregates as the local engine."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn

# Dask is imported by the fixtures, not at collection, where it cost every worker 1.2 s of CPU
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("dask", "distributed")),
    reason="Dask is needed: pip install -e '.[dask]'")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PEERS = ROOT / "tests" / "fixtures" / "peers"


@pytest.fixture(scope="module")
def client():
    from dask import distributed

    # the dashboard on a free port (":0"): with None a run still tried 8787 and warned that
    # it was taken when two suites ran at once
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


#: one trace set, not the whole of data/ and the peers' folder one after the other: a
#: folder (HAR and stdio captures of several servers and clients, with files that are no
#: capture by their name), a gzip capture and an SSE HAR from data/, and a pattern that
#: matches no file, which between them take every path the two sets took (a partition per
#: capture, the skipped rows, each reader) in half the partitions
TRACES = [PEERS, DATA / "conversation-large-result-mb.jsonl.gz", DATA / "demo-sse.har",
          str(PEERS / "none-*.har")]


@pytest.fixture(scope="module")
def engines(client):
    return mn.load_many(TRACES), mn.load_many(TRACES, engine="dask")


def test_one_partition_per_capture_with_declared_meta(engines, client):
    import dask.dataframe as dd

    local, remote = engines
    assert remote.frames.npartitions == len(local.captures) + len(
        local.skipped[~local.skipped["reason"].str.contains(
            "matches no file|not a capture by its name")])  # never opened: no partition
    for name in ("frames", "pairs", "violations", "sessions"):
        table = getattr(remote, name)
        assert isinstance(table, dd.DataFrame)
        assert list(table.columns) == list(getattr(local, name).columns)
    assert str(remote.frames._meta["id"].dtype) == "object"  # 1 and "1" stay apart
    # the work ran on the cluster's two processes
    assert len(client.scheduler_info()["workers"]) == 2


def test_same_tables_as_the_local_engine(engines):
    local, remote = engines
    got = remote.compute()
    for name in ("sessions", "frames", "pairs", "violations"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(local, name), obj=name)
    pd.testing.assert_frame_equal(remote.skipped, local.skipped)


def test_same_aggregates_as_the_local_engine(engines):
    local, remote = engines
    pd.testing.assert_frame_equal(remote.latency_histograms(), local.latency_histograms())
    pd.testing.assert_frame_equal(remote.latency_histograms(by="server_name"),
                                  local.latency_histograms(by="server_name"))
    pd.testing.assert_frame_equal(remote.latency_histograms(by="requester"),
                                  local.latency_histograms(by="requester"))
    pd.testing.assert_frame_equal(remote.error_rates(), local.error_rates())
    pd.testing.assert_frame_equal(remote.error_rates(by="method"), local.error_rates(by="method"))
    pd.testing.assert_frame_equal(remote.top_rules(None), local.top_rules(None))
    # and what a user computes on the Dask frames themselves
    per_capture = remote.sessions.groupby("capture")["requests"].sum().compute()
    assert per_capture.sort_index().to_dict() == \
        local.sessions.groupby("capture")["requests"].sum().to_dict()
    assert int(remote.frames["size"].sum().compute()) == int(local.frames["size"].sum())


def test_a_worker_loads_each_small_capture_once(monkeypatch, tmp_path):
    """The worker's cache of tables, in this process: each table of a fleet is a partition
    per capture, so a capture is asked for about six times; the small ones are loaded once,
    and past ``CACHE_BYTES`` the least recently used go, the last one always kept."""
    from mcp_notebook import collection as C
    from mcp_notebook import fleet_dask

    loads = []
    real = C._one

    def counted(job):
        loads.append(job[1])
        return real(job)

    monkeypatch.setattr(C, "_one", counted)
    monkeypatch.setattr(fleet_dask, "_cache", type(fleet_dask._cache)())
    *jobs, extra = [(str(p), p.stem, "auto") for p in sorted(DATA.glob("*.jsonl"))[:9]]
    for _ in range(6):
        for job in jobs:
            assert not isinstance(fleet_dask._tables(job), str)
    assert sorted(loads) == sorted(j[1] for j in jobs)  # once each
    monkeypatch.setattr(fleet_dask, "CACHE_BYTES", os.path.getsize(extra[0]))
    loads.clear()
    fleet_dask._tables(extra)
    assert loads == [extra[1]]
    assert [k[1] for k in fleet_dask._cache] == [extra[1]]  # over the limit: the last one
    fleet_dask._tables(jobs[0])
    assert loads == [extra[1], jobs[0][1]]  # gone, so loaded again
