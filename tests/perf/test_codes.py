"""The C codes pass (``native.codes``) numbers values as ``Codes.codes``' Python loop does:
codes in order of first sight, None as -1, equal values (and their paired ids) replaced by
the first object seen, across several calls into one code space."""

from __future__ import annotations

import random

import numpy as np
import pytest

from helpers import need_native
from mcp_notebook.engine import native
from mcp_notebook.fast import rows


@pytest.fixture(autouse=True)
def scanner() -> str:
    """A test of the C pass (tests/perf/conftest.py fails it if the extension is not built)."""
    need_native()
    return "c"


def _batches(seed: int) -> list[tuple[list[object], list[object]]]:
    rnd = random.Random(seed)
    out = []
    for _ in range(rnd.randint(1, 6)):
        values: list[object] = []
        paired: list[object] = []
        for _ in range(rnd.randint(0, 400)):
            r = rnd.random()
            if r < 0.1:
                values.append(None)
                paired.append(None)
            else:  # a fresh str each time: equal texts are other objects
                k = rnd.randint(0, 300 if r < 0.9 else 5)
                values.append("".join(["k", str(k)]))
                paired.append(k)
        out.append((values, paired))
    return out


def _run(batches: list[tuple[list[object], list[object]]], c: bool,
         monkeypatch: pytest.MonkeyPatch) -> tuple[list[np.ndarray], rows.Codes, list[object]]:
    with monkeypatch.context() as m:
        if not c:
            m.setattr(native, "native", None)
        space = rows.Codes()
        got, kept = [], []
        for values, paired in batches:
            v, p = list(values), list(paired)
            got.append(space.codes(v, canon=True, paired=p).copy())
            kept.append((v, p))
    return got, space, kept


@pytest.mark.parametrize("seed", range(40))
def test_codes_in_c_as_in_python(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches(seed)
    c_codes, c_space, c_kept = _run(batches, True, monkeypatch)
    p_codes, p_space, p_kept = _run(batches, False, monkeypatch)
    for a, b in zip(c_codes, p_codes, strict=True):
        assert a.dtype == np.int32 and a.tolist() == b.tolist()
    assert c_space.index == p_space.index
    assert c_space.values == p_space.values and c_space.paired == p_space.paired
    # the values and ids given back are the first objects seen, not only equal to them
    for (cv, cp), (pv, pp) in zip(c_kept, p_kept, strict=True):
        assert cv == pv and cp == pp
        for k, x in enumerate(cv):
            if x is not None:
                assert x is c_space.values[c_space.index[x]]
                assert cp[k] is c_space.paired[c_space.index[x]]
