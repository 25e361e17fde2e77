"""Time mn.load + frames + pairs + violations on one capture, phase by phase.

Usage: ``python benchmarks/perf/phases.py FILE [--reference] [--no-parallel]``

Prints wall and CPU seconds per phase and the peak RSS (``ru_maxrss``) of this process
after the violations, i.e. of what the benchmark's timed region holds.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", type=Path)
    ap.add_argument("--reference", action="store_true", help="the reference loader only")
    ap.add_argument("--no-parallel", action="store_true", help="one process")
    ap.add_argument("--profile", type=Path, default=None, help="write a cProfile here")
    a = ap.parse_args(argv)
    import pandas as pd

    import mcp_notebook as mn
    from mcp_notebook import fast
    from mcp_notebook.fast import parallel

    fast.ENABLED = not a.reference
    if a.no_parallel:
        parallel.MIN_PARALLEL_BYTES = 1 << 62
    # first-call costs of pandas and the library, outside the timing (as bench_approaches)
    pd.to_datetime(pd.Series([1.5, None]), unit="s", utc=True)
    warm = a.path.with_name("warmup.ndjson")
    if warm.exists():
        _ = mn.load(warm).violations
    gc.collect()
    prof = None
    if a.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    phases: dict[str, tuple[float, float]] = {}
    peaks: dict[str, int] = {}
    w0, c0 = time.perf_counter(), time.process_time()

    def lap(name: str) -> None:
        nonlocal w0, c0
        w, c = time.perf_counter(), time.process_time()
        phases[name] = (w - w0, c - c0)
        peaks[name] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        w0, c0 = w, c

    t = mn.load(a.path)
    lap("load")
    f = t.frames
    lap("frames")
    p = t.pairs
    lap("pairs")
    v = t.violations
    lap("violations")
    if prof:
        prof.disable()
        prof.dump_stats(a.profile)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"file": a.path.name, "frames": len(f), "pairs": len(p), "violations": len(v),
           "phases_wall": {k: round(w, 3) for k, (w, _) in phases.items()},
           "phases_cpu": {k: round(c, 3) for k, (_, c) in phases.items()},
           "total_wall": round(sum(w for w, _ in phases.values()), 3),
           "total_cpu_main": round(sum(c for _, c in phases.values()), 3),
           "peak_rss_mb": round(rss), "peak_after": peaks, "size_mb": round(a.path.stat().st_size / 1e6),
           "raw_dtype": str(f["raw"].dtype)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
