"""Start-up cost of the stdio tap: ``mcp-notebook record -- true`` next to ``python -c pass``.

MCP clients time out servers that start slowly, and the tap lives as long as the server
it wraps, so its start-up time and memory are measured against the bare interpreter in
the same run, reps interleaved (the machine's load hits both alike). Each rep is a fresh
process; its peak RSS comes from ``wait4`` (the tap's own, the ``true`` it starts is far
smaller) from GNU ``time`` (a small C parent: a process's peak RSS starts from its
parent's at fork, so this benchmark cannot be the parent), its wall time from start to
reap, ``time``'s own cost included for both alike. For the tap, "server started" is the ``start``
record's time (written once ``exec`` of the server succeeded) less the fork time.

    .venv/bin/python benchmarks/bench_tap_startup.py [--reps 30] [--no-site] [--json FILE]

Target (issue: a light tap): within 1.5x of the bare interpreter in RSS and start time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIME = "/usr/bin/time"
CONSOLE = "import sys; from mcp_notebook.cli import main; sys.exit(main())"
TARGET = 1.5


def record_cmd(out: str, no_site: bool) -> tuple[list[str], str]:
    """The tap's command line: the installed console script if there is one beside this
    interpreter, else the same entry point through ``python -c``; with ``no_site``, that
    entry point under ``python -S`` (no site-packages, no editable-install finder: the
    package from this checkout), beside a bare ``python -S``."""
    if no_site:
        return [sys.executable, "-S", "-c", CONSOLE, "record", "--out", out, "--", "true"], \
            "python -S, the package from this checkout"
    script = Path(sys.executable).with_name("mcp-notebook")
    head = [str(script)] if script.exists() else [sys.executable, "-c", CONSOLE]
    return [*head, "record", "--out", out, "--", "true"], head[0]


def run_once(cmd: list[str]) -> tuple[float, int, float, int]:
    """``(wall seconds, peak RSS KiB, unix time at fork, exit status)`` of one process."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t_wall = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%M", "-o", rss.name, *cmd],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        return wall, int(rss.read().split()[-1]), t_wall, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    parser.add_argument("--no-site", action="store_true",
                        help="both under python -S: the interpreter and the tap alone")
    args = parser.parse_args()
    bare = [sys.executable, *(["-S"] if args.no_site else []), "-c", "pass"]
    if args.no_site:
        root = str(Path(__file__).resolve().parents[1])
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])])
    rows: dict[str, dict[str, list[float]]] = {"bare": {"wall": [], "rss": []},
                                               "record": {"wall": [], "rss": [], "start": []}}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "tap.jsonl")
        cmd, how = record_cmd(out, args.no_site)
        for _ in range(2):  # warm the page cache for both
            run_once(bare)
            run_once(cmd)
        for _ in range(args.reps):
            wall, rss, _, code = run_once(bare)
            assert code == 0
            rows["bare"]["wall"].append(wall)
            rows["bare"]["rss"].append(rss)
            if os.path.exists(out):
                os.unlink(out)
            wall, rss, t_fork, code = run_once(cmd)
            assert code == 0, f"{cmd} exited {code}"
            start = next(json.loads(x) for x in open(out, encoding="utf-8")
                         if '"event":"start"' in x)
            rows["record"]["wall"].append(wall)
            rows["record"]["rss"].append(rss)
            rows["record"]["start"].append(start["ts"] - t_fork)
    stats = {"median": statistics.median, "min": min}
    res = {how_: {name: {k: f(v) for k, v in r.items()} for name, r in rows.items()}
           for how_, f in stats.items()}
    print(f"tap start-up, {args.reps} interleaved reps ({how}, Python "
          f"{sys.version.split()[0]}); median, and the least of all reps in brackets (the "
          "least is the cost without the machine's load)\n")
    print("| | wall to exit (ms) | server started (ms) | peak RSS (MiB) |")
    print("|---|---:|---:|---:|")
    med, low = res["median"], res["min"]
    print(f"| `python{' -S' if args.no_site else ''} -c pass` | {med['bare']['wall'] * 1000:.1f} "
          f"({low['bare']['wall'] * 1000:.1f}) | - | {med['bare']['rss'] / 1024:.1f} |")
    print(f"| `mcp-notebook record -- true` | {med['record']['wall'] * 1000:.1f} "
          f"({low['record']['wall'] * 1000:.1f}) | {med['record']['start'] * 1000:.1f} "
          f"({low['record']['start'] * 1000:.1f}) | {med['record']['rss'] / 1024:.1f} |")
    ratios = {how_: {"rss": r["record"]["rss"] / r["bare"]["rss"],
                     "start": r["record"]["start"] / r["bare"]["wall"],
                     "wall": r["record"]["wall"] / r["bare"]["wall"]} for how_, r in res.items()}
    m, n = ratios["median"], ratios["min"]
    ok_rss, ok_start = m["rss"] <= TARGET, min(m["start"], n["start"]) <= TARGET
    print(f"\nratios to the bare interpreter (target {TARGET}x): RSS {m['rss']:.2f}x "
          f"({'pass' if ok_rss else 'FAIL'}); server started {m['start']:.2f}x "
          f"({n['start']:.2f}x least: {'pass' if ok_start else 'FAIL'}); wall to exit "
          f"{m['wall']:.2f}x ({n['wall']:.2f}x least)")
    if args.json:
        Path(args.json).write_text(json.dumps({"reps": args.reps, "results": res,
                                               "ratios": ratios}, indent=2) + "\n")
    return 0 if ok_rss and ok_start else 1


if __name__ == "__main__":
    sys.exit(main())
