"""The engine's checks against the list-based oracle (``tests/oracle``): the whole three
tables over generated traffic (hypothesis), and every rule case of
``tests/protocol/test_rules.py`` through both pipelines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st_
from oracle.pipeline import comparable, materialised, reference_columns, reference_tables

import mcp_notebook as mn
from mcp_notebook.fast.store import Store

from .traffic import random_columns, traffic


@settings(max_examples=40, deadline=None)
@given(traffic)
def test_whole_tables_are_the_oracles(case: tuple[int, int]) -> None:
    c = random_columns(random.Random(case[0]), min(case[1], 80))
    t = mn.Trace(Store.from_columns(c))
    frames, pairs, violations = reference_tables(c)
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(comparable(t.violations), violations)


def _rule_cases() -> list[tuple[str, list, dict]]:
    from protocol.test_rules import CASES, INIT, INIT_0326

    out = []
    for code, (bad, good, opts) in sorted(CASES.items()):
        if opts == "batch":
            out += [(code, INIT + bad, {}), (code, INIT_0326 + good, {})]
        else:
            out += [(code, bad, opts), (code, good, opts)]
    return out


def test_rule_cases_through_both_pipelines(tmp_path: Path) -> None:
    """Each case as a tap file and as bare NDJSON: the engine's tables are the oracle's."""
    from helpers import tap

    for i, (code, rows, opts) in enumerate(_rule_cases()):
        fmt = ("tap", "ndjson")[i % 2]
        if fmt == "tap":
            path = tap(tmp_path / f"{i}.jsonl", rows)
        else:
            path = tmp_path / f"{i}.ndjson"
            path.write_text("\n".join(m if isinstance(m, str) else json.dumps(m)
                                      for _, m in rows) + "\n")
        version = opts.get("version")
        t = mn.load(path, format=fmt, version=version)
        frames, pairs, violations = reference_tables(reference_columns([path], fmt), version)
        pd.testing.assert_frame_equal(materialised(t.frames), frames, obj=f"{code} frames")
        pd.testing.assert_frame_equal(t.pairs, pairs, obj=f"{code} pairs")
        pd.testing.assert_frame_equal(comparable(t.violations), violations, obj=f"{code} violations")
        assert np.array_equal(t.frames["seq"].to_numpy(), np.arange(len(frames)))


@settings(max_examples=100, deadline=None)
@given(st_.lists(st_.one_of(st_.floats(allow_nan=True, allow_infinity=True),
                            st_.floats(min_value=-1e10, max_value=1e10),
                            st_.integers(-10**10, 10**10).map(lambda k: k / 1e6),
                            st_.integers(-10**10, 10**10).map(lambda k: k / 1e9)),
                max_size=40))
def test_times_match_pandas_to_datetime(values: list[float]) -> None:
    """The store's datetimes are the reference's (``pd.to_datetime(unit="s")``)."""
    from oracle.tables import times as _times

    from mcp_notebook.fast.frames import times

    got = times(np.array(values, dtype=np.float64))
    want = _times(values)
    assert got.dtype == want.dtype
    assert got.array.asi8.tolist() == want.array.asi8.tolist()
    if values:  # one value for every row, as a format without times gives it
        same = times(np.broadcast_to(np.float64(values[0]), (3,)))
        assert same.array.asi8.tolist() == _times([values[0]] * 3).array.asi8.tolist()


@settings(max_examples=100, deadline=None)
@given(st_.lists(st_.one_of(st_.integers(-(2**80), 2**80).map(str),
                            st_.integers(-(2**80), 2**80).map(lambda k: f'"{k}"'),
                            st_.integers(2**52, 2**54).map(str),
                            st_.integers(2**52, 2**54).map(lambda k: f"-{k}"),
                            st_.floats(allow_nan=False, allow_infinity=False).map(repr),
                            st_.text(max_size=20)), max_size=30))
def test_big_id_keys_as_the_reference_says(keys: list[str]) -> None:
    """The C verdict on an id key (above 2^53 or not) is the reference test's, or defers."""
    from mcp_notebook.engine import native
    from mcp_notebook.engine.rules.envelope import _is_big

    if native.native is None:
        return  # the Python path decides every key with _is_big itself
    for key, v in zip(keys, native.native.big_ids(keys), strict=True):
        assert v in (0, 1, 2)
        if v != 2:
            assert bool(v) == _is_big(key), key


def test_the_rules_read_only_extras_their_one_pass_finds():
    """The rules that read rows' extras read them from ``VecInput.rule_extras`` (one pass
    over every row's extra for all of them): each member they read is among the keys of
    that pass, so no rule misses a row by it."""
    from mcp_notebook.engine.checks import RULE_EXTRA_KEYS
    from mcp_notebook.engine.rules import exchange, transport

    assert set(transport._KEYS) | {exchange.ANSWER_NOT_HELD, exchange.REQUEST_NOT_HELD} \
        == set(RULE_EXTRA_KEYS)
