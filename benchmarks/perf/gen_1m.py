"""Generate the perf captures (same generator and seed as bench_load.py) under out/perf/."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
from bench_load import ensure_file  # noqa: E402

out = HERE / "out" / "perf"
out.mkdir(parents=True, exist_ok=True)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
kinds = sys.argv[2].split(",") if len(sys.argv) > 2 else ["ndjson_clean", "ndjson", "tap_clean", "tap"]
for k in kinds:
    p, m = ensure_file(out, k, n, 7)
    print(p.name, m["bytes"], flush=True)
