"""The view of a collection: its sessions table, latency histograms per method, and the
explorer of the session a click picks.

A thin widget over :mod:`.fleetrender`: Python sorts and formats the rows, the browser
sets them as text and sends back the clicked row (``selected_row``) or heading
(``sort_by``). The picked session's capture is loaded with ``mn.load`` (once per capture)
and shown with :func:`~.explorer.explore`, its inspector filtered to that session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as W
import numpy as np
import traitlets

from . import fleetrender as R
from .explorer import Explorer, explore
from .render import STYLE, esc
from .snapshot import StaticFallback

__all__ = ["FleetView", "SessionsTable", "fleet"]

_STATIC = Path(__file__).parent / "static"


class SessionsTable(StaticFallback, anywidget.AnyWidget):
    """Rows of text; a click on a row sets ``selected_row`` (the session's position in
    ``c.sessions``), a click on a heading sets ``sort_by`` / ``ascending``."""

    _esm = _STATIC / "fleet.js"
    _css = _STATIC / "fleet.css"
    columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    fields = traitlets.List(traitlets.Unicode()).tag(sync=True)
    numeric = traitlets.List(traitlets.Unicode()).tag(sync=True)
    rows: traitlets.List = traitlets.List().tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    sort_by = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    ascending = traitlets.Bool(True).tag(sync=True)
    selected_row = traitlets.Int(None, allow_none=True).tag(sync=True)


class FleetView(StaticFallback, W.VBox):
    """Sessions table, latency histograms per method, and the explorer of one session.

    Traits
    ------
    selected
        The picked session: its position in ``collection.sessions`` (a click on its row,
        or set from Python); ``None`` shows no explorer.
    sort_by, ascending
        The column of ``collection.sessions`` the table is sorted by.

    Attributes
    ----------
    explorer
        The :class:`~.explorer.Explorer` of the picked session (``None`` before a pick).
    """

    selected = traitlets.Int(None, allow_none=True)
    sort_by = traitlets.Unicode(None, allow_none=True)
    ascending = traitlets.Bool(True)

    def __init__(self, collection: Any, *, max_rows: int = 500, **kwargs: Any) -> None:
        self.collection = collection
        self.max_rows = max_rows
        self.explorer: Explorer | None = None
        self._traces: dict[str, Any] = {}
        self.table = SessionsTable(columns=[h for h, _ in R.TABLE], fields=[c for _, c in R.TABLE],
                                   numeric=sorted(R._NUMERIC))
        self.headline = W.HTML(f'{STYLE}<div class="mnw"><div class="mnw-h">'
                               f'{esc(R._headline(collection))}</div></div>')
        try:
            hist = collection.latency_histograms("method")
        except Exception as exc:  # noqa: BLE001 - the table is still worth showing
            self.histograms = W.HTML(f'<div class="mnw mnw-muted">no histograms '
                                     f'({esc(type(exc).__name__)}: {esc(exc)})</div>')
        else:
            self.histograms = W.HTML(
                '<div class="mnw"><div class="mnw-h">latency by method <span class="mnw-sub">'
                '(OpenTelemetry MCP duration buckets)</span></div></div>'
                + R.histograms_html(hist))
        self.status = W.HTML('<div class="mnw mnw-muted">click a session to explore it</div>')
        self.detail = W.VBox([])
        traitlets.link((self.table, "selected_row"), (self, "selected"))
        traitlets.link((self.table, "sort_by"), (self, "sort_by"))
        traitlets.link((self.table, "ascending"), (self, "ascending"))
        super().__init__([self.headline, self.table, self.histograms, self.status, self.detail],
                         **kwargs)
        self.add_class("mn-fleet")
        self._render_rows()

    # -- the table ------------------------------------------------------------------------
    @traitlets.observe("sort_by", "ascending")
    def _on_sort(self, change: Any) -> None:
        if hasattr(self, "table"):
            self._render_rows()

    def _render_rows(self) -> None:
        s = self.collection.sessions
        order = R.sort_order(s, self.sort_by, self.ascending)
        shown = order[: self.max_rows]
        self.table.rows = R.session_rows(s, shown)
        self.table.note = (f"showing {len(shown):,} of {len(s):,} sessions: sort to see others"
                           if len(shown) < len(s) else "")

    # -- the pick -------------------------------------------------------------------------
    def trace_of(self, capture: str) -> Any:
        """The Trace of one capture of the collection (loaded once, then kept)."""
        if capture not in self._traces:
            import mcp_notebook as mn

            paths = getattr(self.collection, "paths", None) or {}
            if capture not in paths:
                raise KeyError(f"the collection does not know the file of {capture!r}")
            self._traces[capture] = mn.load(paths[capture])
        return self._traces[capture]

    @traitlets.validate("selected")
    def _check_selected(self, proposal: Any) -> int | None:
        pos = proposal["value"]
        if pos is not None and not 0 <= pos < len(self.collection.sessions):
            raise traitlets.TraitError(f"no session at position {pos}")
        return pos

    @traitlets.observe("selected")
    def _on_selected(self, change: Any) -> None:
        pos = change["new"]
        if pos is None:
            self.explorer = None
            self.detail.children = []
            return
        rec = self.collection.sessions.iloc[int(pos)]
        capture, session = rec["capture"], rec["session"]
        try:
            trace = self.trace_of(capture)
        except Exception as exc:  # noqa: BLE001 - say why, keep the table usable
            self.explorer = None
            self.detail.children = []
            self.status.value = (f'<div class="mnw mnw-muted">cannot open {esc(capture)}: '
                                 f'{esc(type(exc).__name__)}: {esc(exc)}</div>')
            return
        query = R.session_query(session)
        exact = "*" not in query
        ex = explore(trace, query=query if exact else "")
        if not exact:  # a '*' in a session name is a wildcard to the filter: mask instead
            frames = trace.frames["session"].astype(object)
            ex.inspector.set_range(np.asarray(frames == session, dtype=bool),
                                   f"session {session}")
        self.explorer = ex
        self.status.value = (f'<div class="mnw"><div class="mnw-h">{esc(capture)} '
                             f'<span class="mnw-sub">session {esc(session)}</span></div></div>')
        self.detail.children = [ex]

    def select(self, capture: str, session: Any = None) -> Explorer | None:
        """Pick the session ``session`` of ``capture`` (its first when not given), as a
        click on its row does; returns the explorer."""
        s = self.collection.sessions
        hit = s.index[(s["capture"] == capture)
                      & ((s["session"] == session) if session is not None else True)]
        if len(hit) == 0:
            raise KeyError(f"no session {session!r} in {capture!r}")
        self.selected = int(s.index.get_loc(hit[0]))
        return self.explorer

    def _static_text(self) -> str:
        return R.fleet_text(self.collection)

    def static_bundle(self) -> dict[str, str]:
        """The static picture: the sessions table and the histograms (SVG), as HTML."""
        out = super().static_bundle()
        out["text/html"] = R.fleet_html(self.collection)
        return out


def fleet(collection: Any, *, max_rows: int = 500) -> FleetView:
    """The view of a collection (``mn.load_many(...)``): a sortable sessions table, a
    latency histogram per method, and the explorer of the session you click.

    Parameters
    ----------
    collection
        A :class:`~mcp_notebook.collection.Collection`.
    max_rows
        The most sessions the table sends to the browser (sorting picks which).
    """
    return FleetView(collection, max_rows=max_rows)
