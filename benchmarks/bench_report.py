"""Ratios, targets and the markdown report of ``bench_load.py``.

Everything here reads the run's document (``results.json``); nothing is measured.
Reports name no machine paths: files are named by their kind and size only.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

__all__ = ["machine", "code_version", "evaluate", "markdown", "console"]

LIBS = ("mcp_notebook", "pandas", "numpy", "pyarrow", "msgspec", "polars", "duckdb")


def machine() -> dict[str, Any]:
    """Cores, RAM, CPU model, OS and library versions (no paths, no host name)."""
    info: dict[str, Any] = {"cores": os.cpu_count(), "python": platform.python_version(),
                            "implementation": platform.python_implementation(),
                            "os": f"{platform.system()} {platform.machine()}"}
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(ln for ln in f if ln.startswith("MemTotal")).split()[1])
        info["ram_gib"] = round(kb / 2**20, 1)
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f
                                if ln.startswith("model name")), "unknown")
    except (OSError, StopIteration, ValueError):
        pass
    info["libraries"] = {}
    for lib in LIBS:
        try:
            info["libraries"][lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            info["libraries"][lib] = "not installed"
    return info


def code_version(root: Path, package_root: Path | None = None) -> dict[str, Any]:
    """Which library code ran: the git commit and a digest of the package's sources.

    ``package_root`` holds the ``mcp_notebook`` that runs (a snapshot, by default the
    checkout). The digest is taken before every measurement, so a run during which the
    code changed shows up as mixed versions instead of silently mixing numbers.
    """
    pkg = package_root or root
    h = hashlib.sha256()
    for f in sorted((pkg / "mcp_notebook").rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode())
        h.update(f.read_bytes())
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "mcp_notebook"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", ""
    return {"commit": commit or "unknown", "modified": bool(dirty),
            "digest": h.hexdigest()[:12]}


def _r(doc: dict[str, Any], approach: str, kind: str, n: int | None = None) -> dict[str, Any]:
    return doc["results"].get(f"{approach}|{kind}|{n or doc['main_size']}", {})


def _t(doc: dict[str, Any], approach: str, kind: str, n: int | None = None) -> float | None:
    return _r(doc, approach, kind, n).get("timed_s")


def _cpu(doc: dict[str, Any], approach: str, kind: str) -> float | None:
    return _r(doc, approach, kind).get("cpu_s")


def _rss(res: dict[str, Any]) -> float | None:
    """Peak RSS of the run: its largest process, or the sampled sum over its processes."""
    if "peak_rss_mb" not in res:
        return None
    return max(res["peak_rss_mb"], res.get("tree_rss_mb") or 0.0)


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def evaluate(doc: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ratios of this run and the pass/fail of each target.

    Time ratios are computed twice: on wall time (the verdict) and on CPU seconds of the
    timed region (``*_cpu``; all threads), which is steadier on a shared box but charges
    the multi-threaded readers for both cores.
    """
    n = doc["main_size"]
    ratios: dict[str, Any] = {}

    def ratio(name: str, num: tuple[str, str], den: tuple[str, str]) -> None:
        ratios[name] = _div(_t(doc, *num), _t(doc, *den))
        ratios[name + "_cpu"] = _div(_cpu(doc, *num), _cpu(doc, *den))

    ratio("ours_over_polars", ("ours", "ndjson_clean"), ("polars_scan", "ndjson_clean"))
    ratio("ours_over_duckdb", ("ours", "ndjson_clean"), ("duckdb_read_json", "ndjson_clean"))
    ratio("json_loop_over_ours", ("json_loop", "ndjson_clean"), ("ours", "ndjson_clean"))
    ratio("json_loop_rows_over_ours", ("json_loop_rows", "ndjson_clean"),
          ("ours", "ndjson_clean"))
    ratio("json_loop_dicts_over_ours", ("json_loop_dicts", "ndjson_clean"),
          ("ours", "ndjson_clean"))
    ratio("json_loop_over_ours_tap", ("json_loop_tap", "tap_clean"), ("ours", "tap_clean"))
    ratio("ours_over_floor", ("ours", "ndjson_clean"), ("floor", "ndjson_clean"))
    ratio("realistic_over_clean_ndjson", ("ours", "ndjson"), ("ours", "ndjson_clean"))
    ratio("realistic_over_clean_tap", ("ours", "tap"), ("ours", "tap_clean"))
    ratio("tap_over_ndjson_clean", ("ours", "tap_clean"), ("ours", "ndjson_clean"))
    ratio("tap_over_ndjson_same_frames", ("ours", "tap_twin_clean"), ("ours", "ndjson_clean"))
    ratio("tap_over_ndjson", ("ours", "tap"), ("ours", "ndjson"))
    noop = _r(doc, "noop", "ndjson_clean", doc["sizes"][0]).get("peak_rss_mb")
    for k in ("ndjson_clean", "ndjson", "tap_clean", "tap", "tap_twin_clean"):
        ph = _r(doc, "ours", k).get("phases", {})
        if ph.get("load"):
            ratios[f"pairs_violations_over_load_{k}"] = (
                (ph.get("pairs", 0) + ph.get("violations", 0)) / ph["load"])
        rss = _rss(_r(doc, "ours", k))
        size = doc["manifests"].get(f"{k}|{n}", {}).get("bytes")
        timed = _r(doc, "ours", k).get("timed_pss_mb")
        if timed and size:
            ratios[f"timed_pss_over_file_{k}"] = timed * 2**20 / size
        main_peak = _r(doc, "ours", k).get("checks", {}).get("timed_self_peak_mb")
        if main_peak and size:
            ratios[f"timed_main_over_file_{k}"] = main_peak * 2**20 / size
        if rss and size:
            ratios[f"rss_over_file_{k}"] = rss * 2**20 / size
            if noop:
                ratios[f"rss_above_noop_over_file_{k}"] = (rss - noop) * 2**20 / size
    prof = profile_table(doc)
    ratios["profiles"] = prof
    for key in ("timed_over_polars", "process_over_polars", "timed_over_duckdb",
                "process_over_duckdb"):
        vals = {k: v[key] for k, v in prof.items() if v.get(key) is not None}
        if vals:
            worst = max(vals, key=lambda k: vals[k])
            ratios[f"worst_profile_{key}"] = vals[worst]
            ratios[f"worst_profile_{key}_which"] = worst
    for key, field in (("", "timed_s"), ("_cpu", "cpu_s")):
        per_frame = {size: v / size * 1e6 for size in doc["sizes"]
                     if (v := _r(doc, "ours", "ndjson", size).get(field))}
        ratios[f"per_frame_us_ours_ndjson{key}"] = {str(k): v for k, v in per_frame.items()}
        base = per_frame.get(100_000)
        ratios[f"scaling_worst_over_100k{key}"] = (
            max(v / base for s, v in per_frame.items() if s > 100_000)
            if base and len(per_frame) > 1 else None)
    specs = [
        ("issue 18: load+pairs+violations ≤ 1.0× polars narrow scan, timed region, worst "
         "payload profile", "worst_profile_timed_over_polars", 1.0, "≤"),
        ("issue 18: the same, whole process (imports included), ≤ 1.2×, worst profile",
         "worst_profile_process_over_polars", 1.2, "≤"),
        ("load+pairs+violations ≤ 2× polars narrow scan (clean NDJSON)", "ours_over_polars",
         2.0, "≤"),
        ("≥ 8× faster than the json.loads loop: list of dicts, row dicts, DataFrame, as the "
         "reference baselines run it (clean NDJSON)", "json_loop_rows_over_ours", 8.0, "≥"),
        ("the same against the word-for-word loop: the dicts themselves into a DataFrame",
         "json_loop_dicts_over_ours", 8.0, "≥"),
        ("the same against a leaner loop than the issue's: row dicts only, no list of dicts",
         "json_loop_over_ours", 8.0, "≥"),
        ("realistic within 1.1× of clean (NDJSON)", "realistic_over_clean_ndjson", 1.1, "≤"),
        ("realistic within 1.1× of clean (tap)", "realistic_over_clean_tap", 1.1, "≤"),
        ("tap within 1.3× of NDJSON (the same frames, clean)", "tap_over_ndjson_same_frames",
         1.3, "≤"),
        ("tap within 1.3× of NDJSON (clean; the tap is other traffic: 12 sessions)",
         "tap_over_ndjson_clean", 1.3, "≤"),
        ("tap within 1.3× of NDJSON (realistic; other traffic)", "tap_over_ndjson", 1.3, "≤"),
        ("pairs+violations ≤ 0.25× load (clean NDJSON)",
         "pairs_violations_over_load_ndjson_clean", 0.25, "≤"),
        ("peak memory of load+pairs+violations < 0.5× file size (clean NDJSON; both "
         "processes, summed PSS)", "timed_pss_over_file_ndjson_clean", 0.5, "<"),
        ("the same, the main process alone (its exact peak, ru_maxrss)",
         "timed_main_over_file_ndjson_clean", 0.5, "<"),
        ("peak RSS < 0.5× file size (clean NDJSON; the whole run, widget first views "
         "included; summed RSS)", "rss_over_file_ndjson_clean", 0.5, "<"),
        ("linear within 15% from 100k up (per-frame cost, realistic NDJSON)",
         "scaling_worst_over_100k", 1.15, "≤"),
    ]
    tm = doc.get("ten_m") or {}
    if tm.get("summary"):
        import bench_10m

        largest = str(max(int(k) for k in tm["summary"]))
        big = tm["summary"][largest]
        ratios["ten_m_peak_over_file"] = big.get("peak_over_file")
        ratios["ten_m_linearity"] = bench_10m.linearity(tm["summary"])
        specs += [
            (f"issue 18: load+pairs+violations+summary of {int(largest):,} tiny frames, "
             "peak RSS ≤ 0.6× the file (`bench_10m.py`)", "ten_m_peak_over_file", 0.6, "≤"),
            ("issue 18: per-line cost within 15% from 100k to 10M tiny frames, largest "
             "over smallest (`bench_10m.py`)", "ten_m_linearity", 1.15, "≤"),
        ]
    specs += _views_specs(doc, ratios)
    for size, (key, worst) in _reader_worst(doc).items():
        ratios[key] = worst["ratio_wall"]
        ratios[key + "_cpu"] = worst["ratio_cpu"]
        ratios[key + "_which"] = worst["format"]
        specs.append((f"issue 18, target 3: every reader within 2× of NDJSON per frame at "
                      f"{size:,} messages, whole process (worst: {worst['format']}; "
                      "`bench_readers.py`, its last run)", key, 2.0, "≤"))
    targets = []
    for name, key, limit, op in specs:
        t = _target(name, ratios.get(key), limit, op)
        t["value_cpu"] = ratios.get(key + "_cpu")
        targets.append(t)
    return ratios, targets


