"""The frame table widget: a virtual scroller over any number of rows, sortable, keyboard-led.

The rows stay in Python: the browser holds a spacer as tall as every row and asks for the
window it scrolls to (``want``); only that window (``WINDOW`` rows of plain strings) is sent.
A heading click sorts by that column (``sort``); the order is one ``argsort`` over the rows
that pass the filter, on a rank of the column made once per column (so sorting a million rows
by latency or method costs one ``argsort`` of integers). ↑/↓, PageUp/PageDown, Home/End move
the selection, Enter opens it, ``p`` goes to the pair, ``c``/``r``/``l`` copy the selected
frame as JSON, raw text or one compact JSON-RPC line (``clip`` holds those three texts).

Why hand-written and not quak or Perspective (evaluated from their documentation): quak
(an anywidget over DuckDB and Mosaic, rows queried in the kernel, only the visible ones sent)
is the closest fit, but its own README calls it a prototype "not production-ready", it needs
the whole table in DuckDB (the lazy ``raw`` and ``info`` columns of a 1 GB capture would have
to be read into memory first), and its selection is a SQL filter, not one frame shared with the
timeline and a pair to jump to. Perspective needs its own JupyterLab extension (so no marimo
and no plain anywidget), ships a WebAssembly engine of several MB and loads the table into
the browser or a server it runs. Neither has keyboard navigation to a request's pair or
copying a frame as its wire text. The hand-written table is about 250 lines of JavaScript.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import msgspec
import numpy as np
import pandas as pd
import traitlets

from .frametable import TABLE_COLUMNS, rows_at
from .snapshot import StaticFallback

__all__ = ["FrameTable", "WINDOW", "COLUMN_WIDTHS", "sort_rank"]

_STATIC = Path(__file__).parent / "static"
#: rows sent per window (the browser shows about 18; 80 keep the first payload small)
WINDOW = 80
#: pixel widths of the columns, in TABLE_COLUMNS order
COLUMN_WIDTHS = [58, 86, 38, 84, 150, 320, 78, 70, 64, 40, 90, 60]
_MAX_CLIP = 4_000_000  # characters of a frame kept ready to copy
_MISSING = np.iinfo(np.int64).max


def sort_rank(table: pd.DataFrame, key: str) -> np.ndarray:
    """An int64 rank per row: sorting rows by it sorts them by column ``key``.

    Missing values get the largest rank, so they come last either way.
    """
    col = {"time": "ts", "dir": "direction", "id": "id_key", "bytes": "size",
           "flag": "has_violation"}.get(key, key)
    s = table[col]
    if col == "ts" or col == "latency":
        v = np.asarray(s.array.asi8, dtype=np.int64).copy()  # NaT is int64 min
        v[pd.isna(s).to_numpy()] = _MISSING
        return v
    if isinstance(s.dtype, pd.CategoricalDtype):
        if col in ("kind", "direction"):  # their own order (request before result, c2s first)
            codes = s.cat.codes.to_numpy().astype(np.int64)
        else:
            cats = np.asarray(s.cat.categories, dtype=object).astype(str)
            order = np.unique(cats, return_inverse=True)[1]
            codes = s.cat.codes.to_numpy().astype(np.int64)
            codes = np.where(codes >= 0, order[np.maximum(codes, 0)], -1)
        return np.where(codes >= 0, codes, _MISSING)
    if s.dtype == bool:
        return (~s.to_numpy(dtype=bool)).astype(np.int64)  # flagged rows first
    if pd.api.types.is_numeric_dtype(s.dtype):
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        r = np.unique(v, return_inverse=True)[1].astype(np.int64)  # equal values, equal rank
        r[np.isnan(v)] = _MISSING
        return r
    values = s.astype(object) if not isinstance(s.dtype, np.dtype) else s
    codes, _ = pd.factorize(values, sort=True)
    codes = np.asarray(codes, dtype=np.int64)
    return np.where(codes >= 0, codes, _MISSING)


class FrameTable(StaticFallback, anywidget.AnyWidget):
    """The filtered rows of a frame table, shown a window at a time; see the module doc.

    Python sets the rows with :meth:`set_rows`; ``order`` is the filtered positions in the
    shown order. ``on_open`` and ``on_pair`` are called for Enter and ``p``.
    """

    _esm = _STATIC / "table.js"
    _css = _STATIC / "table.css"
    columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    col_keys = traitlets.List(traitlets.Unicode()).tag(sync=True)
    widths = traitlets.List(traitlets.Int()).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    start = traitlets.Int(0).tag(sync=True)
    rows: traitlets.List = traitlets.List().tag(sync=True)
    want = traitlets.Int(0).tag(sync=True)
    sort = traitlets.List(traitlets.Unicode(), default_value=["", ""]).tag(sync=True)
    selected_seq = traitlets.Int(None, allow_none=True).tag(sync=True)
    sel_index = traitlets.Int(-1).tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    clip = traitlets.Dict().tag(sync=True)
    # counts the reorders that put the view back at the first row; it changes in the same
    # update as the rows and the selection's index, so the page scrolls to the top rather
    # than to the selected row (a separate message arrived after the rows were drawn)
    tops = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(columns=[h for _, h in TABLE_COLUMNS],
                         col_keys=[k for k, _ in TABLE_COLUMNS], widths=COLUMN_WIDTHS, **kwargs)
        self.table: pd.DataFrame | None = None
        self.positions = np.zeros(0, dtype=np.int64)
        self.order = np.zeros(0, dtype=np.int64)
        self.origin: Any = None
        self.message: Callable[[int], Any] = lambda seq: None
        self.on_open: Callable[[], None] = lambda: None
        self.on_pair: Callable[[], None] = lambda: None
        self._ranks: dict[str, np.ndarray] = {}
        self.rules: Any = {}  # seq -> rule codes (.get), for the flag cell
        self._seq: np.ndarray = np.zeros(0, dtype=np.int64)
        self.on_msg(self._on_msg)

    # -- data -----------------------------------------------------------------------------------
    def set_rows(self, table: pd.DataFrame, positions: np.ndarray, origin: Any = None) -> None:
        """Show ``table``'s rows at ``positions`` (in capture order; the sort applies)."""
        if table is not self.table:
            self._ranks = {}
            self._seq = table["seq"].to_numpy(dtype=np.int64)
        self.table, self.origin = table, origin
        self.positions = np.asarray(positions, dtype=np.int64)
        self._reorder(scroll_top=True)

    def _reorder(self, scroll_top: bool = False) -> None:
        key, direction = (list(self.sort) + ["", ""])[:2]
        order = self.positions
        if key and self.table is not None and len(order):
            if key not in self._ranks:
                self._ranks[key] = sort_rank(self.table, key)
            r = self._ranks[key][order]
            if direction == "desc":
                r = np.where(r == _MISSING, _MISSING, -r)
            order = order[np.argsort(r, kind="stable")]
        self.order = order
        with self.hold_sync():
            self.total = len(order)
            self.note = f"{len(order):,} rows" + (
                f" · sorted by {key} {'↓' if direction == 'desc' else '↑'}" if key else "")
            self._send_window(0 if scroll_top else self.start, centre=False)
            self._update_index()
            if scroll_top:
                self.tops += 1

    @traitlets.observe("sort")
    def _on_sort(self, change: Any) -> None:
        if self.table is not None:
            self._reorder(scroll_top=True)

    @traitlets.observe("want")
    def _on_want(self, change: Any) -> None:
        self._send_window(int(change["new"]))

    def _send_window(self, first: int, centre: bool = True) -> None:
        if self.table is None:
            return
        start = max(0, min(first - (WINDOW // 4 if centre else 0), len(self.order) - WINDOW))
        self.start = start
        self.rows = rows_at(self.table, self.order[start:start + WINDOW], self.origin,
                            self.rules)

    # -- selection --------------------------------------------------------------------------------
    def index_of(self, seq: int | None) -> int:
        """Where frame ``seq`` is in the shown order, or -1."""
        if seq is None or not len(self.order):
            return -1
        pos = np.searchsorted(self._seq, seq)
        if pos >= len(self._seq) or self._seq[pos] != seq:
            return -1
        hit = np.flatnonzero(self.order == pos)
        return int(hit[0]) if len(hit) else -1

    def _update_index(self) -> None:
        i = self.index_of(self.selected_seq)
        if i >= 0 and not (self.start <= i < self.start + len(self.rows)):
            self._send_window(i)
        self.sel_index = i

    @traitlets.observe("selected_seq")
    def _on_selected(self, change: Any) -> None:
        with self.hold_sync():
            self._update_index()
            self.clip = self._clip(change["new"])

    def _clip(self, seq: int | None) -> dict[str, str]:
        if seq is None or self.table is None:
            return {}
        pos = np.searchsorted(self._seq, seq)
        if pos >= len(self._seq) or self._seq[pos] != seq:
            return {}
        raw = self.table["raw"].iat[int(pos)]
        raw = raw if isinstance(raw, str) else ""
        if len(raw) > _MAX_CLIP:
            cut = f"(frame #{seq} has {len(raw):,} characters: copy it from trace.frames)"
            return {"json": cut, "raw": cut, "line": cut}
        msg = self.message(int(seq))
        if msg is None:
            return {"json": raw, "raw": raw, "line": raw}
        line = msgspec.json.encode(msg).decode()
        return {"json": msgspec.json.format(line, indent=2), "raw": raw, "line": line}

    def move(self, by: int | None = None, to: int | None = None) -> None:
        """Select the row ``by`` rows down (up if negative) or at index ``to`` (-1: last)."""
        if not len(self.order):
            return
        i = self.index_of(self.selected_seq)
        if to is not None:
            j = to if to >= 0 else len(self.order) - 1
        else:
            j = (0 if (by or 0) > 0 else len(self.order) - 1) if i < 0 else i + (by or 0)
        j = max(0, min(j, len(self.order) - 1))
        self.selected_seq = int(self._seq[self.order[j]])

    def _on_msg(self, _: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "move":
            by, to = content.get("by"), content.get("to")
            self.move(int(by) if isinstance(by, int) else None,
                      int(to) if isinstance(to, int) else None)
        elif kind == "open":
            self.on_open()
        elif kind == "pair":
            self.on_pair()
