"""Start-up cost of the stdio tap: ``mcp-notebook record -- true`` next to ``python -c pass``.

MCP clients time out servers that start slowly, and the tap lives as long as the server
it wraps, so its start-up time and memory are measured against the bare interpreter of
the same environment in the same run, reps interleaved (the machine's load hits both
alike). What is measured, by default, is what a user gets: the wheel built from this
checkout, installed alone (``--no-deps``: the tap needs no dependency) into a fresh
``python -m venv --without-pip`` by the running interpreter's pip (which writes the
``mcp-notebook`` console script), every process run without ``PYTHONDONTWRITEBYTECODE``
(a warm-up writes the bytecode caches, as the first run of an installed tool does).

Each rep is a fresh process started by GNU ``time`` (a small C parent: a process's peak RSS
starts from its parent's at fork, so this benchmark cannot be the parent); peak RSS is the
tap's own (``wait4``; the ``true`` it starts is far smaller), wall time runs from just before
the fork to the reap. "Server started" is measured twice, from the same fork time:

* the tap's ``start`` record, stamped when the server's ``exec`` succeeded;
* the server's own clock: in the same reps, ``record -- date +%s.%N``, whose one output
  line (recorded by the tap) is the time ``date`` ran, a little after its ``exec``.

The target (issue 15: a light tap) is within 1.5x of the bare interpreter in peak RSS and
start time (server started, against the bare interpreter's wall time to exit). Three more
rows, for the record: the witness, the wall time to exit, and the tap started by a console
script that imports ``re`` first, as the one pip 23.2 writes does (pip 26 writes none).

    python benchmarks/bench_tap_startup.py [--reps 30] [--markdown FILE] [--json FILE]
    python benchmarks/bench_tap_startup.py --venv DIR   # a venv that has the package
    python benchmarks/bench_tap_startup.py --here       # this interpreter as it is
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME = "/usr/bin/time"
TARGET = 1.5
RE_FIRST = "import re; import sys; from mcp_notebook.cli import main; sys.exit(main())"
NOTES = """\
The verdicts are on the medians. Every time here moves with the machine's load (given
above): the least of the reps is the rep that waited least for a CPU, and it varies more
from run to run than the median does. The server's own clock (``date``) runs a little
after its ``exec`` (``date`` has started by then), so it is a bound from above on the start
record's time. A console script that imports ``re`` before the tap's code (the last row;
pip 23.2 writes one) adds that import to the start, outside what the package controls;
pip 26.3 writes the script without it, as the venv measured here has."""


def _sources(where: Path) -> Path:
    """A copy of the checkout's files (tracked and new, not ignored): the build writes its
    egg-info beside the sources, and one in the checkout would pass for an install."""
    src = where / "src"
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard",
                             "-z"], capture_output=True, text=True, check=True).stdout
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    return src


def build_venv(where: Path) -> Path:
    """The wheel of this checkout installed alone into a fresh venv; return its python."""
    dist = where / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(_sources(where))], check=True,
                   stdout=subprocess.DEVNULL)
    (wheel,) = dist.glob("mcp_notebook-*.whl")
    venv = where / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True)
    return python


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, int, float, int]:
    """``(wall seconds, peak RSS KiB, unix time at fork, exit status)`` of one process."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t_wall = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%M", "-o", rss.name, *cmd], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        return wall, int(rss.read().split()[-1]), t_wall, proc.returncode


def records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def measure(python: Path, script: Path | None, reps: int, tmp: str,
            keep_path: bool) -> dict[str, dict]:
    drop = ("PYTHONDONTWRITEBYTECODE",) if keep_path else ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    out = os.path.join(tmp, "tap.jsonl")
    head = [str(script)] if script else [str(python), "-c", RE_FIRST.split("; ", 1)[1]]
    cmds = {
        "bare": [str(python), "-c", "pass"],
        "record": [*head, "record", "--out", out, "--", "true"],
        "witness": [*head, "record", "--out", out, "--", "date", "+%s.%N"],
        "re_first": [str(python), "-c", RE_FIRST, "record", "--out", out, "--", "true"],
    }
    rows: dict[str, dict[str, list[float]]] = {k: {"wall": [], "rss": []} for k in cmds}
    for _ in range(3):  # bytecode caches written, page cache warm
        for cmd in cmds.values():
            run_once(cmd, env)
    for _ in range(reps):
        for name, cmd in cmds.items():
            if os.path.exists(out):
                os.unlink(out)
            wall, rss, t_fork, code = run_once(cmd, env)
            assert code == 0, f"{cmd} exited {code}"
            rows[name]["wall"].append(wall)
            rows[name]["rss"].append(rss)
            if name == "bare":
                continue
            recs = records(out)
            start = next(r for r in recs if r.get("event") == "start")
            rows[name].setdefault("start", []).append(start["ts"] - t_fork)
            if name == "witness":
                (line,) = [r["raw"] for r in recs if r["dir"] == "s2c"]
                rows[name].setdefault("own", []).append(float(line) - t_fork)
    return rows


