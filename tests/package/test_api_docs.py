"""``docs/api.md`` is the docstrings of today (``make docs`` rewrites it)."""

from __future__ import annotations

import mcp_notebook as mn
from mcp_notebook._apidoc import render

from .conftest import REPO


def test_api_page_is_up_to_date():
    page = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    assert page == render(), "docs/api.md is stale: run `make docs`"


def test_api_page_covers_the_public_names():
    page = render()
    for name in set(mn.__all__) - {"teach"}:
        assert f"`mn.{name}" in page, name
    for name in ("worksheets", "exercise", "check_install"):
        assert f"`mn.teach.{name}(" in page
    assert "(no docstring)" not in page
    assert "(self" not in page and "'str" not in page
