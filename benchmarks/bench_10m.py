"""Ten million frames: load + pairs + violations + summary in bounded memory, linear time.

Usage::

    .venv/bin/python benchmarks/bench_10m.py                 # 100k, 1M, 10M, 3 reps (~5 min)
    .venv/bin/python benchmarks/bench_10m.py --sizes 100000,1000000   # a quicker look
    .venv/bin/python benchmarks/bench_10m.py --whole          # also mn.load whole (~10 min)

The capture is the stress case of issue 18's measurement (10,485,760 tiny frames, 325 MB):
tiny bare NDJSON frames, a ``ping`` request and its result, a one-member notification of a
method no version defines (so a finding on each) and a blank line, repeated with growing
ids (``tiny_capture``). Each size is summarized in a fresh process (imports and a warm-up
outside the timing) by the streaming path, ``mn.summarize`` (the file read in chunks:
scan, pairing, the rules and the counts in one pass, no frames table); with ``--whole``
also by ``mn.load`` + ``pairs`` + ``violations`` + ``summary()``, timed per phase. The
harness records the child's peak RSS (GNU ``/usr/bin/time``, else ``os.wait4``) and the
load average before and after. Targets: peak ≤ 0.6× the file's size, and the per-frame cost
of every size within 15% of the others'. Files go to ``benchmarks/out/`` (git-ignored) and
are deleted after use unless ``--keep``; the report to ``benchmarks/RESULTS-10m.md`` and
``results-10m.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TIME = Path("/usr/bin/time")

#: one cycle of the tiny capture: (lines, of which frames that are messages)
_CYCLE = ('{{"jsonrpc":"2.0","id":{i},"method":"ping"}}', '{{"jsonrpc":"2.0","id":{i},"result":{{}}}}',
          '{{"jsonrpc":"2.0","method":"x"}}', '')


def tiny_capture(path: Path, lines: int) -> dict[str, int]:
    """Write ``lines`` lines of the tiny capture; return its true counts."""
    counts = {"lines": 0, "requests": 0, "results": 0, "notifications": 0, "blank": 0}
    names = ("requests", "results", "notifications", "blank")
    with open(path, "w", encoding="ascii") as f:
        i = 0
        while counts["lines"] < lines:
            chunk = []
            for _ in range(min(50_000, (lines - counts["lines"] + 3) // 4)):
                for k, tpl in enumerate(_CYCLE):
                    if counts["lines"] >= lines:
                        break
                    chunk.append(tpl.format(i=i))
                    counts["lines"] += 1
                    counts[names[k]] += 1
                i += 1
            f.write("\n".join(chunk) + "\n")
    counts["bytes"] = path.stat().st_size
    return counts


_CHILD = r"""
import json, resource, sys, time
import mcp_notebook as mn
_ = mn.summarize(sys.argv[2])  # first-call costs (imports of the rules) outside the timing
base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
s = mn.summarize(sys.argv[1])
t1 = time.perf_counter()
r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
print(json.dumps({"phases": {"summarize": t1 - t0}, "cpu_s": cpu, "frames": s["frames"],
                  "pairs": s["pairs"], "violations": s["violations"]["total"],
                  "baseline_mb": base_mb, "blank_lines": s["blank_lines"],
                  "streamed": s["streaming"]["streamed"], "chunks": s["streaming"]["chunks"],
                  "ids_remembered": s["streaming"]["ids_remembered"]}))
"""

_CHILD_WHOLE = r"""
import json, resource, sys, time
import mcp_notebook as mn
_ = mn.load(sys.argv[2]).summary()  # first-call costs outside the timing
base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
t = mn.load(sys.argv[1])
n = len(t.frames)
t1 = time.perf_counter()
p = len(t.pairs)
t2 = time.perf_counter()
v = len(t.violations)
t3 = time.perf_counter()
s = t.summary()
t4 = time.perf_counter()
r1 = resource.getrusage(resource.RUSAGE_SELF)
# (the load's second process, which reads half of a large file, is not in this count)
cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
print(json.dumps({"cpu_s": cpu, "phases": {"load": t1 - t0, "pairs": t2 - t1, "violations": t3 - t2,
                             "summary": t4 - t3},
                  "frames": n, "pairs": p, "violations": v, "baseline_mb": base_mb,
                  "blank_lines": s.get("blank_lines"), "streamed": False}))
