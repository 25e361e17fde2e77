"""``trace._cols`` for code written against the reference ``Columns`` lists.

A :class:`ColumnsView` is a :class:`~mcp_notebook.table.Columns` whose lists are made
from the store when first read (reading ``raw`` of a lazy capture reads the whole file).
"""

from __future__ import annotations

from typing import Any

from ..table import Columns
from .store import Store

__all__ = ["ColumnsView"]

_FIELDS = set(Columns.__dataclass_fields__)


class ColumnsView(Columns):
    def __init__(self, store: Store) -> None:  # noqa: D107 - lists come on demand
        self.__dict__["_store"] = store

    def __getattr__(self, name: str) -> Any:
        store = self.__dict__.get("_store")
        if store is None or name not in _FIELDS:
            raise AttributeError(name)
        if name == "extra":
            value: Any = store.extra
        elif name == "blank_lines":
            value = store.blank_lines
        else:
            value = store.values(name)
        self.__dict__[name] = value
        return value
