"""Trait wiring of the timeline, inspector and explorer, without a browser."""

from pathlib import Path

import ipywidgets as W
import pytest
from tracekit import FIXTURES, big_trace, no_live_markup

import mcp_notebook as mn
from mcp_notebook.widgets import explore, inspect, timeline


@pytest.fixture
def real():
    return mn.load(FIXTURES / "sample.tap.jsonl")


def test_selecting_a_response_shows_its_request(real):
    ex = explore(real)
    ex.selected_seq = 7  # the tools/call result (a tool error)
    assert ex.timeline.selected_seq == 7 and ex.inspector.selected_seq == 7
    ins = ex.inspector
    assert "response #7" in ins._frame.value and "tools/call" in ins._frame.value
    assert "its request #4" in ins._pair.value
    assert "slow" in ins._pair.value  # the request's params are in the tree
    assert ins._to_pair.description == "go to pair #4" and not ins._to_pair.disabled


def test_click_in_any_view_selects_everywhere(real):
    ex = explore(real)
    ex.timeline.selected_seq = 10  # as a click on the timeline does
    assert ex.selected_seq == 10 and ex.inspector._grid.selected_seq == 10
    assert "its request #9" in ex.inspector._pair.value
    ex.inspector._grid.selected_seq = 0  # as a click on a table row does
    assert ex.selected_seq == 0 and ex.timeline.selected_seq == 0
    assert "its response #1" in ex.inspector._pair.value


@pytest.mark.parametrize("seq, button, target", [
    (4, "_to_pair", 7), (7, "_to_pair", 4), (12, "_to_cancel", 13),
])
def test_jump_buttons(real, seq, button, target):
    ins = inspect(real)
    ins.selected_seq = seq
    getattr(ins, button).click()
    assert ins.selected_seq == target


def test_progress_button_filters_to_the_request_and_its_progress(real):
    ins = inspect(real)
    ins.selected_seq = 4
    assert ins._to_progress.description == "show progress (1)"
    ins._to_progress.click()
    assert ins.query == "seq:4,6"
    assert ins.filtered["seq"].tolist() == [4, 6]


def test_violations_shown_with_spec(real):
    ins = inspect(real)
    ins.selected_seq = 14  # the orphan response
    assert "orphan-response" in ins._viols.value
    assert "mnw-spec" in ins._viols.value


def test_brush_filters_the_inspector(real):
    ex = explore(real)
    ex.timeline.brush = [0.09, 0.31]
    a, b = ex.selected_range
    assert str(a).startswith("2025-06-15 15:06:40.09") and str(b).startswith("2025-06-15 15:06:40.31")
    # the frames in the range, and the response of the request drawn from it (#4's reply,
    # #7, comes after the range: the range shows the span, so it keeps both ends)
    assert ex.inspector.filtered["seq"].tolist() == [3, 4, 5, 6, 7]
    ex.timeline.brush = []
    assert ex.selected_range is None and len(ex.inspector.filtered) == 15


def test_selected_range_from_python_sets_the_brush(real):
    tl = timeline(real)
    tl.selected_range = ("2025-06-15T15:06:40.5Z", "2025-06-15T15:06:41Z")
    assert tl.brush == pytest.approx([0.5, 1.0])
    # #4's span ends in the range (its response is #7): the request comes with it
    assert tl.selected_frames()["seq"].tolist() == [4, 7, 8, 9, 10, 11]


def test_selecting_outside_the_window_pans_to_it():
    t = big_trace(3000)
    tl = timeline(t)
    tl.window = [0.0, 1.0]
    tl.selected_seq = int(t.frames["seq"].iloc[-1])
    lo, hi = tl.window
    assert hi - lo == pytest.approx(1.0) and lo > 1.0
    assert tl.view["window"] == [lo, hi]


def test_lane_switch_and_window_recompute(real):
    tl = timeline(real)
    assert tl.view["lanes"][0] == "client → server"
    tl.lane_by = "method"
    assert tl.view["lanes"][0] == "tools/call"
    tl.window = [0.79, 0.83]
    assert tl.view["spans"]["seq"] == [9]
    assert tl.last_payload_bytes > 0


