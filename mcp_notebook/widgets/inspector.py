"""The inspector widget: a filterable virtual frame table, and beside it the selected frame
with its pair.

Small ipywidgets over pure functions: :mod:`.frametable` (the table's rows),
:mod:`.filters` (the filter language), :mod:`.render` (escaped HTML), :mod:`.links`
(pair, cancel, progress); the table itself is :class:`~.vtable.FrameTable`, which sends
the browser only the rows it scrolls to.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
import traitlets
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle

from .aggregate import positions
from .filters import FilterError, apply_filter
from .frametable import frame_table
from .links import related
from .render import STYLE, Mark, esc, frame_html, violations_html
from .search import highlight, search_words
from .snapshot import StaticFallback
from .violations import rules_by_seq
from .vtable import FrameTable

__all__ = ["FrameTable", "Inspector", "inspect"]

_ANY = "(any)"


def _options(values: pd.Series, limit: int = 60) -> list[str]:
    counts = values.value_counts(dropna=True)  # fast on categoricals; no string copies
    counts = counts[counts > 0]
    return [_ANY] + sorted({str(v) for v in counts.index[:limit]})


class Inspector(StaticFallback, W.VBox):
    """Filter, sort, scroll and read the frames of a trace; the detail sits beside the table.

    Traits
    ------
    selected_seq
        The frame shown in the detail pane (with its pair beside it).
    query
        The filter text (see :mod:`mcp_notebook.widgets.filters`).
    """

    selected_seq = traitlets.Int(None, allow_none=True)
    query = traitlets.Unicode("")

    def __init__(self, trace: Any, *, query: str = "", **kwargs: Any):
        self._trace = trace
        self.table = frame_table(trace)
        ts = self.table["ts"]
        self._origin = ts.min() if ts.notna().any() else None
        self._range_mask: np.ndarray | None = None
        self._range_label = ""
        self._positions = np.arange(len(self.table))
        self._words: list[str] = []
        self._filter_expr = "df"
        t = self.table
        # the controls share their layout and style models (one each, not one per control)
        auto = W.Layout(width="auto")
        dd = dict(layout=W.Layout(width="auto", min_width="120px"),
                  style=DescriptionStyle(description_width="initial"))
        bstyle = W.ButtonStyle()
        hstyle = HTMLStyle()
        full, plain = W.Layout(width="100%"), W.Layout()
        self._kind = W.Dropdown(options=_options(t["kind"]), description="kind", **dd)
        self._dir = W.Dropdown(options=[_ANY, "c2s", "s2c"], description="dir", **dd)
        self._outcome = W.Dropdown(options=_options(t["outcome"]), description="outcome", **dd)
        self._session = W.Dropdown(options=_options(t["session"]), description="session", **dd)
        self._method = W.Dropdown(options=_options(t["method"]), description="method", **dd)
        self._viol = W.Checkbox(description="has violation", indent=False, layout=auto)
        self._text = W.Text(placeholder="filter, e.g.  method:tools/call outcome:error "
                                        "latency>500ms -method:notifications/*",
                            continuous_update=False, layout=full)
        self._status = W.HTML(layout=plain, style=hstyle)
        self._grid = FrameTable()
        self._grid.message = trace.message
        self._grid.on_pair = lambda: self._jump("pair")
        self._grid.on_open = self._open
        self._grid.rules = rules_by_seq(trace.violations)
        self._compare_seq: int | None = None  # a related frame to show instead of the pair
        self._clear_range = W.Button(description="clear time range", style=bstyle,
                                     layout=W.Layout(width="auto", display="none"))
        self._frame = W.HTML(layout=full, style=hstyle)
        self._pair = W.HTML(layout=full, style=hstyle)
        self._viols = W.HTML(layout=plain, style=hstyle)
        self._to_pair = W.Button(description="go to pair", icon="exchange", disabled=True,
                                  layout=auto, style=bstyle)
        self._to_cancel = W.Button(description="go to cancel", icon="ban", disabled=True,
                                    layout=auto, style=bstyle)
        self._to_progress = W.Button(description="show progress", icon="tasks",
                                      disabled=True, layout=auto, style=bstyle)
        self._related: dict = {}
        self._finding: tuple[int, str, str] | None = None  # (seq, rule, message) picked
        self._pointers: dict[tuple[str, int], list[tuple[str, str]]] | None = None

        for w in (self._kind, self._dir, self._outcome, self._session, self._method, self._viol):
            w.observe(self._on_controls, "value")
        self._text.observe(lambda c: setattr(self, "query", c["new"]), "value")
        self._clear_range.on_click(lambda _: self.set_range(None))
        self._to_pair.on_click(lambda _: self._jump("pair"))
        self._to_cancel.on_click(lambda _: self._jump("cancel"))
        self._to_progress.on_click(lambda _: self._show_progress())
        traitlets.link((self._grid, "selected_seq"), (self, "selected_seq"))

        wrap = W.Layout(flex_flow="row wrap")
        controls = W.HBox([self._kind, self._dir, self._outcome, self._session, self._method,
                           self._viol], layout=wrap)
        buttons = W.HBox([self._to_pair, self._to_cancel, self._to_progress], layout=wrap)
        # split layout: the table on the left, the selected frame and its pair on the right,
        # so a selection and its detail are on screen together
        left = W.VBox([self._status, self._grid, self._clear_range],
                      layout=W.Layout(flex="3 1 0", min_width="0"))
        self._detail = W.VBox([buttons, self._frame, self._pair, self._viols],
                              layout=W.Layout(flex="2 1 0", min_width="260px",
                                              max_height="470px", overflow="auto"))
        self._detail.add_class("mn-detail")
        split = W.HBox([left, self._detail], layout=W.Layout(width="100%", align_items="stretch"))
        split.add_class("mn-split")
        super().__init__([W.HTML(STYLE, layout=plain, style=hstyle), controls, self._text, split],
                         **kwargs)
        self.add_class("mn-inspector")
        self.query = query
        self._text.value = query
        self._apply()
        self._show_detail()

    # -- filtering ----------------------------------------------------------
    def _control_terms(self) -> list[str]:
        terms = []
        for field, w in (("kind", self._kind), ("dir", self._dir), ("outcome", self._outcome),
                         ("session", self._session), ("method", self._method)):
            if w.value not in (None, _ANY):
                v = str(w.value)
                terms.append(f'{field}:"{v}"' if (" " in v or '"' in v or "," in v) else
                             f"{field}:{v}")
        if self._viol.value:
            terms.append("has:violation")
        return terms

    def _on_controls(self, _: Any) -> None:
        self._apply()

    @traitlets.observe("query")
    def _on_query(self, change: Any) -> None:
        if change["name"] == "query" and self._text.value != change["new"]:
            self._text.value = change["new"]
        if hasattr(self, "_grid"):
            self._apply()

    def set_range(self, mask: np.ndarray | None, label: str = "") -> None:
        """Keep only frames where ``mask`` is True (the timeline's brushed range)."""
        self._range_mask = mask
        self._range_label = label
        self._clear_range.layout.display = "none" if mask is None else ""
        self._apply()

    @property
    def filtered(self) -> pd.DataFrame:
        """The rows that pass the current filter and range."""
        return self.table.iloc[self._positions]

    @property
    def expression(self) -> str:
        """The pandas expression for the current filter (``df = frame_table(trace)``)."""
        return self._filter_expr

    def _apply(self) -> None:
        q = " ".join(self._control_terms() + [self.query.strip()]).strip()
        self._words = search_words(self.query)
        if self._words:  # the browser shows this while the kernel searches
            self._status.value = (f'<div class="mnw">searching {len(self.table):,} frames for '
                                  f"{esc(' '.join(self._words))} …</div>")
        try:
            f = apply_filter(self.table, q, self._trace.violations)
        except FilterError as exc:
            self._status.value = (f'<div class="mnw" style="color:#a1352d">filter error: '
                                  f"{esc(exc)}</div>")
            return
        except Exception as exc:  # noqa: BLE001 - a widget callback's exception is never seen
            # by the user: say in the widget that the filter did not run, instead of leaving
            # the last status line ("all frames") standing for a search that did not happen
            self._status.value = (f'<div class="mnw" style="color:#a1352d">filter failed, no '
                                  f"rows selected by it ({esc(type(exc).__name__)}: {esc(exc)}); "
                                  "this is a bug in mcp_notebook, please report it</div>")
            return
        mask = f.mask if self._range_mask is None else f.mask & self._range_mask
        self._positions = np.flatnonzero(mask)
        self._filter_expr = f.expr
        rng = (f' · <span class="mnw-sub">range {esc(self._range_label)}</span>'
               if self._range_mask is not None else "")
        self._status.value = (
            f'<div class="mnw"><b>{len(self._positions):,}</b> of {len(self.table):,} frames'
            f'{rng} · <span class="mnw-muted">pandas:</span> <code>{esc(f.expr)}</code>'
            '<span class="mnw-muted"> (df = frame_table(trace))</span></div>')
        self._grid.set_rows(self.table, self._positions, self._origin)
        if self._words:
            self._show_detail()  # the matches are marked in the detail

    # -- detail -------------------------------------------------------------
    @traitlets.observe("selected_seq")
    def _on_selected(self, change: Any) -> None:
        if not hasattr(self, "_grid"):
            return
        self._show_detail()

    def _row(self, seq: int | None) -> dict | None:
        if seq is None:
            return None
        pos = positions(self.table["seq"].to_numpy(dtype=np.int64), np.asarray([seq]))[0]
        return None if pos < 0 else self.table.iloc[pos].to_dict()

    def _show_detail(self) -> None:
        seq = self.selected_seq
        row = self._row(seq)
        if row is None:
            self._frame.value = frame_html(None, None, None, "selected frame") if seq is None \
                else frame_html(None, None, None, f"frame #{seq} is not in this trace")
            self._pair.value = ""
            self._viols.value = ""
            self._related = {}
            for b in (self._to_pair, self._to_cancel, self._to_progress):
                b.disabled = True
            return
        self._related = related(self._trace, self.table, int(row["seq"]))
        title = {"request": "request", "result": "response", "error": "response"}.get(
            str(row["kind"]), "frame")
        v = self._trace.violations
        on = v.loc[pd.to_numeric(v["seq"], errors="coerce") == int(row["seq"])] if len(v) else v
        self._frame.value = highlight(frame_html(
            row, self._trace.message(int(row["seq"])), row["raw"], f"{title} #{row['seq']}",
            context=self._trace.extra(int(row["seq"])),
            marks=self._marks(int(row["seq"]), on)), self._words)
        other = self._related.get("pair")
        compare, self._compare_seq = self._compare_seq, None
        orow = self._row(compare if compare is not None else other)
        if orow is None:
            self._pair.value = frame_html(None, None, None, "its pair")
        else:
            otitle = ("related frame" if compare is not None else
                      "its request" if str(orow["kind"]) == "request" else "its response")
            self._pair.value = highlight(frame_html(
                orow, self._trace.message(int(orow["seq"])), orow["raw"],
                f"{otitle} #{orow['seq']}", context=self._trace.extra(int(orow["seq"]))),
                self._words)
        self._viols.value = violations_html(on.to_dict("records"))
        self._to_pair.disabled = other is None
        self._to_pair.description = "go to pair" if other is None else f"go to pair #{other}"
        cancel = self._related.get("cancel")
        self._to_cancel.disabled = cancel is None
        self._to_cancel.description = "go to cancel" if cancel is None else \
            f"go to cancel #{cancel}"
        prog = self._related.get("progress") or []
        self._to_progress.disabled = not prog
        self._to_progress.description = f"show progress ({len(prog)})"

    def _marks(self, seq: int, on: pd.DataFrame) -> list[Mark]:
        """The findings on frame ``seq`` that name a member (a JSON pointer), to mark in
        its tree; the one picked in the violations list marked the most."""
        from .. import conversation

        rows = [r for r in on.to_dict("records") if r["rule"] in conversation.CODES]
        if not rows:
            return []
        if self._pointers is None:  # once, on the first frame with such a finding
            self._pointers = conversation.pointers(self._trace)
        out = []
        for r in rows:
            found = self._pointers.get((str(r["rule"]), seq), [])
            hits = [(d, p) for d, p in found if d and d in str(r["message"])] or (
                found if len(found) == 1 else [])
            if hits:
                detail, ptr = hits[0]
                picked = self._finding == (seq, str(r["rule"]), str(r["message"]))
                out.append(Mark(ptr, str(r["severity"]),
                                f"{r['severity']} {r['rule']}: {r['message']}", picked,
                                f"{r['rule']}: {detail}"))
        return out

    def focus(self, seq: int | None, related: int | None = None,
              finding: dict[str, Any] | None = None) -> None:
        """Select ``seq`` and show ``related`` (e.g. a violation's related frame) beside it
        instead of its pair; ``finding`` (a violations-list item: rule, message) is the
        one marked the most in the frame's tree."""
        self._compare_seq = related
        self._finding = None if finding is None or seq is None else (
            int(seq), str(finding.get("rule")), str(finding.get("message")))
        if seq == self.selected_seq:
            self._show_detail()
        else:
            self.selected_seq = seq

    def _open(self) -> None:
        """Enter on the table: with nothing selected, select the first row (the browser
        scrolls the detail pane into view)."""
        if self.selected_seq is None:
            self._grid.move(by=1)

    def _jump(self, what: str) -> None:
        seq = self._related.get(what)
        if seq is not None:
            self.selected_seq = int(seq)

    def _show_progress(self) -> None:
        prog = self._related.get("progress") or []
        req = self._related.get("request")
        if not prog:
            return
        seqs = ([req] if req is not None else []) + list(prog)
        for w in (self._kind, self._dir, self._outcome, self._session, self._method):
            w.value = _ANY
        self._viol.value = False
        self.query = "seq:" + ",".join(str(s) for s in seqs)


def inspect(trace: Any, *, query: str = "") -> Inspector:
    """A filterable, sortable table of a trace's frames with a detail pane beside it.

    Parameters
    ----------
    trace
        A loaded trace (``mn.load(...)``).
    query
        A starting filter, e.g. ``"method:tools/call outcome:error latency>500ms"``.
    """
    return Inspector(trace, query=query)
