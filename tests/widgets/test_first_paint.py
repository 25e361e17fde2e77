"""The explorer's first paint on big traces: the cheap joins give the same tables, what is
left for after the paint is computed on the kernel's loop and pushed, and the first payload
stays small (issue 20, issue 18 target 5)."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tracekit import big_trace

import mcp_notebook as mn
from mcp_notebook.widgets import explore
from mcp_notebook.widgets.aggregate import time_axis
from mcp_notebook.widgets.explorer import START_AFTER
from mcp_notebook.widgets.frametable import frame_table

timeline_mod = importlib.import_module("mcp_notebook.widgets.timeline")
DATA = Path(__file__).resolve().parents[2] / "data"
TRACES = ["broken-duplicate-response.jsonl", "demo-stdio.jsonl",
          "everything-stdio-progress-cancel.jsonl", "everything-stdio-server-requests.jsonl"]


def pair_facts_by_loop(t) -> pd.DataFrame:
    """outcome, latency, pair_seq and method per frame, one pair row at a time (the oracle):
    a request takes its pair's facts unless the pair is an orphan or duplicate; a response
    takes its pair's, the real pair winning over an orphan or duplicate one; a response
    without a method takes its request's."""
    f, p = t.frames, t.pairs
    out = {int(s): {"outcome": None, "latency": pd.NaT, "pair_seq": -1, "method": m}
           for s, m in zip(f["seq"], f["method"].astype(object), strict=True)}
    rows = list(p.itertuples(index=False))
    extra = [r for r in rows if r.outcome in ("duplicate", "orphan")]
    real = [r for r in rows if r.outcome not in ("duplicate", "orphan")]
    for r in extra + real:
        if pd.notna(r.response_seq):
            o = out[int(r.response_seq)]
            o.update(outcome=r.outcome, latency=r.latency,
                     pair_seq=-1 if pd.isna(r.request_seq) else int(r.request_seq))
            if pd.isna(o["method"]) and pd.notna(r.method):
                o["method"] = r.method
    for r in real:
        if pd.notna(r.request_seq):
            out[int(r.request_seq)].update(
                outcome=r.outcome, latency=r.latency,
                pair_seq=-1 if pd.isna(r.response_seq) else int(r.response_seq))
    return pd.DataFrame.from_dict(out, orient="index")


def plain(values) -> list:
    return [None if not isinstance(x, str) and pd.isna(x) else x
            for x in pd.Series(values).astype(object)]


@pytest.mark.parametrize("name", TRACES)
def test_frame_table_join_equals_a_row_by_row_join(name):
    t = mn.load(DATA / name)
    got = frame_table(t)
    want = pair_facts_by_loop(t)
    for col in ("outcome", "latency", "pair_seq", "method"):
        assert plain(got[col]) == plain(want[col]), col
    flagged = set(pd.to_numeric(t.violations["seq"], errors="coerce").dropna().astype(int))
    assert set(got.loc[got["has_violation"], "seq"]) == flagged


def test_time_axis_fills_unknown_times_in_capture_order():
    t = mn.load(DATA / "demo-stdio.jsonl")
    f = t.frames.copy()
    ts = f["ts"].copy()
    ts.iloc[[0, 1, 5, 6, len(f) - 1]] = pd.NaT  # unknown at the start, inside, at the end
    f["ts"] = ts
    x, axis, origin = time_axis(f)
    want = (ts - ts.min()).dt.total_seconds().ffill().bfill().to_numpy()
    assert axis == "time" and origin == ts.min()
    np.testing.assert_allclose(x, want, rtol=0, atol=1e-9)
    assert x[0] == x[2] and x[5] == x[4] and x[-1] == x[-2]


