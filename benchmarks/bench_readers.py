"""Every reader against the NDJSON path, per frame (issue 18, target 3).

Usage::

    python benchmarks/bench_readers.py --sizes 100000 --repeats 3 --out out/formats \\
        --report benchmarks/RESULTS-readers.md

The same generated traffic is written in every format (:mod:`gen_formats`); each file is
loaded by a fresh process (``import mcp_notebook``; ``mn.load`` with the format named;
``trace.pairs``; ``trace.violations``), the formats taking turns in each round so that
the machine's load falls on all of them alike; each file is read through once just before
its process starts, so every format reads a file in the page cache. Two times are reported per run: the whole
process (imports included, as a CLI user pays them) and the timed region (load + pairs +
violations). The ratio that counts is per frame: (seconds / frames) of the format over
(seconds / frames) of NDJSON in the same run, medians over the rounds; a format passes at
2.0 or below.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_load import compile_package, warm_cache  # noqa: E402
from gen_formats import FORMATS, write_all  # noqa: E402

LIMIT = 2.0

#: the start of each child script: its peak memory
PEAK = r"""
import resource

def _peak_mb():
    # this process's peak resident memory in MB: VmHWM, the high-water mark of its own
    # address space (ru_maxrss would be the harness's: Linux carries a vforked child's
    # pre-exec peak over the exec)
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

CHILD = PEAK + r"""
import json, sys, time
t0 = time.perf_counter()
import mcp_notebook as mn
t1 = time.perf_counter()
trace = mn.load(sys.argv[1], format=sys.argv[2], progress=False)
n = len(trace.frames)
t2 = time.perf_counter()
p = len(trace.pairs)
v = len(trace.violations)
t3 = time.perf_counter()
print(json.dumps({"frames": n, "pairs": p, "violations": v, "import": t1 - t0,
                  "load": t2 - t1, "checks": t3 - t2, "region": t3 - t1,
                  "peak_mb": _peak_mb()}))
"""

#: the phases of one load, timed in CPU seconds in one process: the reader's records
#: (reading the format, decoding it, making the records or spans), the table's part
#: (classification, the settle / arrange steps, the columns), the store, then pairs and
#: violations of a trace loaded again as ``mn.load`` does
PHASES = PEAK + r"""
import gc, json, sys, time
from pathlib import Path
import mcp_notebook as mn
from mcp_notebook import readers
from mcp_notebook.engine.gcpause import gc_paused
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
path, fmt = Path(sys.argv[1]), sys.argv[2]
c = time.process_time
out = {}
t = c()
with gc_paused():
    got = readers.read(path, format=fmt)
    items = list(got.blocks()) if hasattr(got, "blocks") else list(got)
    out["records"] = c() - t
    t = c()
    part = part_of(items)
    out["part"] = c() - t
    del items
    t = c()
    store = Store.from_parts([part])
    out["store"] = c() - t
del part, store
gc.collect()
t = c()
trace = mn.load(path, format=fmt, progress=False)
out["load"] = c() - t
out["frames"] = len(trace.frames)
t = c()
len(trace.pairs)
out["pairs"] = c() - t
t = c()
len(trace.violations)
out["violations"] = c() - t
out["peak_mb"] = _peak_mb()
print(json.dumps(out))
"""


