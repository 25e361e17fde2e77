"""``mn.load_many``: many captures at once, as one collection of tables.

Each capture is loaded on its own (``mn.load``: pairing and checks stay inside its
sessions), then its tables are concatenated under a ``capture`` key. ``c.sessions`` has
one row per session with the counts of ``Trace.summary`` split by session.

>>> import mcp_notebook as mn
>>> c = mn.load_many(mn.sample_path().parent)
>>> int(c.sessions["requests"].sum()) > 0
True
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Collection", "load_many", "capture_tables", "OTEL_BUCKETS", "SESSION_COLUMNS"]

#: explicit bucket boundaries (s) the OpenTelemetry MCP semantic conventions advise for
#: ``mcp.client.operation.duration`` and ``mcp.server.operation.duration``
OTEL_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

#: the sessions table: name -> (dtype, meaning)
SESSION_COLUMNS: dict[str, tuple[str, str]] = {
    "capture": ("object", "the capture: its file name, or its path in the folder named"),
    "session": ("object", "the session inside the capture"),
    "client_name": ("object", "clientInfo.name of initialize"),
    "client_version": ("object", "clientInfo.version of initialize"),
    "server_name": ("object", "serverInfo.name of the initialize result"),
    "server_version": ("object", "serverInfo.version of the initialize result"),
    "protocol_version": ("object", "the negotiated protocol version"),
    "transport": ("object", "stdio or http (Streamable HTTP or SSE)"),
    "start": ("datetime64[ns, UTC]", "the first frame's time"),
    "duration": ("timedelta64[ns]", "last frame's time minus the first's"),
    "frames": ("int64", "rows of the session"),
    "requests": ("int64", "requests (both directions)"),
    "notifications": ("int64", "notifications"),
    "results": ("int64", "result responses"),
    "errors": ("int64", "error responses"),
    "tool_errors": ("int64", "results with isError: true"),
    "invalid": ("int64", "unparsable or invalid frames"),
    "pairs": ("int64", "answered requests"),
    "unanswered": ("int64", "requests with no response"),
    "cancelled": ("int64", "requests cancelled in flight"),
    "orphans": ("int64", "responses to no request"),
    "duplicates": ("int64", "second responses to one request"),
    "violations_error": ("int64", "findings of severity error"),
    "violations_warning": ("int64", "findings of severity warning"),
    "violations_info": ("int64", "findings of severity info"),
}
_COUNTS = [k for k, (d, _) in SESSION_COLUMNS.items() if d == "int64"]


def _key(values: pd.Series) -> np.ndarray:
    """Session values as objects, NaN as None (so None sessions group together)."""
    return values.astype(object).where(values.notna(), None).to_numpy()


def _rows_of(keys: Any) -> dict[Any, list[int]]:
    """The row positions of each session value, in one pass (a table per session would
    otherwise compare every row with every session)."""
    out: dict[Any, list[int]] = {}
    for i, x in enumerate(keys):
        out.setdefault(x, []).append(i)
    return out


def _session_rows(t: Any, capture: str) -> pd.DataFrame:
    f, p, v = t.frames, t.pairs, t.violations
    fs, ps = _key(f["session"]), _key(p["session"])
    seq_session = pd.Series(fs, index=f["seq"].to_numpy())
    vs = seq_session.reindex(v["seq"].astype("float").to_numpy()).to_numpy() if len(v) else []
    f_rows, p_rows, v_rows = _rows_of(fs), _rows_of(ps), _rows_of(vs)
    rows = []
    peers = t.peers()
    for s in t.sessions():
        fr, pr = f.iloc[f_rows.get(s, [])], p.iloc[p_rows.get(s, [])]
        kinds = fr["kind"].astype(object).value_counts()
        outcomes = pr["outcome"].astype(object).value_counts()
        sev = (v.iloc[v_rows.get(s, [])]["severity"].astype(object).value_counts()
               if len(v) else pd.Series(dtype=int))
        streams = set(fr["stream"].astype(object).dropna())
        ts = fr["ts"].dropna()
        row: dict[str, Any] = {
            "capture": capture, "session": s,
            "client_name": None, "client_version": None, "server_name": None,
            "server_version": None, "protocol_version": None,
            "transport": "stdio" if "stdio" in streams else (
                "http" if streams & {"http", "sse"} else None),
            "start": ts.min() if len(ts) else pd.NaT,
            "duration": (ts.max() - ts.min()) if len(ts) else pd.NaT,
            "frames": len(fr),
            **{name: int(kinds.get(k, 0)) for name, k in (
                ("requests", "request"), ("notifications", "notification"),
                ("results", "result"), ("errors", "error"), ("invalid", "invalid"))},
            "tool_errors": int(fr["is_tool_error"].sum()),
            "pairs": int((pr["request_seq"].notna() & pr["response_seq"].notna()
                          & (pr["outcome"] != "duplicate")).sum()),
            "unanswered": int((pr["request_seq"].notna() & pr["response_seq"].isna()).sum()),
            "cancelled": int(outcomes.get("cancelled", 0)),
            "orphans": int(outcomes.get("orphan", 0)),
            "duplicates": int(outcomes.get("duplicate", 0)),
            **{f"violations_{k}": int(sev.get(k, 0)) for k in ("error", "warning", "info")},
        }
        row.update(peers.get(s, {}))
        if row["protocol_version"] is None and s in t.versions and t.protocol_version:
            row["protocol_version"] = str(t.versions[s])  # the version it is checked against
        rows.append(row)
    return _typed(pd.DataFrame(rows, columns=list(SESSION_COLUMNS)))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """The declared dtypes of ``SESSION_COLUMNS`` (empty tables keep them too)."""
    return df.astype({k: d for k, (d, _) in SESSION_COLUMNS.items()})


def _plain(df: pd.DataFrame, capture: str) -> pd.DataFrame:
    """A capture's table with its key first and categories as objects (they differ per file)."""
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    out.insert(0, "capture", pd.Series([capture] * len(out), dtype=object, index=out.index))
    return out.reset_index(drop=True)


