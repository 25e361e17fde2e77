"""Pure HTML renderers: everything from a trace is escaped; trees are readable and bounded."""

import pandas as pd
import pytest
from tracekit import no_live_markup, sample_trace

from mcp_notebook.widgets.render import (
    esc,
    frame_html,
    json_tree_html,
    summary_html,
    violations_html,
)

HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "javascript:alert(1)",
    "&lt;b&gt; &amp; &#60;i&#62;",
    "\"'><svg onload=alert(1)>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_json_tree_escapes_keys_and_values(text):
    out = json_tree_html({text: [text, {"k": text}], "n": 1})
    no_live_markup(out)
    assert esc(text) in out


@pytest.mark.parametrize("text", HOSTILE)
def test_frame_and_violation_and_summary_escape(text):
    row = {"seq": 1, "kind": text, "method": text, "outcome": text, "direction": text,
           "session": text, "source": text, "latency": pd.NaT}
    no_live_markup(frame_html(row, None, text, text))
    no_live_markup(frame_html(row, {"m": text}, None, "t"))
    no_live_markup(violations_html([{"rule": text, "severity": text, "message": text,
                                     "spec": text}]))
    lat = pd.DataFrame({"count": [1], "p50_ms": [2.0]}, index=pd.Index([text], name="method"))
    out = summary_html({"frames": 1, "protocol_version": text, "sessions": text,
                        "error_codes": {text: 1}, "violations": {"total": 1}}, lat)
    no_live_markup(out.split("</style>", 1)[1])
    assert esc(text) in out


def test_entities_are_shown_literally():
    out = json_tree_html("&lt;b&gt;")
    assert "&amp;lt;b&amp;gt;" in out  # the browser shows &lt;b&gt;, not <b>


def test_tree_shape_and_collapse():
    out = json_tree_html({"a": {"b": {"c": {"d": 1}}}, "e": []}, open_depth=2)
    assert out.count("<details open>") == 2 and out.count("<details>") == 2
    assert '<span class="mnw-key">e</span>: <span class="mnw-lit">[]</span>' in out
    assert "{ 2 keys }" in out and "{ 1 key }" in out


@pytest.mark.parametrize("value, note", [
    ("x" * 5000, "more characters"),
    (list(range(500)), "… 300 more"),
])
def test_tree_cuts_big_values_visibly(value, note):
    assert note in json_tree_html(value)


def test_tree_survives_deep_nesting():
    deep = cur = {}
    for _ in range(500):
        cur["x"] = {}
        cur = cur["x"]
    out = json_tree_html(deep)
    assert "not expanded: too deep or too large" in out


def test_frame_html_shows_raw_text_when_not_json():
    out = frame_html({"seq": 3, "kind": "invalid"}, None, "{\"jsonrpc\": <img src=x>", "frame")
    assert '<pre class="mnw-raw">{&quot;jsonrpc&quot;: &lt;img src=x&gt;</pre>' in out


def test_summary_strip_uses_the_summary_and_latency():
    t = sample_trace()
    out = summary_html(t.summary(), t.latency_by_method())
    assert "<b>17</b><span>frames</span>" in out
    assert "tools/call" in out and "-32002" in out
    assert "mnw-count mnw-bad\"><b>1</b><span>errors" in out


@pytest.mark.parametrize("col, value, want", [
    ("p50_ms", 0.742912, "743 µs"), ("p90_ms", 38.489843, "38.5 ms"),
    ("max_ms", 13300.0, "13.3 s"), ("max_ms", 240_000.0, "4 min"),
    ("error_rate", 0.333333, "33 %"), ("error_rate", 0.01208, "1.2 %"),
    ("error_rate", 0.0004, "<0.1 %"), ("error_rate", 0.0, "0"), ("count", 11.0, "11"),
])
def test_latency_table_numbers_are_readable(col, value, want):
    from mcp_notebook.widgets.render import latency_table_html

    lat = pd.DataFrame({col: [value]}, index=pd.Index(["tools/call"], name="method"))
    html = latency_table_html(lat)
    assert f">{want.replace('<', '&lt;')}</td>" in html
    assert "_ms" not in html and "e+0" not in html and "error_rate" not in html
