"""Loader benchmark: mcp_notebook against polars, DuckDB, a json.loads loop and pandas.

Usage::

    .venv/bin/python benchmarks/bench_load.py --quick     # 100k frames, a couple of minutes
    .venv/bin/python benchmarks/bench_load.py             # 100k and 1M frames (~30 min)
    .venv/bin/python benchmarks/bench_load.py --with-3m   # plus the 3M scaling point

Every measurement is a fresh process (``bench_approaches.py``); the timed region starts
after imports and warm-up. Reps are interleaved: rep r of every measurement runs before
rep r+1 of any, so the noise of a shared box falls on all alike. Peak RSS is the child's
whole process (GNU ``/usr/bin/time -f %M``, else ``os.wait4``).

The children import a snapshot of ``mcp_notebook`` as of the last commit (``--code
worktree`` for the working tree at the start, ``--code live`` for the checkout itself),
so edits made during a long run do not mix versions.

Generated captures go to ``benchmarks/out/`` (git-ignored) and are reused when their
manifest says they were made with the same generator version, seed and size; 3M files
are deleted after use unless ``--keep-3m``. The report goes to ``benchmarks/RESULTS.md``
and ``benchmarks/results.json`` (``RESULTS-quick.md`` / ``results-quick.json`` with
``--quick``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_report  # noqa: E402
from gen_capture import GENERATOR_VERSION, generate, manifest_path  # noqa: E402
from gen_profiles import PROFILES  # noqa: E402

CHILD = HERE / "bench_approaches.py"
FILE_KINDS = {  # key -> (format, clean, file name pattern)
    "ndjson_clean": ("ndjson", True, "capture-{n}-clean.ndjson"),
    "ndjson": ("ndjson", False, "capture-{n}.ndjson"),
    "tap_clean": ("tap", True, "capture-{n}-clean.tap.jsonl"),
    "tap": ("tap", False, "capture-{n}.tap.jsonl"),
    # the frames of ndjson_clean, line for line, as tap records (written with it)
    "tap_twin_clean": ("tap", True, "capture-{n}-clean.twin.tap.jsonl"),
}
#: the payload profiles (gen_profiles.py) as clean NDJSON captures; ``ndjson_clean`` is the
#: default profile's
PROFILE_KINDS = {f"profile_{p}": ("ndjson", True, f"capture-{{n}}-clean-{p}.ndjson")
                 for p in PROFILES if p != "default"}
FILE_KINDS.update(PROFILE_KINDS)


def profile_of(kind: str) -> str:
    """The generator profile of a file kind."""
    return kind.removeprefix("profile_") if kind in PROFILE_KINDS else "default"


def ensure_file(out_dir: Path, kind: str, n: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """Generate (or reuse) one capture and return its path and manifest."""
    fmt, clean, pattern = FILE_KINDS[kind]
    path = out_dir / pattern.format(n=_short(n))
    mpath = manifest_path(path)
    if path.exists() and mpath.exists():
        m = json.loads(mpath.read_text())
        if (m.get("generator_version") == GENERATOR_VERSION and m.get("seed") == seed
                and m.get("frames") == n and path.stat().st_size == m.get("bytes")
                and m.get("profile", "default") == profile_of(kind)):
            return path, m
    print(f"  generating {path.name} ...", flush=True)
    if kind == "tap_twin_clean":  # written beside the clean NDJSON capture, from its frames
        nd_pattern = FILE_KINDS["ndjson_clean"][2]
        generate(out_dir / nd_pattern.format(n=_short(n)), n, "ndjson", clean=True, seed=seed,
                 twin=path)
        m = json.loads(mpath.read_text())
        print(f"    {m['bytes'] / 1e6:.0f} MB", flush=True)
        return path, m
    m = generate(path, n, fmt, clean=clean, seed=seed, profile=profile_of(kind))
    print(f"    {m['bytes'] / 1e6:.0f} MB in {m['seconds']} s", flush=True)
    return path, m


def _short(n: int) -> str:
    return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k"


TIME = Path("/usr/bin/time")


def snapshot(out_dir: Path, source: str) -> Path:
    """Copy the library; the children import this copy (``PYTHONPATH``).

    ``source="head"``: the package as of the last commit (``git archive``; read-only),
    a version anyone can name and re-run. ``"worktree"``: the files as they are now.
    Either way, edits made in the checkout during a long run do not mix versions.
    """
    snap = out_dir / "snapshot"
    shutil.rmtree(snap, ignore_errors=True)
    snap.mkdir(parents=True)
    if source == "head":
        tar = subprocess.run(["git", "archive", "--format=tar", "HEAD", "mcp_notebook"],
                             cwd=HERE.parent, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            tf.extractall(snap, filter="data")
    else:
        shutil.copytree(HERE.parent / "mcp_notebook", snap / "mcp_notebook",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    build_native(snap)
    return snap


def snapshot_rev(out_dir: Path, rev: str) -> Path:
    """The package as of commit ``rev`` (``git archive``), built: the ``--before`` code."""
    snap = out_dir / "snapshot-before"
    shutil.rmtree(snap, ignore_errors=True)
    snap.mkdir(parents=True)
    tar = subprocess.run(["git", "archive", "--format=tar", rev, "mcp_notebook"],
                         cwd=HERE.parent, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        tf.extractall(snap, filter="data")
    build_native(snap)
    return snap


#: an approach measured on the ``--before`` commit's code carries this suffix
BEFORE = "@before"


def build_native(root: Path) -> bool:
    """Compile the C scanner of the copy in ``root`` beside its source and its modules to
    bytecode, as ``pip install`` does (``setup.py``, ``compileall``); False (and the
    pure-Python path is measured) if the C scanner cannot be built."""
    pkg = "engine" if (root / "mcp_notebook" / "engine" / "csrc").is_dir() else "fast"  # before 16
    code = ("from setuptools import Extension, setup; setup(name='snap', script_args=["
            "'build_ext', '--inplace', '-q'], ext_modules=[Extension("
            f"'mcp_notebook.{pkg}._native', ['mcp_notebook/{pkg}/csrc/module.c'], "
            "extra_compile_args=['-O3'])])")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True)
    shutil.rmtree(root / "build", ignore_errors=True)
    # pip writes the bytecode at install; without it (PYTHONDONTWRITEBYTECODE set) each child
    # would compile every module it imports inside the timed phases
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "mcp_notebook")],
                   capture_output=True, check=False)
    if done.returncode:
        print("  the C scanner could not be built: measuring the Python path", flush=True)
    return done.returncode == 0


class TreeRss(threading.Thread):
    """Sample the summed memory of a process group (a loader may fork workers).

    ``/usr/bin/time`` gives the peak of the largest single process; when a loader splits
    work over processes, their sum is what the machine must hold. Sampled every 20 ms:
    the summed RSS (which counts a forked worker's copy-on-write view of its parent's
    pages twice) and the summed PSS (``smaps_rollup``: each shared page split among the
    processes that map it, so the sum is what the machine holds). Once the file ``mark``
    exists (the child writes it at the end of its timed region) the timed peaks stop.
    """

    def __init__(self, pgid: int, mark: Path | None = None) -> None:
        super().__init__(daemon=True)
        self.pgid, self.peak_kb, self.procs = pgid, 0, 1
        self.pss_kb = self.timed_pss_kb = 0
        self.mark, self.timed = mark, True
        self.done = threading.Event()

    def run(self) -> None:
        page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
        while not self.done.wait(0.02):
            total, pss, n = 0, 0, 0
            for d in os.listdir("/proc"):
                if not d.isdigit():
                    continue
                try:
                    with open(f"/proc/{d}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                    if int(fields[2]) != self.pgid:  # field 5 of stat: the process group
                        continue
                    total += int(fields[21]) * page_kb  # field 24: rss in pages
                    n += 1
                    with open(f"/proc/{d}/smaps_rollup", "rb") as f:
                        for line in f:
                            if line.startswith(b"Pss:"):
                                pss += int(line.split()[1])
                                break
                except (OSError, ValueError, IndexError):
                    continue
            self.peak_kb = max(self.peak_kb, total)
            self.pss_kb = max(self.pss_kb, pss)
            if self.timed and self.mark is not None and self.mark.exists():
                self.timed = False  # the timed region is over (this sample is after it)
            if self.timed:
                self.timed_pss_kb = max(self.timed_pss_kb, pss)
            self.procs = max(self.procs, n - 1)  # minus /usr/bin/time itself


def compile_package(tree: Path = HERE.parent) -> None:
    """Write the bytecode of ``tree``'s package before any child starts, as ``pip
    install`` of the wheel does. An editable install run with PYTHONDONTWRITEBYTECODE
    set never writes it, so each child would compile every module changed since the last
    write, and the whole-process times would carry that: importing the package with no
    bytecode took 2.4 to 3.0 s here, against 0.4 to 0.5 s with it. Up-to-date files are
    left as they are."""
    import compileall

    compileall.compile_dir(str(tree / "mcp_notebook"), quiet=1)


def warm_cache(path: Path) -> None:
    """Read ``path`` through once, so that the child finds it in the page cache.

    This machine's page cache gives memory back within a minute or two (a file read a
    while ago is partly on disk again), so without this the first approach of a rep, or
    any of them, could pay the disk while the next one does not. Every child is preceded
    by it, whatever the approach: all read a cached file, as a user who has just written
    or copied the capture does.
    """
    buf = bytearray(16 << 20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def run_child(approach: str, path: Path, manifest: Path, timeout: float,
              pythonpath: Path | None = None) -> dict[str, Any]:
    """One fresh process: the child's JSON plus its wall time and peak RSS.

    Peak RSS comes from GNU ``/usr/bin/time -f %M`` when present: a child forked straight
    from this (large) harness would inherit its high-water mark (Linux keeps the pre-exec
    peak in ``ru_maxrss``), so small children would read high. Without it, ``os.wait4``.
    """
    cmd = [sys.executable, str(CHILD), approach, str(path), str(manifest)]
    compile_package(pythonpath or HERE.parent)
    if path.is_file():
        warm_cache(path)
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = Path(tmp) / "rss"
        if TIME.exists():
            cmd = [str(TIME), "-f", "%M", "-o", str(rss_file), *cmd]
        with open(Path(tmp) / "out", "w+b") as out, open(Path(tmp) / "err", "w+b") as err:
            load0 = os.getloadavg()[0]
            t0 = time.perf_counter()
            env = dict(os.environ)
            if pythonpath is not None:
                env["PYTHONPATH"] = str(pythonpath)
            mark = Path(tmp) / "timed-end"
            env["BENCH_TIMED_MARK"] = str(mark)  # the child writes it when its timing ends
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(HERE), env=env,
                                    start_new_session=True)  # its own group: killable whole
            timer = threading.Timer(timeout, lambda: _kill(proc.pid))
            timer.start()
            tree = TreeRss(proc.pid, mark)
            tree.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
                tree.done.set()
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - t0
            out.seek(0)
            lines = out.read().decode("utf-8", "replace").strip().splitlines()
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
        rss_kb = float(usage.ru_maxrss)
        try:
            rss_kb = float(rss_file.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    res: dict[str, Any]
    try:
        res = json.loads(lines[-1])
    except (IndexError, ValueError):
        why = "timed out" if wall >= timeout else f"exit {proc.returncode}"
        res = {"approach": approach, "error": f"child failed ({why}): {' '.join(tail)[:300]}"}
    tree.join()
    res.update(process_s=wall, peak_rss_mb=rss_kb / 1024, loadavg_start=load0,
               tree_rss_mb=tree.peak_kb / 1024, tree_pss_mb=tree.pss_kb / 1024,
               processes=tree.procs)
    if mark_seen := not tree.timed:
        res["timed_pss_mb"] = tree.timed_pss_kb / 1024
    res["timed_mark"] = mark_seen
    return res


def _kill(pid: int) -> None:
    """Stop a timed-out child and its own child (the process group this harness made)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def plan(sizes: list[int], main_size: int, args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """The (approach, file kind, frames) measurements of this run."""
    todo: list[tuple[str, str, int]] = [("noop", "ndjson_clean", sizes[0])]
    for n in sizes:
        big = n > 100_000
        if n == main_size or not big:
            todo += [("floor", k, n) for k in FILE_KINDS if k not in PROFILE_KINDS]
            todo += [("polars_scan", "ndjson_clean", n), ("polars_scan", "ndjson", n),
                     ("duckdb_read_json", "ndjson_clean", n), ("duckdb_read_json", "ndjson", n),
                     ("duckdb_lenient", "ndjson", n), ("json_loop", "ndjson_clean", n),
                     ("json_loop_rows", "ndjson_clean", n), ("json_loop_dicts", "ndjson_clean", n)]
            todo.append(("json_loop_tap", "tap_clean", n))
            if not big or args.naive_all:
                todo += [("json_loop", "ndjson", n), ("json_loop_tap", "tap", n)]
            if not big or args.pandas_1m:
                todo += [("pandas_read_json", "ndjson_clean", n), ("pandas_read_json", "ndjson", n)]
            todo += [("ours", k, n) for k in FILE_KINDS if k not in PROFILE_KINDS]
            if n == main_size:  # every profile against polars and DuckDB (the default's above)
                todo += [(a, k, n) for k in PROFILE_KINDS
                         for a in ("polars_scan", "duckdb_read_json", "ours")]
                # whole processes that do only the work (bench_approaches.ours_process)
                todo += [(a, k, n) for k in ("ndjson_clean", *PROFILE_KINDS)
                         for a in ("polars_process", "ours_process")]
        else:  # scaling points only
            todo += [("floor", "ndjson", n), ("ours", "ndjson", n)]
    if args.only:
        keep = set(args.only.split(","))
        todo = [t for t in todo if t[0] in keep or t[0] == "noop"]
    if args.only_files:
        keep = set(args.only_files.split(","))
        todo = [t for t in todo if t[1] in keep or t[0] == "noop"]
    if getattr(args, "before", None):  # each of ours at main size again on the older code,
        # next to it in the order (so both see the same moment of a shared box)
        out: list[tuple[str, str, int]] = []
        for t in todo:
            out.append(t)
            if t[0] in ("ours", "ours_process") and t[2] == main_size:
                out.append((t[0] + BEFORE, t[1], t[2]))
        todo = out
    return todo


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the reps of one measurement."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0].get("error"), "reps": len(runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}
    med = statistics.median
    phases = {k: med(r["phases"].get(k, 0.0) for r in ok) for k in ok[0]["phases"]}
    return {
        "reps": len(ok), "timed_s": med(sum(r["phases"].values()) for r in ok),
        "timed_s_all": [round(sum(r["phases"].values()), 4) for r in ok],
        "phases": phases, "cpu_s": med(r["cpu_s"] for r in ok),
        "process_s": med(r["process_s"] for r in ok), "warmup_s": med(r["warmup_s"] for r in ok),
        "peak_rss_mb": med(r["peak_rss_mb"] for r in ok),
        "tree_rss_mb": med(r.get("tree_rss_mb", 0.0) for r in ok),
        "tree_pss_mb": med(r.get("tree_pss_mb", 0.0) for r in ok),
        "timed_pss_mb": (med(r["timed_pss_mb"] for r in ok)
                         if all("timed_pss_mb" in r for r in ok) else None),
        "processes": max(r.get("processes", 1) for r in ok), "rows": ok[0]["rows"],
        "checks": ok[0]["checks"], "loadavg_start": [round(r["loadavg_start"], 2) for r in ok],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100k frames only, 3 reps")
    ap.add_argument("--with-3m", action="store_true", help="add the 3M-frame scaling point")
    ap.add_argument("--keep-3m", action="store_true", help="do not delete the 3M file after use")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--naive-all", action="store_true",
                    help="also run the json.loads loops on the realistic 1M files")
    ap.add_argument("--pandas-1m", action="store_true",
                    help="also run pandas.read_json at 1M (~100 s and ~14 GB per rep)")
    ap.add_argument("--only", default="", help="comma-separated approaches (e.g. ours,floor)")
    ap.add_argument("--only-files", default="",
                    help="comma-separated file kinds (e.g. ndjson_clean,profile_escapes)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per child")
    ap.add_argument("--out-dir", type=Path, default=HERE / "out")
    ap.add_argument("--report", type=Path, default=None, help="markdown report path")
    ap.add_argument("--code", choices=["head", "worktree", "live"], default="head",
                    help="which mcp_notebook the children import: a snapshot of the last "
                         "commit (default), a snapshot of the working tree taken at the "
                         "start, or the live checkout")
    ap.add_argument("--before", default="", metavar="REV",
                    help="also measure ours (and ours_process) at the main size on the code "
                         "of commit REV, interleaved with this code's runs (before/after in "
                         "one run; reported as APPROACH@before)")
    ap.add_argument("--render", type=Path, default=None, metavar="RESULTS_JSON",
                    help="only re-render the report (ratios, targets, markdown) from a JSON")
    a = ap.parse_args(argv)
    if a.render:
        return render(a.render, a.report)

    sizes = [100_000] if a.quick else [100_000, 1_000_000] + ([3_000_000] if a.with_3m else [])
    main_size = 100_000 if a.quick else 1_000_000
    report = a.report or HERE / ("RESULTS-quick.md" if a.quick else "RESULTS.md")
    raw_json = report.with_name(report.stem.lower() + ".json")
    a.out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    load_start = os.getloadavg()
    snap = None if a.code == "live" else snapshot(a.out_dir, a.code)
    before_snap = snapshot_rev(a.out_dir, a.before) if a.before else None
    code = bench_report.code_version(HERE.parent, snap)
    code["source"] = a.code
    if a.before:
        code["before"] = subprocess.run(["git", "rev-parse", "--short", a.before],
                                        cwd=HERE.parent, capture_output=True, text=True,
                                        check=True).stdout.strip()
    if a.code == "head":
        code["modified"] = False  # the snapshot is the commit itself

    todo = plan(sizes, main_size, a)
    files: dict[tuple[str, int], tuple[Path, dict[str, Any]]] = {}
    print("captures:", flush=True)
    for _, kind, n in todo:
        if (kind, n) not in files:
            files[(kind, n)] = ensure_file(a.out_dir, kind, n, a.seed)
    warm = a.out_dir / "warmup.ndjson"
    src = files[("ndjson_clean", sizes[0])][0] if ("ndjson_clean", sizes[0]) in files else None
    if src is not None and not warm.exists():
        with open(src, "rb") as f:
            warm.write_bytes(b"".join(f.readline() for _ in range(300)))

    runs: dict[tuple[str, str, int], list[dict[str, Any]]] = {t: [] for t in todo}
    failed: set[tuple[str, str, int]] = set()
    for rep in range(a.reps):
        order = todo[rep % len(todo):] + todo[:rep % len(todo)]  # rotate: no fixed neighbours
        print(f"rep {rep + 1}/{a.reps}", flush=True)
        for key in order:
            if key in failed:
                continue  # a reader that cannot read the file fails the same way every time
            approach, kind, n = key
            path, _ = files[(kind, n)]
            old = approach.endswith(BEFORE)
            root = before_snap if old else snap
            digest = bench_report.code_version(HERE.parent, root)["digest"]
            r = run_child(approach.removesuffix(BEFORE), path, manifest_path(path), a.timeout,
                          root)
            r["approach"] = approach
            r["code_digest"] = digest
            runs[key].append(r)
            if "error" in r:
                failed.add(key)
            t = "error" if "error" in r else f"{sum(r['phases'].values()):8.3f} s"
            print(f"  {approach:18s} {kind:13s} {_short(n):>4s}  {t}  "
                  f"{r['peak_rss_mb']:7.0f} MB", flush=True)

    results = {f"{ap_}|{k}|{n}": {"approach": ap_, "file": k, "frames": n, **aggregate(rs)}
               for (ap_, k, n), rs in runs.items()}
    manifests = {f"{k}|{n}": m for (k, n), (_, m) in files.items()}
    for (_, size), (path, _) in files.items():
        if size >= 3_000_000 and not a.keep_3m:
            path.unlink(missing_ok=True)
            manifest_path(path).unlink(missing_ok=True)
    doc = {
        "mode": "quick" if a.quick else "full", "reps": a.reps, "seed": a.seed,
        "sizes": sizes, "main_size": main_size, "started": started,
        "seconds": round(time.time() - started, 1),
        "machine": bench_report.machine(), "code": code, "loadavg_start": load_start,
        "loadavg_end": os.getloadavg(), "manifests": manifests, "results": results,
        "raw": {f"{ap_}|{k}|{n}": rs for (ap_, k, n), rs in runs.items()},
    }
    doc["ten_m"] = ten_m()
    doc["readers"] = last_record("results-readers.json")
    doc["views"] = last_record("results-views.json")
    doc["ratios"], doc["targets"] = bench_report.evaluate(doc)
    raw_json.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    md = bench_report.markdown(doc)
    report.write_text(md)
    print()
    if len({r.get("code_digest") for (ap_, _, _), rs in runs.items()
            if not ap_.endswith(BEFORE) for r in rs}) > 1:
        print("WARNING: mcp_notebook's code changed during this run; medians mix versions.")
    print(bench_report.console(doc))
    print(f"wrote {report.name} and {raw_json.name} in {report.parent.name}/")
    return 0


def ten_m() -> dict[str, Any] | None:
    """The last ``bench_10m.py`` run (``make bench-10m``), reported beside this one."""
    return last_record("results-10m.json")


def last_record(name: str) -> dict[str, Any] | None:
    """The last run of another benchmark (``results-10m.json`` of ``bench_10m.py``,
    ``results-readers.json`` of ``bench_readers.py --json``, ``results-views.json`` of
    ``bench_views.py``), reported beside this one."""
    try:
        return json.loads((HERE / name).read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


def render(raw_json: Path, report: Path | None) -> int:
    """Recompute ratios and targets of a finished run and rewrite its report."""
    doc = json.loads(raw_json.read_text())
    doc["ten_m"] = ten_m() or doc.get("ten_m")
    doc["readers"] = last_record("results-readers.json") or doc.get("readers")
    doc["views"] = last_record("results-views.json") or doc.get("views")
    doc["ratios"], doc["targets"] = bench_report.evaluate(doc)
    raw_json.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    report = report or raw_json.with_name(
        "RESULTS-quick.md" if doc["mode"] == "quick" else "RESULTS.md")
    report.write_text(bench_report.markdown(doc))
    print(bench_report.console(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