def test_scrolling_a_large_trace_and_following_the_selection():
    """Only a window of rows travels; scrolling asks for another; a selection made
    elsewhere brings its row into the window."""
    from mcp_notebook.widgets.vtable import WINDOW

    t = big_trace(3000)  # 6,600 frames
    ins = inspect(t)
    assert len(t.frames) == 6600
    g = ins._grid
    assert g.total == 6600 and len(g.rows) == WINDOW < 6600
    g.want = 6600 - 10  # the browser scrolled to the end
    assert g.rows[-1][0] == str(len(t.frames) - 1) and g.start == 6600 - WINDOW
    ins.selected_seq = 1234
    assert g.sel_index == 1234
    assert any(r[0] == "1234" for r in g.rows)
    ins.query = "kind:error"
    assert ins._positions.size == len(range(0, 3000, 17))


def test_filter_errors_are_shown_not_raised(real):
    ins = inspect(real)
    ins.query = "outcome:eror"
    assert "filter error" in ins._status.value and "use one of" in ins._status.value


def _html_values(widget):
    out = []
    stack = [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, W.HTML):
            out.append(w.value)
        stack.extend(getattr(w, "children", ()))
    return out


def test_hostile_capture_is_escaped_everywhere():
    t = mn.load(FIXTURES / "hostile.tap.jsonl")
    ex = explore(t)
    assert len(t.frames) == 10
    for seq in t.frames["seq"]:
        ex.selected_seq = int(seq)
        for value in _html_values(ex):
            no_live_markup(value.split("</style>", 1)[-1])
    ex.selected_seq = 3
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in ex.inspector._frame.value
    # the table and the timeline get plain strings; their JS sets them as text
    ex.inspector.query = ""
    assert any("<script>window.__pwned=4</script>" in r for r in ex.inspector._grid.rows)


SAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "data").glob("*")
                 if p.suffix in (".jsonl", ".har", ".log", ".json"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_bundled_capture_explores(path):
    t = mn.load(path)
    ex = explore(t)
    assert ex.timeline.view["total"]["frames"] == len(t.frames)
    for seq in t.frames["seq"].head(60):
        ex.selected_seq = int(seq)
        for value in _html_values(ex):
            no_live_markup(value.split("</style>", 1)[-1])
    ex.timeline.lane_by = "method"
    ex.inspector.query = "-method:notifications/* has:pair"
    assert "filter error" not in ex.inspector._status.value


def test_free_text_search_over_a_frame_that_is_not_utf8(tmp_path):
    """One frame with bytes that are not UTF-8 (kept as lone surrogates) once made the text
    search raise inside the widget: the status line went on saying "all frames"."""
    capture = tmp_path / "latin1.jsonl"
    capture.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
                        b'{"jsonrpc":"2.0","id":1,"result":{"name":"Jos\xe9"}}\n'
                        b'{"jsonrpc":"2.0","method":"notifications/message",'
                        b'"params":{"data":"hello"}}\n')
    ins = inspect(mn.load(capture))
    ins.query = "HELLO"
    assert ins._positions.tolist() == [2]
    assert "<b>1</b> of 3 frames" in ins._status.value
    ins.query = "jos\udce9"  # the surrogate itself is searchable, as the frame shows it
    assert ins._positions.tolist() == [1]


def test_a_filter_that_fails_says_so_in_the_widget(real, monkeypatch):
    import mcp_notebook.widgets.inspector as inspector_module

    ins = inspect(real)
    before = ins._positions.copy()

    def broken(*args, **kwargs):
        raise UnicodeEncodeError("utf-8", "x", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(inspector_module, "apply_filter", broken)
    ins.query = "anything"
    assert "filter failed" in ins._status.value and "surrogates not allowed" in ins._status.value
    assert ins._positions.tolist() == before.tolist()
