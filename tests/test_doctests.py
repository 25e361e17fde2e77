"""Docstring examples run (on the bundled samples where they load a trace)."""

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["mcp_notebook", "mcp_notebook.protocol.envelope", "mcp_notebook.protocol.versions",
           "mcp_notebook.protocol.rules", "mcp_notebook.trace", "mcp_notebook.teach",
           "mcp_notebook.teach.show", "mcp_notebook.widgets.units",
           "mcp_notebook.widgets.lanes", "mcp_notebook.widgets.sequence"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name not in ("mcp_notebook.trace", "mcp_notebook.teach"):
        assert result.attempted > 0, f"{name} has no doctest"