def test_a_big_explorer_draws_first_and_pushes_the_rest_after_the_cell():
    t = mn.load(DATA / "demo-stdio.jsonl")
    plain = explore(t)
    seen = {}

    async def cell():
        ex = explore(t, defer=True)  # as above DEFER_ABOVE frames
        seen["first"] = (ex.pending, ex.histograms.pending, "computing" in ex.summary.value,
                         "mn-computing" in ex._dom_classes)
        seen["first_svg"] = ex.histograms.svg
        await asyncio.sleep(0.2)
        seen["before_page"] = ex.pending  # they wait for the page's first message
        ex.timeline.width = 900  # the page reports its width: it has drawn
        await asyncio.sleep(0.3)  # the kernel's loop runs the steps after the cell
        return ex

    ex = asyncio.run(cell())
    assert seen["first"] == (True, True, True, True) and seen["before_page"]
    assert "computing the latency histograms" in seen["first_svg"]
    assert not ex.pending and "mn-computing" not in ex._dom_classes
    assert ex.summary.value == plain.summary.value and "computing" not in ex.summary.value
    assert ex.histograms.svg == plain.histograms.svg


def test_finish_computes_what_was_left_at_once():
    t = mn.load(DATA / "demo-stdio.jsonl")

    async def cell():
        ex = explore(t, defer=True)
        ex.finish()  # in the same cell: nothing left for later
        return ex, ex.pending, ex.histograms.pending

    ex, pending, hist_pending = asyncio.run(cell())
    assert not pending and not hist_pending and "computing" not in ex.summary.value


def test_violations_list_sends_a_first_page_and_each_spec_once():
    t = mn.load(DATA / "broken-duplicate-response.jsonl")
    ex = explore(t)
    v = ex.violations
    assert v.total == len(t.violations)
    assert all("spec" not in it for it in v.items)
    assert set(v.specs) <= {it["rule"] for it in v.items}
    spec_of = dict(zip(t.violations["rule"], t.violations["spec"], strict=True))
    assert all(v.specs[r] == spec_of[r] for r in v.specs)
    v.limit = 1
    v.items = v.items[:1]
    v.show_more()
    assert len(v.items) == min(v.total, 1 + v.step)


def test_timeline_view_travels_packed_and_smaller():
    t = big_trace(3000)
    tl = timeline_mod.Timeline(t, max_items=500)
    assert tl.view["mode"] == "bins"
    assert timeline_mod.unpack(tl.packed) == json.loads(json.dumps(tl.view))
    assert tl.last_payload_bytes * 2 < tl.last_view_json_bytes
    assert "view" not in tl.keys and "packed" in tl.keys  # only the packed bytes are synced
    tl.window = [tl.window[0], (tl.window[0] + tl.window[1]) / 2]
    assert timeline_mod.unpack(tl.packed)["window"] == tl.view["window"]


def test_pack_writes_no_nan_into_json():
    data = timeline_mod.pack({"extent": [0.0, float("nan")], "x": float("inf")})
    assert timeline_mod.unpack(data) == {"extent": [0.0, None], "x": None}


def test_a_range_under_a_long_request_selects_that_request():
    """The demo's initialize is in flight from +0.002 s to +0.653 s and nothing else happens
    then: a range inside it shows that request (issue 20: it said "0 of 60 frames")."""
    t = mn.load(DATA / "demo-stdio.jsonl")
    ex = explore(t)
    ex.timeline.brush = [0.1, 0.4]
    shown = ex.inspector.filtered
    assert shown["seq"].tolist() == [1, 2]
    assert shown["method"].astype(str).tolist() == ["initialize", "initialize"]
    assert "<b>2</b> of 60 frames" in ex.inspector._status.value
    ex.timeline.brush = []
    assert len(ex.inspector.filtered) == 60


def test_without_a_page_the_steps_start_anyway():
    t = mn.load(DATA / "demo-stdio.jsonl")

    async def cell():
        ex = explore(t, defer=True)
        await asyncio.sleep(START_AFTER + 0.5)  # nobody reports a width
        return ex

    ex = asyncio.run(cell())
    assert not ex.pending and "computing" not in ex.summary.value
