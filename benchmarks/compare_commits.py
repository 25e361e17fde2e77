"""Two commits of mcp_notebook on the same captures, in one run: load, pairs and violations.

Usage::

    python benchmarks/compare_commits.py OLD_REV [NEW_REV] [--frames 100000] [--reps 3]

Each revision's ``mcp_notebook`` is taken with ``git archive`` and its C extension built
(:func:`bench_load.snapshot`'s way); every measurement is a fresh process
(``bench_approaches.py ours``) after the capture is read through once
(:func:`bench_load.warm_cache`), and the reps are interleaved (old, new, new, old, ...) so
the noise of a shared box falls on both alike. Prints each rep, the median seconds of each
phase per revision and capture, and the ratio new/old of their sum.

``--same-rules`` adds a third run per rep: the new revision checking only the rules the old
one has (``BENCH_RULES``, see ``bench_approaches.ours``), so that a comparison across commits
that added rules also shows the cost of the same work.
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


def rule_codes(root: Path) -> list[str]:
    """The codes of the rule catalogue of the copy in ``root`` (before and after the move of
    the catalogue to ``protocol``)."""
    code = ("import importlib\n"
            "for m in ('mcp_notebook.core.rules', 'mcp_notebook.protocol.rules'):\n"
            "    try:\n        R = importlib.import_module(m).RULES\n        break\n"
            "    except ImportError:\n        pass\n"
            "print(','.join(sorted(r.code for r in R)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, cwd="/", check=True)
    return done.stdout.strip().split(",")


def measure(root: Path, path: Path, manifest: Path, rules: list[str] | None = None
            ) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    if rules is not None:
        env["BENCH_RULES"] = ",".join(rules)
    warm_cache(path)  # the page cache of this machine lets go of files within minutes
    done = subprocess.run([sys.executable, str(CHILD), "ours", str(path), str(manifest)],
                          capture_output=True, text=True, env=env, timeout=3600)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" in got:
        raise SystemExit(f"{root.name}: {got['error']}")
    out = {k: float(got["phases"][k]) for k in PHASES}
    out["cpu"] = float(got.get("cpu_s", "nan"))  # this process and its workers, all phases
    return out


def arguments(what: str) -> argparse.ArgumentParser:
    """The arguments both comparisons take (``what``: what --same-rules adds)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default="HEAD")
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--out-dir", type=Path, default=HERE / "out")
    ap.add_argument("--same-rules", action="store_true",
                    help=f"also {what} the new revision on the old one's rules only")
    return ap


def revisions(args: argparse.Namespace) -> tuple[dict[str, tuple[Path, list[str] | None]],
                                                 str]:
    """``{name: (snapshot, rule codes or None: all)}`` of the runs, and the name of the run
    of the new revision on the old rules (with ``--same-rules``)."""
    roots = {rev: snapshot(rev, args.out_dir) for rev in (args.old, args.new)}
    runs: dict[str, tuple[Path, list[str] | None]] = {rev: (root, None)
                                                       for rev, root in roots.items()}
    same = f"{args.new} (old rules)"
    if args.same_rules:
        old_rules = rule_codes(roots[args.old])
        new_rules = set(rule_codes(roots[args.new]))
        common = [c for c in old_rules if c in new_rules]
        print(f"rules: {len(old_rules)} old, {len(new_rules)} new, {len(common)} in both",
              flush=True)
        runs[same] = (roots[args.new], common)
    return runs, same


def warm_capture(out_dir: Path, path: Path) -> Path:
    """The small capture loaded before the timing (first-call costs), as bench_load makes
    it (bench_approaches.ours)."""
    warm = out_dir / "warmup.ndjson"
    if not warm.exists():
        with open(path, "rb") as f:
            warm.write_bytes(b"".join(f.readline() for _ in range(300)))
    return warm


def main() -> None:
    ap = arguments("time")
    ap.description = __doc__.split("\n")[0]
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kinds", default="ndjson,tap")
    args = ap.parse_args()
    runs, same = revisions(args)
    for kind in args.kinds.split(","):
        path, _ = ensure_file(args.out_dir, kind, args.frames, 7)
        if kind == "ndjson":
            warm_capture(args.out_dir, path)
        manifest = manifest_path(path)
        got: dict[str, list[dict[str, float]]] = {rev: [] for rev in runs}
        for rep in range(args.reps):
            order = list(runs.items())
            for rev, (root, rules) in order if rep % 2 == 0 else order[::-1]:  # who goes first alternates
                got[rev].append(measure(root, path, manifest, rules))
                print(f"  rep {rep + 1} {rev}: " + "  ".join(
                    f"{k} {v:.3f}" for k, v in got[rev][-1].items()), flush=True)  # cpu last
        total: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for rev, reps in got.items():
            med = {k: statistics.median(r[k] for r in reps) for k in PHASES}
            total[rev] = statistics.median(sum(r[k] for k in PHASES) for r in reps)
            cpu[rev] = statistics.median(r["cpu"] for r in reps)
            print(f"{kind} {args.frames:,} frames  {rev:>10}: " +
                  "  ".join(f"{k} {v:.3f}s" for k, v in med.items()) +
                  f"  sum {total[rev]:.3f}s  cpu {cpu[rev]:.3f}s", flush=True)
        print(f"{kind}: new/old {total[args.new] / total[args.old]:.3f} "
              f"(cpu {cpu[args.new] / cpu[args.old]:.3f})", flush=True)
        if args.same_rules:
            print(f"{kind}: new on the old rules/old {total[same] / total[args.old]:.3f} "
                  f"(cpu {cpu[same] / cpu[args.old]:.3f})", flush=True)


if __name__ == "__main__":
    main()
