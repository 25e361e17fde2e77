"""The columnar pairing, direction inference and checks against the reference walks.

Random traces with a small id space (so ids collide, repeat, cross sides and types),
cancels, progress tokens and transport errors; and every rule case of
``tests/core/test_rules.py`` through both whole pipelines.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_
from reference import materialised, reference_columns, reference_tables

import mcp_notebook as mn
from mcp_notebook.core.direction import infer
from mcp_notebook.core.direction_vec import infer_codes
from mcp_notebook.core.pairing import pair
from mcp_notebook.core.pairing_vec import OUTCOMES, pair_arrays
from mcp_notebook.fast.store import Store
from mcp_notebook.table import Columns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

_DIRS = (None, "c2s", "s2c")


def random_columns(rng: random.Random, n: int) -> Columns:
    c = Columns()
    methods = ["tools/call", "initialize", "ping", "zz/custom", "sampling/createMessage",
               "notifications/message"]
    for i in range(n):
        k = rng.choice(["request"] * 4 + ["result"] * 3 + ["error", "notification",
                                                          "notification", "invalid"])
        d = rng.choice(["c2s", "s2c", None] if rng.random() < 0.15 else ["c2s", "s2c"])
        keys = ["1", "2", '"1"', '"2"', "3", "null"]
        ik = rng.choice(keys + [None]) if k in ("result", "error") else rng.choice(keys)
        m = ref = prog = None
        if k == "request":
            m = rng.choice(methods)
            if rng.random() < 0.3:
                ref = rng.choice(["1", '"t"', "2"])
        elif k == "notification":
            m = rng.choice(["notifications/cancelled", "notifications/progress",
                            "notifications/progress", "x"])
            ik = None
            if m != "x" and rng.random() < 0.9:
                ref = rng.choice(["1", '"1"', "2", '"t"'])
            if m == "notifications/progress" and rng.random() < 0.8:
                prog = float(rng.choice([1, 2, 3, 2.5]))
        elif k == "invalid":
            ik = None
        batch = rng.choice([None] * 8 + [0, 1])
        for name, v in [("ts", float(i)), ("session", rng.choice(["a", "b", None])),
                        ("stream", "stdio"), ("direction", d), ("kind", k), ("id", None),
                        ("id_key", ik), ("method", m), ("error_code", None),
                        ("error_message", None),
                        ("is_tool_error", k == "result" and rng.random() < 0.2), ("size", 1),
                        ("raw", "{}"), ("source", "x"), ("batch", batch), ("reason", None),
                        ("local_time", False), ("flags", ()), ("ref", ref), ("progress", prog),
                        ("version", None)]:
            getattr(c, name).append(v)
        if k in ("result", "error") and rng.random() < 0.03:
            c.extra[i] = {"transport_error": 500}
    return c


SEEDS = range(150)


@pytest.mark.parametrize("seed", SEEDS)
def test_pairing_matches_the_walk(seed: int) -> None:
    rng = random.Random(seed)
    c = random_columns(rng, rng.randint(0, 120))
    st = Store.from_columns(c)
    skip = sorted(i for i, e in c.extra.items() if "transport_error" in e)
    rows, findings = pair(range(len(c)), c.session, c.direction, c.kind, c.id_key, c.method,
                          c.is_tool_error, c.ref, c.progress, skip=set(skip))
    pt = pair_arrays(st.kind, st.session[0], st.direction, st.id_key, st.id_code[0],
                     st.id_code[1], st.method[0], st.method[1], st.is_tool_error, st.ref,
                     st.progress, skip=skip)
    sess, meth = [*st.session[1], None], [*st.method[1], None]
    got = [(int(pt.request_seq[i]), int(pt.response_seq[i]), sess[pt.session[i]],
            _DIRS[pt.requester[i] + 1], pt.id_key[i], meth[pt.method[i]],
            OUTCOMES[pt.outcome[i]], int(pt.cancel_seq[i]), int(pt.progress_count[i]))
           for i in range(len(pt))]

    def opt(v: int | None) -> int:
        return -1 if v is None else v

    want = [(opt(r.request_seq), opt(r.response_seq), r.session, r.requester, r.id_key,
             r.method, r.outcome, opt(r.cancel_seq), r.progress_count) for r in rows]
    assert got == want
    assert pt.findings == [(f.seq, f.rule, f.related_seq, f.detail) for f in findings]


@pytest.mark.parametrize("seed", SEEDS)
def test_direction_inference_matches(seed: int) -> None:
    rng = random.Random(seed)
    c = random_columns(rng, rng.randint(0, 100))
    for i in range(len(c)):
        if rng.random() < 0.7:
            c.direction[i] = None
    st = Store.from_columns(c)
    got = infer_codes(st.kind, st.session[0], st.id_code[0], st.method[0], st.method[1],
                      st.direction)
    assert [_DIRS[d + 1] for d in got.tolist()] == infer(c.kind, c.session, c.id_key,
                                                          c.method, c.direction)


@pytest.mark.parametrize("depth", [3, 64, 65, 200])
def test_direction_inference_with_deep_stacks(depth: int) -> None:
    """Many requests of one id still open (past the 64 the C walk keeps, it hands over to
    the numpy walk), then their responses, mixed with a second id and unknown methods."""
    c = Columns()
    plan = ([("request", '"a"', "zz/custom")] * depth + [("request", "1", "ping")] * 3
            + [("result", '"a"', None)] * (depth + 2) + [("error", "1", None)] * 4
            + [("request", '"a"', "tools/call"), ("result", '"a"', None)])
    for i, (k, ik, m) in enumerate(plan):
        for name, v in [("ts", float(i)), ("session", "s"), ("stream", "stdio"),
                        ("direction", None), ("kind", k), ("id", None), ("id_key", ik),
                        ("method", m), ("error_code", None), ("error_message", None),
                        ("is_tool_error", False), ("size", 1), ("raw", "{}"),
                        ("source", "x"), ("batch", None), ("reason", None),
                        ("local_time", False), ("flags", ()), ("ref", None),
                        ("progress", None), ("version", None)]:
            getattr(c, name).append(v)
    st = Store.from_columns(c)
    got = infer_codes(st.kind, st.session[0], st.id_code[0], st.method[0], st.method[1],
                      st.direction)
    want = infer(c.kind, c.session, c.id_key, c.method, c.direction)
    assert [_DIRS[d + 1] for d in got.tolist()] == want
    assert want.count("s2c") > depth  # the answers travel back


@pytest.mark.parametrize("seed", range(60))
def test_whole_tables_match(seed: int) -> None:
    rng = random.Random(seed)
    c = random_columns(rng, rng.randint(0, 80))
    t = mn.Trace(Store.from_columns(c))
    frames, pairs, violations = reference_tables(c)
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(t.violations, violations)


def _rule_cases() -> list[tuple[str, str, list, dict]]:
    from test_rules import CASES, INIT, INIT_0326

    out = []
    for code, (bad, good, opts) in sorted(CASES.items()):
        if opts == "batch":
            out += [(code, "bad", INIT + bad, {}), (code, "good", INIT_0326 + good, {})]
        else:
            out += [(code, "bad", bad, opts), (code, "good", good, opts)]
    return out


@pytest.mark.parametrize("code,which,rows,opts", _rule_cases(),
                         ids=[f"{c}-{w}" for c, w, _, _ in _rule_cases()])
@pytest.mark.parametrize("fmt", ["tap", "ndjson"])
def test_rule_cases_both_pipelines(tmp_path: Path, code: str, which: str, rows: list,
                                   opts: dict, fmt: str) -> None:
    from helpers import tap

    if fmt == "tap":
        path = tap(tmp_path / "c.jsonl", rows)
    else:
        import json

        path = tmp_path / "c.ndjson"
        path.write_text("\n".join(m if isinstance(m, str) else json.dumps(m) for _, m in rows)
                        + "\n")
    version = opts.get("version")
    t = mn.load(path, format=fmt, version=version)
    frames, pairs, violations = reference_tables(reference_columns([path], fmt), version)
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(t.violations, violations)
    assert np.array_equal(t.frames["seq"].to_numpy(), np.arange(len(frames)))


@pytest.mark.parametrize("seed", range(60))
def test_pairing_with_the_loaders_id_index(seed: int) -> None:
    """The loader's dict of id keys (kept by a merge of parts) gives the same pairing as
    the table the pairing otherwise makes of them."""
    rng = random.Random(seed)
    c = random_columns(rng, rng.randint(0, 120))
    st = Store.from_columns(c)
    skip = sorted(i for i, e in c.extra.items() if "transport_error" in e)
    args = (st.kind, st.session[0], st.direction, st.id_key, st.id_code[0], st.id_code[1],
            st.method[0], st.method[1], st.is_tool_error, st.ref, st.progress)
    plain = pair_arrays(*args, skip=skip)
    indexed = pair_arrays(*args, skip=skip,
                          id_index={k: i for i, k in enumerate(st.id_code[1])})
    for name in ("request_seq", "response_seq", "session", "requester", "id_key", "method",
                 "outcome", "cancel_seq", "progress_count"):
        assert getattr(plain, name).tolist() == getattr(indexed, name).tolist(), name
    assert plain.findings == indexed.findings


@settings(max_examples=300, deadline=None)
@given(st_.lists(st_.one_of(st_.floats(allow_nan=True, allow_infinity=True),
                            st_.floats(min_value=-1e10, max_value=1e10),
                            st_.integers(-10**10, 10**10).map(lambda k: k / 1e6),
                            st_.integers(-10**10, 10**10).map(lambda k: k / 1e9)),
                max_size=40))
def test_times_match_pandas_to_datetime(values: list[float]) -> None:
    """The fast path's datetimes are the reference's (``pd.to_datetime(unit="s")``)."""
    from mcp_notebook.fast.frames import times
    from mcp_notebook.table import _times

    got = times(np.array(values, dtype=np.float64))
    want = _times(values)
    assert got.dtype == want.dtype
    assert got.array.asi8.tolist() == want.array.asi8.tolist()
    if values:  # one value for every row, as a format without times gives it
        same = times(np.broadcast_to(np.float64(values[0]), (3,)))
        assert same.array.asi8.tolist() == _times([values[0]] * 3).array.asi8.tolist()


@settings(max_examples=300, deadline=None)
@given(st_.lists(st_.one_of(st_.integers(-(2**80), 2**80).map(str),
                            st_.integers(-(2**80), 2**80).map(lambda k: f'"{k}"'),
                            st_.integers(2**52, 2**54).map(str),
                            st_.integers(2**52, 2**54).map(lambda k: f"-{k}"),
                            st_.floats(allow_nan=False, allow_infinity=False).map(repr),
                            st_.text(max_size=20)), max_size=30))
def test_big_id_keys_as_the_reference_says(keys: list[str]) -> None:
    """The C verdict on an id key (above 2^53 or not) is the reference test's, or defers."""
    from mcp_notebook.core.checks_vec import _is_big
    from mcp_notebook.fast import native

    if native.native is None:
        return  # the Python path decides every key with _is_big itself
    for key, v in zip(keys, native.native.big_ids(keys), strict=True):
        assert v in (0, 1, 2)
        if v != 2:
            assert bool(v) == _is_big(key), key
