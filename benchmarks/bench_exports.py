"""Time and memory of the exports on a generated capture, each measured against the
capture's load in the same process.

Usage::

    python benchmarks/bench_exports.py --frames 1000000 --out /some/scratch/dir

Generates a tap capture with ``gen_capture.py`` (reused when present). Each step runs in a
fresh process: it loads the capture with its pairs and violations (what ``check`` holds),
notes the peak RSS so far (the baseline), runs one export into a file, and notes the peak
RSS again. The export's cost in memory is the rise of the peak over the baseline of the
same process; the table also gives the peak of a process that only loads. Prints a
markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: each step: (name, code run on a loaded trace ``t``, writing under ``out``; it sets
#: ``made``, what it wrote)
STEPS: list[tuple[str, str]] = [
    ("load + pairs + violations (baseline)", "made = ''"),
    ("export --boundary .parquet",
     "from mcp_notebook.boundary import stream_boundary\n"
     "n = stream_boundary(t, out / 'events.parquet')\n"
     "made = f'{n:,} operations, {size(out / \"events.parquet\")}'"),
    ("export --boundary .jsonl",
     "from mcp_notebook.boundary import stream_boundary\n"
     "n = stream_boundary(t, out / 'events.jsonl')\n"
     "made = f'{n:,} operations, {size(out / \"events.jsonl\")}'"),
    ("export --otlp (spans + metrics)",
     "from mcp_notebook.otlp import write_otlp\n"
     "write_otlp(t, out / 'spans.json', metrics=out / 'metrics.json')\n"
     "made = size(out / 'spans.json') + ' of OTLP/JSON'"),
    ("export --perfetto",
     "held = t.to_perfetto(out / 'trace.pftrace')\n"
     "made = f\"{held['slices']:,} slices, {size(out / 'trace.pftrace')}\""),
    ("check --report sarif",
     "from mcp_notebook.report_formats import write_findings\n"
     "with open(out / 'f.sarif', 'w', encoding='utf-8') as fh:\n"
     "    write_findings(t, 'sarif', fh)\n"
     "made = size(out / 'f.sarif')"),
    ("check --report github",
     "from mcp_notebook.report_formats import write_findings\n"
     "with open(out / 'f.txt', 'w', encoding='utf-8') as fh:\n"
     "    write_findings(t, 'github', fh)\n"
     "made = size(out / 'f.txt')"),
    ("check --report junit",
     "from mcp_notebook.report_formats import write_findings\n"
     "with open(out / 'f.xml', 'w', encoding='utf-8') as fh:\n"
     "    write_findings(t, 'junit', fh)\n"
     "made = size(out / 'f.xml')"),
    ("t.boundary() in memory (for comparison)",
     "made = f'{len(t.boundary()):,} rows held'"),
]

CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
import mcp_notebook as mn

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def size(p):
    return f'{{Path(p).stat().st_size / 1e6:,.1f}} MB'

out = Path({out!r})
t0 = time.perf_counter()
t = mn.load({capture!r}, progress=False)
t.pairs, t.violations
loaded, load_s = peak(), time.perf_counter() - t0
t0 = time.perf_counter()
{code}
print(json.dumps({{"load_s": load_s, "loaded": loaded, "s": time.perf_counter() - t0,
                  "peak": peak(), "made": made, "frames": len(t.frames),
                  "pairs": len(t.pairs), "findings": len(t.violations)}}))
"""


def run(capture: Path, out: Path, code: str) -> dict[str, object]:
    child = CHILD.format(root=str(HERE.parent), out=str(out), capture=str(capture),
                         code=code)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode:
        raise SystemExit(proc.stderr)
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, required=True, help="scratch folder for the files")
    ap.add_argument("--steps", default="", help="comma-separated step numbers (default all)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    capture = args.out / f"capture-{args.frames}.jsonl"
    if not capture.exists():
        subprocess.run([sys.executable, str(HERE / "gen_capture.py"), "--frames",
                        str(args.frames), "--format", "tap", "--out", str(capture)],
                       check=True, stdout=subprocess.DEVNULL)
    chosen = [int(s) for s in args.steps.split(",") if s] or list(range(len(STEPS)))
    rows = []
    base = None
    for k in chosen:
        name, code = STEPS[k]
        t0 = time.perf_counter()
        r = run(capture, args.out, code)
        rows.append((name, r, time.perf_counter() - t0))
        if k == 0:
            base = r
    first = rows[0][1]
    print(f"capture: {args.frames:,} generated tap frames: {first['frames']:,} frames, "
          f"{first['pairs']:,} pairs, {first['findings']:,} findings")
    if base is not None:
        print(f"baseline: a process that loads it (pairs and violations too) peaks at "
              f"{base['loaded']:,.0f} MB in {base['load_s']:.1f} s\n")
    print("| step | export s | peak after load (MB) | peak after export (MB) "
          "| added by the export (MB) | made |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r, _ in rows:
        added = float(r["peak"]) - float(r["loaded"])  # type: ignore[arg-type]
        print(f"| {name} | {float(r['s']):.2f} | {float(r['loaded']):,.0f} | "  # type: ignore[arg-type]
              f"{float(r['peak']):,.0f} | {added:,.0f} | {r['made']} |")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
