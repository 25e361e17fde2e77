"""The filter language: rows selected, and the pandas expression giving the same rows."""

import pandas as pd
import pytest
from tracekit import sample_trace

from mcp_notebook.widgets.filters import FilterError, apply_filter, parse_duration, parse_size
from mcp_notebook.widgets.frametable import frame_table

TRACE = sample_trace()
DF = frame_table(TRACE)

CASES = [
    ("", list(range(17))),
    ("method:tools/call outcome:tool_error latency>100ms", [4, 7]),
    ("method:tools/call outcome:error latency>500ms -method:notifications/*", []),
    ("-method:notifications/*", [0, 1, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 16]),
    ("kind:request,notification dir:s2c", [6, 12]),
    ("method:*call*", [4, 7, 14]),
    ("method!=tools/call kind:request", [0, 3, 9, 11, 12]),
    ("outcome:unanswered,cancelled", [11, 14]),
    ("has:violation", [16]),
    ("-has:pair kind:request", [11, 14]),
    ("rule:response-*", [16]),
    ("rule:no-such-rule", []),
    ("warming", [8]),
    ('"resource NOT found"', [10]),
    ("text:isError", [7]),
    ("code:-32002", [10]),
    ("code<0", [10]),
    ("seq>=10 seq<12", [10, 11]),
    ("seq:1,5,9", [1, 5, 9]),
    ("latency<=20ms", [0, 1, 9, 10]),
    ("latency>=0.2s", [4, 7, 12, 13]),
    ("size>100", [4, 6]),
    ("id:0", [0, 1, 12, 13]),
    ("session:s1 stream:stderr", [8]),
    ("ts>=2025-06-15T15:06:41.2Z", [13, 14, 15, 16]),
]


@pytest.mark.parametrize("query, seqs", CASES)
def test_filter_rows_and_expression(query, seqs):
    f = apply_filter(DF, query, TRACE.violations)
    assert DF["seq"][f.mask].tolist() == seqs
    assert f.count == len(seqs)
    got = eval(f.expr, {"df": DF, "pd": pd, "trace": TRACE})  # noqa: S307 - our own output
    assert got["seq"].tolist() == seqs


def test_expression_reads_like_pandas():
    f = apply_filter(DF, "method:tools/call outcome:error latency>500ms -method:notifications/*")
    assert f.expr == (
        'df[(df["method"] == \'tools/call\') & (df["outcome"] == \'error\') & '
        '(df["latency"] > pd.Timedelta("500ms")).fillna(False) & '
        '~df["method"].astype("string").str.startswith(\'notifications/\').fillna(False)]')


@pytest.mark.parametrize("query, message", [
    ("colour:red", "unknown field 'colour'"),
    ("outcome:eror", "unknown outcome 'eror': use one of result"),
    ("kind:reqest", "unknown kind"),
    ("latency>soon", "cannot read duration 'soon'"),
    ("size>lots", "cannot read size"),
    ("seq>ten", "seq takes a whole number"),
    ("method>a", "takes ':' or '!='"),
    ("has:wings", "has: takes one of"),
    ("ts>yesterday", "cannot read time"),
])
def test_errors_say_how_to_fix(query, message):
    with pytest.raises(FilterError, match=message):
        apply_filter(DF, query, TRACE.violations)


@pytest.mark.parametrize("text, expected", [
    ("500ms", pd.Timedelta(milliseconds=500)), ("1.5s", pd.Timedelta(seconds=1.5)),
    ("200us", pd.Timedelta(microseconds=200)), ("200µs", pd.Timedelta(microseconds=200)),
    ("2m", pd.Timedelta(minutes=2)), ("250", pd.Timedelta(milliseconds=250)),
])
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text, expected", [("512", 512), ("10kb", 10240), ("1.5mb", 1572864)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_hostile_query_text_is_only_data():
    f = apply_filter(DF, '"<script>alert(1)</script>" method:"a\\"b"')
    assert f.count == 0
    assert eval(f.expr, {"df": DF, "pd": pd, "trace": TRACE}).empty  # noqa: S307
