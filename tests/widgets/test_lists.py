"""The violations list and the latency histograms, and their links to the table."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.widgets import explore
from mcp_notebook.widgets.filters import apply_filter
from mcp_notebook.widgets.histogram import bucket_query, histograms_svg
from mcp_notebook.widgets.violations import rules_by_seq, violation_rows


def broken():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "data" / "broken-duplicate-response.jsonl"
    return mn.load(path)


def test_rows_are_the_findings_in_seq_order():
    t = broken()
    rows = violation_rows(t.violations)
    assert len(rows) == len(t.violations) > 0
    seqs = [r["seq"] for r in rows if r["seq"] is not None]
    assert seqs == sorted(seqs)
    assert {r["rule"] for r in rows} == set(t.violations["rule"])
    assert rows and all(isinstance(r["message"], str) for r in rows)


def test_click_on_a_finding_selects_its_frame_and_shows_the_related_one():
    t = broken()
    ex = explore(t)
    items = ex.violations.items
    k = next(i for i, it in enumerate(items) if it["related"] is not None)
    ex.violations.picked = k
    it = items[k]
    assert ex.selected_seq == it["seq"] == ex.inspector.selected_seq
    assert f"related frame #{it['related']}" in ex.inspector._pair.value
    # a plain selection afterwards shows the pair again
    ex.selected_seq = 1
    assert "related frame" not in ex.inspector._pair.value


def test_flag_cell_names_the_rules():
    t = broken()
    ex = explore(t)
    by = rules_by_seq(t.violations)
    seq = next(iter(by))
    ex.selected_seq = seq
    row = next(r for r in ex.inspector._grid.rows if r[0] == str(seq))
    assert all(rule in row[9] for rule in by[seq]) and row[9].startswith("⚠")


@pytest.mark.parametrize("method, lo, hi, want", [
    ("tools/call", "0.01", "0.02", "method:tools/call latency>10ms latency<=20ms"),
    ("ping", "0", "0.01", "method:ping latency<=10ms"),
    ("a b", "300", "+Inf", 'method:"a b" latency>300000ms'),
])
def test_bucket_query(method, lo, hi, want):
    assert bucket_query(method, lo, hi) == want


def test_bar_click_filters_the_table_to_that_bucket():
    t = mn.load(mn.sample_path("demo-stdio"))
    ex = explore(t)
    svg = ex.histograms.svg
    answered = t.pairs.loc[t.pairs["latency"].notna(), "method"].nunique()
    assert svg.count('class="mnh-one"') == min(answered, 12)
    ex.histograms.picked = {"method": "tools/call", "lo": "0", "hi": "0.01"}
    assert ex.inspector.query == "method:tools/call latency<=10ms"
    f = ex.inspector.filtered
    lat = f["latency"].dt.total_seconds()
    assert len(f) > 0 and (f["method"] == "tools/call").all() and (lat <= 0.01).all()
    # the same count the histogram drew for that bar
    p = t.pairs[(t.pairs["method"] == "tools/call") & t.pairs["latency"].notna()]
    n_bar = int((p["latency"].dt.total_seconds() <= 0.01).sum())
    one = re.search(r'data-method="tools/call".*?data-count="(\d+)"', svg, re.S)
    assert one and int(one.group(1)) == n_bar
    assert apply_filter(ex.inspector.table, ex.inspector.query).count == len(f)


def test_no_latencies_says_so():
    assert "no answered requests" in histograms_svg(pd.DataFrame({"latency": []}))


def test_every_view_has_a_text_repr():
    """ipywidgets' repr reads the widget's traits: an attribute named like one of its
    methods (``_compare``) broke it, and with it the notebook display."""
    t = broken()
    ex = explore(t)
    ex.violations.picked = 0
    for w in (ex, ex.inspector, ex.violations, ex.histograms, ex.inspector._grid):
        assert type(w).__name__ in repr(w)