def _load_fn() -> Any:
    """``mn.load``, fetched through the package: importing ``mcp_notebook.load`` first
    would leave the package's lazy name ``load`` bound to the module."""
    from . import load

    return load


def capture_tables(path: str | os.PathLike[str], capture: str, format: str = "auto"
                   ) -> dict[str, pd.DataFrame]:
    """The four tables of one capture: ``frames, pairs, violations, sessions``.

    Raises what ``mn.load`` raises on a file it cannot read (:class:`CaptureError`).
    """
    t = _load_fn()(path, format=format)
    return {"frames": _plain(t.frames, capture), "pairs": _plain(t.pairs, capture),
            "violations": _plain(t.violations, capture),
            "sessions": _session_rows(t, capture)}


def _one(job: tuple[str, str, str]) -> tuple[str, dict[str, pd.DataFrame] | str]:
    """``capture_tables`` for a pool: the tables, or why the file was skipped."""
    _load_fn()
    from .load import _UNREADABLE
    from .readers import CaptureError

    path, capture, format = job
    try:
        return capture, capture_tables(path, capture, format)
    except (CaptureError, *_UNREADABLE) as exc:
        return capture, f"{type(exc).__name__}: {exc}"


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def expand_captures(paths: Any) -> tuple[list[tuple[Path, str]], list[tuple[str, str]]]:
    """``([(file, capture name)], [(name, why skipped)])`` for files, folders and globs."""
    _load_fn()
    from .load import expand

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    bases: list[Path] = []
    missing: list[tuple[str, str]] = []
    for p in paths:
        text = os.fspath(p)
        if _is_glob(text) and not os.path.exists(text):
            hits = sorted(Path(h) for h in glob.glob(text, recursive=True) if os.path.isfile(h))
            if not hits:
                missing.append((text, "the pattern matches no file"))
            files += hits
            bases += [Path(h).parent for h in hits]
            continue
        named, found, skipped_here = expand(text)
        missing += [(os.path.join(text, name), why) for name, why in skipped_here]
        for f in named:
            if f.exists():
                files.append(f)
                bases.append(f.parent)
            else:
                missing.append((text, "no such file"))
        files += found
        bases += [Path(text)] * len(found)
    seen: set[Path] = set()
    unique = []
    for f, b in zip(files, bases, strict=True):
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append((f, b))
    # a file's name, or its path inside the folder it was found in; the path from the
    # common parent only where two names would be the same
    names = [f.resolve().relative_to(b.resolve()).as_posix() if f != b else f.name
             for f, b in unique]
    counts = {n: names.count(n) for n in names}
    clash = [u for u, n in zip(unique, names, strict=True) if counts[n] > 1]
    root = Path(os.path.commonpath([str(f.resolve().parent) for f, _ in clash])) if clash else None
    out = [(f, n if counts[n] == 1 or root is None else f.resolve().relative_to(root).as_posix())
           for (f, _), n in zip(unique, names, strict=True)]
    return out, missing


