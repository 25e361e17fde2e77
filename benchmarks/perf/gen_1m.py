"""Generate perf captures with the bench generator (same seed, same bytes as bench_load.py).

Usage: ``python benchmarks/perf/gen_1m.py OUT_DIR [FRAMES] [KINDS]`` where KINDS is a
comma-separated subset of ndjson_clean,ndjson,tap_clean,tap.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_load import ensure_file  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
kinds = sys.argv[3].split(",") if len(sys.argv) > 3 else ["ndjson_clean", "ndjson", "tap_clean", "tap"]
for k in kinds:
    p, m = ensure_file(out, k, n, 7)
    print(p.name, m["bytes"], flush=True)
