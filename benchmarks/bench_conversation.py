"""What the conversation rules cost: load + pairs + violations with them and without them.

Usage::

    .venv/bin/python benchmarks/bench_conversation.py --frames 100000 --reps 3
    .venv/bin/python benchmarks/bench_conversation.py --frames 1000000 --reps 1

The capture is ``gen_capture.py``'s tap file (made in ``benchmarks/out/`` if missing).
Each measurement is a fresh process; "without" runs the catalogue minus the conversation
rules (``run_vec``'s default rule set), "with" the whole catalogue as ``t.violations``
does (the deep schema rules deferred, as by default), and "deep" the whole catalogue with
the schema rules too (as ``mcp-notebook check``). Reps are interleaved; wall and CPU
time are both reported (on a shared box the CPU time is the steadier).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, sys, time
import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.engine import checks as checks_vec
from mcp_notebook.protocol.rules import RULES
mode, path = sys.argv[1], sys.argv[2]
if mode == "without":
    checks_vec.run_vec.__defaults__ = (tuple(r for r in RULES if r.code not in conversation.CODES),)
if mode == "deep":
    conversation.DEEP.update(dict.fromkeys(conversation.DEEP))
t0, c0 = time.perf_counter(), time.process_time()
t = mn.load(path)
t.pairs
v = t.violations
dt, cpu = time.perf_counter() - t0, time.process_time() - c0
n = int(v["rule"].isin(list(conversation.CODES)).sum())
print(json.dumps({"mode": mode, "seconds": dt, "cpu": cpu, "violations": len(v),
                  "conversation": n}))
"""


def run(mode: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], check=True,
                         capture_output=True, text=True, cwd=HERE.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="without,with,deep")
    args = ap.parse_args()
    from gen_capture import generate

    out = HERE / "out" / f"conversation-{args.frames}.tap.jsonl"
    if not out.exists():
        out.parent.mkdir(exist_ok=True)
        generate(out, args.frames, "tap")
    modes = args.modes.split(",")
    got: dict[str, list[dict]] = {m: [] for m in modes}
    for _ in range(args.reps):
        for m in modes:
            got[m].append(run(m, out))
    best = {m: min(r["seconds"] for r in rs) for m, rs in got.items()}
    cpu = {m: min(r["cpu"] for r in rs) for m, rs in got.items()}
    for m in modes:
        r = got[m][0]
        print(f"{m:8s} wall best {best[m]:.2f} s ({best[m] / best[modes[0]]:.2f}x), CPU best "
              f"{cpu[m]:.2f} s ({cpu[m] / cpu[modes[0]]:.2f}x {modes[0]}), "
              f"{r['violations']} violations, {r['conversation']} of the conversation rules; "
              f"wall {[round(x['seconds'], 2) for x in got[m]]}, "
              f"CPU {[round(x['cpu'], 2) for x in got[m]]}")


if __name__ == "__main__":
    main()
