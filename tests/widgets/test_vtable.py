"""The virtual frame table: windows, sort, keyboard, copy, search and highlighting."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tracekit import big_trace

import mcp_notebook as mn
from mcp_notebook.widgets import apply_filter, inspect
from mcp_notebook.widgets.filters import FilterError
from mcp_notebook.widgets.frametable import TABLE_COLUMNS
from mcp_notebook.widgets.search import highlight, search_words, text_mask
from mcp_notebook.widgets.vtable import WINDOW, sort_rank

DEMO = mn.sample_path("demo-stdio")


def shown(ins, key):
    i = [k for k, _ in TABLE_COLUMNS].index(key)
    g = ins._grid
    return [r[i] for r in g.rows]


@pytest.mark.parametrize("key, col", [("seq", "seq"), ("latency", "latency"), ("size", "size"),
                                      ("method", "method"), ("session", "session"),
                                      ("id_key", "id_key"), ("time", "ts")])
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_sort_by_any_column_matches_pandas(key, col, direction):
    t = big_trace(400)
    ins = inspect(t)
    ins._grid.sort = [key, direction]
    df = ins.table
    got = df["seq"].to_numpy()[ins._grid.order]
    vals = df[col].astype(str) if col in ("method", "session", "id_key") else df[col]
    present = vals.notna() & (vals.astype(str) != "nan") if col != "latency" else vals.notna()
    want = df.loc[present].sort_values(col if col not in ("method", "session", "id_key")
                                       else col, key=(lambda s: s.astype(str))
                                       if col in ("method", "session", "id_key") else None,
                                       ascending=direction == "asc", kind="stable")["seq"]
    # rows with a value come first, in pandas' order; rows without one come last
    assert got[:len(want)].tolist() == want.tolist()
    assert ins._grid.rows[0][0] == str(got[0])
    assert "sorted by" in ins._grid.note


def test_sort_rank_puts_missing_last_and_keeps_kind_order():
    t = mn.load(DEMO)
    ins = inspect(t)
    r = sort_rank(ins.table, "latency")
    lat = ins.table["latency"]
    assert (r[lat.isna().to_numpy()] > r[lat.notna().to_numpy()].max()).all()
    rk = sort_rank(ins.table, "kind")
    ordered = ins.table["kind"].to_numpy()[np.argsort(rk, kind="stable")]
    cats = list(ins.table["kind"].cat.categories)
    assert [cats.index(k) for k in ordered] == sorted(cats.index(k) for k in ordered)


def test_sort_then_filter_keeps_the_sort_and_clear_returns_capture_order():
    t = big_trace(300)
    ins = inspect(t)
    g = ins._grid
    g.sort = ["latency", "desc"]
    ins.query = "kind:request"
    lat = ins.table["latency"].to_numpy()[g.order]
    assert (np.diff(lat.astype(np.int64)) <= 0).all() and g.total == 300
    g.sort = ["", ""]
    assert (np.diff(g.order) > 0).all()


def test_keyboard_moves_select_opens_and_goes_to_pair():
    t = mn.load(DEMO)
    ins = inspect(t)
    g = ins._grid
    g._on_msg(g, {"type": "move", "by": 1}, [])  # nothing selected: the first row
    assert ins.selected_seq == 0
    g._on_msg(g, {"type": "move", "by": 1}, [])
    assert ins.selected_seq == 1
    g._on_msg(g, {"type": "move", "to": -1}, [])
    assert ins.selected_seq == len(t.frames) - 1
    g._on_msg(g, {"type": "move", "by": 20}, [])  # clamped at the end
    assert ins.selected_seq == len(t.frames) - 1
    g._on_msg(g, {"type": "move", "to": 0}, [])
    assert ins.selected_seq == 0
    ins.selected_seq = 1  # initialize request; p goes to its response and back
    g._on_msg(g, {"type": "pair"}, [])
    pair = int(t.pairs.loc[t.pairs["request_seq"] == 1, "response_seq"].iloc[0])
    assert ins.selected_seq == pair
    g._on_msg(g, {"type": "pair"}, [])
    assert ins.selected_seq == 1
    g._on_msg(g, {"type": "bogus"}, [])
    g._on_msg(g, "not a dict", [])
    assert ins.selected_seq == 1


def test_moving_follows_the_shown_order():
    t = big_trace(200)
    ins = inspect(t)
    g = ins._grid
    g.sort = ["latency", "desc"]
    g.move(to=0)
    first = ins.selected_seq
    assert first == int(ins.table["seq"].to_numpy()[g.order[0]])
    g.move(by=1)  # the next row in the sorted order, not the next frame
    assert ins.selected_seq == int(ins.table["seq"].to_numpy()[g.order[1]])
    assert g.sel_index == 1


def test_copy_texts_are_the_frame_as_json_raw_and_one_line():
    t = mn.load(DEMO)
    ins = inspect(t)
    ins.selected_seq = 1
    clip = ins._grid.clip
    raw = t.frames["raw"].iat[1]
    assert clip["raw"] == raw
    assert json.loads(clip["json"]) == json.loads(raw) and "\n" in clip["json"]
    assert json.loads(clip["line"]) == json.loads(raw) and "\n" not in clip["line"]
    log = int(t.frames.index[t.frames["kind"] == "log"][0])
    ins.selected_seq = log  # not JSON: every copy is its text
    assert set(ins._grid.clip.values()) == {t.frames["raw"].iat[log]}
    ins.selected_seq = None
    assert ins._grid.clip == {}


def test_window_follows_scroll_requests_and_never_runs_past_the_end():
    t = big_trace(1000)
    ins = inspect(t)
    g = ins._grid
    n = len(t.frames)
    for want in (0, 10, n // 2, n - 1, n + 50):
        g.want = want
        assert 0 <= g.start <= max(0, n - WINDOW) and len(g.rows) == min(WINDOW, n)
        assert int(g.rows[0][0]) == g.start  # capture order: row i is frame i
    g.want = 0
    assert g.start == 0


def test_info_column_is_shown_in_the_table():
    t = mn.load(DEMO)
    ins = inspect(t)
    infos = shown(ins, "info")
    assert infos == t.frames["info"].tolist()[:len(infos)]
    assert any(x.startswith("tools/call add(") for x in infos)


@pytest.mark.parametrize("query, count_of", [
    ("division", lambda f: f["raw"].str.contains("division", case=False)),
    ('"isError\\":true"', lambda f: f["raw"].str.contains('"isError":true', regex=False)),
    ("NO-SUCH-WORD", lambda f: f["raw"].str.contains("NO-SUCH-WORD")),
])
def test_search_counts_match_pandas_and_says_so(query, count_of):
    t = mn.load(DEMO)
    ins = inspect(t)
    ins.query = query
    want = int(count_of(t.frames).sum())
    assert ins._grid.total == want
    assert f"<b>{want:,}</b> of {len(t.frames):,} frames" in ins._status.value


def test_empty_search_is_an_error_not_everything():
    t = mn.load(DEMO)
    with pytest.raises(FilterError, match="empty search"):
        apply_filter(inspect(t).table, '""')
    ins = inspect(t)
    ins.query = '""'
    assert "filter error" in ins._status.value


def lazy_capture(tmp_path, monkeypatch, n=400):
    """A tap capture whose frame text stays in the file (as a big capture's does)."""
    from mcp_notebook import fast

    lines = ['{"ts": 1700000000, "dir": "meta", "session": "weather-session", '
             '"event": "start", "cmd": ["tokyo-server"], "raw": "started"}']
    for i in range(n):
        raw = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                          "params": {"name": "Weather" if i % 7 == 0 else "x",
                                     "arguments": {"q": 'say "hi"' if i % 5 == 0 else
                                                   "café" if i % 3 == 0 else "Tokyo"}}},
                         ensure_ascii=i % 2 == 0)
        lines.append(json.dumps({"ts": 1.7e9 + i, "dir": "c2s", "raw": raw,
                                 "session": "weather-session"}, ensure_ascii=i % 4 == 0))
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    return mn.load(path)


