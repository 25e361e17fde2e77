"""Timeline geometry and the visible-window payload (no kernel, no browser)."""

import json

import numpy as np
import pandas as pd
import pytest
from tracekit import T0, big_trace, make_trace, note, req, res, sample_trace

from mcp_notebook.widgets.aggregate import (
    OUTCOMES,
    TICK_KINDS,
    positions,
    prepare,
    time_axis,
)
from mcp_notebook.widgets.viewport import inflight_max, view


@pytest.fixture(scope="module")
def prep():
    return prepare(sample_trace())


def spans_by_seq(p):
    return {int(s): i for i, s in enumerate(p.span_seq)}


def test_lanes_by_direction(prep):
    assert prep.lanes == ["client → server", "server → client", "stderr / log"]
    assert prep.axis == "time"


@pytest.mark.parametrize("seq, outcome, lane, t0, t1, is_open", [
    (0, "result", 0, 0.0, 0.01, False),
    (4, "tool_error", 0, 0.15, 0.65, False),
    (9, "error", 0, 0.8, 0.82, False),
    (11, "unanswered", 0, 0.9, 1.5, True),     # open: drawn to the end of the trace
    (12, "result", 1, 1.0, 1.2, False),        # server-initiated request: server lane
    (14, "cancelled", 0, 1.3, 1.4, False),     # ends at its notifications/cancelled
])
def test_spans(prep, seq, outcome, lane, t0, t1, is_open):
    i = spans_by_seq(prep)[seq]
    assert OUTCOMES[prep.span_outcome[i]] == outcome
    assert prep.span_lane[i] == lane
    assert prep.span_t0[i] == pytest.approx(t0, abs=1e-6)
    assert prep.span_t1[i] == pytest.approx(t1, abs=1e-6)
    assert bool(prep.span_open[i]) is is_open


@pytest.mark.parametrize("seq, kind, lane", [
    (2, "notification", 0), (6, "notification", 1), (8, "stderr", 2),
    (15, "notification", 0), (16, "orphan", 0),  # orphan sits in the would-be requester's lane
])
def test_ticks(prep, seq, kind, lane):
    i = list(prep.tick_seq).index(seq)
    assert TICK_KINDS[prep.tick_kind[i]] == kind
    assert prep.tick_lane[i] == lane


def test_every_frame_is_drawn_once(prep):
    drawn = list(prep.span_seq) + [s for s in prep.span_rseq if s >= 0] + list(prep.tick_seq)
    assert sorted(drawn) == list(range(prep.n_frames))


def test_violation_marked_on_its_frame_lane(prep):
    assert list(prep.viol_seq) == [16]
    assert list(prep.viol_lane) == [0]
    assert prep.viol_t[0] == pytest.approx(1.5)


def test_lanes_by_method():
    p = prepare(sample_trace(), "method")
    assert p.lanes[0] == "tools/call"  # most frequent first
    assert p.lanes[-1] == "stderr / log / no method"
    i = spans_by_seq(p)[4]
    assert p.lanes[p.span_lane[i]] == "tools/call"
    with pytest.raises(ValueError, match="lane_by"):
        prepare(sample_trace(), "colour")


def test_time_axis_fills_unknown_times_and_falls_back_to_seq():
    t = make_trace([(None, "c2s", req(1, "ping")), (T0 + 1, "s2c", res(1)),
                    (None, "c2s", note("n")), (T0 + 3, "c2s", note("n"))])
    x, axis, origin = time_axis(t.frames)
    assert axis == "time" and origin == pd.Timestamp(T0 + 1, unit="s", tz="UTC")
    assert x.tolist() == [0.0, 0.0, 0.0, 2.0]
    t2 = make_trace([(None, "c2s", req(1, "ping")), (None, "s2c", res(1))])
    x2, axis2, origin2 = time_axis(t2.frames)
    assert axis2 == "seq" and origin2 is None and x2.tolist() == [0.0, 1.0]
    assert prepare(t2).span_t1.tolist() == [1.0]


def test_positions_handles_missing_and_nan():
    assert positions(np.array([3, 5, 9]), np.array([5, np.nan, 4, 9, 10])).tolist() == \
        [1, -1, -1, 2, -1]


@pytest.mark.parametrize("events, edges, expected", [
    # starts at 0 and 1, ends at 2 and 3: at most 2 in flight in [0,2)
    (([0, 1, 2, 3], [1, 2, 1, 0]), [0, 2, 4], [2, 1]),
    # an empty bin carries the count in flight into it
    (([0, 5], [1, 0]), [0, 1, 2, 3, 6], [1, 1, 1, 1]),
    # before any event: nothing in flight
    (([10], [1]), [0, 5, 11], [0, 1]),
    (([], []), [0, 1], [0]),
])
def test_inflight_max(events, edges, expected):
    t, c = (np.asarray(a, dtype=float) for a in events)
    assert inflight_max(t, c.astype(np.int64), np.asarray(edges, float)).tolist() == expected


def test_view_items_carry_every_visible_item(prep):
    v = view(prep)
    assert v["mode"] == "items"
    assert sorted(v["spans"]["seq"]) == [0, 3, 4, 9, 11, 12, 14]
    assert v["methods"][v["spans"]["method"][v["spans"]["seq"].index(4)]] == "tools/call"
    assert max(v["inflight"]["max"]) == 2
    assert "showing all 7 requests" in v["note"]
    json.dumps(v)  # plain JSON


def test_view_window_cuts(prep):
    v = view(prep, 0.79, 0.83)
    assert v["spans"]["seq"] == [4, 9] or v["spans"]["seq"] == [9]
    assert 9 in v["spans"]["seq"] and 0 not in v["spans"]["seq"]
    assert v["ticks"]["seq"] == []


def test_view_bins_when_dense():
    t = big_trace(3000)
    p = prepare(t)
    v = view(p, width=800, max_items=1000)
    assert v["mode"] == "bins" and v["bins"]["n"] == 400
    assert "as 400 bins per lane; zoom in" in v["note"]

    def total(rows, nb):
        s = 0
        for r in rows:
            s += sum(r["counts"]) if "counts" in r else sum(r["n"])
        return s

    assert total(v["bins"]["spans"], 400) == 3000
    assert total(v["bins"]["ticks"], 400) == 600
    errors = [r for r in v["bins"]["spans"] if OUTCOMES[r["cat"]] == "error"]
    assert total(errors, 400) == len(range(0, 3000, 17))
    # zoomed in far enough, the same trace sends items again
    lo = float(p.span_t0[100])
    z = view(p, lo, lo + 0.5, width=800, max_items=1000)
    assert z["mode"] == "items" and 0 < len(z["spans"]["seq"]) < 200


def test_empty_trace():
    t = make_trace([])
    v = view(prepare(t))
    assert v["mode"] == "items" and v["spans"]["seq"] == [] and v["lanes"] == []
