"""The Dask engine beside the local one on a generated fleet of captures, in one run.

Usage::

    python benchmarks/bench_fleet.py --captures 1000 --frames 20000   # the issue's fleet (> 2 GB)
    python benchmarks/bench_fleet.py --captures 40 --frames 5000      # a quick one

Captures are tap JSONL files made by ``gen_capture.py`` (one seed each) under
``benchmarks/out/fleet/`` (git-ignored; reused when present). Each engine runs in a fresh
process: ``local`` is ``mn.load_many(folder)`` and its aggregates; ``dask`` the same on a
``LocalCluster`` of two worker processes on 127.0.0.1, whose RSS is sampled every 0.2 s
(peak per worker). Both write their aggregates (sessions counts, latency histograms,
error rates by server version and by method, top rules); the run fails unless they are
equal. Results go to ``benchmarks/out/fleet/results.json`` and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "fleet"


def generate(n: int, frames: int) -> Path:
    sys.path.insert(0, str(HERE))
    from gen_capture import generate as gen

    folder = OUT / f"c{n}-f{frames}"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        path = folder / f"capture-{i:05d}.jsonl"
        if not path.exists():
            gen(path, frames, "tap", clean=False, seed=1000 + i)
        (folder / f"capture-{i:05d}.jsonl.manifest.json").unlink(missing_ok=True)
    return folder


def aggregates(c) -> dict:  # type: ignore[no-untyped-def]
    sessions = c.sessions if not hasattr(c.sessions, "compute") else c.sessions.compute()
    counts = sessions.drop(columns=["start", "duration"]).sort_values(["capture", "session"],
                                                                     key=lambda s: s.astype(str))
    return {"sessions": counts.reset_index(drop=True),
            "latency_histograms": c.latency_histograms(),
            "error_rates": c.error_rates(by="server_version"),
            "error_rates_method": c.error_rates(by="method"),
            "top_rules": c.top_rules(None)}


def run_local(folder: Path, out: Path) -> None:
    import mcp_notebook as mn

    t0 = time.perf_counter()
    c = mn.load_many(folder)
    agg = aggregates(c)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    pickle.dump({"agg": agg, "wall_s": wall, "peak_rss": peak, "sessions": len(agg["sessions"]),
                 "frames": int(len(c.frames))}, out.open("wb"))


def run_dask(folder: Path, out: Path, memory_limit: str) -> None:
    from dask.distributed import Client, LocalCluster

    import mcp_notebook as mn

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=memory_limit) as cluster, \
            Client(cluster) as client:
        peaks: dict[str, int] = {}
        done = threading.Event()

        def rss() -> int:
            import psutil
            return psutil.Process().memory_info().rss

        def sample() -> None:
            while not done.is_set():
                try:
                    for w, v in client.run(rss).items():
                        peaks[w] = max(peaks.get(w, 0), v)
                except Exception:  # noqa: BLE001 - a worker restarting: next sample
                    pass
                done.wait(0.2)

        threading.Thread(target=sample, daemon=True).start()
        t0 = time.perf_counter()
        c = mn.load_many(folder, engine="dask")
        agg = aggregates(c)
        wall = time.perf_counter() - t0
        done.set()
    pickle.dump({"agg": agg, "wall_s": wall, "worker_peak_rss": sorted(peaks.values()),
                 "sessions": len(agg["sessions"]), "partitions": c.npartitions},
                out.open("wb"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=20000, help="lines per capture")
    ap.add_argument("--memory-limit", default="1.5GiB", help="per Dask worker")
    ap.add_argument("--child", choices=["local", "dask"], help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "local":
        run_local(args.folder, args.result)
        return 0
    if args.child == "dask":
        run_dask(args.folder, args.result, args.memory_limit)
        return 0

    import pandas as pd

    t0 = time.perf_counter()
    folder = generate(args.captures, args.frames)
    gen_s = time.perf_counter() - t0
    files = sorted(folder.glob("*.jsonl"))
    total = sum(f.stat().st_size for f in files)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results = {}
    for engine in ("local", "dask"):
        out = OUT / f"{engine}.pickle"
        subprocess.run([sys.executable, __file__, "--child", engine, "--folder", str(folder),
                        "--result", str(out), "--memory-limit", args.memory_limit],
                       check=True, env=env)
        results[engine] = pickle.loads(out.read_bytes())
    equal = {}
    for k in results["local"]["agg"]:
        try:
            pd.testing.assert_frame_equal(results["dask"]["agg"][k], results["local"]["agg"][k],
                                          check_dtype=False)
            equal[k] = True
        except AssertionError as exc:
            equal[k] = False
            print(f"{k} differs: {exc}", file=sys.stderr)
    report = {"captures": len(files), "bytes": total, "frames_per_capture": args.frames,
              "generate_s": round(gen_s, 1),
              "local": {"wall_s": round(results["local"]["wall_s"], 2),
                        "peak_rss_mib": round(results["local"]["peak_rss"] / 2**20),
                        "frames": results["local"]["frames"]},
              "dask": {"wall_s": round(results["dask"]["wall_s"], 2),
                       "workers": 2, "memory_limit": args.memory_limit,
                       "partitions": results["dask"]["partitions"],
                       "worker_peak_rss_mib": [round(v / 2**20)
                                               for v in results["dask"]["worker_peak_rss"]]},
              "sessions": results["local"]["sessions"], "equal": equal,
              "python": sys.version.split()[0]}
    (OUT / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if all(equal.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
