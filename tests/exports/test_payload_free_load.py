"""``mn.load`` of boundary files and OTLP/JSON spans: payload-free traces, the same pairs
as the capture they were exported from, and hostile files read without a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from helpers import cli_in_process
from mcp_notebook.boundary import write_boundary
from mcp_notebook.otlp import write_otlp
from mcp_notebook.readers import CaptureError, sniff
from tests.exports.captures import REPRESENTATIVE
from tests.exports.idforms import ids_alike_as_strings

ROOT = Path(__file__).resolve().parents[2]
PAIR_FACTS = ["session", "requester", "id_key", "method", "outcome", "error_code",
              "progress_count"]
PAIR_FACTS_OTLP = ["method", "id_key", "outcome", "error_code", "progress_count"]


def _facts(t: mn.Trace, cols: list[str]) -> pd.DataFrame:
    p = t.pairs
    p = p[p["outcome"] != "duplicate"] if cols is PAIR_FACTS_OTLP else p
    p = p[p["request_seq"].notna()] if cols is PAIR_FACTS_OTLP else p
    p = p.sort_values("t_request", kind="stable") if cols is PAIR_FACTS_OTLP else p
    out = p[cols].astype(object).where(p[cols].notna(), None)
    out["cancelled_by_notification"] = p["cancel_seq"].notna()
    out["latency_ms"] = p["latency"].dt.total_seconds() * 1000
    return out.reset_index(drop=True)


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_boundary_file_loads_to_the_pairs_of_its_capture(path: Path, suffix: str,
                                                           tmp_path: Path) -> None:
    trace = mn.load(path)
    events = write_boundary(trace, tmp_path / f"events{suffix}")
    assert sniff(events) == "boundary"
    free = mn.load(events)
    assert free.payload_free and not trace.payload_free
    assert free.violations.empty
    assert any(n.startswith("payload-free") for n in free.notes)
    # sizes are the capture's, though the frames hold envelopes only
    assert free.boundary()["bytes_in"].tolist() == trace.boundary()["bytes_in"].tolist()
    pd.testing.assert_frame_equal(_facts(free, PAIR_FACTS), _facts(trace, PAIR_FACTS),
                                  check_exact=False, rtol=0, atol=1e-3)
    pd.testing.assert_frame_equal(free.latency_by_method(), trace.latency_by_method(),
                                  check_exact=False, rtol=0, atol=1e-3)
    # the same trace as Trace.from_boundary, and --format names the format
    same = mn.Trace.from_boundary(events)
    pd.testing.assert_frame_equal(free.pairs, same.pairs)
    assert len(mn.load(events, format="boundary").pairs) == len(free.pairs)
    # what a notebook shows runs on it
    assert mn.timeline(free).view["spans"]["method"] == mn.timeline(same).view["spans"]["method"]
    mn.explore(free)
    mn.inspect(free)


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
def test_an_otlp_file_loads_to_the_requests_of_its_capture(path: Path, tmp_path: Path) -> None:
    trace = mn.load(path)
    spans = write_otlp(trace, tmp_path / "spans.json")
    assert sniff(spans) == "otlp"
    free = mn.load(spans)
    assert free.payload_free and free.violations.empty
    pd.testing.assert_frame_equal(_facts(free, PAIR_FACTS_OTLP),
                                  _facts(trace, PAIR_FACTS_OTLP),
                                  check_exact=False, rtol=0, atol=1e-3)
    assert ids_alike_as_strings(free) == ids_alike_as_strings(trace)  # 9 and "9" stay two
    assert (free.latency_by_method()["count"].sort_index().tolist()
            == trace.latency_by_method()["count"].sort_index().tolist())
    mn.timeline(free)
    mn.explore(free)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line's ``main`` in this process (the exit codes through a real process:
    tests/robustness/test_hostile.py, tests/test_cli.py, tests/userpaths)."""
    return cli_in_process(*args, cwd=ROOT)


def test_summary_and_check_of_a_payload_free_file_say_no_rule_ran(tmp_path: Path) -> None:
    from mcp_notebook.protocol.rules import RULES

    trace = mn.load(ROOT / "data" / "broken-duplicate-response.jsonl")
    assert len(trace.violations)  # the capture has findings ...
    events = write_boundary(trace, tmp_path / "events.jsonl")
    out = _cli("summary", str(events))
    assert out.returncode == 0, out.stderr
    assert "payload-free" in out.stdout and f"none of the {len(RULES)} rules ran" in out.stdout
    assert f"{int(trace.summary()['requests'])} requests" in out.stdout
    check = _cli("check", str(events))  # ... which its boundary file cannot show
    assert check.returncode == 0, check.stderr
    assert all(r.code in check.stdout for r in RULES)
    assert check.stdout.strip().splitlines()[-1].startswith("0 finding(s)")
    as_json = json.loads(_cli("check", str(events), "--json").stdout)
    assert as_json["payload_free"] and as_json["rules_not_run"] == [r.code for r in RULES]
    spans = write_otlp(trace, tmp_path / "spans.json")
    summary = json.loads(_cli("summary", str(spans), "--json").stdout)
    assert summary["payload_free"] and summary["requests"] == trace.summary()["requests"]
    # a capture with payloads runs every rule
    assert json.loads(_cli("check", str(ROOT / "data" / "demo-stdio.jsonl"),
                           "--json").stdout)["rules_not_run"] == []


# -- hostile files ------------------------------------------------------------------------------
def _events(tmp_path: Path) -> list[str]:
    events = write_boundary(mn.load(mn.sample_path("demo-stdio")), tmp_path / "ok.jsonl")
    return events.read_text("utf-8").splitlines()


