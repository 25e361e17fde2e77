"""Peak memory of a command and the processes it forks: summed RSS and summed PSS.

Usage: ``python benchmarks/perf/tree_memory.py -- CMD...``

RSS counts every resident page a process maps, so a forked worker's copy-on-write view of
its parent's pages is counted twice when RSS is summed; PSS (``/proc/PID/smaps_rollup``)
shares each page among the processes that map it, so the sum is what the machine holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time


def _tree(pgid: int) -> tuple[int, int, int]:
    rss = pss = n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            with open(f"/proc/{d}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
            n += 1
        except OSError:
            continue
    return rss, pss, n


def main() -> int:
    cmd = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen(cmd, start_new_session=True)
    peak = {"rss": 0, "pss": 0, "procs": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            rss, pss, n = _tree(proc.pid)
            peak["rss"] = max(peak["rss"], rss)
            peak["pss"] = max(peak["pss"], pss)
            peak["procs"] = max(peak["procs"], n)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    t0 = time.perf_counter()
    code = proc.wait()
    done.set()
    t.join()
    print(f"tree peak: RSS sum {peak['rss'] / 1024:.0f} MB, PSS sum {peak['pss'] / 1024:.0f} MB, "
          f"processes {peak['procs']}, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
