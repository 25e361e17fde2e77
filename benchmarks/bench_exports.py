"""Time and memory of the exports on a generated capture: the boundary view and its files,
the payload-free Trace, OTLP spans and metrics, and check's CI formats.

Usage::

    python benchmarks/bench_exports.py --frames 1000000 --out /some/scratch/dir

Generates a tap capture with ``gen_capture.py`` (reused when present), loads it once, then
times each export in turn in the same process and prints a markdown table: seconds, the
growth of the peak RSS over the run so far, and the size of what was made.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, required=True, help="scratch folder for the files")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    capture = args.out / f"capture-{args.frames}.jsonl"
    if not capture.exists():
        subprocess.run([sys.executable, str(HERE / "gen_capture.py"), "--frames",
                        str(args.frames), "--format", "tap", "--out", str(capture)],
                       check=True, stdout=subprocess.DEVNULL)

    sys.path.insert(0, str(HERE.parent))
    import mcp_notebook as mn
    from mcp_notebook.boundary import write_boundary
    from mcp_notebook.otlp import to_otlp, to_otlp_metrics
    from mcp_notebook.report_formats import render_findings

    rows: list[tuple[str, float, float, str]] = []
    state: dict[str, Any] = {}

    def step(name: str, fn: Callable[[], str]) -> None:
        before = _peak_mb()
        t0 = time.perf_counter()
        made = fn()
        rows.append((name, time.perf_counter() - t0, _peak_mb() - before, made))

    def load() -> str:
        t = state["trace"] = mn.load(capture)
        return f"{len(t.frames):,} frames, {len(t.pairs):,} pairs, {len(t.violations):,} findings"

    def boundary() -> str:
        b = state["boundary"] = state["trace"].boundary()
        return f"{len(b):,} operations"

    def file(suffix: str) -> Callable[[], str]:
        def run() -> str:
            path = write_boundary(state["boundary"], args.out / f"events{suffix}")
            return f"{path.stat().st_size / 1e6:,.1f} MB"
        return run

    def payload_free() -> str:
        free = mn.Trace.from_boundary(state["boundary"])
        return f"{len(free.pairs):,} pairs"

    def otlp() -> str:
        doc = to_otlp(state["trace"])
        return f"{len(json.dumps(doc)) / 1e6:,.1f} MB of JSON"

    def metrics() -> str:
        doc = to_otlp_metrics(state["trace"])
        points = doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]
        return f"{len(points['histogram']['dataPoints'])} histogram points"

    def findings(fmt: str) -> Callable[[], str]:
        def run() -> str:
            return f"{len(render_findings(state['trace'], fmt)) / 1e6:,.1f} MB"
        return run

    step("load + pairs + violations", load)
    step("boundary()", boundary)
    step("write_boundary .parquet", file(".parquet"))
    step("write_boundary .jsonl", file(".jsonl"))
    step("Trace.from_boundary + pairs", payload_free)
    step("to_otlp", otlp)
    step("to_otlp_metrics", metrics)
    for fmt in ("sarif", "junit", "github"):
        step(f"render_findings {fmt}", findings(fmt))

    print(f"capture: {args.frames:,} generated tap frames; peak RSS {_peak_mb():,.0f} MB\n")
    print("| step | seconds | peak RSS growth (MB) | made |")
    print("|---|---:|---:|---|")
    for name, secs, grew, made in rows:
        print(f"| {name} | {secs:.2f} | {grew:,.0f} | {made} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
