"""``mn.load_many(..., engine="dask")``: the collection's tables as Dask DataFrames.

One partition per capture (``dask.dataframe.from_map``): a capture is loaded whole by the
worker that reads it, since pairing stays within a session and a file is never split by
bytes. The four tables have declared ``meta`` (the columns of ``table.py`` with a
``capture`` key first; categories become objects, as they differ per file). A worker keeps
its last few captures' tables, so computing several tables in one ``dask.compute`` loads
each file about once; the aggregates are partial per capture on the workers and summed.

With a cluster, the same code runs past one machine::

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")       # or LocalCluster(...) for one machine
    c = mn.load_many("s3-mounted/captures/**/*.jsonl", engine="dask")
    c.latency_histograms()                         # pandas, computed on the cluster

(The files must be readable by the workers at the same paths.)
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pandas as pd

from . import collection as C

__all__ = ["DaskCollection", "load_many_dask"]

#: the captures whose tables a worker process keeps, by the sum of their files' sizes (the
#: tables take a few times their file): the most recently used first, and always the last
#: one. Each of the four tables (and the aggregates' light tables, and the skipped list) is
#: a partition per capture, so a capture is asked for about six times: kept by count, four
#: captures, a fleet of twenty small ones was loaded again for every table.
CACHE_BYTES = 64 << 20
_cache: OrderedDict[tuple[str, str, str, int, int], dict[str, pd.DataFrame] | str] = OrderedDict()


def _tables(job: tuple[str, str, str]) -> dict[str, pd.DataFrame] | str:
    """A capture's tables (or why it was skipped), from this worker's small cache."""
    path, capture, format = job
    try:
        st = os.stat(path)
        key = (path, capture, format, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (path, capture, format, 0, 0)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    got = C._one(job)[1]
    _cache[key] = got
    while len(_cache) > 1 and sum(k[4] for k in _cache) > CACHE_BYTES:
        _cache.popitem(last=False)
    return got


def metas() -> dict[str, pd.DataFrame]:
    """The empty tables Dask is told each partition looks like."""
    from .table import FRAME_COLUMNS, PAIR_COLUMNS, VIOLATION_COLUMNS, empty

    out = {k: C._plain(empty(cols), "").iloc[0:0] for k, cols in
           (("frames", FRAME_COLUMNS), ("pairs", PAIR_COLUMNS),
            ("violations", VIOLATION_COLUMNS))}
    out["sessions"] = C._typed(pd.DataFrame(columns=list(C.SESSION_COLUMNS)))
    return out


def _part(job: tuple[str, str, str], kind: str) -> pd.DataFrame:
    meta = metas()[kind]
    got = _tables(job)
    if isinstance(got, str):
        return meta
    return got[kind].astype(meta.dtypes.to_dict())


def _skip(job: tuple[str, str, str]) -> pd.DataFrame:
    got = _tables(job)
    rows = [(job[1], got)] if isinstance(got, str) else []
    return pd.DataFrame(rows, columns=["capture", "reason"], dtype=object)


_RULES_META = pd.DataFrame({"rule": pd.Series(dtype=object), "severity": pd.Series(dtype=object),
                            "findings": pd.Series(dtype="int64"),
                            "captures": pd.Series(dtype="int64"),
                            "sessions": pd.Series(dtype="int64")})


def _rules_part(job: tuple[str, str, str]) -> pd.DataFrame:
    """Per rule in one capture: severity, findings, 1 capture, its sessions with the rule."""
    got = _tables(job)
    if isinstance(got, str) or got["violations"].empty:
        return _RULES_META
    one = C.top_rules(got["violations"], got["frames"], None)
    return one.reset_index().astype(_RULES_META.dtypes.to_dict())


#: session columns the light table carries beside each request
_IDENTITY = ["client_name", "client_version", "server_name", "server_version",
             "protocol_version", "transport"]
_LIGHT_META = pd.DataFrame({
    "capture": pd.Series(dtype=object), "session": pd.Series(dtype=object),
    "requester": pd.Series(dtype=object), "method": pd.Series(dtype=object),
    "outcome": pd.Series(dtype=object), "response_seq": pd.Series(dtype="Int64"), "latency": pd.Series(dtype="timedelta64[ns]"),
    **{k: pd.Series(dtype=object) for k in _IDENTITY}})


def _light_part(job: tuple[str, str, str]) -> pd.DataFrame:
    """The requests of one capture with their session's client, server and transport."""
    got = _tables(job)
    if isinstance(got, str):
        return _LIGHT_META
    p = C._with_sessions(got["pairs"], got["sessions"], "method")
    keys = got["sessions"][["capture", "session", *_IDENTITY]]
    p = p.merge(keys, on=["capture", "session"], how="left")
    for k in ["requester", *_IDENTITY]:
        p[k] = p[k].astype(object).where(p[k].notna(), "?")
    return p[list(_LIGHT_META.columns)].astype(_LIGHT_META.dtypes.to_dict())


