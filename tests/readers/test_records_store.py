"""Every reader's records go into the one column store (``fast.records``) with the rows
the reference gives (``table.collect``, the list model, into ``Store.from_columns``):
the same values in every column, on every bundled capture and wild fixture, by every
format that reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_notebook import readers
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.table import Columns, collect

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for p in [*(ROOT / "data").glob("*"), *(ROOT / "tests/readers/data").glob("*"),
                           *(ROOT / "../shared/fixtures/wild").glob("*/*")]
               if p.is_file() and not p.name.endswith((".md", ".source.txt")))
COLUMNS = sorted(set(Columns.__dataclass_fields__) - {"extra", "blank_lines"})


def _stores(path: Path) -> tuple[Store, Store]:
    fmt = readers.sniff(path)
    ref = Store.from_columns(collect(readers.read(path, format=fmt)))
    new = Store.from_parts([part_of(readers.read(path, format=fmt))])
    return ref, new


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_records_give_the_reference_rows(path):
    ref, new = _stores(path)
    assert new.n == ref.n
    assert new.blank_lines == ref.blank_lines
    for name in COLUMNS:
        assert new.values(name) == ref.values(name), name
    assert new.extra == ref.extra


def test_there_are_captures_of_every_reader():
    fmts = {readers.sniff(p) for p in FILES}
    assert {"claude-desktop", "vscode", "har", "inspector", "recorder", "curl"} <= fmts