"""


def run(path: Path, warm: Path, timeout: float, whole: bool = False) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        rss = Path(tmp) / "rss"
        cmd = [sys.executable, "-c", _CHILD_WHOLE if whole else _CHILD, str(path), str(warm)]
        if TIME.exists():
            cmd = [str(TIME), "-f", "%M", "-o", str(rss), *cmd]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        try:
            peak_kb = float(rss.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            peak_kb = float("nan")
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1:], "process_s": wall,
                "peak_mb": peak_kb / 1024}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out.update(process_s=wall, peak_mb=peak_kb / 1024, loadavg=os.getloadavg()[0],
               loadavg_before=load_before)
    return out


MODES = ("stream", "whole")
#: lines of the warm-up file: more than one streaming chunk (``stream.chunks.CHUNK_BYTES``)
WARM_LINES = 40_000
MODE_NAMES = {"stream": "mn.summarize (streaming)",
              "whole": "mn.load + pairs + violations + summary()"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000,10485760",
                    help="comma-separated line counts (default 100k, 1M, 10,485,760)")
    ap.add_argument("--reps", type=int, default=3,
                    help="reps of each size (interleaved; the median is reported)")
    ap.add_argument("--whole", action="store_true",
                    help="also time mn.load whole (at 10M: ~90 s and ~2 GB)")
    ap.add_argument("--out-dir", type=Path, default=HERE / "out")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--report", type=Path, default=HERE / "RESULTS-10m.md")
    a = ap.parse_args(argv)
    from bench_load import compile_package

    compile_package()  # as an installed wheel has it
    sizes = [int(s) for s in a.sizes.split(",")]
    modes = MODES if a.whole else MODES[:1]
    a.out_dir.mkdir(parents=True, exist_ok=True)
    # the warm-up: a little more than one chunk of the streaming path (40,000 tiny lines,
    # 1.16 MB against 1 MiB chunks), so the allocator's first growth to a chunk's working
    # set (about 7,000 fresh pages, paid once a process) falls outside the timing, as the
    # imports do; a smaller warm-up left it in the smallest size's per-line cost alone
    warm = a.out_dir / "tiny-warmup.ndjson"
    tiny_capture(warm, WARM_LINES)
    files = {}
    for n in sizes:
        path = a.out_dir / f"tiny-{n}.ndjson"
        files[n] = (path, tiny_capture(path, n))
        print(f"  {path.name}: {files[n][1]['bytes'] / 1e6:.0f} MB", flush=True)
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {m: {n: [] for n in sizes}
                                                        for m in modes}
    started = time.time()
    for rep in range(a.reps):
        for mode in modes:
            for n in sizes:
                r = run(files[n][0], warm, a.timeout, whole=mode == "whole")
                runs[mode][n].append(r)
                print(f"  rep {rep + 1} {mode:<6} {n:>11,} lines: " + (
                    f"{sum(r['phases'].values()):7.2f} s timed, {r['process_s']:7.2f} s "
                    f"process, {r['peak_mb']:6.0f} MB peak, load {r['loadavg_before']:.1f}"
                    if "phases" in r else f"error {r['error']}"), flush=True)
    doc = {"started": started, "sizes": sizes, "reps": a.reps, "cpus": os.cpu_count(),
           "warm_lines": WARM_LINES,
           "files": {str(n): m for n, (_, m) in files.items()},
           "runs": {m: {str(n): rs for n, rs in by.items()} for m, by in runs.items()}}
    # "summary": the streaming path's, by size (what bench_report.py reads); the whole
    # load's beside it
    doc["summary"] = evaluate(doc, "stream")
    if "whole" in modes:
        doc["summary_whole"] = evaluate(doc, "whole")
    a.report.with_name("results-10m.json").write_text(json.dumps(doc, indent=1) + "\n")
    a.report.write_text(markdown(doc))
    print(a.report.read_text())
    if not a.keep:
        warm.unlink(missing_ok=True)
        for path, _ in files.values():
            path.unlink(missing_ok=True)
    return 0


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def evaluate(doc: dict[str, Any], mode: str = "stream") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, rs in doc["runs"][mode].items():
        ok = [r for r in rs if "phases" in r]
        if not ok:
            out[n] = {"error": rs[0].get("error")}
            continue
        m = doc["files"][n]
        timed = _median([sum(r["phases"].values()) for r in ok])
        peak = max(r["peak_mb"] for r in ok)
        base = min(r["baseline_mb"] for r in ok)
        out[n] = {"timed_s": timed, "process_s": _median([r["process_s"] for r in ok]),
                  "phases": {k: _median([r["phases"][k] for r in ok]) for k in ok[0]["phases"]},
                  "peak_mb": peak, "peak_over_file": peak * 2**20 / m["bytes"],
                  "baseline_mb": base,
                  "above_baseline_over_file": (peak - base) * 2**20 / m["bytes"],
                  "us_per_line": timed / m["lines"] * 1e6,
                  "cpu_s": _median([r["cpu_s"] for r in ok]),
                  "cpu_us_per_line": _median([r["cpu_s"] for r in ok]) / m["lines"] * 1e6,
                  "cpu_us_per_line_reps": [r["cpu_s"] / m["lines"] * 1e6 for r in ok],
                  "loadavg": max(max(r["loadavg_before"], r["loadavg"]) for r in ok),
                  "frames": ok[0]["frames"], "pairs": ok[0]["pairs"],
                  "violations": ok[0]["violations"], "blank_lines": ok[0]["blank_lines"],
                  "counts_ok": ok[0]["blank_lines"] == m["blank"]
                  and ok[0]["frames"] == m["lines"] - m["blank"]
                  and ok[0]["pairs"] == m["results"]
                  and ok[0]["violations"] == m["notifications"]}
    base_cost = out.get(str(doc["sizes"][0]), {}).get("us_per_line")
    for v in out.values():
        if base_cost and "us_per_line" in v:
            v["per_line_over_smallest"] = v["us_per_line"] / base_cost
    return out


def linearity(summary: dict[str, Any], key: str | None = None) -> float | None:
    """The largest per-line cost over the smallest, across sizes (1.0: exactly linear).
    The smallest size's cost carries a process's fixed costs, so a cost that falls with
    size counts against linearity as much as one that grows. ``key``: wall time
    (``us_per_line``) or CPU time (``cpu_us_per_line``); by default the CPU time where
    the record has it (the cores are shared: see the report's note), else the wall time."""
    if key is None:
        key = "cpu_us_per_line" if all("cpu_us_per_line" in v for v in summary.values()
                                       if "us_per_line" in v) else "us_per_line"
    costs = [v[key] for v in summary.values() if key in v]
    return max(costs) / min(costs) if len(costs) > 1 else None


def _summary(doc: dict[str, Any], mode: str) -> dict[str, Any]:
    return doc["summary"] if mode == "stream" else doc.get("summary_whole", {})


def _table(doc: dict[str, Any], mode: str) -> list[str]:
    s = _summary(doc, mode)
    phases = list(next((v["phases"] for v in s.values() if "phases" in v), {}))
    head = ("| lines | MB | " + " | ".join(f"{p} s" for p in phases) + " | process s | "
            "µs/line | × smallest | CPU s | CPU µs/line | CPU µs/line by rep | peak MB | peak / file | interpreter's own MB | above "
            "the interpreter's own / file | load avg | counts (frames, blank lines, pairs, "
            "findings) |")
    lines = [f"**{MODE_NAMES[mode]}**", "", head,
             "|" + "---:|" * (len(phases) + 14) + "---|"]
    for n in doc["sizes"]:
        v = s.get(str(n), {})
        m = doc["files"][str(n)]
        if "error" in v:
            lines.append(f"| {n:,} | {m['bytes'] / 1e6:.0f} | failed: {v['error']} |")
            continue
        verdict = "match" if v["counts_ok"] else "**differ**"
        lines.append(
            f"| {n:,} | {m['bytes'] / 1e6:.0f} | "
            + " | ".join(f"{v['phases'][p]:.2f}" for p in phases)
            + f" | {v['process_s']:.2f} | {v['us_per_line']:.2f} | "
            f"{v.get('per_line_over_smallest', 1.0):.2f} | {v['cpu_s']:.2f} | "
            f"{v['cpu_us_per_line']:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in v.get('cpu_us_per_line_reps', []))} | "
            f"{v['peak_mb']:.0f} | "
            f"{v['peak_over_file']:.2f} | {v['baseline_mb']:.0f} | "
            f"{v['above_baseline_over_file']:.2f} | {v['loadavg']:.1f} | {verdict} |")
    return lines


def verdicts(doc: dict[str, Any], mode: str = "stream") -> list[tuple[str, float | None,
                                                                      float, str]]:
    """(target, measured, limit, verdict) of the streaming path's targets."""
    s = _summary(doc, mode)
    largest = s.get(str(max(doc["sizes"])), {})
    at_largest = largest.get("peak_over_file")
    out = []
    for name, val, lim in (
            (f"peak RSS / file size at the largest size ({max(doc['sizes']):,} lines), "
             "whole process", at_largest, 0.6),
            ("peak above the interpreter's own / file size, same size",
             largest.get("above_baseline_over_file"), 0.6),
            ("per-line CPU time, largest over smallest across sizes", linearity(
                s, "cpu_us_per_line"), 1.15),
            ("per-line wall time, largest over smallest across sizes",
             linearity(s, "us_per_line"), 1.15)):
        out.append((name, val, lim, "n/a" if val is None else "PASS" if val <= lim else "FAIL"))
    return out


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# Ten million frames (`benchmarks/bench_10m.py`)", "",
             f"Run on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(doc['started']))}, "
             f"{doc['reps']} rep(s) per size, each a fresh process (imports and a warm-up "
             f"call on {doc.get('warm_lines', 400):,} lines outside the timed region), {doc.get('cpus')} cores shared with other work "
             "(the load average column: the higher of before and after the run). Tiny "
             "NDJSON frames: a ping and its result, a notification of an undefined method "
             "(one finding each) and a blank line, repeated. Targets: peak RSS ≤ 0.6× the "
             "file's size; per-line cost within 15% across sizes. \"The interpreter's "
             "own\": the child's peak after its imports and a warm-up call (Python, numpy, "
             "pandas, msgspec, the rule catalogue and the working set of one chunk: about "
             "125 MB whatever the file); \"above the interpreter's own\": the peak minus "
             "it, over the file's size.", "",
             "How the memory target is read: the whole-process peak over the file's size at "
             "ten million frames (the target's own size). At 100k and 1M frames the file is "
             "3 and 30 MB, less than the interpreter alone, so the whole-process ratio there "
             "says nothing about the path. Both columns are reported for every size; the verdicts are read at the "
             "largest size.", "",
             "How the time target is read: the per-line cost of each size, over the "
             "smallest's. On a machine whose two cores other work shares (the load average "
             "column), the wall time of a run measures the other work as much as this one: "
             "the CPU time of the timed region (user + system, of the one process the "
             "streaming path runs in) is the verdict's measure, the wall time is reported "
             "beside it; each rep's CPU time is shown (their spread is the noise of the "
             "shared cores).", ""]
    for mode in MODES:
        if _summary(doc, mode):
            lines += _table(doc, mode) + [""]
    lines += ["| target (streaming path) | measured | limit | verdict |", "|---|---:|---|---|"]
    for name, val, lim, verdict in verdicts(doc):
        lines.append(f"| {name} | {'n/a' if val is None else f'{val:.2f}'} | ≤ {lim} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