def _hist_part(p: pd.DataFrame, by: str) -> pd.DataFrame:
    return C.latency_histograms(p, by).reset_index()


def _hist_meta(by: str) -> pd.DataFrame:
    cols = {by: pd.Series(dtype=object), "count": pd.Series(dtype="int64"),
            "sum_s": pd.Series(dtype="float64")}
    cols.update({b: pd.Series(dtype="int64") for b in C.bucket_labels()})
    return pd.DataFrame(cols)


def _rates_part(p: pd.DataFrame, by: str) -> pd.DataFrame:
    return C.error_rates(p, by)[["requests", "answered", "errors", "tool_errors"]].reset_index()


def _rates_meta(by: str) -> pd.DataFrame:
    return pd.DataFrame({by: pd.Series(dtype=object),
                         **{k: pd.Series(dtype="int64")
                            for k in ("requests", "answered", "errors", "tool_errors")}})


def _answered_part(pairs: pd.DataFrame, sessions: pd.DataFrame | None, by: str) -> pd.DataFrame:
    return C._with_sessions(pairs, sessions if sessions is not None else pairs, by)


def _objects() -> Any:
    """Dask's config with its object -> pyarrow string conversion off: an ``id`` column
    holds ints and strings (1 and "1" differ), which that conversion would make alike."""
    import dask

    return dask.config.set({"dataframe.convert-string": False})


def _kept_objects(method: Any) -> Any:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _objects():
            return method(*args, **kwargs)
    return wrapper