class Collection:
    """Many captures: ``sessions``, ``frames``, ``pairs``, ``violations`` and aggregates.

    Every table has a ``capture`` column first; ``skipped`` lists what was not loaded.
    """

    def __init__(self, frames: pd.DataFrame, pairs: pd.DataFrame, violations: pd.DataFrame,
                 sessions: pd.DataFrame, skipped: pd.DataFrame,
                 paths: dict[str, str] | None = None) -> None:
        self.frames = frames
        self.pairs = pairs
        self.violations = violations
        self.sessions = sessions
        self.skipped = skipped
        #: capture name -> the file it was loaded from (to open one in the explorer)
        self.paths = dict(paths or {})

    @property
    def captures(self) -> list[str]:
        return list(dict.fromkeys(self.sessions["capture"]))

    def latency_histograms(self, by: str = "method") -> pd.DataFrame:
        """Request latencies per ``by`` (``method``, ``requester``: c2s is the client's
        operation duration, s2c the server's; or a sessions column) on the OTel buckets.

        One row per group: ``count``, ``sum_s`` and one column per bucket, named by its
        upper bound in seconds (``"0.01"`` ... ``"300"``, ``"+Inf"``); a bucket counts the
        latencies above the previous bound and at most its own, as OpenTelemetry does.
        """
        return latency_histograms(self._answered(by), by)

    def error_rates(self, by: str = "server_version") -> pd.DataFrame:
        """Per value of a sessions column (or ``method``): requests, errors and their rates."""
        return error_rates(self._answered(by), by)

    def top_rules(self, n: int | None = 10) -> pd.DataFrame:
        """The rules broken in most captures: severity, findings, captures, sessions."""
        return top_rules(self.violations, self.frames, n)

    def _answered(self, by: str) -> pd.DataFrame:
        return _with_sessions(self.pairs, self.sessions, by)

    def view(self, *, max_rows: int = 500) -> Any:
        """The notebook view: a sortable sessions table, latency histograms per method, and
        the explorer of the session you click (:func:`mcp_notebook.widgets.fleet`)."""
        from .widgets.fleet import fleet

        return fleet(self, max_rows=max_rows)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        from .widgets.fleetrender import fleet_html, fleet_text

        return {"text/plain": fleet_text(self), "text/html": fleet_html(self)}

    def __len__(self) -> int:
        return len(self.captures)

    def __repr__(self) -> str:
        s = self.sessions
        return (f"<Collection {len(self)} capture(s), {len(s)} session(s), "
                f"{int(s['requests'].sum())} requests, {int(s['errors'].sum())} errors, "
                f"{len(self.skipped)} skipped>")


# -- aggregates, shared by the local and the Dask engine -------------------------------------

def _with_sessions(pairs: pd.DataFrame, sessions: pd.DataFrame, by: str) -> pd.DataFrame:
    """Requests (not orphans or duplicates) with ``by`` from the sessions table when needed."""
    p = pairs[pairs["request_seq"].notna() & ~pairs["outcome"].isin(["duplicate", "orphan"])]
    p = p[["capture", "session", "requester", "method", "outcome", "response_seq", "latency"]]
    if by not in p.columns:
        keys = sessions[["capture", "session", by]]
        p = p.merge(keys, on=["capture", "session"], how="left")
    p = p.assign(**{by: p[by].astype(object).where(p[by].notna(), "?")})
    return p


def bucket_labels() -> list[str]:
    return [f"{b:g}" for b in OTEL_BUCKETS] + ["+Inf"]


def latency_histograms(p: pd.DataFrame, by: str = "method") -> pd.DataFrame:
    p = p[p["latency"].notna()]
    seconds = p["latency"].dt.total_seconds().to_numpy()
    # right=True: bucket i holds (bounds[i-1], bounds[i]]
    idx = np.searchsorted(np.asarray(OTEL_BUCKETS, dtype=float), seconds, side="left")
    labels = bucket_labels()
    g = pd.DataFrame({by: p[by].to_numpy(), "bucket": idx, "s": seconds})
    counts = (g.groupby([by, "bucket"]).size().unstack("bucket")
              .reindex(columns=range(len(labels)), fill_value=0).fillna(0).astype("int64"))
    counts.columns = labels
    out = pd.DataFrame({"count": g.groupby(by).size().astype("int64"),
                        "sum_s": g.groupby(by)["s"].sum()}).join(counts)
    out.index.name = by
    return out.sort_values("count", ascending=False, kind="stable")


def error_rates(p: pd.DataFrame, by: str = "server_version") -> pd.DataFrame:
    g = pd.DataFrame({by: p[by].to_numpy(),
                      "answered": p["response_seq"].notna().to_numpy(),
                      "errors": (p["outcome"] == "error").to_numpy(),
                      "tool_errors": (p["outcome"] == "tool_error").to_numpy()})
    grouped = g.groupby(by)
    out = pd.DataFrame({"requests": grouped.size().astype("int64"),
                        "answered": grouped["answered"].sum().astype("int64"),
                        "errors": grouped["errors"].sum().astype("int64"),
                        "tool_errors": grouped["tool_errors"].sum().astype("int64")})
    answered = out["answered"].where(out["answered"] > 0)
    out["error_rate"] = out["errors"] / answered
    out["tool_error_rate"] = out["tool_errors"] / answered
    return out.sort_index()


