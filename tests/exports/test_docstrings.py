"""The export modules' docstring examples run on the bundled samples."""

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = ["mcp_notebook.boundary", "mcp_notebook.report_formats", "mcp_notebook.otlp",
           "mcp_notebook.readers.otlp_facts"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no doctest"


def test_the_exports_page_lists_every_boundary_column() -> None:
    from mcp_notebook.boundary import BOUNDARY_COLUMNS

    page = (Path(__file__).resolve().parents[2] / "docs" / "exports.md").read_text("utf-8")
    for name, (dtype, meaning) in BOUNDARY_COLUMNS.items():
        assert f"| `{name}` | {dtype} | {meaning} |" in page, name
