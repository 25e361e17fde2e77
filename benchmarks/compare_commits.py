"""Two commits of mcp_notebook on the same captures, in one run: load, pairs and violations.

Usage::

    python benchmarks/compare_commits.py OLD_REV [NEW_REV] [--frames 100000] [--reps 3]

Each revision's ``mcp_notebook`` is taken with ``git archive`` and its C extension built
(:func:`bench_load.snapshot`'s way); every measurement is a fresh process
(``bench_approaches.py ours``) after the capture is read through once
(:func:`bench_load.warm_cache`), and the reps are interleaved (old, new, new, old, ...) so
the noise of a shared box falls on both alike. Prints each rep, the median seconds of each
phase per revision and capture, and the ratio new/old of their sum.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_load import CHILD, build_native, ensure_file, warm_cache  # noqa: E402
from gen_capture import manifest_path  # noqa: E402

PHASES = ("load", "pairs", "violations")


def snapshot(rev: str, out: Path) -> Path:
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=HERE.parent,
                         capture_output=True, text=True, check=True).stdout.strip()
    root = out / f"snapshot-{sha}"
    if not (root / "mcp_notebook").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "archive", "--format=tar", rev, "mcp_notebook"],
                             cwd=HERE.parent, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            tf.extractall(root, filter="data")
        if not build_native(root):
            raise SystemExit(f"{rev}: the C extension does not build")
    return root


def measure(root: Path, path: Path, manifest: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    warm_cache(path)  # the page cache of this machine lets go of files within minutes
    done = subprocess.run([sys.executable, str(CHILD), "ours", str(path), str(manifest)],
                          capture_output=True, text=True, env=env, timeout=3600)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" in got:
        raise SystemExit(f"{root.name}: {got['error']}")
    return {k: float(got["phases"][k]) for k in PHASES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default="HEAD")
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kinds", default="ndjson,tap")
    ap.add_argument("--out-dir", type=Path, default=HERE / "out")
    args = ap.parse_args()
    roots = {rev: snapshot(rev, args.out_dir) for rev in (args.old, args.new)}
    for kind in args.kinds.split(","):
        path, _ = ensure_file(args.out_dir, kind, args.frames, 7)
        warm = args.out_dir / "warmup.ndjson"  # first-call costs outside the timing, as in
        if kind == "ndjson" and not warm.exists():  # bench_load (bench_approaches.ours)
            with open(path, "rb") as f:
                warm.write_bytes(b"".join(f.readline() for _ in range(300)))
        manifest = manifest_path(path)
        got: dict[str, list[dict[str, float]]] = {rev: [] for rev in roots}
        for rep in range(args.reps):
            order = list(roots.items())
            for rev, root in order if rep % 2 == 0 else order[::-1]:  # who goes first alternates
                got[rev].append(measure(root, path, manifest))
                print(f"  rep {rep + 1} {rev}: " + "  ".join(
                    f"{k} {v:.3f}" for k, v in got[rev][-1].items()), flush=True)
        total = {}
        for rev, runs in got.items():
            med = {k: statistics.median(r[k] for r in runs) for k in PHASES}
            total[rev] = statistics.median(sum(r.values()) for r in runs)
            print(f"{kind} {args.frames:,} frames  {rev:>10}: " +
                  "  ".join(f"{k} {v:.3f}s" for k, v in med.items()) +
                  f"  sum {total[rev]:.3f}s", flush=True)
        print(f"{kind}: new/old {total[args.new] / total[args.old]:.3f}", flush=True)


if __name__ == "__main__":
    main()
