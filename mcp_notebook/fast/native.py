"""The C envelope scanner (``_native``), when it is built; None otherwise.

The scanner takes the lines of the usual shape and leaves every other line to the Python
path of :mod:`.ndjson` and :mod:`.tap` (see the comment at the top of ``csrc/module.c``).
Set :data:`native` to None to load through the Python path only (the tests run both).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .rows import Rows

__all__ = ["native", "out_lists", "str_lengths"]

native: ModuleType | None
try:
    native = importlib.import_module(f"{__package__}._native")
except ImportError:  # not built (no C compiler where it was installed)
    native = None


def out_lists(rows: Rows) -> tuple:
    """What ``_native.scan`` appends to: the current lists of ``rows`` and its sparse dicts."""
    sp = rows.sparse
    return (rows.kind, rows.id, rows.id_key, rows.method, rows.line, sp["error_code"],
            sp["error_message"], sp["is_tool_error"], sp["version"], rows.ref_rows,
            rows.ref_vals, rows.ref_intern, rows.prog_rows, rows.prog_vals, rows.empty_rows,
            rows.methods.index, rows.methods.values, rows.base)


def str_lengths(values: list) -> np.ndarray:
    """The length of each str of a list (-1 for anything else), in C when it is built."""
    if native is not None:
        return np.frombuffer(native.lengths(values), dtype=np.int64)
    return np.fromiter((len(v) if isinstance(v, str) else -1 for v in values),
                       dtype=np.int64, count=len(values))