BAD_LINES = [
    ("not JSON", "not JSON"),
    ("[1, 2]", "a JSON list, not an object"),
    ('{"kind": "request", "outcome": "result"}', "neither request_seq nor response_seq"),
    ('{"kind": "frame", "request_seq": 1, "outcome": "result"}', "kind 'frame'"),
    ('{"kind": "request", "request_seq": "9", "outcome": "result"}', "request_seq is a str"),
    ('{"kind": "request", "request_seq": 99, "outcome": "result", "start": "yesterday"}',
     "is not an ISO 8601 time"),
    ('{"kind": "request", "request_seq": 98, "outcome": 5}', "outcome is a int"),
    ('{"kind": "request", "request_seq": 97, "id_key": "{oops", "outcome": "result"}',
     "id_key is not JSON text"),
    ('{"kind": "request", "request_seq": -1, "outcome": "result"}', "a negative seq"),
    ('{"kind": "request", "request_seq": 96, "outcome": "result", "duration_ms": 1e300}',
     "duration_ms is out of range"),
]


@pytest.mark.parametrize(("line", "why"), BAD_LINES, ids=[w for _, w in BAD_LINES])
def test_a_bad_boundary_line_is_an_invalid_row_saying_why(line: str, why: str,
                                                          tmp_path: Path) -> None:
    good = _events(tmp_path)
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([*good[:5], line, *good[5:]]) + "\n", encoding="utf-8")
    t = mn.load(path, format="boundary")
    bad = t.frames[t.frames["kind"] == "invalid"]
    assert len(bad) == 1
    assert why in bad["reason"].iat[0] and bad["source"].iat[0] == "events.jsonl:6"
    assert t.payload_free
    assert len(t.pairs) == len(mn.load(tmp_path / "ok.jsonl").pairs)


def test_a_boundary_file_cut_short_keeps_every_line_before_the_cut(tmp_path: Path) -> None:
    good = _events(tmp_path)
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(good[:10]) + "\n" + good[10][:25], encoding="utf-8")
    t = mn.load(path)
    bad = t.frames[t.frames["kind"] == "invalid"]
    assert bad["source"].tolist() == ["cut.jsonl:11"]
    assert bad["raw"].iat[0] == good[10][:25]  # nothing lost
    assert len(t.boundary()) == 10


def test_a_parquet_file_that_is_not_a_boundary_view_is_refused_saying_so(
        tmp_path: Path) -> None:
    pd.DataFrame({"a": [1, 2]}).to_parquet(tmp_path / "other.parquet")
    with pytest.raises(CaptureError, match="not a boundary view .*no kind, outcome"):
        mn.load(tmp_path / "other.parquet")
    events = write_boundary(mn.load(mn.sample_path("demo-stdio")), tmp_path / "e.parquet")
    (tmp_path / "cut.parquet").write_bytes(events.read_bytes()[:500])
    with pytest.raises(CaptureError, match="a parquet file that cannot be read"):
        mn.load(tmp_path / "cut.parquet")
    out = _cli("summary", str(tmp_path / "cut.parquet"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "cannot be read" in out.stderr


def test_an_otlp_file_cut_short_keeps_the_resource_spans_before_the_cut(
        tmp_path: Path) -> None:
    trace = mn.load(mn.sample_path("everything-http"))
    doc = trace.to_otlp()
    first = doc["resourceSpans"][0]
    doc["resourceSpans"] = [first, first]  # two resources; the file ends inside the second
    text = json.dumps(doc)
    cut = text[: len(text) - 200]
    (tmp_path / "cut.json").write_text(cut, encoding="utf-8")
    t = mn.load(tmp_path / "cut.json")
    assert t.payload_free
    spans = len(first["scopeSpans"][0]["spans"])
    assert len(t.pairs[t.pairs["request_seq"].notna()]) == spans
    bad = t.frames[t.frames["kind"] == "invalid"]
    assert len(bad) == 1 and "the file ends inside this resourceSpans" in bad["reason"].iat[0]


SHAPES = [
    ({"resourceSpans": 5}, "no resourceSpans list"),
    ({"resourceSpans": [7]}, "resourceSpans[0]: not an object"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": ["x"]}]}]}, "not an object"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [
        {"key": "mcp.method.name", "value": {"stringValue": "ping"}}],
        "startTimeUnixNano": "soon", "endTimeUnixNano": "1"}]}]}]}, "no start and end time"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [
        {"key": "mcp.method.name", "value": {"stringValue": "ping"}}],
        "startTimeUnixNano": "5", "endTimeUnixNano": "1"}]}]}]}, "the end not before"),
]


@pytest.mark.parametrize(("doc", "why"), SHAPES, ids=[w for _, w in SHAPES])
def test_an_otlp_document_of_the_wrong_shape_is_an_invalid_row_saying_where(
        doc: dict, why: str, tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    t = mn.load(path, format="otlp")
    bad = t.frames[t.frames["kind"] == "invalid"]
    assert len(bad) == 1 and why in (bad["source"].iat[0] + ": " + bad["reason"].iat[0])
    out = _cli("summary", str(path), "--format", "otlp")
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert "1 invalid rows" in out.stdout


def test_a_span_that_is_not_mcp_is_left_out(tmp_path: Path) -> None:
    doc = mn.load(mn.sample_path("demo-stdio")).to_otlp()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    n = len(spans)
    spans.append({"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "GET /",
                  "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": []})
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    t = mn.load(path)
    assert len(t.pairs[t.pairs["request_seq"].notna()]) == n
    assert not (t.frames["kind"] == "invalid").any()
