"""The C walks (pairing, direction inference) against the Python walks they implement,
over generated traffic (hypothesis); and a proof that the C walks are the ones that ran.

The Python walks (:func:`mcp_notebook.engine.walks.pair`, :func:`.direction.infer`) are the
reference and the fallback: without the extension every other test runs on them.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

import mcp_notebook as mn
from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.engine.direction import infer_codes
from mcp_notebook.engine.pairing import OUTCOMES, pair_arrays, pair_python
from mcp_notebook.engine.walks import infer, pair
from mcp_notebook.fast.store import Store

from .traffic import random_columns, traffic

_DIRS = (None, "c2s", "s2c")


def _table(pt, st) -> list[tuple]:  # noqa: ANN001
    sess, meth = [*st.session[1], None], [*st.method[1], None]
    return [(int(pt.request_seq[i]), int(pt.response_seq[i]), sess[pt.session[i]],
             _DIRS[pt.requester[i] + 1], pt.id_key[i], meth[pt.method[i]],
             OUTCOMES[pt.outcome[i]], int(pt.cancel_seq[i]), int(pt.progress_count[i]))
            for i in range(len(pt))]


def _args(st: Store) -> tuple:
    return (st.kind, st.session[0], st.direction, st.id_key, st.id_code[0], st.id_code[1],
            st.method[0], st.method[1], st.is_tool_error, st.ref, st.progress)


@settings(max_examples=150, deadline=None)
@given(traffic)
def test_pairing_table_is_the_walks(case: tuple[int, int]) -> None:
    """The pair table of the arrays (C walk, else the Python walk on codes) is the rows and
    findings of the Python walk on the lists, row for row and word for word."""
    c = random_columns(random.Random(case[0]), case[1])
    st = Store.from_columns(c)
    rows, findings = pair(range(len(c)), c.session, c.direction, c.kind, c.id_key, c.method,
                          c.is_tool_error, c.ref, c.progress)

    def opt(v: int | None) -> int:
        return -1 if v is None else v

    want = [(opt(r.request_seq), opt(r.response_seq), r.session, r.requester, r.id_key,
             r.method, r.outcome, opt(r.cancel_seq), r.progress_count) for r in rows]
    want_findings = [(f.seq, f.rule, f.related_seq, f.detail) for f in findings]
    for pt in (pair_arrays(*_args(st)), pair_python(*_args(st)[:4], *_args(st)[6:])):
        assert _table(pt, st) == want
        assert pt.findings == want_findings


@settings(max_examples=60, deadline=None)
@given(traffic)
def test_pairing_with_the_loaders_id_index(case: tuple[int, int]) -> None:
    """The loader's dict of id keys (kept by a merge of parts) gives the C walk the same
    pairing as the table it otherwise makes of them."""
    need_native()
    st = Store.from_columns(random_columns(random.Random(case[0]), case[1]))
    plain = pair_arrays(*_args(st))
    indexed = pair_arrays(*_args(st), id_index={k: i for i, k in enumerate(st.id_code[1])})
    assert _table(plain, st) == _table(indexed, st) and plain.findings == indexed.findings


@settings(max_examples=150, deadline=None)
@given(traffic)
def test_direction_inference_is_the_walks(case: tuple[int, int]) -> None:
    rng = random.Random(case[0])
    c = random_columns(rng, case[1], unknown_dir=0.7)
    st = Store.from_columns(c)
    got = infer_codes(st.kind, st.session[0], st.id_code[0], st.method[0], st.method[1],
                      st.direction)
    assert [_DIRS[d + 1] for d in got.tolist()] == infer(c.kind, c.session, c.id_key,
                                                          c.method, c.direction)


@pytest.mark.parametrize("depth", [3, 64, 65, 200])
def test_direction_inference_with_deep_stacks(depth: int) -> None:
    """Many requests of one id still open (past the 64 the C walk keeps, it hands over to
    the Python walk), then their responses, mixed with a second id and unknown methods."""
    from mcp_notebook.table import Columns

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


def test_the_native_walks_ran(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the extension built (and MCP_NOTEBOOK_STRICT set by conftest, so no fallback
    passes silently) a load of bare NDJSON runs the C scanner, the C direction walk and
    the C pairing walk, and never the Python walks."""
    from mcp_notebook.engine import direction as direction_vec
    from mcp_notebook.engine import pairing as pairing_vec

    need_native()
    ran: list[str] = []
    real = native.native

    class Spy:
        def __getattr__(self, name: str):  # noqa: ANN204
            fn = getattr(real, name)

            def called(*a, **kw):  # noqa: ANN002, ANN003, ANN202
                ran.append(name)
                return fn(*a, **kw)
            return called

    def python_walk(*a, **kw):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the Python walk ran")

    monkeypatch.setattr(native, "native", Spy())
    monkeypatch.setattr(pairing_vec, "pair_python", python_walk)
    monkeypatch.setattr(direction_vec, "infer", python_walk)
    path = tmp_path / "bare.ndjson"
    path.write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
                    '{"jsonrpc":"2.0","id":1,"result":{}}\n')
    t = mn.load(path)
    assert t.pairs["outcome"].astype(str).tolist() == ["result"]
    assert {"scan", "directions", "pair"} <= set(ran), ran
