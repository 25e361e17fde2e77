"""The table's store of a reader's records, compared: what the spans tests of the line and
document formats check (the rows the table makes of the spans are those it makes of the
records)."""

from __future__ import annotations

from pathlib import Path

from mcp_notebook import readers
from mcp_notebook.fast.records import part_of
from mcp_notebook.fast.store import Store
from mcp_notebook.table import Columns, collect

COLUMNS = sorted(set(Columns.__dataclass_fields__) - {"extra", "blank_lines"})


def assert_same_store(a: Store, b: Store) -> None:
    """Every row, column and extra field of ``a`` is ``b``'s."""
    assert a.n == b.n
    assert a.blank_lines == b.blank_lines
    for name in COLUMNS:
        assert a.values(name) == b.values(name), name
    assert a.extra == b.extra


def assert_spans_give_the_records_rows(path: Path, fmt: str) -> None:
    """The store of the reader's records (the reference, through ``collect``) is that of
    the same records handed over one by one, and that of its blocks (spans included)."""
    ref = Store.from_columns(collect(readers.read(path, format=fmt)))
    assert_same_store(ref, Store.from_parts([part_of(list(readers.read(path, format=fmt)))]))
    assert_same_store(ref, Store.from_parts([part_of(readers.read(path, format=fmt))]))
