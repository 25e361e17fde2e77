"""Timeline.zoom: a window set in the trace's own terms (timestamps), not axis seconds."""

import pandas as pd
import pytest

import mcp_notebook as mn


def test_zoom_sets_the_window_from_timestamps():
    t = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
    tl = mn.timeline(t)
    start = t.frames["ts"].dropna().iloc[5]
    assert tl.zoom(start, start + pd.Timedelta("10ms")) is tl
    lo, hi = tl.window
    assert abs((hi - lo) - 0.010) < 1e-9
    assert abs(lo - (start - tl.prepared.origin).total_seconds()) < 1e-9
    with pytest.raises(ValueError, match="end after its start"):
        tl.zoom(start, start)
