"""One measurement in a fresh process: ``python bench_approaches.py APPROACH FILE MANIFEST``.

Prints one JSON object on its last stdout line: ``phases`` (seconds of wall time per named
phase of the timed region, which starts after imports and warm-up), ``cpu_s``,
``warmup_s``, ``rows`` and ``checks`` (what the output kept or lost, compared with the
manifest by the harness), or ``error`` when the reader failed on the file.

Each approach is a function ``run(path, manifest, clock) -> (rows, checks)`` that calls
``clock.start()`` when its timed region begins and ``clock.lap(name)`` after each phase.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

Result = tuple[int, dict[str, Any]]


class Clock:
    """Wall and CPU time of the timed region, split into named phases."""

    def __init__(self) -> None:
        self.t0 = self.c0 = self.last = 0.0
        self.created = time.perf_counter()
        self.phases: dict[str, float] = {}
        self.cpu = 0.0

    @staticmethod
    def _cpu() -> float:
        """CPU seconds of this process and of its finished children (worker processes)."""
        t = os.times()
        return time.process_time() + t.children_user + t.children_system

    def start(self) -> None:
        self.t0 = self.last = time.perf_counter()
        self.c0 = self._cpu()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = now - self.last
        self.last = now
        self.cpu = self._cpu() - self.c0

    @property
    def warmup(self) -> float:
        return self.t0 - self.created if self.t0 else 0.0


def _warm_pandas() -> None:
    """Pay pandas' one-off first-call costs (str dtype, datetimes, categoricals) up front."""
    import pandas as pd

    s = pd.Series(["a", "b", None], dtype="str")
    s.astype("category")
    pd.to_datetime(pd.Series([1.5, None]), unit="s", utc=True)
    pd.array([1, None], dtype="Int64")
    pd.DataFrame({"a": [1], "b": ["x"]}).merge(pd.DataFrame({"a": [1]}), on="a")


def _id_checks(ids: list[Any] | Any, manifest: dict[str, Any]) -> dict[str, Any]:
    """Distinct non-null ids and whether the manifest's big-id samples survive as exact text."""
    texts = {str(v) for v in ids if v is not None and v == v and str(v) != "null"}
    samples = [s for band in manifest.get("big_id_samples", {}).values() for s in band]
    return {"distinct_ids": len(texts),
            "big_ids_exact": sum(1 for s in samples if s in texts),
            "big_ids_total": len(samples)}


# -- the approaches ------------------------------------------------------------------------

