"""Several files: ``mn.load`` of a capture cut into pieces, shared between two processes
or read one after the other, in the same run.

Usage: ``python benchmarks/perf/many_files.py CAPTURE [--pieces 16] [--reps 3]``

Cuts CAPTURE (NDJSON or tap) at line boundaries into PIECES files (in a temporary
folder beside it), then times, in fresh processes and interleaved, ``mn.load(folder)``
+ ``.pairs`` + ``.violations`` with the files shared between two processes and with
the sharing turned off. Prints one JSON line with the medians (whole, and ``mn.load``
alone) and their ratios.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import sys, time
import pandas as pd
pd.to_datetime(pd.Series([1.5, None]), unit="s", utc=True)
import mcp_notebook as mn
from mcp_notebook.fast import parallel
if sys.argv[2] == "serial":
    parallel.MIN_MANY_BYTES = 1 << 62
t0 = time.perf_counter()
t = mn.load(sys.argv[1])
t1 = time.perf_counter()
_ = t.pairs, t.violations
print(time.perf_counter() - t0, t1 - t0, len(t.frames))
"""


def cut(src: Path, out: Path, pieces: int) -> list[Path]:
    data = src.read_bytes()
    step = len(data) // pieces
    paths, start = [], 0
    for k in range(pieces):
        end = len(data) if k == pieces - 1 else data.index(b"\n", start + step) + 1
        p = out / f"piece-{k:02d}{''.join(src.suffixes[-2:]) or '.ndjson'}"
        p.write_bytes(data[start:end])
        paths.append(p)
        start = end
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", type=Path)
    ap.add_argument("--pieces", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="many-", dir=a.capture.parent))
    try:
        paths = cut(a.capture, tmp, a.pieces)
        times: dict[str, list[float]] = {"shared": [], "serial": []}
        loads: dict[str, list[float]] = {"shared": [], "serial": []}
        frames = 0
        for _ in range(a.reps):
            for mode in times:
                out = subprocess.run([sys.executable, "-c", _CHILD, str(tmp), mode], check=True,
                                     capture_output=True, text=True).stdout.split()
                times[mode].append(float(out[0]))
                loads[mode].append(float(out[1]))
                frames = int(out[2])
        med = {k: statistics.median(v) for k, v in times.items()}
        med_load = {k: statistics.median(v) for k, v in loads.items()}
        print(json.dumps({"capture": a.capture.name, "pieces": len(paths),
                          "piece_mb": round(paths[0].stat().st_size / 2**20, 1),
                          "frames": frames, "median_s": med, "all_s": times,
                          "load_median_s": med_load,
                          "serial_over_shared": round(med["serial"] / med["shared"], 2),
                          "load_serial_over_shared": round(med_load["serial"] / med_load["shared"],
                                                           2)}))
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