def top_rules(v: pd.DataFrame, frames: pd.DataFrame | None, n: int | None = 10) -> pd.DataFrame:
    cols = ["severity", "findings", "captures", "sessions"]
    if v.empty:
        return pd.DataFrame(columns=cols).rename_axis("rule")
    v = v[["capture", "rule", "severity", "seq"]]
    if frames is not None:
        keys = frames[["capture", "seq", "session"]]
        v = v.merge(keys, on=["capture", "seq"], how="left")
    else:
        v = v.assign(session=None)
    v = v.assign(sk=v["capture"].astype(str) + "\x00" + v["session"].astype(str),
                 severity=v["severity"].astype(object))
    grouped = v.groupby("rule")
    out = pd.DataFrame({"severity": grouped["severity"].first(),
                        "findings": grouped.size().astype("int64"),
                        "captures": grouped["capture"].nunique().astype("int64"),
                        "sessions": grouped["sk"].nunique().astype("int64")})
    out = out.sort_values(["captures", "findings"], ascending=False, kind="stable")
    return out if n is None else out.head(n)


def _categorised(df: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """Put back the categories the per-capture tables had (``like``: one of them)."""
    for c in like.columns:
        if isinstance(like[c].dtype, pd.CategoricalDtype) and c in df.columns:
            df[c] = df[c].astype("category")
    return df


def load_many(paths: Any, format: str = "auto", *, workers: int | None = None,
              engine: str = "local") -> Any:
    """Load many captures (files, folders, globs) into a :class:`Collection`.

    Parameters
    ----------
    paths
        A file, a folder (walked), a glob (``"runs/**/*.jsonl"``), or a list of them.
    workers
        Processes to load with; by default one, or the usable cores when the files
        are large together (as ``mn.load`` shares out many files).
    engine
        ``"local"`` (pandas) or ``"dask"``: one partition per capture (see
        :mod:`mcp_notebook.fleet_dask`).

    Files that cannot be read, or are of no known format, are skipped and listed in
    ``c.skipped`` (``capture, reason``).
    """
    jobs, missing = expand_captures(paths)
    if engine == "dask":
        from .fleet_dask import load_many_dask

        return load_many_dask(jobs, missing, format)
    if engine != "local":
        raise ValueError(f"engine must be 'local' or 'dask', not {engine!r}")
    if workers is None:
        from .fast.cores import workers as usable
        from .fast.parallel import MIN_MANY_BYTES

        total = sum(f.stat().st_size for f, _ in jobs)
        workers = min(usable(), len(jobs)) if total >= MIN_MANY_BYTES else 1
    args = [(str(f), name, format) for f, name in jobs]
    if workers > 1 and len(args) > 1:
        from concurrent.futures import ProcessPoolExecutor

        from .fast.cores import share  # each worker has a core: no scanner thread in it

        with ProcessPoolExecutor(workers, initializer=share) as pool:
            results = list(pool.map(_one, args, chunksize=max(1, len(args) // (4 * workers))))
    else:
        results = [_one(a) for a in args]
    return _assemble(results, missing, {name: str(f) for f, name in jobs})


def _assemble(results: Iterable[tuple[str, dict[str, pd.DataFrame] | str]],
              missing: list[tuple[str, str]], paths: dict[str, str] | None = None
              ) -> Collection:
    tables: dict[str, list[pd.DataFrame]] = {k: [] for k in
                                             ("frames", "pairs", "violations", "sessions")}
    skipped = list(missing)
    for name, got in results:
        if isinstance(got, str):
            skipped.append((name, got))
            continue
        for k, df in got.items():
            tables[k].append(df)
    out = {}
    for k, dfs in tables.items():
        out[k] = _concat(k, dfs)
    loaded = set(out["sessions"]["capture"])
    return Collection(out["frames"], out["pairs"], out["violations"], out["sessions"],
                      pd.DataFrame(skipped, columns=["capture", "reason"], dtype=object),
                      {k: v for k, v in (paths or {}).items() if k in loaded})


def _concat(kind: str, dfs: list[pd.DataFrame]) -> pd.DataFrame:
    if kind == "sessions":
        return _typed(pd.concat(dfs, ignore_index=True)) if dfs else _typed(
            pd.DataFrame(columns=list(SESSION_COLUMNS)))
    from .table import FRAME_COLUMNS, PAIR_COLUMNS, VIOLATION_COLUMNS, empty

    declared = {"frames": FRAME_COLUMNS, "pairs": PAIR_COLUMNS,
                "violations": VIOLATION_COLUMNS}[kind]
    like = empty(declared)
    nonempty = [d for d in dfs if len(d)]
    if not nonempty:
        return _plain(like, "").iloc[0:0]
    return _categorised(pd.concat(nonempty, ignore_index=True), like)