def noop(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    try:
        import mcp_notebook  # noqa: F401
    except ImportError:
        pass
    clock.start()
    clock.lap("total")
    return 0, {}


def floor(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    clock.start()
    n = 0
    with open(path, "rb") as f:
        for _ in f:
            n += 1
    clock.lap("total")
    return n, {}


def polars_scan(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    import polars as pl

    schema: dict[str, Any] = {"jsonrpc": pl.String, "id": pl.String, "method": pl.String,
              "error": pl.Struct({"code": pl.Int64})}
    clock.start()
    df = (pl.scan_ndjson(path, schema=schema)
          .select("jsonrpc", "id", "method", pl.col("error").struct.field("code").alias("error_code"))
          .collect())
    clock.lap("total")
    has_id, has_method = df["id"].is_not_null(), df["method"].is_not_null()
    checks = {"requests": int((has_id & has_method).sum()),
              "notifications": int((~has_id & has_method).sum()),
              "errors": int(df["error_code"].is_not_null().sum()),
              "id_dtype": str(df["id"].dtype),
              **_id_checks(df["id"].drop_nulls().unique().to_list(), manifest)}
    return df.height, checks


_DUCK_COLUMNS = "{jsonrpc: 'VARCHAR', id: 'JSON', method: 'VARCHAR', error: 'STRUCT(code BIGINT)'}"


def _duckdb(path: Path, manifest: dict[str, Any], clock: Clock,
            lenient: bool) -> Result:
    import duckdb

    con = duckdb.connect()
    opts = ", ignore_errors=true" if lenient else ""
    literal = "'" + str(path).replace("'", "''") + "'"
    sql = (f"SELECT jsonrpc, id, method, error.code AS error_code FROM read_json({literal}, "
           f"format='newline_delimited', columns={_DUCK_COLUMNS}{opts})")
    clock.start()
    tb = con.sql(sql).to_arrow_table()
    clock.lap("total")
    import pyarrow.compute as pc

    has_id, has_method = pc.is_valid(tb["id"]), pc.is_valid(tb["method"])
    checks = {"requests": pc.sum(pc.and_(has_id, has_method)).as_py() or 0,
              "notifications": pc.sum(pc.and_(pc.invert(has_id), has_method)).as_py() or 0,
              "errors": pc.sum(pc.is_valid(tb["error_code"])).as_py() or 0,
              "null_rows": tb["jsonrpc"].null_count,
              "id_dtype": "JSON text",
              **_id_checks(pc.unique(tb["id"]).to_pylist(), manifest)}
    return tb.num_rows, checks


def duckdb_read_json(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    return _duckdb(path, manifest, clock, lenient=False)


def duckdb_lenient(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    return _duckdb(path, manifest, clock, lenient=True)


def _naive_row(text: bytes | str) -> dict[str, Any]:
    """One message the naive way: json.loads, then pick the envelope members."""
    try:
        m = json.loads(text)
    except ValueError:
        return {"kind": "invalid"}
    return _envelope_row(m)


def _envelope_row(m: Any) -> dict[str, Any]:
    """The row dict of one decoded message: its envelope members."""
    if not isinstance(m, dict):
        return {"kind": "invalid"}
    err = m.get("error")
    kind = ("request" if "id" in m else "notification") if "method" in m else \
        ("error" if err is not None else "result")
    return {"kind": kind, "jsonrpc": m.get("jsonrpc"), "id": m.get("id"),
            "method": m.get("method"),
            "error_code": err.get("code") if isinstance(err, dict) else None}


def _naive_checks(df: Any, manifest: dict[str, Any]) -> dict[str, Any]:
    vc = df["kind"].value_counts()
    ids = df["id"].dropna() if "id" in df else []
    # typed distinct ids: strings keep their quotes so that 1 and "1" stay apart
    typed = list(dict.fromkeys(json.dumps(v) if isinstance(v, str) else v for v in ids))
    return {"requests": int(vc.get("request", 0)),
            "notifications": int(vc.get("notification", 0)),
            "results": int(vc.get("result", 0)), "errors": int(vc.get("error", 0)),
            "invalid": int(vc.get("invalid", 0)), "id_dtype": str(df["id"].dtype),
            **_id_checks(typed, manifest)}


def json_loop(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    """The naive way: json.loads per line, a dict per row, then pd.DataFrame(rows)."""
    import pandas as pd

    _warm_pandas()
    clock.start()
    with open(path, "rb") as f:
        rows = [_naive_row(line) for line in f]
    clock.lap("decode")
    df = pd.DataFrame(rows)
    df["kind"] = df["kind"].astype("category")
    clock.lap("dataframe")
    return len(df), _naive_checks(df, manifest)


def json_loop_rows(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    """The json.loads loop as the loading baselines of the reference describe it: json.loads
    per line into a list of dicts, then a row dict per message, then pd.DataFrame(rows)."""
    import pandas as pd

    _warm_pandas()
    clock.start()
    msgs: list[Any] = []
    add = msgs.append
    with open(path, "rb") as f:
        for line in f:
            try:
                add(json.loads(line))
            except ValueError:
                add(None)
    clock.lap("decode")
    rows = [_envelope_row(m) for m in msgs]
    clock.lap("rows")
    df = pd.DataFrame(rows)
    df["kind"] = df["kind"].astype("category")
    clock.lap("dataframe")
    return len(df), _naive_checks(df, manifest)


def json_loop_dicts(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    """The naive way word for word: json.loads per line, the dicts into a DataFrame.

    A line that does not decode is kept as ``{"invalid": line}``; the message's members
    become the columns (payloads as dicts), as ``pd.DataFrame(list_of_dicts)`` makes them.
    """
    import pandas as pd

    _warm_pandas()
    clock.start()
    msgs: list[Any] = []
    add = msgs.append
    with open(path, "rb") as f:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                m = {"invalid": line}
            add(m if isinstance(m, dict) else {"invalid": line})
    clock.lap("decode")
    df = pd.DataFrame(msgs)
    clock.lap("dataframe")
    kind = pd.Series("result", index=df.index)
    if "error" in df:
        kind[df["error"].notna()] = "error"
    if "method" in df:
        kind[df["method"].notna()] = "notification"
        if "id" in df:
            kind[df["method"].notna() & df["id"].notna()] = "request"
    if "invalid" in df:
        kind[df["invalid"].notna()] = "invalid"
    df["kind"] = kind.astype("category")
    return len(df), _naive_checks(df, manifest)


def json_loop_tap(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    """The naive way on a tap file: json.loads the tap line, then its ``raw``."""
    import pandas as pd

    _warm_pandas()
    clock.start()
    rows: list[dict[str, Any]] = []
    with open(path, "rb") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                rows.append({"kind": "invalid"})
                continue
            d = rec.get("dir")
            row = ({"kind": "stderr" if d == "stderr" else "log"} if d in ("stderr", "meta")
                   else _naive_row(rec.get("raw", "")))
            row.update(ts=rec.get("ts"), direction=d, session=rec.get("session"))
            rows.append(row)
    clock.lap("decode")
    df = pd.DataFrame(rows)
    df["kind"] = df["kind"].astype("category")
    df["ts"] = pd.to_datetime(df["ts"], unit="s", utc=True)
    df["session"] = df["session"].astype("category")
    clock.lap("dataframe")
    return len(df), _naive_checks(df, manifest)


def pandas_read_json(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    import pandas as pd

    _warm_pandas()
    clock.start()
    df = pd.read_json(path, lines=True)
    clock.lap("total")
    ids = df["id"].dropna() if "id" in df else pd.Series([], dtype=object)
    checks = {"id_dtype": str(ids.dtype), "columns": len(df.columns),
              **_id_checks([(int(v) if isinstance(v, float) and v.is_integer() else v)
                            for v in ids.unique()], manifest)}
    return len(df), checks


# -- ours ------------------------------------------------------------------------------------

def _timeline_first_view(trace: Any) -> str:
    """The timeline's first paint: flatten the trace, then one whole-range view."""
    from mcp_notebook.widgets.aggregate import prepare
    from mcp_notebook.widgets.viewport import view

    payload = view(prepare(trace))
    return f"aggregate.prepare+view, {len(json.dumps(payload, default=str)):,} B payload"


def _inspector_first_page(trace: Any) -> str:
    """The inspector's first paint: the frame table, an empty filter, page 0."""
    import numpy as np

    from mcp_notebook.widgets.filters import apply_filter
    from mcp_notebook.widgets.frametable import frame_table, page_rows

    table = frame_table(trace)
    flt = apply_filter(table, "", trace.violations)
    ts = table["ts"]
    rows = page_rows(table, np.flatnonzero(flt.mask), 0, 50,
                     ts.min() if ts.notna().any() else None)
    return f"frame_table+apply_filter+page_rows, {len(rows)} rows"


_WIDGET_HOOKS = {"timeline_first_view": _timeline_first_view,
                 "inspector_first_page": _inspector_first_page}


def _hooks(trace: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Time the widgets' first views if the widgets exist (they are written separately)."""
    phases: dict[str, float] = {}
    notes: dict[str, str] = {}
    for phase, hook in _WIDGET_HOOKS.items():
        t0 = time.perf_counter()
        try:
            notes[phase] = hook(trace)
        except (ImportError, AttributeError) as exc:
            notes[phase] = f"not available ({type(exc).__name__}: {exc})"[:160]
            continue
        except Exception as exc:  # a hook that no longer fits the widgets: say so
            notes[phase] = f"failed: {type(exc).__name__}: {exc}"[:160]
            continue
        phases[phase] = time.perf_counter() - t0
    return phases, notes


class NotAvailable(RuntimeError):
    """The library under test is not there (yet): reported, not a failure of the reader."""


def _work(mn: Any, path: Path, clock: Clock) -> tuple[Any, Any]:
    """The timed work of ``ours`` and ``ours_process``: load, pairs, violations, a lap each."""
    t = mn.load(path)
    frames = t.frames
    clock.lap("load")
    _ = t.pairs
    clock.lap("pairs")
    _ = t.violations
    clock.lap("violations")
    return t, frames


def _only_rules(codes: set[str]) -> None:
    """``t.violations`` checks only the rules of these codes (``BENCH_RULES``): the same
    work as a commit whose catalogue held only these (``compare_commits --same-rules``)."""
    try:
        import mcp_notebook.trace as T
        from mcp_notebook.protocol.rules import RULES
    except ImportError as exc:
        raise NotAvailable(f"BENCH_RULES needs the one-engine catalogue ({exc})") from exc
    subset = [r for r in RULES if r.code in codes]
    whole = T.run_vec_columns

    def run(vi: Any, rules: Any = None) -> Any:
        return whole(vi, subset if rules is None else rules)
    T.run_vec_columns = run  # type: ignore[assignment]


def ours(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    try:
        import mcp_notebook as mn
    except ImportError as exc:
        raise NotAvailable(f"mcp_notebook cannot be imported ({exc})") from exc
    if not callable(getattr(mn, "load", None)):
        raise NotAvailable("mcp_notebook.load does not exist yet")

    _warm_pandas()
    only = os.environ.get("BENCH_RULES")
    if only:
        _only_rules(set(only.split(",")))
    warm = path.with_name("warmup.ndjson")
    if warm.exists():
        _ = mn.load(warm).violations  # first-call costs of the library itself, outside the timing
    clock.start()
    t, frames = _work(mn, path, clock)
    mark = os.environ.get("BENCH_TIMED_MARK")  # the harness's memory sampler: timing ends
    if mark:
        Path(mark).touch()
    import resource

    timed_self_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hook_phases, hook_notes = _hooks(t)
    s = t.summary()
    vc = frames["kind"].value_counts()
    checks: dict[str, Any] = {k: int(vc.get(k, 0)) for k in
                              ("request", "notification", "result", "error", "invalid", "stderr",
                               "log")}
    for k in ("pairs", "unanswered", "cancelled", "orphans", "duplicates", "tool_errors",
              "sessions"):
        v = s.get(k)
        checks[k] = v if isinstance(v, int) else (len(v) if isinstance(v, (list, dict)) else v)
    checks["id_dtype"] = str(frames["id_key"].dtype) if "id_key" in frames else "?"
    checks["timed_self_peak_mb"] = round(timed_self_peak_mb, 1)
    try:  # which envelope scanner ran: the C one, or the pure-Python path
        from mcp_notebook.engine import native
        checks["scanner"] = "C" if native.native is not None else "Python"
    except ImportError:
        checks["scanner"] = "?"
    checks.update(_id_checks(frames["id_key"].dropna().unique().tolist(), manifest))
    checks["hooks"] = hook_notes
    checks["imported_snapshot"] = "snapshot" in Path(mn.__file__).parts
    checks["violations"] = len(t.violations)
    checks["hook_seconds"] = hook_phases
    return len(frames), checks


# -- whole processes ---------------------------------------------------------------------
#
# What a user's script pays from ``python`` to its exit, and nothing else: the import, the
# work, the teardown of what it made. ``ours`` and ``polars_scan`` above also warm up before
# their timed region and do extra work after it (pandas warm-up, a warm-up load, the
# widgets' first views, the summary, the id checks), which their ``process_s`` includes;
# these two do only the work, with the result kept to the end (a module global, as a
# script's top-level name is), so its teardown at exit is paid as a script pays it.

_KEEP: list[Any] = []


def ours_process(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    clock.start()
    import mcp_notebook as mn

    t, frames = _work(mn, path, clock)
    _KEEP.append(t)
    return len(frames), {"violations": len(t.violations)}


def polars_process(path: Path, manifest: dict[str, Any], clock: Clock) -> Result:
    clock.start()
    import polars as pl

    schema: dict[str, Any] = {"jsonrpc": pl.String, "id": pl.String, "method": pl.String,
                              "error": pl.Struct({"code": pl.Int64})}
    df = (pl.scan_ndjson(path, schema=schema)
          .select("jsonrpc", "id", "method",
                  pl.col("error").struct.field("code").alias("error_code"))
          .collect())
    clock.lap("total")
    _KEEP.append(df)
    return df.height, {}


APPROACHES = {f.__name__: f for f in (noop, floor, polars_scan, duckdb_read_json, duckdb_lenient,
                                      json_loop, json_loop_rows, json_loop_dicts, json_loop_tap,
                                      pandas_read_json, ours, ours_process, polars_process)}


def main(argv: list[str]) -> int:
    name, path, manifest_file = argv[0], Path(argv[1]), Path(argv[2])
    manifest = json.loads(manifest_file.read_text()) if manifest_file.exists() else {}
    out: dict[str, Any] = {"approach": name}
    clock = Clock()
    try:
        rows, checks = APPROACHES[name](path, manifest, clock)
    except Exception as exc:
        msg = str(exc).replace(str(path.parent) + "/", "").replace(str(path.parent), "")
        out["error"] = f"{type(exc).__name__}: {msg}"[:400]
        traceback.print_exc()  # to stderr, for a person debugging; not kept in the results
    else:
        out.update(phases=clock.phases, rows=rows, checks=checks)
    out["cpu_s"] = clock.cpu
    out["warmup_s"] = clock.warmup
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
