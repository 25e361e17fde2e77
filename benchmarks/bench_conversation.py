"""What the conversation rules cost: load + pairs + violations with them and without them.

Usage::

    .venv/bin/python benchmarks/bench_conversation.py --frames 100000 --reps 3
    .venv/bin/python benchmarks/bench_conversation.py --frames 1000000 --reps 1 \
        --shapes default,tools,sessions

The captures are ``gen_capture.py``'s tap files (made in ``benchmarks/out/`` if missing),
in several shapes of traffic: ``default`` (the generator's mix: 12 concurrent sessions,
44% of the client's actions tool calls), ``tools`` (tool-call heavy: nine actions of ten
are ``tools/call``) and ``sessions`` (many sessions: 400 concurrent slots, each session a
few dozen actions long, so many ``initialize`` exchanges and ``tools/list`` answers, each
a contract of its own) and ``rev2026`` (every session at 2026-07-28, a ``_meta`` on each
request: the 2026 rules read every request and result). Each measurement is a fresh process; "without" runs the
catalogue minus the conversation rules (``run_vec_columns``' default rule set, which
``t.violations`` runs; the run fails if a conversation finding is left), "with" the whole
catalogue as ``t.violations`` does by default, "args" the same with the whole argument
validation of ``tool-arguments-schema`` in ``t.violations`` (``conversation.PARTIAL`` taken
out of ``conversation.DEEP``: what the default defers), and "deep" the same with every
rule forced (``conversation.deep()``, as ``mcp-notebook check``). Reps are interleaved; wall and CPU time are both reported
(on a shared box the CPU time is the steadier): the CPU of the process, and the same with
the loader's worker processes (``os.times`` of the waited children), which parse the file.
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
import contextlib, json, os, sys, time
import mcp_notebook as mn
from mcp_notebook import conversation
from mcp_notebook.engine import checks
from mcp_notebook.protocol.rules import RULES
mode, path = sys.argv[1], sys.argv[2]
if mode == "without":
    checks.run_vec_columns.__defaults__ = (tuple(r for r in RULES if r.code not in conversation.CODES),)
if mode == "args":  # every argument validated in t.violations (not only the structural part)
    for code in conversation.PARTIAL:
        conversation.DEEP.pop(code, None)
block = conversation.deep() if mode == "deep" else contextlib.nullcontext()
with block:
    k0 = os.times()
    t0, c0 = time.perf_counter(), time.process_time()
    t = mn.load(path)
    t.pairs
    v = t.violations
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    k1 = os.times()
    workers = (k1.children_user + k1.children_system) - (k0.children_user + k0.children_system)
conv = v[v["rule"].isin(list(conversation.CODES))]
n = len(conv)
if mode == "without" and n:
    sys.exit(f"'without' ran the conversation rules ({n} findings): the patch missed")
print(json.dumps({"mode": mode, "seconds": dt, "cpu": cpu, "all_cpu": cpu + workers,
                  "violations": len(v),
                  "conversation": n,
                  "by_rule": {str(k): int(c) for k, c in conv["rule"].value_counts().items()},
                  "messages": int(t.frames["kind"].isin(
                      ["request", "notification", "result", "error"]).sum())}))
"""

#: shape -> (generator options, client action weights replacing the generator's)
SHAPES: dict[str, tuple[dict, list[tuple[str, float]] | None]] = {
    "default": ({}, None),
    # every session negotiates 2026-07-28 and sends its _meta on each request: the 2026
    # rules read every request and result (the generator's results have no resultType)
    "rev2026": ({"profile": "meta2026"}, None),
    "tools": ({}, [("tools_call", 90), ("resources_read", 3), ("ping", 2), ("prompts_get", 2),
                   ("tools_list", 1), ("resources_list", 1), ("complete", 1)]),
    "sessions": ({"sessions": 400}, None),
}


def capture(shape: str, frames: int) -> Path:
    """The tap capture of a shape (generated once, kept in ``benchmarks/out/``)."""
    out = HERE / "out" / f"conversation-{shape}-{frames}.tap.jsonl"
    if out.exists():
        return out
    import gen_traffic
    from gen_capture import generate

    opts, actions = SHAPES[shape]
    saved = gen_traffic._ACTIONS, gen_traffic._VERSIONS
    if actions is not None:
        gen_traffic._ACTIONS = actions
    if shape == "rev2026":
        gen_traffic._VERSIONS = ["2026-07-28"]
    try:
        out.parent.mkdir(exist_ok=True)
        generate(out, frames, "tap", **opts)
    finally:
        gen_traffic._ACTIONS, gen_traffic._VERSIONS = saved
    return out


def run(mode: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], check=True,
                         capture_output=True, text=True, cwd=HERE.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="without,with")
    ap.add_argument("--shapes", default="default,tools,sessions")
    args = ap.parse_args()
    modes = args.modes.split(",")
    for shape in args.shapes.split(","):
        path = capture(shape, args.frames)
        got: dict[str, list[dict]] = {m: [] for m in modes}
        for _ in range(args.reps):
            for m in modes:
                got[m].append(run(m, path))
        best = {m: min(r["seconds"] for r in rs) for m, rs in got.items()}
        cpu = {m: min(r["cpu"] for r in rs) for m, rs in got.items()}
        every = {m: min(r["all_cpu"] for r in rs) for m, rs in got.items()}
        for m in modes:
            r = got[m][0]
            print(f"{shape:9s} {m:8s} wall best {best[m]:.2f} s ({best[m] / best[modes[0]]:.2f}x), "
                  f"CPU best {cpu[m]:.2f} s ({cpu[m] / cpu[modes[0]]:.2f}x {modes[0]}), "
                  f"with the loader's workers {every[m]:.2f} s "
                  f"({every[m] / every[modes[0]]:.2f}x), "
                  f"{r['messages']} messages, {r['violations']} violations, "
                  f"{r['conversation']} of the conversation rules {r['by_rule']}; "
                  f"wall {[round(x['seconds'], 2) for x in got[m]]}, "
                  f"CPU {[round(x['cpu'], 2) for x in got[m]]}", flush=True)


if __name__ == "__main__":
    main()
