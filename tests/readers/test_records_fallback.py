"""A failure of the C scanner inside the records path is said (raised when strict, noted
and warned otherwise) and costs no frame: the Python path reads on."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.engine import native
from mcp_notebook.engine.fallback import STRICT_ENV, FallbackWarning, FastPathError

DATA = Path(__file__).resolve().parents[2] / "data"


class _Failing:
    def __init__(self, real):  # noqa: ANN001
        self.real = real

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        if name == "scan":
            def scan(*args, **kw):  # noqa: ANN002, ANN003, ANN202
                raise IndexError("injected failure in scan")
            return scan
        return getattr(self.real, name)


def test_a_failing_scanner_is_said_and_costs_nothing(monkeypatch):
    if native.native is None:
        pytest.skip("the C extension is not built")
    path = DATA / "demo-http.har"
    want = mn.load(path).frames["raw"].tolist()
    monkeypatch.delenv(STRICT_ENV, raising=False)
    monkeypatch.setattr(native, "native", _Failing(native.native))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = mn.load(path)
    said = [str(w.message) for w in record if issubclass(w.category, FallbackWarning)]
    assert len(said) == 1 and "C scanner failed on a reader's records" in said[0]
    assert t.frames["raw"].tolist() == want


def test_a_failing_scanner_raises_when_strict(monkeypatch):
    if native.native is None:
        pytest.skip("the C extension is not built")
    monkeypatch.setattr(native, "native", _Failing(native.native))
    with pytest.raises(FastPathError, match="C scanner failed"):
        mn.load(DATA / "demo-http.har")
