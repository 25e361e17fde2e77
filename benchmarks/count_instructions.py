"""Two commits of mcp_notebook on the same capture, counted in instructions: load, pairs and
violations.

Usage::

    python benchmarks/count_instructions.py OLD_REV [NEW_REV] [--frames 100000] [--same-rules]

The wall time of :mod:`compare_commits` on this kind of shared two-core machine moves by
10-20% from one run to the next: the same process took 1.28 s and 1.95 s of user time an
hour apart. A difference of a few per cent between two commits is lost in that, so this
counts what does not move: the instructions each process executes, under Valgrind's
callgrind (``PYTHONHASHSEED=0``, the forked reader of the second half followed and counted
too). Each revision runs four times: with only the warm-up load that
``bench_approaches.ours`` makes before its timing, then with the timed work after it up to
the end of each phase (load, pairs, violations); the differences are each phase's count. ``--same-rules`` adds the new revision on the old one's rule catalogue
(``BENCH_RULES``), as in :mod:`compare_commits`.

Instructions are not time (a cache miss costs as much as hundreds of them, and the two halves
of a forked read overlap in time but add up here), so this is the measure of how much work a
commit does, beside the wall time, not instead of it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_load import ensure_file  # noqa: E402
from compare_commits import arguments, revisions, warm_capture  # noqa: E402

#: the child: the warm-up load, then (with "work") the timed work of bench_approaches.ours
CHILD = """
import os, sys
sys.path.insert(0, {here!r})
import mcp_notebook as mn
if os.environ.get("BENCH_RULES"):
    from bench_approaches import _only_rules
    _only_rules(set(os.environ["BENCH_RULES"].split(",")))
_ = mn.load(sys.argv[2]).violations
upto = sys.argv[3]  # warm, load, pairs or violations: the work up to that phase
if upto != "warm":
    t = mn.load(sys.argv[1])
    _ = t.frames
    if upto != "load":
        _ = t.pairs
    if upto == "violations":
        _ = t.violations
"""

PHASES = ("load", "pairs", "violations")

COLLECTED = re.compile(rb"Collected : (\d+)")


def count(root: Path, path: Path, warm: Path, what: str, rules: list[str] | None) -> int:
    """Instructions of one child process (and its forked reader), under callgrind."""
    # one BLAS thread: the work uses none, and idle pool threads spin for as long as the
    # run happens to take (instructions that would differ from run to run)
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if rules is not None:
        env["BENCH_RULES"] = ",".join(rules)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--trace-children=yes",
             f"--callgrind-out-file={tmp}/cg.%p", sys.executable, "-c",
             CHILD.format(here=str(HERE)), str(path), str(warm), what],
            env=env, cwd=tmp, capture_output=True, timeout=7200)
    if done.returncode:
        raise SystemExit(f"{root.name} ({what}): exit {done.returncode}: "
                         f"{done.stderr.decode(errors='replace')[-1500:]}")
    return sum(int(n) for n in COLLECTED.findall(done.stderr))


def main() -> None:
    ap = arguments("count")
    ap.description = __doc__.split("\n")[0]
    ap.add_argument("--kind", default="ndjson")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    runs, same = revisions(args)
    path, _ = ensure_file(args.out_dir, args.kind, args.frames, 7)
    warm = warm_capture(args.out_dir, path)
    work: dict[str, int] = {}
    for rev, (root, rules) in runs.items():
        base = count(root, path, warm, "warm", rules)
        ends = [count(root, path, warm, phase, rules) for phase in PHASES]
        each = [b - a for a, b in zip([base, *ends], ends, strict=False)]
        work[rev] = ends[-1] - base
        print(f"{args.kind} {args.frames:,} frames  {rev:>20}: {work[rev] / 1e9:.3f} G "
              "instructions: " + ", ".join(f"{k} {v / 1e9:.3f} G"
                                           for k, v in zip(PHASES, each, strict=True)) +
              f" ({base / 1e9:.3f} G before them)", flush=True)
    print(f"{args.kind}: new/old {work[args.new] / work[args.old]:.3f}", flush=True)
    if args.same_rules:
        print(f"{args.kind}: new on the old rules/old {work[same] / work[args.old]:.3f}",
              flush=True)


if __name__ == "__main__":
    main()