NEEDLES = ["weather", "WEATHER", 'say "hi"', "café", "CAFÉ", "session", "tools/call", "1.7",
           "tokyo", '"q":', "started", "u00e9", "zzz-none"]


@pytest.mark.parametrize("pyarrow", [True, False])
def test_search_on_a_capture_kept_on_disk_matches_pandas(tmp_path, monkeypatch, pyarrow):
    """The byte search finds the rows pandas finds on the text: no hit in a record's session,
    time or other members, escaped and unescaped text alike, with and without pyarrow."""
    from mcp_notebook.lazytext import LazyTextArray
    from mcp_notebook.widgets import search

    t = lazy_capture(tmp_path, monkeypatch)
    raw = t.frames["raw"]
    assert isinstance(raw.array, LazyTextArray)
    if not pyarrow:
        monkeypatch.setattr(search, "_has_arrow", lambda: False)
    plain = raw.astype(object)
    for needle in NEEDLES:
        want = plain.str.contains(needle, case=False, regex=False).to_numpy()
        got = apply_filter(inspect(t).table, f'"{needle}"' if " " in needle or '"' in needle
                           else needle).mask if '"' not in needle else text_mask(
            raw, needle, (t.frames["kind"] == "log").to_numpy(), ["weather-session"])
        assert (got == want).all(), (needle, int(got.sum()), int(want.sum()))