class DaskCollection:
    """``sessions``, ``frames``, ``pairs``, ``violations`` as Dask DataFrames (lazy).

    The aggregates (``latency_histograms``, ``error_rates``, ``top_rules``) are computed
    on the cluster and return small pandas tables equal to the local engine's.
    """

    def __init__(self, jobs: list[tuple[str, str, str]], missing: list[tuple[str, str]]) -> None:
        self._jobs = jobs
        self._missing = missing
        m = metas()
        with _objects():
            made = self._tables(jobs, m)
        self.frames, self.pairs = made["frames"], made["pairs"]
        self.violations, self.sessions = made["violations"], made["sessions"]
        self._skipped: pd.DataFrame | None = None
        self._light_tables: tuple[Any, Any] | None = None

    @staticmethod
    def _tables(jobs: list[tuple[str, str, str]], m: dict[str, pd.DataFrame]) -> dict[str, Any]:
        import dask.dataframe as dd

        if jobs:
            made = {k: dd.from_map(_part, jobs, kind=k, meta=m[k], enforce_metadata=False,
                                   label=f"mcp-{k}") for k in m}
        else:
            made = {k: dd.from_pandas(m[k], npartitions=1) for k in m}
        return made

    @property
    def npartitions(self) -> int:
        return len(self._jobs)

    @property
    @_kept_objects
    def skipped(self) -> pd.DataFrame:
        """Files not loaded and why (computed on the workers when first asked)."""
        if self._skipped is None:
            import dask.dataframe as dd

            found = (dd.from_map(_skip, self._jobs,
                                 meta=pd.DataFrame({"capture": pd.Series(dtype=object),
                                                    "reason": pd.Series(dtype=object)}),
                                 label="mcp-skipped").compute()
                     if self._jobs else pd.DataFrame(columns=["capture", "reason"]))
            listed = pd.DataFrame(self._missing, columns=["capture", "reason"], dtype=object)
            self._skipped = pd.concat([listed, found], ignore_index=True).astype(object)
        return self._skipped

    def _light(self) -> Any:
        """Per capture, the few columns the aggregates read (requests with their session's
        identity, and per-rule counts), loaded once and kept on the workers (persist):
        small beside the frames, so the aggregates after the first load nothing again."""
        if self._light_tables is None:
            import dask.dataframe as dd

            self._light_tables = (
                dd.from_map(_light_part, self._jobs, meta=_LIGHT_META, label="mcp-light",
                            enforce_metadata=False).persist(),
                dd.from_map(_rules_part, self._jobs, meta=_RULES_META, label="mcp-rules",
                            enforce_metadata=False).persist())
        return self._light_tables

    def _answered(self, by: str) -> Any:
        if by in _LIGHT_META.columns:
            return self._light()[0]
        import dask

        keys = self.sessions[["capture", "session", by]].compute()  # small: one row a session
        # delayed: sent whole to every partition, not aligned with the pairs as a frame
        return self.pairs.map_partitions(_answered_part, dask.delayed(keys, pure=True), by,
                                         meta=_answered_meta(self.pairs._meta, by, keys))

    @_kept_objects
    def latency_histograms(self, by: str = "method") -> pd.DataFrame:
        """As :meth:`Collection.latency_histograms`, partial per capture, summed."""
        if not self._jobs:
            return C.latency_histograms(C._with_sessions(self.pairs.compute(),
                                                         self.sessions.compute(), by), by)
        parts = self._answered(by).map_partitions(_hist_part, by, meta=_hist_meta(by))
        out = parts.groupby(by).sum(split_out=1).compute()  # a tree reduction, no shuffle
        out = out[["count", "sum_s", *C.bucket_labels()]].astype(
            {k: "int64" for k in ["count", *C.bucket_labels()]})
        return out.sort_index().sort_values("count", ascending=False, kind="stable")

    @_kept_objects
    def error_rates(self, by: str = "server_version") -> pd.DataFrame:
        """As :meth:`Collection.error_rates`."""
        if not self._jobs:
            return C.error_rates(C._with_sessions(self.pairs.compute(),
                                                  self.sessions.compute(), by), by)
        parts = self._answered(by).map_partitions(_rates_part, by, meta=_rates_meta(by))
        out = parts.groupby(by).sum(split_out=1).compute().astype("int64")
        answered = out["answered"].where(out["answered"] > 0)
        out["error_rate"] = out["errors"] / answered
        out["tool_error_rate"] = out["tool_errors"] / answered
        return out.sort_index()

    @_kept_objects
    def top_rules(self, n: int | None = 10) -> pd.DataFrame:
        """As :meth:`Collection.top_rules`: per-capture counts summed over the captures."""
        if not self._jobs:
            return C.top_rules(pd.DataFrame(), None, n)
        parts = self._light()[1]
        out = parts.groupby("rule").agg({"severity": "first", "findings": "sum",
                                         "captures": "sum", "sessions": "sum"},
                                        split_out=1).compute()
        out = out.astype({"findings": "int64", "captures": "int64", "sessions": "int64"})
        out = out.sort_index().sort_values(["captures", "findings"], ascending=False,
                                           kind="stable")
        return out if n is None else out.head(n)

    @_kept_objects
    def compute(self) -> C.Collection:
        """The whole collection in this process, as the local engine gives it."""
        import dask

        from .table import FRAME_COLUMNS, PAIR_COLUMNS, VIOLATION_COLUMNS, empty

        f, p, v, s = dask.compute(self.frames, self.pairs, self.violations, self.sessions)
        return C.Collection(
            C._categorised(f.reset_index(drop=True), empty(FRAME_COLUMNS)),
            C._categorised(p.reset_index(drop=True), empty(PAIR_COLUMNS)),
            C._categorised(v.reset_index(drop=True), empty(VIOLATION_COLUMNS)),
            C._typed(s.reset_index(drop=True)), self.skipped,
            {name: path for path, name, _ in self._jobs})

    def __repr__(self) -> str:
        return f"<DaskCollection {len(self._jobs)} capture(s), one partition each>"


def _answered_meta(pairs_meta: pd.DataFrame, by: str, keys: pd.DataFrame | None = None
                   ) -> pd.DataFrame:
    return C._with_sessions(pairs_meta, keys if keys is not None else pairs_meta, by).iloc[0:0]


def load_many_dask(jobs: list[tuple[Path, str]], missing: list[tuple[str, str]],
                   format: str = "auto") -> DaskCollection:
    try:
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is not installed
        raise ImportError("engine='dask' needs Dask: pip install 'mcp_notebook[dask]'") from exc
    return DaskCollection([(str(f), name, format) for f, name in jobs], missing)