def summarise(rows: dict[str, dict[str, list[float]]]) -> dict:
    res = {how: {name: {k: f(v) for k, v in r.items()} for name, r in rows.items()}
           for how, f in (("median", statistics.median), ("min", min))}
    ratios = {}
    for how, r in res.items():
        bare_wall, bare_rss = r["bare"]["wall"], r["bare"]["rss"]
        ratios[how] = {
            "rss": r["record"]["rss"] / bare_rss,
            "start": r["record"]["start"] / bare_wall,
            "server_clock": r["witness"]["own"] / bare_wall,
            "wall": r["record"]["wall"] / bare_wall,
            "re_first_start": r["re_first"]["start"] / bare_wall,
        }
    return {"results": res, "ratios": ratios}


def report(s: dict, reps: int, how: str) -> tuple[str, bool]:
    med, low = s["results"]["median"], s["results"]["min"]
    m, n = s["ratios"]["median"], s["ratios"]["min"]

    def ms(name: str, key: str) -> str:
        return f"{med[name][key] * 1000:.1f} ({low[name][key] * 1000:.1f})"

    ok_rss, ok_start = m["rss"] <= TARGET, m["start"] <= TARGET
    lines = [
        f"tap start-up: {reps} interleaved reps, {how}; Python {sys.version.split()[0]}. "
        "Median, and the least of all reps in brackets (the rep that waited least for a "
        "CPU); times from just before the fork.",
        "",
        "| | wall to exit (ms) | server started (ms) | peak RSS (MiB) |",
        "|---|---:|---:|---:|",
        f"| `python -c pass` | {ms('bare', 'wall')} | - | {med['bare']['rss'] / 1024:.1f} |",
        f"| `mcp-notebook record -- true` | {ms('record', 'wall')} | {ms('record', 'start')} "
        f"| {med['record']['rss'] / 1024:.1f} |",
        f"| `mcp-notebook record -- date +%s.%N` (the server's own clock) | "
        f"{ms('witness', 'wall')} | {ms('witness', 'own')} "
        f"| {med['witness']['rss'] / 1024:.1f} |",
        f"| the same tap behind a console script that imports re first (pip 23.2's) | "
        f"{ms('re_first', 'wall')} | {ms('re_first', 'start')} "
        f"| {med['re_first']['rss'] / 1024:.1f} |",
        "",
        f"Ratios to the bare interpreter (median; least in brackets), target {TARGET}x:",
        "",
        "| ratio | median | least | target | verdict |",
        "|---|---:|---:|---:|---|",
        f"| peak RSS | {m['rss']:.2f} | {n['rss']:.2f} | {TARGET} | "
        f"{'PASS' if ok_rss else 'FAIL'} |",
        f"| server started (start record) | {m['start']:.2f} | {n['start']:.2f} | {TARGET} | "
        f"{'PASS' if ok_start else 'FAIL'} |",
        f"| server started (the server's own clock) | {m['server_clock']:.2f} | "
        f"{n['server_clock']:.2f} | - | for the record |",
        f"| wall to exit | {m['wall']:.2f} | {n['wall']:.2f} | - | for the record |",
        f"| server started, console script importing re | {m['re_first_start']:.2f} | "
        f"{n['re_first_start']:.2f} | - | for the record |",
    ]
    return "\n".join(lines), ok_rss and ok_start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=30)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--venv", metavar="DIR", help="measure this venv (the package installed)")
    where.add_argument("--here", action="store_true",
                       help="measure this interpreter and environment as they are")
    parser.add_argument("--markdown", metavar="FILE", help="also write the report here")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.here:
            python = Path(sys.executable)
            how = "this interpreter and environment as they are"
        elif args.venv:
            python = Path(args.venv) / "bin" / "python"
            how = "the venv given"
        else:
            python = build_venv(Path(tmp))
            how = ("the wheel of this checkout alone in a fresh venv (`venv --without-pip`, "
                   f"installed by pip {_pip_version()})")
        script = python.with_name("mcp-notebook")
        if not script.exists():
            script = None  # type: ignore[assignment]
            how += "; no console script: the entry point through `python -c`"
        else:
            imports = [ln for ln in script.read_text().splitlines() if ln.startswith("import ")]
            how += f"; its console script: {', '.join(f'`{i}`' for i in imports)}"
        load = os.getloadavg()[0]
        rows = measure(python, script, args.reps, tmp, keep_path=args.here)
        how += (f"; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on "
                f"{os.cpu_count()} CPUs")
    s = summarise(rows)
    text, ok = report(s, args.reps, how)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(
            "# Tap start-up (issue 15, part 3)\n\n"
            "Written by `benchmarks/bench_tap_startup.py` (its docstring says what is "
            "measured and how).\n\n" + text + "\n\n" + NOTES + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"reps": args.reps, "how": how, **s},
                                              indent=2) + "\n")
    return 0 if ok else 1


def _pip_version() -> str:
    done = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True,
                          text=True)
    return done.stdout.split()[1] if done.returncode == 0 else "?"


if __name__ == "__main__":
    sys.exit(main())
