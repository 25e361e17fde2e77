"""The exports write as they go, a chunk of operations at a time: the files are those of
one chunk holding everything, whatever the chunk size."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.boundary import iter_boundary, read_boundary, stream_boundary
from tests.exports.captures import CAPTURES, REPRESENTATIVE

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
def test_the_boundary_in_small_chunks_is_the_boundary(path: Path, tmp_path: Path) -> None:
    trace = mn.load(path)
    whole = trace.boundary()
    parts = list(iter_boundary(trace, chunk=3))
    assert all(len(b) <= 3 for b in parts) and sum(map(len, parts)) == len(whole)
    joined = pd.concat(parts, ignore_index=True) if parts else whole
    for col in ("session", "requester", "kind", "method", "outcome"):  # per-chunk categories
        joined[col] = joined[col].astype(object).astype("category")
    pd.testing.assert_frame_equal(joined, whole, check_categorical=False)
    # the writers append chunk after chunk: what they can get wrong is at a seam (a second
    # header, categories or a row group's schema per chunk), which four chunks show as well
    # as a hundred; which operation goes in which chunk is iter_boundary's, checked above in
    # chunks of 3 (a chunk costs the writers ~10 ms of pandas whatever its size)
    seams = max(3, -(-len(whole) // 4))
    for suffix in (".jsonl", ".parquet"):
        small = tmp_path / f"small{suffix}"
        assert stream_boundary(trace, small, chunk=seams) == len(whole)
        big = tmp_path / f"big{suffix}"
        stream_boundary(whole, big)
        pd.testing.assert_frame_equal(read_boundary(small), read_boundary(big))
        if suffix == ".jsonl":
            assert small.read_bytes() == big.read_bytes()


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
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


def _junit_tree(trace: mn.Trace, failing: tuple[str, ...]) -> str:
    """JUnit XML as one ElementTree (how it was written before it streamed): the reference
    the streamed text must equal."""
    import xml.etree.ElementTree as ET

    from mcp_notebook.protocol.rules import RULES
    from mcp_notebook.report_formats import (
        _capture_versions,
        _display_paths,
        _finding_text,
        findings,
    )

    found = findings(trace)
    paths = _display_paths(trace)
    per_file: dict[str, set[str]] = {p: set() for p in paths.values()}
    for file, versions in _capture_versions(trace, paths).items():
        per_file.setdefault(file, set()).update(versions)
    for f in found:
        per_file.setdefault(f.file, set())
    root = ET.Element("testsuites", name="mcp-notebook check")
    total = total_failures = 0
    for file in per_file:
        suite = ET.SubElement(root, "testsuite", name=file)
        failures = skipped = 0
        for rule in RULES:
            case = ET.SubElement(suite, "testcase", name=rule.code,
                                 classname=f"mcp-notebook.{rule.topic}")
            hits = [f for f in found if f.file == file and f.rule == rule.code]
            versions = per_file[file] - {""}
            if not hits and versions and not versions & set(rule.versions):
                ET.SubElement(case, "skipped",
                              message=f"applies to {', '.join(rule.versions)} only")
                skipped += 1
                continue
            failed = [f for f in hits if f.severity in failing]
            for f in failed:
                ET.SubElement(case, "failure", type=f.severity,
                              message=f.message).text = _finding_text(f)
            failures += bool(failed)
            rest = [f for f in hits if f.severity not in failing]
            if rest:
                ET.SubElement(case, "system-out").text = "\n\n".join(
                    f"{f.severity}: {f.message}\n{_finding_text(f)}" for f in rest)
        for key, value in (("tests", len(RULES)), ("failures", failures), ("errors", 0),
                           ("skipped", skipped)):
            suite.set(key, str(value))
        total += len(RULES)
        total_failures += failures
    for key, value in (("tests", total), ("failures", total_failures), ("errors", 0)):
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


class _Writes(list):  # type: ignore[type-arg]
    def write(self, text: str) -> int:
        self.append(text)
        return len(text)


@pytest.mark.parametrize("fail_on", ["error", "warning", "info"])
def test_junit_written_element_by_element_is_the_tree_of_every_finding(
        fail_on: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_notebook.protocol.rules import RULES
    from mcp_notebook.report_formats import SEVERITIES, _write_junit

    monkeypatch.chdir(ROOT)
    trace = mn.load([str(p.relative_to(ROOT)) for p in CAPTURES])
    failing = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
    out = _Writes()
    _write_junit(trace, out, failing, chunk=1)
    # one write an element or so, not one text: nothing holds the document whole
    assert len(out) > len(RULES) * len(CAPTURES)
    assert "".join(out) == _junit_tree(trace, failing)


def test_junit_of_many_findings_of_a_rule_in_one_case(tmp_path: Path) -> None:
    """Many findings of one rule and file, failures and below fail_on: each failure its
    element, those below joined in one system-out, as the tree has them."""
    from mcp_notebook.report_formats import _write_junit
    from tests.helpers import INIT, ok, req, tap

    rows = INIT + [r for k in range(2, 9) for r in (
        ("c2s", req(k, "tools/list")), ("s2c", ok(k, {"tools": []})),
        ("s2c", ok(k, {"tools": []})))] + [("c2s", req(k, "ping")) for k in range(90, 95)]
    trace = mn.load(tap(tmp_path / "many.jsonl", rows))
    counts = trace.violations.groupby("severity", observed=True)["rule"].value_counts()
    assert counts.min() > 3 and len(counts) == 2  # errors of one rule, warnings of another
    for failing in (("error",), ("error", "warning"), ("error", "warning", "info")):
        out = _Writes()
        _write_junit(trace, out, failing, chunk=2)
        assert "".join(out) == _junit_tree(trace, failing)