PROFILE_FILES = ["ndjson_clean", "profile_escapes", "profile_notifications", "profile_base64",
                 "profile_long_ids", "profile_sessions", "profile_meta2026"]


def _views_specs(doc: dict[str, Any], ratios: dict[str, Any]) -> list[tuple[str, str, float, str]]:
    """Target 5 of issue 18 from the last ``bench_views.py`` record (``results-views.json``):
    the inspector's opening (median, seconds) and the explorer's first payload (the largest
    of the runs, KB), each with its limit; none without a record."""
    rec = doc.get("views") or {}
    med, runs = rec.get("median") or {}, (rec.get("all") or {}).get("first_payload") or []
    if "inspector_open" not in med or not runs:
        return []
    frames = rec.get("frames", 0)
    ratios["views_inspector_open_s"] = med["inspector_open"] / 1000
    ratios["views_first_payload_kb"] = max(runs) / 1000
    return [
        (f"issue 18, target 5: the inspector opens on {frames:,} frames in ≤ 0.5 s (median "
         "of its runs, seconds; `bench_views.py`, its last run)", "views_inspector_open_s",
         0.5, "≤"),
        (f"issue 18, target 5: the explorer's first payload on {frames:,} frames under 100 KB "
         "(the largest of its runs, KB; `bench_views.py`, its last run)",
         "views_first_payload_kb", 100.0, "<"),
    ]