def test_search_words_and_highlight_are_escaped():
    assert search_words('method:tools/call weather "two words" -skip text:<b>') == [
        "weather", "two words", "<b>"]
    html = '<div class="mnw-str">&quot;Weather &lt;b&gt;&quot;</div>'
    out = highlight(html, ["weather", "<b>"])
    assert out.count('<mark class="mnw-hit">') == 2
    assert 'class="mnw-str"' in out and "<b>" not in out.replace('<mark class="mnw-hit">', "")


def test_search_marks_matches_in_the_detail():
    t = mn.load(DEMO)
    ins = inspect(t, query="division")
    seq = int(t.frames.index[t.frames["raw"].str.contains("division")][0])
    ins.selected_seq = seq
    assert '<mark class="mnw-hit">division</mark>' in ins._frame.value


def test_detail_sits_beside_the_table():
    t = mn.load(DEMO)
    ins = inspect(t)
    split = [c for c in ins.children if "mn-split" in c._dom_classes][0]
    left, right = split.children
    assert ins._grid in left.children and "mn-detail" in right._dom_classes
    assert ins._frame in right.children and ins._pair in right.children


def test_highlight_opens_the_folds_that_hold_a_match():
    html = ("<details><summary>a</summary><details><summary>b</summary>x needle</details>"
            "</details><details><summary>c</summary>nothing</details>")
    out = highlight(html, ["needle"])
    assert out.count("<details open>") == 2 and out.count("<details>") == 1


@pytest.mark.parametrize("seconds, want", [(0.0021, "+0.002 s"), (59.9994, "+59.999 s"),
                                           (754.5, "+12m 34.5s"), (27218.834, "+7h 33m 38s"),
                                           (-1.5, "−1.500 s")])
def test_time_offsets_are_readable(seconds, want):
    from mcp_notebook.widgets.frametable import fmt_offset

    assert fmt_offset(seconds) == want


def test_info_is_a_filter_field():
    t = mn.load(DEMO)
    ins = inspect(t)
    f = apply_filter(ins.table, 'info:"tools/call divide*"')
    want = t.frames["info"].astype(str).str.startswith("tools/call divide")
    assert f.count == int(want.sum()) > 0
