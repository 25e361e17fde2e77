"""The report of ``make bench`` carries the last readers record: a verdict per size for
the format farthest from NDJSON, and its table (issue 18, target 3)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(_BENCH))
bench_report = importlib.import_module("bench_report")


def _row(n: int, fmt: str, wall: float, cpu: float) -> dict[str, Any]:
    return {"messages": n, "format": fmt, "file_mb": 1.0, "frames": n, "wall_s": wall,
            "cpu_s": cpu, "peak_mb": 10.0, "ratio_wall": wall, "ratio_cpu": cpu}


def test_readers_record_gives_a_verdict_per_size() -> None:
    doc = {"readers": {"repeats": 1, "rows": [
        _row(100_000, "ndjson", 1.0, 1.0), _row(100_000, "inspector", 1.5, 1.4),
        _row(100_000, "har-sse", 1.9, 2.1),
        _row(1_000_000, "ndjson", 1.0, 1.0), _row(1_000_000, "inspector", 1.8, 1.7),
        _row(1_000_000, "har-sse", 6.8, 6.5)]}}
    worst = bench_report._reader_worst(doc)
    assert {n: (key, row["format"]) for n, (key, row) in worst.items()} == {
        100_000: ("readers_worst_over_ndjson_100000", "har-sse"),
        1_000_000: ("readers_worst_over_ndjson_1000000", "har-sse")}
    lines = bench_report._reader_lines(doc)
    assert sum(line.endswith("| FAIL |") for line in lines) == 1  # har-sse at 1M
    assert sum(line.endswith("| pass |") for line in lines) == 5


def test_no_readers_record_adds_nothing() -> None:
    assert bench_report._reader_worst({}) == {}
    assert bench_report._reader_lines({"readers": None}) == []


def test_views_record_gives_target_five() -> None:
    """The last bench_views.py record becomes two verdicts: the inspector's median opening
    against 0.5 s and the largest first payload against 100 KB."""
    doc = {"views": {"frames": 1_000_000, "median": {"inspector_open": 388.0},
                     "all": {"first_payload": [91_282.0, 99_000.0, 100_500.0]}}}
    ratios: dict[str, Any] = {}
    specs = bench_report._views_specs(doc, ratios)
    assert ratios == {"views_inspector_open_s": 0.388, "views_first_payload_kb": 100.5}
    verdicts = {key: bench_report._target(name, ratios[key], limit, op)["pass"]
                for name, key, limit, op in specs}
    assert verdicts == {"views_inspector_open_s": True, "views_first_payload_kb": False}
    assert all("1,000,000 frames" in name for name, *_ in specs)


def test_no_views_record_adds_no_target() -> None:
    assert bench_report._views_specs({}, {}) == []
    assert bench_report._views_specs({"views": {"median": {}, "all": {}}}, {}) == []