def _reader_worst(doc: dict[str, Any]) -> dict[int, tuple[str, dict[str, Any]]]:
    """For each size of the last ``bench_readers.py`` record (``results-readers.json``):
    the ratio key and the row of the format farthest from NDJSON per frame."""
    rows = (doc.get("readers") or {}).get("rows") or []
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    for size in sorted({r["messages"] for r in rows}):
        others = [r for r in rows if r["messages"] == size and r["format"] != "ndjson"]
        if others:
            out[size] = (f"readers_worst_over_ndjson_{size}",
                         max(others, key=lambda r: r["ratio_wall"]))
    return out


def _reader_lines(doc: dict[str, Any]) -> list[str]:
    """The last ``bench_readers.py`` record as a table (issue 18, target 3)."""
    rec = doc.get("readers") or {}
    rows = rec.get("rows") or []
    if not rows:
        return []
    out = ["", "## Every reader against the NDJSON path (`bench_readers.py`, its last run; "
           "`results-readers.json`)", "",
           f"Per frame, against NDJSON in the same run; {rec.get('repeats', '?')} fresh "
           "process(es) per format and size, the formats taking turns. *Whole* is the "
           "process's wall time (imports included), *CPU* its CPU seconds. Target: 2.0× or "
           "less on the whole process. `RESULTS-readers.md` has the phases and the history.",
           "", "| messages | format | MB | frames | whole s | CPU s | peak MB | whole x/frame | "
           "CPU x/frame | verdict |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {_n(r['messages'])} | {r['format']} | {r['file_mb']:.1f} | "
                   f"{_n(r['frames'])} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
                   f"{r['peak_mb']:.0f} | {r['ratio_wall']:.2f} | {r['ratio_cpu']:.2f} | "
                   f"{'pass' if r['ratio_wall'] <= 2.0 else 'FAIL'} |")
    return out


