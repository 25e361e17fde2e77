"""The exports write as they go, a chunk of operations at a time: the files are those of
one chunk holding everything, whatever the chunk size."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.boundary import iter_boundary, read_boundary, stream_boundary

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for d in (ROOT / "data", ROOT / "tests" / "fixtures" / "peers")
                  for p in d.iterdir() if p.suffix in (".jsonl", ".har"))


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_the_boundary_in_small_chunks_is_the_boundary(path: Path, tmp_path: Path) -> None:
    trace = mn.load(path)
    whole = trace.boundary()
    parts = list(iter_boundary(trace, chunk=3))
    assert all(len(b) <= 3 for b in parts) and sum(map(len, parts)) == len(whole)
    joined = pd.concat(parts, ignore_index=True) if parts else whole
    for col in ("session", "requester", "kind", "method", "outcome"):  # per-chunk categories
        joined[col] = joined[col].astype(object).astype("category")
    pd.testing.assert_frame_equal(joined, whole, check_categorical=False)
    for suffix in (".jsonl", ".parquet"):
        small = tmp_path / f"small{suffix}"
        assert stream_boundary(trace, small, chunk=3) == len(whole)
        big = tmp_path / f"big{suffix}"
        stream_boundary(whole, big)
        pd.testing.assert_frame_equal(read_boundary(small), read_boundary(big))
        if suffix == ".jsonl":
            assert small.read_bytes() == big.read_bytes()


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_otlp_written_in_small_chunks_holds_the_spans_of_to_otlp(path: Path,
                                                                 tmp_path: Path) -> None:
    from mcp_notebook import otlp

    trace = mn.load(path)
    doc = otlp.to_otlp(trace)
    small = list(otlp.iter_resource_spans(trace, chunk=2))
    assert all(len(rs["scopeSpans"][0]["spans"]) <= 2 for rs in small)

    def spans(resource_spans: list) -> list:
        return sorted((json.dumps(rs["resource"], sort_keys=True), json.dumps(s, sort_keys=True))
                      for rs in resource_spans for s in rs["scopeSpans"][0]["spans"])

    assert spans(small) == spans(doc["resourceSpans"])
    written = json.loads(otlp.write_otlp(trace, tmp_path / "spans.json").read_text("utf-8"))
    assert spans(written["resourceSpans"]) == spans(doc["resourceSpans"])
    # one resource per server in to_otlp
    keys = [json.dumps(rs["resource"], sort_keys=True) for rs in doc["resourceSpans"]]
    assert len(keys) == len(set(keys))


FINDINGS = [p for p in CAPTURES if len(mn.load(p).violations)]


@pytest.mark.parametrize("path", FINDINGS, ids=[p.name for p in FINDINGS])
def test_sarif_and_github_written_as_they_go_hold_every_finding(path: Path) -> None:
    import io

    from mcp_notebook.report_formats import findings, iter_findings, write_findings

    trace = mn.load(path)
    assert list(iter_findings(trace, chunk=1)) == findings(trace)
    out = io.StringIO()
    write_findings(trace, "sarif", out)
    run = json.loads(out.getvalue())["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == trace.violations["rule"].tolist()
    files = {f.file for f in findings(trace)}
    assert len(run["artifacts"]) == len(files)
    out = io.StringIO()
    write_findings(trace, "github", out)
    assert len(out.getvalue().splitlines()) == len(trace.violations)


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_perfetto_written_a_few_packets_at_a_time_is_the_same_trace(path: Path) -> None:
    import io

    from mcp_notebook.perfetto import _Plan, perfetto_bytes

    trace = mn.load(path)
    out = io.BytesIO()
    _Plan(trace).write(out, chunk=3)
    assert out.getvalue() == perfetto_bytes(trace)
