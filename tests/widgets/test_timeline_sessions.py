"""Many sessions on the timeline: picker, collapsed lanes, open spans ending with their session,
the legend of what is on screen, rule names on markers, and the static picture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import mcp_notebook as mn
from mcp_notebook.widgets.aggregate import OUTCOMES, prepare
from mcp_notebook.widgets.timeline import COLLAPSE_ABOVE, SHOW_FIRST
from mcp_notebook.widgets.viewport import view


def tap(path, sessions: dict[str, float], *, open_in: str | None = None):
    """A tap capture: per session, initialize, a log notification and one call answered
    (two lanes each); ``open_in`` also gets a
    call that is never answered. Each session lasts its given number of seconds."""
    lines, t = [], 1_750_000_000.0
    for k, (name, length) in enumerate(sessions.items()):
        t0 = t + k * 0.5
        msgs = [(0.0, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "c", "version": "1"}}}),
                (0.01, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"}}}),
                (0.02, "c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
                (0.025, "s2c", {"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": "info", "data": "hi"}}),
                (0.03, "c2s", {"jsonrpc": "2.0", "id": 2, "method": "ping"}),
                (length, "s2c", {"jsonrpc": "2.0", "id": 2, "result": {}})]
        if name == open_in:
            msgs.insert(4, (0.04, "c2s", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                          "params": {"name": "slow", "arguments": {}}}))
        for dt, d, m in msgs:
            lines.append(json.dumps({"ts": t0 + dt, "dir": d, "raw": json.dumps(m),
                                     "session": name}))
    path.write_text("\n".join(lines) + "\n")
    return mn.load(path)


def test_an_unanswered_request_ends_where_its_session_ends(tmp_path):
    t = tap(tmp_path / "two.tap.jsonl", {"short": 1.0, "long": 20.0}, open_in="short")
    p = prepare(t)
    i = [k for k, o in enumerate(p.span_outcome) if OUTCOMES[o] == "unanswered"]
    assert len(i) == 1
    short = t.frames.loc[t.frames["session"] == "short"]
    end = (short["ts"].max() - p.origin).total_seconds()
    assert p.span_t1[i[0]] == pytest.approx(end)
    assert p.span_t1[i[0]] < p.extent[1] - 10  # not the trace's end, 19 s later
    assert bool(p.span_open[i[0]])


def test_collapse_and_hide_sessions(tmp_path):
    t = tap(tmp_path / "three.tap.jsonl", {"a": 1.0, "b": 1.0, "c": 1.0})
    p = prepare(t)
    assert p.sessions == ["a", "b", "c"]
    full = view(p)
    assert len(full["lanes"]) == 6  # each session: client → server, server → client
    folded = view(p, collapsed=[0])
    assert folded["lanes"][0] == "a · all lanes" and len(folded["lanes"]) == 5
    assert folded["lane_collapsed"][:2] == [True, False]
    assert folded["visible"] == full["visible"]  # nothing lost by collapsing
    assert set(folded["spans"]["lane"]) | set(folded["ticks"]["lane"]) == set(range(5))
    hid = view(p, hidden=[1, 2])
    assert all(lane.startswith("a ·") for lane in hid["lanes"])
    assert hid["visible"]["spans"] == full["visible"]["spans"] // 3
    assert hid["lane_session"] == [0, 0]


def test_many_sessions_start_collapsed_and_the_picker_filters(tmp_path):
    names = {f"s{i:02d}": 1.0 for i in range(COLLAPSE_ABOVE + 4)}
    t = tap(tmp_path / "many.tap.jsonl", names)
    tl = mn.timeline(t)
    assert tl.collapsed == list(range(len(names)))
    assert len(tl.view["lanes"]) == len(names)  # one lane per session, not two or three
    tl.show_sessions("s03", "s07")
    assert [lane.split(" ·")[0] for lane in tl.view["lanes"]] == ["s03", "s07"]
    tl.show_sessions()
    assert len(tl.view["lanes"]) == len(names)
    with pytest.raises(ValueError, match="no session 'zz'"):
        tl.show_sessions("zz")
    tl.collapsed = []  # what "expand all" sends
    assert len(tl.view["lanes"]) == 2 * len(names)


def test_a_session_per_request_shows_the_first_sessions_and_says_so(tmp_path):
    names = {f"post-{i:03d}": 0.5 for i in range(SHOW_FIRST + 25)}
    t = tap(tmp_path / "stateless.tap.jsonl", names)
    tl = mn.timeline(t)
    assert len(tl.view["lanes"]) == SHOW_FIRST  # not 65 lanes, nor 130
    assert f"{SHOW_FIRST} of {SHOW_FIRST + 25} sessions shown" in tl.view["note"]
    tl.show_sessions()
    assert len(tl.view["lanes"]) == SHOW_FIRST + 25 and "sessions shown" not in tl.view["note"]


def test_the_legend_lists_only_what_is_on_screen():
    t = mn.load(mn.sample_path("everything-stdio-progress-cancel"))
    v = view(prepare(t))
    present = {v["outcomes"][i] for i in v["present"]["outcomes"]}
    assert present == set(t.pairs["outcome"].astype(str)) & set(OUTCOMES)
    assert "error" not in present and "cancelled" in present
    kinds = {v["tick_kinds"][i] for i in v["present"]["tick_kinds"]}
    assert kinds == {"notification", "stderr", "log"}
    assert v["present"]["severities"] == []


def test_markers_carry_their_rule():
    t = mn.load(mn.sample_path("broken-duplicate-response"))
    v = view(prepare(t))
    got = sorted(zip(v["viol"]["seq"], v["viol"]["rule"], strict=True))
    want = sorted(zip(t.violations["seq"].astype(int), t.violations["rule"], strict=True))
    assert got == want


@pytest.mark.parametrize("name", ["broken-duplicate-response", "everything-stdio-progress-cancel"])
def test_static_picture_of_the_timeline(name):
    t = mn.load(mn.sample_path(name))
    tl = mn.timeline(t)
    bundle, _ = tl._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith(f"timeline of {len(t.frames):,} frames")
    root = ET.fromstring(bundle["image/svg+xml"])
    text = " ".join("".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text"))
    for lane in tl.view["lanes"]:
        assert lane in text
    assert "+1 s" in text or "ms" in text  # a readable axis
    spans = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-seq")]
    assert len(spans) == tl.view["visible"]["spans"]
    assert "text/html" not in bundle  # the picture is sent once


def test_static_picture_of_a_binned_view():
    from tracekit import big_trace

    tl = mn.timeline(big_trace(3000))
    tl.max_items = 500
    assert tl.view["mode"] == "bins"
    root = ET.fromstring(tl._static_svg())
    paths = list(root.iter("{http://www.w3.org/2000/svg}path"))
    assert paths and "bins per lane" in tl._static_text()
    assert tl.view["bins"]["n"] > 160
    # the picture merges bins: one step area per lane and group, at most 160 steps
    assert max(p.get("d").count("H") for p in paths) <= 160
    assert len(paths) <= 3 * len(tl.view["lanes"]) + len(tl.view["bins"]["viol"]) * 160
