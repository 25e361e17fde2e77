"""The view of a collection: pure renderers (no kernel) and the widget's wiring."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
import traitlets
from tracekit import FIXTURES, no_live_markup

import mcp_notebook as mn
from mcp_notebook.collection import bucket_labels
from mcp_notebook.widgets import fleet
from mcp_notebook.widgets.fleetrender import (
    TABLE,
    fleet_html,
    fleet_text,
    fmt_bound,
    fmt_duration,
    histogram_svg,
    histograms_html,
    session_query,
    session_rows,
    sessions_html,
    sort_order,
)

DATA = Path(__file__).resolve().parents[2] / "data"
SVG = "{http://www.w3.org/2000/svg}"
ODD = 'odd*"<b>x</b>'  # a wildcard, a quote and markup in one session name
OWN_SVG = '<svg xmlns="http://www.w3.org/2000/svg" class="mnfl-hist"'


@pytest.fixture(scope="module")
def data():
    return mn.load_many(DATA)


def _retag(src: Path, session: str, into, shift: float = 0.0) -> None:
    for line in src.read_text().splitlines():
        rec = json.loads(line)
        rec["session"], rec["ts"] = session, rec["ts"] + shift
        into.write(json.dumps(rec) + "\n")


@pytest.fixture
def hostile(tmp_path):
    """The hostile capture beside one file of two sessions (one named ``ODD``)."""
    two = tmp_path / "two-sessions.tap.jsonl"
    with open(two, "w") as f:
        _retag(FIXTURES / "sample.tap.jsonl", "plain", f)
        _retag(FIXTURES / "sample.tap.jsonl", ODD, f, shift=10.0)
    evil = tmp_path / "<img src=x onerror=alert(1)>.tap.jsonl"
    evil.write_bytes((FIXTURES / "hostile.tap.jsonl").read_bytes())
    return mn.load_many([two, evil])


def _rows_as_table(rows):
    return pd.DataFrame([r[1:] for r in rows], columns=[c for _, c in TABLE])


# -- pure renderers ----------------------------------------------------------------------

def test_table_rows_are_the_sessions_table(data):
    s = data.sessions
    rows = session_rows(s)
    assert [int(r[0]) for r in rows] == list(range(len(s)))
    shown = _rows_as_table(rows)
    for col in ("capture", "session", "server_name", "server_version", "protocol_version",
                "transport"):
        assert shown[col].tolist() == s[col].astype(str).tolist()
    for col in ("frames", "requests", "errors", "tool_errors", "violations_error",
                "violations_warning", "violations_info"):
        assert shown[col].str.replace(",", "").astype(int).tolist() == s[col].tolist()
    assert shown["duration"].tolist() == [fmt_duration(d) for d in s["duration"]]


def test_sorting_orders_by_values_not_text(data):
    s = data.sessions
    order = sort_order(s, "frames", ascending=False)
    assert s["frames"].iloc[order].tolist() == sorted(s["frames"], reverse=True)
    by_duration = sort_order(s, "duration")
    assert s["duration"].iloc[by_duration].is_monotonic_increasing
    assert [r[1] for r in session_rows(s, by_duration)] == s["capture"].iloc[
        by_duration].tolist()
    assert sort_order(s, None) == list(range(len(s)))


@pytest.mark.parametrize("td, text", [
    (pd.Timedelta(microseconds=420), "420 µs"), (pd.Timedelta(milliseconds=165), "165 ms"),
    (pd.Timedelta(seconds=4.73), "4.73 s"), (pd.Timedelta(seconds=125), "2 min 5 s"),
    (pd.Timedelta(hours=3, minutes=7), "3 h 7 min"), (pd.NaT, ""),
])
def test_durations_read_in_units(td, text):
    assert fmt_duration(td) == text


def test_bucket_bounds_read_in_units():
    assert [fmt_bound(b) for b in bucket_labels()] == [
        "10 ms", "20 ms", "50 ms", "100 ms", "200 ms", "500 ms", "1 s", "2 s", "5 s",
        "10 s", "30 s", "1 min", "2 min", "5 min", "∞"]


def _bars(svg: str):
    root = ET.fromstring(svg)
    return [(r.get("data-le"), int(r.get("data-count")), float(r.get("height")))
            for r in root.iter(f"{SVG}rect")]


def test_histogram_bars_are_the_buckets(data):
    hist = data.latency_histograms("method")
    labels = bucket_labels()
    for method, rec in hist.iterrows():
        bars = _bars(histogram_svg([rec[b] for b in labels], labels, title=method))
        assert [le for le, _, _ in bars] == labels
        assert [n for _, n, _ in bars] == [int(rec[b]) for b in labels]
        assert sum(n for _, n, _ in bars) == rec["count"]
        tallest = max(bars, key=lambda b: b[1])
        assert tallest[2] == max(h for _, _, h in bars) > 0
        assert all(h == 0 for _, n, h in bars if n == 0)


def test_histogram_axis_is_labelled_in_readable_units():
    svg = histogram_svg([3] + [0] * 13 + [1])
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert {"10 ms", "50 ms", "1 s", "30 s", "> 5 min", "3", "0"} <= set(texts)
    assert any("latency" in (t or "") for t in texts)
    with pytest.raises(ValueError):
        histogram_svg([1, 2])


def test_one_histogram_per_method(data):
    hist = data.latency_histograms("method")
    out = histograms_html(hist)
    root = ET.fromstring(f"<div>{out}</div>")
    cells = [d for d in root.iter("div") if d.get("data-group") is not None]
    assert [d.get("data-group") for d in cells] == list(hist.index)


def test_hostile_names_are_escaped(hostile):
    s = hostile.sessions
    assert ODD in set(s["session"]) and (s["server_name"].str.contains("<img")).any()
    hist = hostile.latency_histograms("method")
    for out in (sessions_html(s), fleet_html(hostile), histograms_html(hist)):
        # the only live tag is each histogram's own svg root
        assert out.count("<svg") == out.count(OWN_SVG) == out.count("</svg>")
        no_live_markup(out.replace(OWN_SVG, "<figure"))
    out = fleet_html(hostile)
    assert "&lt;img src=x onerror=alert(1)&gt;.tap.jsonl" in out  # the capture's name
    assert "evil&lt;script&gt;" in out and "odd*&quot;&lt;b&gt;x&lt;/b&gt;" in out
    ET.fromstring(histogram_svg([1] * 15, title='"><script>alert(1)</script>'))  # well formed


def test_static_fallback_has_text_and_a_picture(data):
    bundle = data._repr_mimebundle_()
    assert bundle["text/plain"] == fleet_text(data)
    assert "15 capture(s), 15 session(s), 150 requests" in bundle["text/plain"]
    html = bundle["text/html"]
    assert html.count("<svg") == len(data.latency_histograms("method"))
    assert all(name in html for name in data.sessions["capture"])


def test_session_query_keeps_one_session_exactly():
    assert session_query("demo") == 'session:"demo"'
    assert session_query('a"b\\c') == 'session:"a\\"b\\\\c"'
    assert session_query(None) == ""


# -- the widget ---------------------------------------------------------------------------

def test_clicking_a_row_opens_that_session_in_the_explorer(data):
    v = data.view()
    assert v.explorer is None and len(v.table.rows) == len(data.sessions)
    s = data.sessions
    pos = int(s.index[s["capture"] == "demo-stdio.jsonl"][0])
    v.table.selected_row = pos  # what a click on the row sends
    assert v.selected == pos
    ex = v.explorer
    assert ex is not None and v.detail.children == (ex,)
    assert [Path(p).name for p in ex.trace.paths] == ["demo-stdio.jsonl"]
    shown = ex.inspector.filtered
    assert len(shown) == s.loc[pos, "frames"]
    assert set(shown["session"].astype(object)) == {s.loc[pos, "session"]}
    v.table.selected_row = None
    assert v.explorer is None and v.detail.children == ()
    with pytest.raises(traitlets.TraitError):
        v.selected = len(s)


def test_a_click_on_a_heading_sorts_the_rows(data):
    v = data.view()
    v.table.sort_by, v.table.ascending = "requests", False  # what a click on it sends
    got = [int(r[0]) for r in v.table.rows]
    assert got == sort_order(data.sessions, "requests", ascending=False)
    assert data.sessions["requests"].iloc[got].is_monotonic_decreasing


def test_a_capture_of_two_sessions_shows_only_the_picked_one(hostile):
    v = hostile.view()
    s = hostile.sessions
    for name in ("plain", ODD):  # ODD holds '*', which the filter language reads as a wildcard
        ex = v.select("two-sessions.tap.jsonl", name)
        pos = int(s.index[s["session"] == name][0])
        assert v.selected == pos
        shown = ex.inspector.filtered
        assert set(shown["session"].astype(object)) == {name}
        assert len(shown) == s.loc[pos, "frames"] == 15
    assert len(v._traces) == 1  # the capture was loaded once
    no_live_markup(v.status.value)
    no_live_markup(v.headline.value)


def test_max_rows_bounds_what_reaches_the_browser(data):
    v = fleet(data, max_rows=5)
    assert len(v.table.rows) == 5 and "showing 5 of 15 sessions" in v.table.note
    v.sort_by, v.ascending = "frames", False
    assert [int(r[0]) for r in v.table.rows] == sort_order(data.sessions, "frames", False)[:5]


def test_the_widget_bundle_carries_the_static_picture(data):
    bundle = data.view()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == fleet_text(data)
    assert bundle["text/html"].count("<svg") == len(data.latency_histograms("method"))


def test_nbconvert_html_shows_the_picture_without_widget_state(tmp_path):
    """Run in a real kernel, saved without widget state (Lab's default), exported to HTML:
    the page has the sessions table and the histograms of both ``c`` and ``c.view()``."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook()
    load = f"import mcp_notebook as mn\nc = mn.load_many({str(DATA)!r})\nc"
    nb.cells = [nbformat.v4.new_code_cell(load), nbformat.v4.new_code_cell("c.view()")]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={
        "metadata": {"path": str(tmp_path)}}).execute()
    nb.metadata.pop("widgets", None)
    body, _ = HTMLExporter().from_notebook_node(nb)
    n_methods = len(mn.load_many(DATA).latency_histograms("method"))
    # nbconvert re-serialises the HTML (attributes sorted), so count by the class
    assert len(re.findall(r'<svg [^>]*class="mnfl-hist"', body)) == 2 * n_methods
    assert body.count("everything-stdio-progress-cancel.jsonl") >= 2
    assert "15 capture(s), 15 session(s), 150 requests" in body