def profile_table(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per payload profile (clean NDJSON at the main size): ours against polars and DuckDB,
    on the timed region and on the whole process (imports included)."""
    out: dict[str, dict[str, Any]] = {}
    for k in PROFILE_FILES:
        o, pl, dk = (_r(doc, a, k) for a in ("ours", "polars_scan", "duckdb_read_json"))
        if not o.get("timed_s"):
            continue
        name = "default" if k == "ndjson_clean" else k.removeprefix("profile_")
        # the whole process: the children that do only the work when the run has them
        # (``ours`` and ``polars_scan`` also warm up, run the widget views and check ids)
        op, pp = _r(doc, "ours_process", k), _r(doc, "polars_process", k)
        bare = bool(op.get("process_s") and pp.get("process_s"))
        o_proc = op.get("process_s") if bare else o.get("process_s")
        pl_proc = pp.get("process_s") if bare else pl.get("process_s")
        out[name] = {
            "file": k, "ours_timed_s": o.get("timed_s"), "ours_process_s": o_proc,
            "polars_timed_s": pl.get("timed_s"), "polars_process_s": pl_proc,
            "process_children": "work only" if bare else "with warm-up and extras",
            "ours_extras_process_s": o.get("process_s"),
            "polars_extras_process_s": pl.get("process_s"),
            "duckdb_timed_s": dk.get("timed_s"), "duckdb_process_s": dk.get("process_s"),
            "timed_over_polars": _div(o.get("timed_s"), pl.get("timed_s")),
            "process_over_polars": _div(o_proc, pl_proc),
            "timed_over_duckdb": _div(o.get("timed_s"), dk.get("timed_s")),
            "process_over_duckdb": _div(o.get("process_s"), dk.get("process_s")),
            "phases": o.get("phases", {}),
        }
    return out


def _profile_lines(doc: dict[str, Any]) -> list[str]:
    prof = doc["ratios"].get("profiles") or {}
    if not prof:
        return []
    out = ["", f"## Payload profiles (clean NDJSON, {_n(doc['main_size'])} frames)", "",
           "`ours` is `mn.load` + `.pairs` + `.violations`; \"process\" is the whole child "
           "process (interpreter start and imports included, as a CLI user pays them), "
           "measured on children that do only that work (`ours_process`, `polars_process`: "
           "no warm-up, no widget views or id checks after it, the result kept to the exit "
           "as a script's top-level name is). The ratio that counts is the worst "
           "profile's. ours / DuckDB (process) compares the timed children's processes.", "",
           "| profile | MB | ours timed s | polars timed s | DuckDB timed s | ours / polars "
           "(timed) | ours process s | polars process s | ours / polars (process) | "
           "ours / DuckDB (timed) | ours / DuckDB (process) | load / pairs / violations s |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, v in prof.items():
        m = doc["manifests"].get(f"{v['file']}|{doc['main_size']}", {})
        ph = v.get("phases", {})
        phs = " / ".join(f"{ph.get(k, 0):.2f}" for k in ("load", "pairs", "violations"))
        out.append(f"| {name} | {m.get('bytes', 0) / 1e6:.0f} | {_fmt(v['ours_timed_s'])} | "
                   f"{_fmt(v['polars_timed_s'])} | {_fmt(v['duckdb_timed_s'])} | "
                   f"{_fmt(v['timed_over_polars'])} | {_fmt(v['ours_process_s'])} | "
                   f"{_fmt(v['polars_process_s'])} | {_fmt(v['process_over_polars'])} | "
                   f"{_fmt(v['timed_over_duckdb'])} | {_fmt(v['process_over_duckdb'])} | "
                   f"{phs} |")
    return out


def _before_lines(doc: dict[str, Any]) -> list[str]:
    """Before/after of this run (``bench_load.py --before REV``), per payload profile."""
    before = doc.get("code", {}).get("before")
    if not before:
        return []
    n = doc["main_size"]
    out = ["", f"## Before and after, in this run (before = {before}, after = "
           f"{doc['code'].get('commit')}; {_n(n)} frames, interleaved)", "",
           "| profile | ours timed s before | after | ours load / pairs / violations s "
           "before | after | whole process s (ours_process) before | after |",
           "|---|---:|---:|---|---|---:|---:|"]
    for k in PROFILE_FILES:
        o, ob = _r(doc, "ours", k, n), _r(doc, "ours@before", k, n)
        p, pb = _r(doc, "ours_process", k, n), _r(doc, "ours_process@before", k, n)
        if not (o or ob or p or pb):
            continue

        def phs(r: dict[str, Any]) -> str:
            ph = r.get("phases", {})
            return " / ".join(f"{ph.get(x, 0):.2f}" for x in ("load", "pairs", "violations"))

        name = "default" if k == "ndjson_clean" else k.removeprefix("profile_")
        out.append(f"| {name} | {_fmt(ob.get('timed_s'))} | {_fmt(o.get('timed_s'))} | "
                   f"{phs(ob)} | {phs(o)} | {_fmt(pb.get('process_s'))} | "
                   f"{_fmt(p.get('process_s'))} |")
    return out


def _target(name: str, value: float | None, limit: float, op: str) -> dict[str, Any]:
    if value is None:
        ok = None
    elif op == "≤":
        ok = value <= limit
    elif op == "<":
        ok = value < limit
    else:
        ok = value >= limit
    return {"target": name, "value": value, "limit": f"{op} {limit:g}", "pass": ok}


def _fmt(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _verdict(ok: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "not measured"}[ok]


def _n(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def correctness(res: dict[str, Any], m: dict[str, Any]) -> str:
    """What one reader kept or lost, against the file's manifest."""
    if "error" in res and res["error"].startswith("NotAvailable"):
        return "not available: " + res["error"].split(":", 1)[1].strip()
    if "error" in res:
        return "**fails**: " + res["error"].replace("|", "/").replace("\n", " ")[:220]
    c = res.get("checks", {})
    notes: list[str] = []
    kinds = m.get("kinds", {})
    if res["approach"] == "ours":
        if c.get("scanner"):
            notes.append(f"{c['scanner']} scanner")
        wrong = [f"{k} {c.get(k)} (true {kinds.get(k, 0)})" for k in kinds
                 if c.get(k) is not None and c.get(k) != kinds.get(k, 0)]
        for k in ("pairs", "unanswered", "orphans", "duplicates", "tool_errors"):
            if c.get(k) is not None and c.get(k) != m.get(k):
                wrong.append(f"{k} {c.get(k)} (true {m.get(k)})")
        cancelled_any = m.get("cancelled", 0) + m.get("cancelled_then_answered", 0)
        if c.get("cancelled") == cancelled_any and cancelled_any != m.get("cancelled"):
            notes.append("`cancelled` counts requests answered after their cancel too")
        elif c.get("cancelled") is not None and c.get("cancelled") != m.get("cancelled"):
            wrong.append(f"cancelled {c.get('cancelled')} (true {m.get('cancelled')} unanswered, "
                         f"{cancelled_any} with any outcome)")
        # an unreadable tap line has no session of its own: loaders name one after the file
        extra = 1 if m.get("unreadable_tap_lines") else 0
        if c.get("sessions") is not None and c["sessions"] not in (m.get("sessions"),
                                                                   m.get("sessions", 0) + extra):
            wrong.append(f"sessions {c['sessions']} (true {m.get('sessions')})")
        notes.append("all kinds and pair counts match the manifest" if not wrong
                     else "differs: " + ", ".join(wrong))
    elif "requests" in c:
        plural = {"requests": "request", "notifications": "notification", "errors": "error",
                  "results": "result", "invalid": "invalid"}
        wrong = [f"{k} {c[k]} (true {kinds.get(v, 0)})" for k, v in plural.items()
                 if k in c and c[k] != kinds.get(v, 0)]
        if wrong:
            notes.append("differs: " + ", ".join(wrong))
    ids = m.get("ids", {})
    d = c.get("distinct_ids")
    if d is not None and ids:
        if d == ids.get("distinct_typed"):
            notes.append('ids typed (1 ≠ "1")')
        elif d == ids.get("distinct_untyped"):
            notes.append(f'**1 and "1" collapse** ({ids["distinct_typed"] - d} ids lost)')
        else:
            notes.append(f"distinct ids {d} (true {ids.get('distinct_typed')})")
    if c.get("big_ids_total"):
        notes.append(f"big ids exact {c['big_ids_exact']}/{c['big_ids_total']}")
    if c.get("id_dtype"):
        notes.append(f"id dtype {c['id_dtype']}")
    lines, rows = m.get("frames"), res.get("rows")
    if lines is not None and rows is not None and rows != lines:
        notes.append(f"{rows} rows for {lines} lines ({m.get('blank_lines', 0)} blank)")
    return "; ".join(notes)


def markdown(doc: dict[str, Any]) -> str:
    mach = doc["machine"]
    n = doc["main_size"]
    out = [
        "# Loader benchmark results",
        "",
        f"Generated by `benchmarks/bench_load.py{' --quick' if doc['mode'] == 'quick' else ''}`"
        f" on {time.strftime('%Y-%m-%d', time.gmtime(doc['started']))} "
        f"({doc['seconds']:.0f} s). Sizes: {', '.join(_n(s) for s in doc['sizes'])} frames; "
        f"{doc['reps']} interleaved reps, each a fresh process; medians shown. The timed "
        "region starts after imports and the pandas warm-up; CPU s counts all threads and "
        "finished worker processes. Peak RSS covers the whole process (interpreter and "
        "imports included); when a loader runs worker processes (\"2 procs\") it is the "
        "sampled sum over them. The memory of the timed region alone (`ours`) is sampled "
        "as summed PSS of the process group until the child marks the end of its timing "
        "(widget first views run after it).",
        "",
        f"Machine: {mach.get('cores')} cores ({mach.get('cpu', '?')}), "
        f"{mach.get('ram_gib', '?')} GiB RAM, {mach.get('os')}, "
        f"{mach.get('implementation')} {mach.get('python')}. Load average at start "
        f"{doc['loadavg_start'][0]:.2f}, at end {doc['loadavg_end'][0]:.2f}.",
        "",
        "Libraries: " + ", ".join(f"{k} {v}" for k, v in mach["libraries"].items()) + ".",
        "",
        *_code_lines(doc),
        "## Captures (generated by `gen_capture.py`, seed "
        f"{doc['seed']})",
        "",
        "| file | lines | MB | sessions | requests | notifications | results | errors | "
        "invalid | blank | pairs | ids > 2^53 / > 2^64 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, m in sorted(doc["manifests"].items(), key=lambda kv: (int(kv[0].split("|")[1]),
                                                                   kv[0])):
        kind, size = key.split("|")
        k = m["kinds"]
        out.append(f"| {kind} {_n(int(size))} | {m['frames']:,} | {m['bytes'] / 1e6:.1f} | "
                   f"{m['sessions']} | {k['request']:,} | {k['notification']:,} | "
                   f"{k['result']:,} | {k['error']:,} | {k['invalid']:,} | {m['blank_lines']} | "
                   f"{m['pairs']:,} | {m['ids']['above_2_53']:,} / {m['ids']['above_2_64']} |")
    out += ["", f"## Targets (at {_n(n)} frames)", ""]
    if doc["mode"] == "quick":
        out += ["The targets are set for 1M frames; at 100k the fixed cost of a process "
                "(~115 MB of interpreter and libraries, per-call overheads) weighs more, so "
                "RSS and ratio verdicts here are indicative only.", ""]
    out += ["Verdicts use wall time; the CPU column is the same ratio on CPU seconds of the "
            "timed region (all threads), steadier on a shared box.", "",
            "| target | measured (wall) | CPU | limit | verdict |", "|---|---:|---:|---|---|"]
    for t in doc["targets"]:
        out.append(f"| {t['target']} | {_fmt(t['value'])} | {_fmt(t.get('value_cpu'))} | "
                   f"{t['limit']} | {_verdict(t['pass'])} |")
    out += _profile_lines(doc)
    out += _before_lines(doc)
    out += ["", "## Ratios", "", "| ratio | value |", "|---|---:|"]
    for k, v in doc["ratios"].items():
        if k == "profiles":
            continue
        if isinstance(v, str):
            out.append(f"| {k} | {v} |")
        elif isinstance(v, dict):
            v = ", ".join(f"{_n(int(k))}: {x:.2f} µs" for k, x in v.items()) or "n/a"
            out.append(f"| {k} | {v} |")
        else:
            out.append(f"| {k} | {_fmt(v)} |")
    for size in doc["sizes"]:
        out += ["", f"## Timings at {_n(size)} frames", "",
                "| approach | file | timed s | CPU s | process s | peak RSS MB | frames/s | "
                "MB/s | kept / lost |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in doc["results"].values():
            if r["frames"] != size or r["approach"] == "noop":
                continue
            m = doc["manifests"].get(f"{r['file']}|{size}", {})
            t = r.get("timed_s")
            fps = f"{m.get('frames', 0) / t:,.0f}" if t else "–"
            mbs = f"{m.get('bytes', 0) / 1e6 / t:,.1f}" if t else "–"
            procs = f" ({r['processes']} procs)" if r.get("processes", 1) > 1 else ""
            out.append(f"| {r['approach']} | {r['file']} | {_fmt(t, 3)} | "
                       f"{_fmt(r.get('cpu_s'))} | {_fmt(r.get('process_s'))} | "
                       f"{_rss(r) or 0:,.0f}{procs} | {fps} | {mbs} | {correctness(r, m)} |")
    noop = _r(doc, "noop", "ndjson_clean", doc["sizes"][0])
    if noop:
        out += ["", f"`noop` (imports only: pandas, pyarrow, mcp_notebook): peak RSS "
                f"{noop.get('peak_rss_mb', 0):.0f} MB, process {_fmt(noop.get('process_s'))} s."]
    out += ["", "## Phases of mcp_notebook (`mn.load` → `.frames`, then `.pairs`, then "
            "`.violations`; widget hooks after)", "",
            "| file | frames | load s | pairs s | violations s | timeline first view | "
            "inspector first page |", "|---|---:|---:|---:|---:|---|---|"]
    for r in doc["results"].values():
        if r["approach"] != "ours" or "phases" not in r:
            continue
        ph, c = r["phases"], r.get("checks", {})
        hooks, hs = c.get("hooks", {}), c.get("hook_seconds", {})
        cell = [f"{hs[h]:.3f} s ({hooks[h]})" if h in hs else hooks.get(h, "n/a")
                for h in ("timeline_first_view", "inspector_first_page")]
        out.append(f"| {r['file']} | {_n(r['frames'])} | {_fmt(ph.get('load'), 3)} | "
                   f"{_fmt(ph.get('pairs'), 3)} | {_fmt(ph.get('violations'), 3)} | "
                   f"{cell[0]} | {cell[1]} |")
    tm = doc.get("ten_m") or {}
    if tm.get("summary"):
        import bench_10m

        body = bench_10m.markdown(tm).splitlines()[1:]  # its own heading left out
        out += ["", "## Ten million frames (`make bench-10m`, its last run; "
                "`results-10m.json`)", *body]
    out += _reader_lines(doc)
    floor = HERE / "FLOOR.md"
    if floor.exists():
        out += ["", *floor.read_text(encoding="utf-8").rstrip().splitlines()]
    out += ["", "## Notes", "", *NOTES, "", "## Reproduce", "",
            "```", "make bench            # .venv/bin/python benchmarks/bench_load.py",
            ".venv/bin/python benchmarks/bench_load.py --quick",
            ".venv/bin/python benchmarks/bench_load.py --with-3m",
            "make bench-10m        # .venv/bin/python benchmarks/bench_10m.py", "```", "",
            "Raw numbers (every rep, load average at its start, manifests): the JSON file "
            "next to this one.", ""]
    return "\n".join(out)


_SOURCES = {"head": " (children imported a snapshot of that commit)",
            "worktree": " (children imported a snapshot of the working tree at the start)",
            "live": " (children imported the live checkout)"}


def _code_lines(doc: dict[str, Any]) -> list[str]:
    digests = sorted({r.get("code_digest") for key, rs in doc.get("raw", {}).items()
                      for r in rs if r.get("code_digest")
                      and not key.split("|")[0].endswith("@before")})  # --before: its own code
    code = doc.get("code", {})
    lines = [f"mcp_notebook code: commit {code.get('commit', '?')}"
             f"{' with local changes' if code.get('modified') else ''}, source digest "
             f"{', '.join(digests) or code.get('digest', '?')}"
             f"{_SOURCES.get(code.get('source', ''), '')}.",
             ""]
    if len(digests) > 1:
        lines += ["**Warning: the library's code changed during this run** (several source "
                  "digests); medians mix versions. Re-run on a quiet tree.", ""]
    return lines


NOTES = [
    "- *kept / lost* compares each reader's output with the capture's manifest (the "
    "generator's own count of what it wrote). *ids typed* means int 1 and string \"1\" stay "
    "distinct ids; *big ids exact* counts sampled ids above 2^53, 2^63 and 2^64 that come "
    "back digit for digit.",
    "- The manifest's `cancelled` counts cancelled requests that got no response; "
    "`mn.load`'s summary also counts those answered after their cancel (noted in the "
    "table, not counted as a difference).",
    "- Bare NDJSON has no direction: a response whose request line was truncated can be "
    "read as a duplicate of the other side's answered request with the same id instead of "
    "an orphan; that is where the few pair differences on realistic NDJSON come from "
    "(tap files carry the direction and match exactly).",
    "- Three `json.loads` loops, all on bare NDJSON (no timestamp, direction or session to "
    "decode): `json_loop_rows` is the loop as the reference's loading baselines run it "
    "(`json.loads` per line into a list of dicts, then a row dict of the envelope members "
    "per message, then `pd.DataFrame(rows)`); `json_loop_dicts` puts the dicts themselves "
    "(payloads and all) into `pd.DataFrame`; `json_loop` keeps no list of dicts, only small "
    "row dicts: a leaner loop than the issue names, shown as a stricter comparison. "
    "`json_loop_tap` (tap line, then its `raw`, then timestamps) is the naive way on tap.",
    "- `tap_twin_clean` holds the frames of `ndjson_clean` line for line as tap records: "
    "the tap/NDJSON ratio on it is the formats' cost on the same frames. `tap_clean` and "
    "`tap` are other traffic (many sessions, more big ids, stderr and meta lines).",
    "- On a shared box wall time includes time the machine gave to others (steal); the "
    "CPU-second ratios are steadier but charge two-core readers for both cores. A verdict "
    "near its limit can flip between runs.",
    "- polars and DuckDB are timed on the narrow envelope only (jsonrpc, id, method, "
    "error.code) and stop at their native table; `mn.load` builds frames, pairs and "
    "violations. Both fail on any malformed line; lenient DuckDB drops blank lines and "
    "accepts NaN and trailing commas.",
]


def console(doc: dict[str, Any]) -> str:
    """A short plain-text summary for the terminal."""
    lines = [f"targets at {_n(doc['main_size'])} frames (verdict on wall time; CPU ratio after):"]
    for t in doc["targets"]:
        lines.append(f"  {_verdict(t['pass']):12s} {_fmt(t['value']):>7s} "
                     f"({_fmt(t.get('value_cpu'))}) {t['limit']:>7s}  {t['target']}")
    lines.append("ratios:")
    for k, v in doc["ratios"].items():
        if k == "profiles":
            for name, pv in v.items():
                lines.append(f"  profile {name:14s} ours/polars timed "
                             f"{_fmt(pv['timed_over_polars'])} process "
                             f"{_fmt(pv['process_over_polars'])}; ours/DuckDB timed "
                             f"{_fmt(pv['timed_over_duckdb'])}")
        elif isinstance(v, str):
            lines.append(f"  {k:40s} {v}")
        elif not isinstance(v, dict):
            lines.append(f"  {k:40s} {_fmt(v)}")
        else:
            lines.append(f"  {k:40s} " + ", ".join(f"{_n(int(s))}={x:.2f}µs"
                                                    for s, x in v.items()))
    return "\n".join(lines)
