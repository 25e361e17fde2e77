"""The C envelope scanner (``_native``), when it is built; None otherwise.

The scanner takes the lines of the usual shape and leaves every other line to the Python
path of :mod:`.ndjson` and :mod:`.tap` (see the comment at the top of ``csrc/module.c``).
Set :data:`native` to None to load through the Python path only (the tests run both):
that is a switch, not a fallback. A scanner that is not built (:data:`IMPORT_ERROR` says
why) is a fallback: the load says so (see :mod:`.fallback`).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..fast.rows import Rows

__all__ = ["native", "IMPORT_ERROR", "NO_NATIVE_ENV", "missing", "out_lists", "str_lengths", "extras_with"]

#: set to 1 to run the Python path only, as where the extension is not built (on purpose:
#: no fallback note; the test suite runs once so)
NO_NATIVE_ENV = "MCP_NOTEBOOK_NO_NATIVE"

native: ModuleType | None
#: why ``_native`` could not be imported; None when it is built (or switched off)
IMPORT_ERROR: str | None = None
if os.environ.get(NO_NATIVE_ENV, "").strip() not in ("", "0"):
    native = None
else:
    try:
        native = importlib.import_module(f"{__package__}._native")
    except ImportError as exc:  # not built (no C compiler where it was installed)
        native = None
        IMPORT_ERROR = f"{type(exc).__name__}: {exc}"


def missing() -> str | None:
    """Why the C scanner is not in use when that is not the caller's choice: the note of a
    load that runs without it; None when it is in use or switched off on purpose."""
    if native is not None or IMPORT_ERROR is None:
        return None
    return (f"the C scanner (mcp_notebook.engine._native) is not built ({IMPORT_ERROR}): "
            "loaded by the Python path, several times slower; build it with "
            "`pip install -e .` or `python setup.py build_ext --inplace` (needs a C compiler)")


def out_lists(rows: Rows) -> tuple:
    """What ``_native.scan`` appends to: the current lists of ``rows`` and its sparse dicts."""
    sp = rows.sparse
    return (rows.kind, rows.id, rows.id_key, rows.method, rows.line, sp["error_code"],
            sp["error_message"], sp["is_tool_error"], sp["version"], rows.ref_rows,
            rows.ref_vals, rows.ref_intern, rows.prog_rows, rows.prog_vals, rows.empty_rows,
            rows.methods.index, rows.methods.values, rows.base, rows.call_recs, rows.call_blob,
            rows.call_index, rows.call_strs, rows.list_rows, rows.list_vals, rows.list_intern)


def str_lengths(values: list) -> np.ndarray:
    """The length of each str of a list (-1 for anything else), in C when it is built."""
    if native is not None:
        return np.frombuffer(native.lengths(values), dtype=np.int64)
    return np.fromiter((len(v) if isinstance(v, str) else -1 for v in values),
                       dtype=np.int64, count=len(values))


def extras_with(extra: dict[int, Any], keys: tuple[str, ...]) -> list[tuple[int, Any]]:
    """The ``(row, extra)`` items of a store's extras that hold any of ``keys``, in the
    dict's order; in C when it is built (a HAR, recorder or Inspector capture has an extra
    on every row: the Python walk took 0.08 to 0.12 s at 1M rows, each rule that asks)."""
    if native is not None:
        return native.extras_with(extra, keys)  # type: ignore[no-any-return]
    return [(i, e) for i, e in extra.items() if any(k in e for k in keys)]
