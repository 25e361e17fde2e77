"""The sequence diagram: one arrow per message, pairs linked, cancel/progress/violations marked."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.widgets.sequence import Sequence, sequence

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "fixtures" / "widgets" / "hostile.tap.jsonl"
NS = "{http://www.w3.org/2000/svg}"


def groups(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(NS + "g") if cls in (g.get("class") or "").split()]


def by_seq(svg: str, cls: str = "mns-msg") -> dict[int, ET.Element]:
    return {int(g.get("data-seq")): g for g in groups(svg, cls)}


@pytest.fixture(scope="module")
def cancel_trace():
    return mn.load(mn.sample_path("everything-stdio-progress-cancel"))


@pytest.fixture(scope="module")
def broken():
    return mn.load(mn.sample_path("broken-duplicate-response"))


@pytest.mark.parametrize("name", ["everything-stdio-progress-cancel", "broken-duplicate-response",
                                  "demo-stdio", "everything-stdio-server-requests"])
def test_one_arrow_per_message_and_one_note_per_log_line(name):
    t = mn.load(mn.sample_path(name))
    d = sequence(t, t.frames["session"].dropna().iloc[0])
    rows = by_seq(d.svg)
    shown = d.frames
    assert sorted(rows) == shown["seq"].tolist()  # every frame drawn, once
    arrows = {s for s, g in rows.items() if g.find(NS + "line") is not None}
    wire = shown.loc[shown["direction"].isin(["c2s", "s2c"])
                     & ~shown["kind"].isin(["log", "stderr"]), "seq"]
    assert arrows == set(wire.tolist())
    # an arrow points the way the frame went: client lifeline on the left
    for seq in list(arrows)[:20]:
        line = rows[seq].find(NS + "line")
        going_right = float(line.get("x2")) > float(line.get("x1"))
        direction = shown.set_index("seq").at[seq, "direction"]
        assert going_right == (direction == "c2s")


def test_request_and_response_point_at_each_other(cancel_trace):
    d = sequence(cancel_trace)
    rows = by_seq(d.svg)
    p = cancel_trace.pairs
    done = p.loc[p["response_seq"].notna() & p["request_seq"].notna()
                 & ~p["outcome"].isin(["duplicate", "orphan"])]
    assert len(done) >= 5
    for rq, rs in zip(done["request_seq"], done["response_seq"], strict=True):
        assert rows[int(rq)].get("data-pair") == str(int(rs))
        assert rows[int(rs)].get("data-pair") == str(int(rq))
    # the activation bar of each answered request ends on its response row
    acts = {int(r.get("data-seq")): r for r in ET.fromstring(d.svg).iter(NS + "rect")
            if "mns-act" in (r.get("class") or "")}
    assert set(done["request_seq"].astype(int)) <= set(acts)


def test_cancel_and_progress_arrows_name_their_request(cancel_trace):
    d = sequence(cancel_trace)
    rows = by_seq(d.svg)
    p = cancel_trace.pairs.dropna(subset=["cancel_seq"])
    assert len(p) == 1
    cancel, request = int(p["cancel_seq"].iat[0]), int(p["request_seq"].iat[0])
    assert "mns-cancel" in rows[cancel].get("class")
    assert rows[cancel].get("data-target") == str(request)
    f = cancel_trace.frames
    progress = f.loc[f["method"] == "notifications/progress", "seq"].tolist()
    assert len(progress) == 10
    targets = {rows[s].get("data-target") for s in progress}
    assert all("mns-progress" in rows[s].get("class") for s in progress)
    # two long calls carry a progressToken: each progress frame names one of them
    long_calls = f.loc[(f["kind"] == "request") & f["raw"].str.contains("progressToken"), "seq"]
    assert targets == {str(s) for s in long_calls}
    # the cancelled request's bar ends at the cancel, not at the bottom
    bar = next(r for r in ET.fromstring(d.svg).iter(NS + "rect")
               if r.get("data-seq") == str(request))
    assert "mns-open" not in bar.get("class")


def test_violations_are_marked_on_their_frame_with_the_rule(broken):
    d = sequence(broken)
    marks = by_seq(d.svg, "mns-viol")
    v = broken.violations
    assert len(v) >= 3
    assert set(marks) == set(v["seq"].dropna().astype(int))
    for seq, rule in zip(v["seq"], v["rule"], strict=True):
        assert rule in "".join(marks[int(seq)].itertext())
    assert "flagged" in d.static_bundle()["text/plain"]


def test_an_unanswered_request_runs_to_the_bottom_and_says_why(broken):
    d = sequence(broken)
    p = broken.pairs
    open_req = p.loc[p["response_seq"].isna() & p["request_seq"].notna(), "request_seq"]
    assert len(open_req) == 1
    seq = int(open_req.iat[0])
    bar = next(r for r in ET.fromstring(d.svg).iter(NS + "rect") if r.get("data-seq") == str(seq))
    assert "mns-open" in bar.get("class")
    assert f"request #{seq}" in d.svg and "no response in the capture" in d.svg


def test_a_session_or_a_range(tmp_path):
    lines = HOSTILE.read_bytes().splitlines(keepends=True)
    other = [line.replace(b'"session": "evil<script>"', b'"session": "plain"') for line in lines]
    path = tmp_path / "two.tap.jsonl"
    path.write_bytes(b"".join(lines + other))
    t = mn.load(path)
    assert t.frames["session"].nunique() == 2
    first = sequence(t)  # two sessions, none named: the first, and it says so
    assert set(first.frames["session"].astype(object)) == {"evil<script>"}
    assert "1 of 2" in first.note or "1 of 2" in first.title
    d = sequence(t, "plain")
    assert set(d.frames["session"].astype(object)) == {"plain"}
    with pytest.raises(ValueError, match="no session 'nope'.*'plain'"):
        sequence(t, "nope")
    lo, hi = int(d.frames["seq"].iat[2]), int(d.frames["seq"].iat[5])
    r = sequence(t, "plain", start=lo, end=hi)
    assert r.frames["seq"].tolist() == list(range(lo, hi + 1))
    both = sequence(t, frames=t.frames.iloc[::3])  # a range over two sessions
    assert len(both.sessions) == 2
    assert ET.fromstring(both.svg).get("width")
    assert sum("client" == "".join(e.itertext()) for e in ET.fromstring(both.svg).iter(NS + "text")) == 2
    with pytest.raises(ValueError, match="one per frame"):
        sequence(t, frames=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="frame number or a time"):
        sequence(t, "plain", start=object())


def test_hostile_text_stays_text():
    t = mn.load(HOSTILE)
    svg = sequence(t).svg
    root = ET.fromstring(svg)  # well formed, whatever the capture holds
    assert not list(root.iter(NS + "script")) and "<script" not in svg
    assert not any(k.startswith("on") for e in root.iter() for k in e.attrib)
    assert "&lt;script&gt;" in svg


def test_the_brushed_range_of_a_timeline(cancel_trace):
    tl = mn.timeline(cancel_trace)
    x = tl.prepared.frame_x
    tl.brush = [float(x[5]), float(x[12])]
    d = sequence(tl)
    want = cancel_trace.frames.loc[tl.range_mask(), "seq"].tolist()
    assert d.frames["seq"].tolist() == want and 0 < len(want) < len(cancel_trace.frames)
    assert "selected range" in d.title
    ex = mn.explore(cancel_trace)
    ex.timeline.brush = [float(x[5]), float(x[12])]
    assert sequence(ex).frames["seq"].tolist() == want  # an explorer: its timeline's brush


def test_a_long_trace_is_cut_and_says_so(cancel_trace):
    d = sequence(cancel_trace, max_messages=10)
    assert len(d.frames) == 10 and "first 10 of 34" in d.note and "first 10 of 34" in d.svg
    with pytest.raises(ValueError):
        sequence(cancel_trace, max_messages=0)


def test_static_bundle_and_file(cancel_trace, tmp_path):
    d = sequence(cancel_trace)
    bundle, _ = d._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["image/svg+xml"] == d.svg
    assert bundle["text/plain"].startswith("sequence:") and "arrows" in bundle["text/plain"]
    out = d.save(tmp_path / "seq.svg")
    assert ET.parse(out).getroot().tag == NS + "svg"
    assert isinstance(mn.sequence(cancel_trace), Sequence)


def test_info_column_is_used_when_the_trace_has_one(cancel_trace):
    frames = cancel_trace.frames.copy()
    frames["info"] = pd.Series([f"INFO-{s}" for s in frames["seq"]], index=frames.index)

    class WithInfo:
        pass

    w = WithInfo()
    w.frames, w.pairs, w.violations = frames, cancel_trace.pairs, cancel_trace.violations
    w.message = cancel_trace.message
    svg = sequence(w).svg
    wire = frames.loc[~frames["kind"].isin(["log", "stderr"]), "seq"]
    assert all(re.search(f"INFO-{s}[^0-9]", svg) for s in wire)
