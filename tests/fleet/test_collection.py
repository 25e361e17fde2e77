"""mn.load_many on the bundled traces and the peer captures.

The acceptance check: the sessions table, summed per capture, gives each trace's own
``summary()``; the README's counts (taken by scripts/count_trace.py, which shares no code
with the library) are checked too, and latencies are re-paired here from the raw JSON.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.collection import OTEL_BUCKETS

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PEERS = ROOT / "tests" / "fixtures" / "peers"
TRACES = sorted(p for p in DATA.iterdir() if p.suffix in (".jsonl", ".har", ".gz"))  # .gz: a large one
SUMMED = ["frames", "requests", "notifications", "results", "errors", "tool_errors", "invalid",
          "pairs", "unanswered", "cancelled", "orphans", "duplicates"]


@pytest.fixture(scope="module")
def data():
    return mn.load_many(DATA)


def _readme_counts() -> dict[str, dict[str, int]]:
    text = (DATA / "README.md").read_text()
    lines = [ln for ln in text.splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        m = re.fullmatch(r"`(.+)`", cells[0])
        if m:
            out[m.group(1)] = dict(zip(head[1:], map(int, cells[1:]), strict=True))
    return out


def test_sessions_equal_each_traces_summary(data):
    assert data.captures == [p.name for p in TRACES]
    # README.md is not a capture: the folder passes over it, and says so
    assert data.skipped["capture"].map(os.path.basename).tolist() == ["README.md"]
    assert data.skipped["reason"].str.startswith("not a capture by its name").all()
    by = data.sessions.groupby("capture")
    for path in TRACES:
        s = mn.load(path).summary()
        got = by.get_group(path.name)
        assert len(got) == s["sessions"]
        for k in SUMMED:
            assert int(got[k].sum()) == s[k], (path.name, k)
        sev = s["violations"]["by_severity"]
        for level in ("error", "warning", "info"):
            assert int(got[f"violations_{level}"].sum()) == sev.get(level, 0)
        assert set(got["protocol_version"]) == {s["protocol_version"]}


def test_sessions_equal_the_independent_counts(data):
    readme = _readme_counts()
    assert set(readme) == {p.name for p in TRACES}
    got = data.sessions.groupby("capture")[SUMMED].sum()
    for name, counts in readme.items():
        for k in SUMMED:
            assert got.loc[name, k] == counts[k], (name, k)


def test_tables_concatenated_with_a_capture_key(data):
    for name, attr in (("frames", "frames"), ("pairs", "pairs"), ("violations", "violations")):
        table = getattr(data, attr)
        assert table.columns[0] == "capture"
        for path in TRACES:
            own = getattr(mn.load(path), attr)
            part = table[table["capture"] == path.name].drop(columns="capture")
            assert len(part) == len(own), (name, path.name)
    t = mn.load(DATA / "demo-stdio.jsonl")
    part = data.frames[data.frames["capture"] == "demo-stdio.jsonl"]
    assert part["raw"].tolist() == t.frames["raw"].tolist()
    assert part["method"].dtype == "category" and data.pairs["outcome"].dtype == "category"


def _init(path: Path) -> tuple[dict, dict]:
    """clientInfo and the initialize result of a tap file, read here with json."""
    msgs = [json.loads(json.loads(ln)["raw"]) for ln in path.read_text().splitlines()
            if json.loads(ln)["dir"] in ("c2s", "s2c")]
    req = next(m for m in msgs if m.get("method") == "initialize")
    res = next(m for m in msgs if m.get("id") == req["id"] and "result" in m)
    return req["params"]["clientInfo"], res["result"]


def test_session_identity_columns(data):
    s = data.sessions.set_index("capture")
    for name in ("memory-stdio.jsonl", "filesystem-stdio.jsonl", "demo-stdio.jsonl"):
        client, result = _init(DATA / name)
        assert s.loc[name, "client_name"] == client["name"]
        assert s.loc[name, "server_name"] == result["serverInfo"]["name"]
        assert s.loc[name, "server_version"] == result["serverInfo"]["version"]
        assert s.loc[name, "protocol_version"] == result["protocolVersion"]
        assert s.loc[name, "transport"] == "stdio"
    assert s.loc["everything-http.har", "transport"] == "http"
    row = s.loc["memory-stdio.jsonl"]
    stamps = [json.loads(ln)["ts"] for ln in (DATA / "memory-stdio.jsonl").read_text().splitlines()]
    assert row["duration"].total_seconds() == pytest.approx(max(stamps) - min(stamps), abs=1e-5)


def _latencies(path: Path) -> dict[str, list[float]]:
    """Request -> response seconds per method, paired here by (direction, id)."""
    sent, out = {}, {}
    for ln in path.read_text().splitlines():
        rec = json.loads(ln)
        if rec["dir"] not in ("c2s", "s2c"):
            continue
        m = json.loads(rec["raw"])
        if "method" in m and "id" in m:
            sent[(rec["dir"], json.dumps(m["id"]))] = (m["method"], rec["ts"])
        elif "id" in m and ("result" in m or "error" in m):
            other = "c2s" if rec["dir"] == "s2c" else "s2c"
            method, ts = sent.pop((other, json.dumps(m["id"])))
            out.setdefault(method, []).append(rec["ts"] - ts)
    return out


def _answered_server_requests(path: Path) -> int:
    """Requests the server sent that the client answered, counted here from the raw JSON."""
    asked, n = set(), 0
    for ln in path.read_text().splitlines():
        rec = json.loads(ln)
        if rec["dir"] not in ("c2s", "s2c"):
            continue
        m = json.loads(rec["raw"])
        key = json.dumps(m.get("id"))
        if rec["dir"] == "s2c" and "method" in m and "id" in m:
            asked.add(key)
        elif rec["dir"] == "c2s" and "method" not in m and key in asked:
            asked.discard(key)
            n += 1
    return n


def test_latency_histograms_on_the_otel_buckets():
    files = [DATA / n for n in ("everything-stdio-basics.jsonl", "memory-stdio.jsonl",
                                "filesystem-stdio.jsonl", "demo-stdio.jsonl")]
    c = mn.load_many(files)
    h = c.latency_histograms()
    assert list(h.columns[2:]) == ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5",
                                   "10", "30", "60", "120", "300", "+Inf"]
    expected: dict[str, list[int]] = {}
    for f in files:
        for method, values in _latencies(f).items():
            counts = expected.setdefault(method, [0] * (len(OTEL_BUCKETS) + 1))
            for v in values:
                counts[next((i for i, b in enumerate(OTEL_BUCKETS) if v <= b),
                            len(OTEL_BUCKETS))] += 1
    assert set(h.index) == set(expected)
    for method, counts in expected.items():
        assert h.loc[method, h.columns[2:]].tolist() == counts, method
        assert h.loc[method, "count"] == sum(counts)
    # client operations (c2s requests) and server ones (s2c: sampling, elicitation...)
    by = c.latency_histograms(by="requester")
    assert set(by.index) <= {"c2s", "s2c"}
    assert by.drop(columns="sum_s").sum().tolist() == h.drop(columns="sum_s").sum().tolist()
    assert by.loc["s2c", "count"] == sum(_answered_server_requests(f) for f in files)
    assert h["count"].sum() == c.sessions["pairs"].sum() + c.sessions["unanswered"].sum() \
        - (c.pairs["latency"].isna() & c.pairs["request_seq"].notna()).sum()


def test_error_rates_by_server_version():
    names = ["everything-stdio-basics.jsonl", "everything-stdio-progress-cancel.jsonl",
             "everything-stdio-server-requests.jsonl", "memory-stdio.jsonl"]
    c = mn.load_many([DATA / n for n in names])
    r = c.error_rates(by="server_version")
    readme = _readme_counts()
    everything = [n for n in names if n.startswith("everything")]
    assert _init(DATA / "memory-stdio.jsonl")[1]["serverInfo"]["version"] == "0.6.3"
    assert r.loc["2.0.0", "errors"] == sum(readme[n]["errors"] for n in everything)
    assert r.loc["2.0.0", "tool_errors"] == sum(readme[n]["tool_errors"] for n in everything)
    assert r.loc["2.0.0", "requests"] == sum(readme[n]["requests"] for n in everything)
    assert r.loc["2.0.0", "answered"] == sum(readme[n]["pairs"] for n in everything)
    assert r.loc["0.6.3", "error_rate"] == 0
    assert r.loc["0.6.3", "tool_error_rate"] == pytest.approx(
        readme["memory-stdio.jsonl"]["tool_errors"] / readme["memory-stdio.jsonl"]["pairs"])
    by_method = c.error_rates(by="method")
    assert by_method["requests"].sum() == r["requests"].sum()


def test_top_rules(data):
    expected: dict[str, set[str]] = {}
    findings: dict[str, int] = {}
    for path in TRACES:
        for rule, n in mn.load(path).summary()["violations"]["by_rule"].items():
            expected.setdefault(rule, set()).add(path.name)
            findings[rule] = findings.get(rule, 0) + n
    top = data.top_rules(n=None)
    assert {k: int(v) for k, v in top["captures"].items()} == {k: len(v) for k, v in expected.items()}
    assert {k: int(v) for k, v in top["findings"].items()} == findings
    assert top["captures"].is_monotonic_decreasing
    assert len(data.top_rules(n=2)) == 2


def test_many_sessions_per_capture_and_what_was_skipped(tmp_path):
    (tmp_path / "broken.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    c = mn.load_many([PEERS, str(PEERS / "no-such-*.jsonl"), tmp_path / "missing.jsonl",
                      tmp_path / "broken.gz"])
    skipped = dict(zip(c.skipped["capture"], c.skipped["reason"], strict=True))
    assert "versions.json" in " ".join(skipped)  # a JSON file of no capture format
    assert any("matches no file" in r for r in skipped.values())
    assert any("no such file" in r for r in skipped.values())
    assert any("broken.gz" in k for k in skipped)
    by = c.sessions.groupby("capture")
    for path in sorted(PEERS.glob("*.jsonl")) + sorted(PEERS.glob("*.har")):
        s = mn.load(path).summary()
        got = by.get_group(path.name)
        assert len(got) == s["sessions"], path.name
        assert {k: int(got[k].sum()) for k in SUMMED} == {k: s[k] for k in SUMMED}, path.name
    inspector = c.sessions[c.sessions["capture"] == "inspector-cli-stdio.jsonl"]
    assert inspector["session"].tolist() == [f"inspector-{i}" for i in range(7)]


def test_globs_and_workers_give_the_same_tables(data):
    c = mn.load_many(str(DATA / "*.jsonl"), workers=2)
    assert c.captures == [p.name for p in TRACES if p.suffix == ".jsonl"]
    mine = data.sessions[data.sessions["capture"].isin(c.captures)].reset_index(drop=True)
    pd.testing.assert_frame_equal(c.sessions, mine)


def test_empty_and_unknown_engine(tmp_path):
    c = mn.load_many(tmp_path)
    assert len(c) == 0 and c.sessions.empty and list(c.sessions.columns)[0] == "capture"
    assert c.latency_histograms().empty and c.top_rules().empty
    with pytest.raises(ValueError):
        mn.load_many(tmp_path, engine="spark")
