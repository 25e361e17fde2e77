"""The redaction modules' docstring examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["mcp_notebook.redact.policy", "mcp_notebook.redact.shapes",
                                  "mcp_notebook.redact.frames"])
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