def phases_one(path: Path, fmt: str, timeout: float) -> dict[str, Any]:
    warm_cache(path)
    env = dict(os.environ)
    env.pop("MCP_NOTEBOOK_STRICT", None)
    done = subprocess.run([sys.executable, "-c", PHASES, str(path), fmt], capture_output=True,
                          text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{fmt} {path}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def phases(sizes: list[int], out: Path, only: list[str] | None, timeout: float) -> str:
    """The table of :data:`PHASES` for every format and size (one process each)."""
    lines = ["| messages | format | frames | records s | part s | store s | `mn.load` s "
             "| pairs s | violations s | µs/frame (`mn.load` + checks) | peak MB |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sizes:
        paths = write_all(n, out, only=None if only is None else ["ndjson", *only])
        for name, path in paths.items():
            r = phases_one(path, FORMATS[name][2], timeout)
            per = (r["load"] + r["pairs"] + r["violations"]) / max(1, r["frames"]) * 1e6
            lines.append(f"| {n:,} | {name} | {r['frames']:,} | {r['records']:.2f} | "
                         f"{r['part']:.2f} | {r['store']:.2f} | {r['load']:.2f} | "
                         f"{r['pairs']:.2f} | {r['violations']:.2f} | {per:.1f} | "
                         f"{r['peak_mb']:.0f} |")
            print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def run_one(path: Path, fmt: str, timeout: float) -> dict[str, Any]:
    # every child reads a file in the page cache, as the loader benchmark's do: the cache
    # gives memory back within minutes, and the formats' 1M files are ~8 GB together
    warm_cache(path)
    env = dict(os.environ)
    env.pop("MCP_NOTEBOOK_STRICT", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), fmt], capture_output=True,
                          text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{fmt} {path}: {done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    out["cpu"] = cpu  # the process's CPU seconds: less moved by other work on the machine
    return out


def bench(sizes: list[int], repeats: int, out: Path, only: list[str] | None,
          timeout: float) -> dict[str, Any]:
    results: dict[str, Any] = {"sizes": {}, "python": sys.version.split()[0],
                               "cpus": os.cpu_count(), "repeats": repeats,
                               "load_average": {}}
    for n in sizes:
        paths = write_all(n, out, only=None if only is None else ["ndjson", *only])
        load_before = os.getloadavg()
        names = list(paths)
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
        for r in range(repeats):
            order = names[r % len(names):] + names[:r % len(names)]  # take turns
            for name in order:
                runs[name].append(run_one(paths[name], FORMATS[name][2], timeout))
                print(f"{n} round {r + 1}: {name:15} {runs[name][-1]['wall']:.2f} s",
                      flush=True)
        results["load_average"][str(n)] = [round(x, 1) for x in (*load_before,
                                                                *os.getloadavg())]
        results["sizes"][str(n)] = {
            name: {"file_mb": round(paths[name].stat().st_size / 1e6, 1), "runs": rs}
            for name, rs in runs.items()}
    return results


def summarise(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for n, by_fmt in results["sizes"].items():
        base = by_fmt["ndjson"]

        def per_frame(runs: list[dict[str, Any]], key: str) -> float:
            return statistics.median(x[key] / max(1, x["frames"]) for x in runs)

        bw, br = per_frame(base["runs"], "wall"), per_frame(base["runs"], "region")
        bc = per_frame(base["runs"], "cpu")
        for name, d in by_fmt.items():
            rs = d["runs"]
            w, rg, c = per_frame(rs, "wall"), per_frame(rs, "region"), per_frame(rs, "cpu")
            rows.append({
                "messages": int(n), "format": name, "file_mb": d["file_mb"],
                "frames": rs[0]["frames"], "pairs": rs[0]["pairs"],
                "violations": rs[0]["violations"],
                "wall_s": statistics.median(x["wall"] for x in rs),
                "load_s": statistics.median(x["load"] for x in rs),
                "region_s": statistics.median(x["region"] for x in rs),
                "cpu_s": statistics.median(x["cpu"] for x in rs),
                "peak_mb": max(x.get("peak_mb", 0.0) for x in rs),
                "ratio_wall": w / bw, "ratio_region": rg / br, "ratio_cpu": c / bc,
                "verdict": "pass" if w / bw <= LIMIT else "FAIL",
                "cpu_verdict": "pass" if c / bc <= LIMIT else "FAIL"})
    return rows


def render(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Readers against the NDJSON path (issue 18, target 3)", "",
        "Generated by `benchmarks/bench_readers.py` (the traffic: `benchmarks/gen_formats.py`, "
        "one generated session written in each format). Each number is the median of "
        f"{results['repeats']} fresh processes per format, the formats taking turns in each "
        f"round (Python {results['python']}, {results['cpus']} CPUs, a machine shared with "
        "other work). *Whole* is the process's wall time (imports included); *region* is "
        "`mn.load` + `pairs` + `violations`. The ratios are per frame, against NDJSON in "
        f"the same run; the target is {LIMIT:.1f}x or less, on the whole process. *CPU* is "
        "the whole process's CPU seconds (user + system), which other work on the machine "
        "moves much less than the wall time; *peak MB* the process's own peak resident "
        "memory (VmHWM; the forked worker of a split read has its own). "
        "*Verdict* is the target's (the whole process's wall time); *CPU verdict* the same "
        "limit on the CPU ratio.", "",
        "| messages | format | MB | frames | whole s | region s | load s | CPU s | peak MB "
        "| whole x/frame | region x/frame | CPU x/frame | verdict | CPU verdict |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['messages']:,} | {r['format']} | {r['file_mb']} | {r['frames']:,} | "
            f"{r['wall_s']:.2f} | {r['region_s']:.2f} | {r['load_s']:.2f} | {r['cpu_s']:.2f} | "
            f"{r.get('peak_mb', 0):.0f} | "
            f"{r['ratio_wall']:.2f} | {r['ratio_region']:.2f} | {r['ratio_cpu']:.2f} | "
            f"{r['verdict']} | {r.get('cpu_verdict', '')} |")
    lines += ["", "Load average (1, 5, 15 min) before and after each size: " + "; ".join(
        f"{int(n):,}: {v[:3]} -> {v[3:]}" for n, v in results.get("load_average", {}).items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "out" / "formats")
    ap.add_argument("--only", nargs="*", choices=[f for f in FORMATS if f != "ndjson"])
    ap.add_argument("--json", type=Path, help="also write the raw runs here")
    ap.add_argument("--report", type=Path, help="write the Markdown table here")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--phases", action="store_true",
                    help="time the phases of one load per format instead (CPU seconds)")
    a = ap.parse_args(argv)
    compile_package()
    if a.phases:
        print(f"load average {[round(x, 1) for x in os.getloadavg()]}")
        print(phases(a.sizes, a.out, a.only, a.timeout))
        print(f"load average {[round(x, 1) for x in os.getloadavg()]}")
        return 0
    results = bench(a.sizes, a.repeats, a.out, a.only, a.timeout)
    rows = summarise(results)
    text = render(results, rows)
    print(text)
    if a.json:
        a.json.write_text(json.dumps({**results, "rows": rows}, indent=1) + "\n")
    if a.report:
        a.report.write_text(text)
    return 0 if all(r["verdict"] == "pass" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
