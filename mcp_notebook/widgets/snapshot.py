"""Static fallback: every widget's display bundle carries a text summary and a picture.

A live widget needs a kernel or saved widget state; nbconvert HTML of a notebook saved
without that state, GitHub and nbviewer show the bundle's other entries instead. The
:class:`StaticFallback` mixin adds them to ``_repr_mimebundle_``:

- ``text/plain``: one or two lines saying what the widget shows;
- ``image/svg+xml``: an SVG snapshot of what it draws now;
- ``text/html`` instead, for a container (the explorer): the pictures of its parts, top
  to bottom.

A widget says what it draws with ``_static_svg()`` (and ``_static_text()``); a container
without its own picture shows its children's; an ``ipywidgets.HTML`` shows its (already
escaped) value; a widget with ``columns`` and ``rows`` traits shows them as an SVG table.
Building the picture must never stop the widget from showing: a failure becomes a line
of text saying so.

Shown by IPython (a cell's last value, ``display(w)``), a widget makes two outputs: its
picture as ``text/html`` first, then the widget view with the ``text/plain`` summary.
nbconvert's HTML templates draw one entry per output, and for a widget view whose model is
in the saved widget state they draw the view alone (``WidgetsDataTypeFilter``): a picture
in the view's own bundle would never reach the page of an executed notebook. As an output
of its own it always does, and it hides itself, by a CSS rule it carries, once a live view
is drawn in the output right after it: in JupyterLab and Notebook 7, and in exported HTML
when the widget manager loads (it puts a ``.widget-subarea`` before the view's script
tag). Offline, or without saved state, the picture stays.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

__all__ = ["StaticFallback", "snapshot_html", "table_svg"]

SVG = "image/svg+xml"

# The picture's output hides when the next output holds a drawn widget view. Exported HTML
# (nbconvert lab / classic templates): the view's div holds only its two script tags until
# the widget manager draws into a ``.widget-subarea``; live JupyterLab / Notebook 7: the
# widget renderer is the one output that is a Lumino panel, the view a widget inside it.
HIDE_WHEN_LIVE = (
    "<style>"
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child .widget-subarea > *) .mn-static,"
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child > .jp-OutputArea-output.lm-Panel"
    " > .lm-Widget) .mn-static,"
    ".output_area:has(+ .output_area .widget-subarea > *) .mn-static"
    "{display:none}</style>")


def _x(s: Any) -> str:
    return escape(str(s), {'"': "&quot;"})


def table_svg(columns: list[str], rows: list[list[Any]], *, max_rows: int = 25,
              title: str = "") -> str:
    """A plain SVG table: headings, then up to ``max_rows`` rows of text (escaped)."""
    shown = rows[:max_rows]
    widths = [max([len(str(c))] + [len(str(r[i])) if i < len(r) else 0 for r in shown])
              for i, c in enumerate(columns)]
    widths = [min(max(w, 2), 36) * 7 + 14 for w in widths]
    xs = [10]
    for w in widths[:-1]:
        xs.append(xs[-1] + w)
    width = max(320, xs[-1] + widths[-1] + 10) if columns else 320
    top = 26 if title else 6
    height = top + 20 * (len(shown) + 1) + (22 if len(rows) > len(shown) else 8)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mn-snapshot-table" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
           "<style>.mnst-bg{fill:var(--jp-layout-color0,#fff)}"
           ".mnst-t{fill:var(--jp-ui-font-color1,#24292f);font:11.5px var(--jp-ui-font-family,"
           "system-ui,sans-serif)}.mnst-h{font-weight:600;fill:var(--jp-ui-font-color2,#57606a)}"
           ".mnst-band{fill:var(--jp-layout-color2,#f3f4f6)}"
           ".mnst-line{stroke:var(--jp-border-color2,#d0d7de)}</style>",
           f'<rect class="mnst-bg" width="{width}" height="{height}"/>']
    if title:
        out.append(f'<text class="mnst-t mnst-h" x="10" y="17">{_x(title)}</text>')
    y = top + 14
    for x, c in zip(xs, columns, strict=False):
        out.append(f'<text class="mnst-t mnst-h" x="{x}" y="{y}">{_x(c)}</text>')
    out.append(f'<line class="mnst-line" x1="6" x2="{width - 6}" y1="{y + 5}" y2="{y + 5}"/>')
    for i, row in enumerate(shown):
        y += 20
        if i % 2:
            out.append(f'<rect class="mnst-band" x="6" y="{y - 14}" width="{width - 12}" '
                       'height="20"/>')
        for x, w, cell in zip(xs, widths, row, strict=False):
            text = str(cell)
            limit = (w - 14) // 7
            if len(text) > limit:
                text = text[: max(limit - 1, 1)] + "…"
            out.append(f'<text class="mnst-t" x="{x}" y="{y}">{_x(text)}</text>')
    if len(rows) > len(shown):
        out.append(f'<text class="mnst-t mnst-h" x="10" y="{y + 20}">… {len(rows) - len(shown):,}'
                   " more rows in the live view</text>")
    out.append("</svg>")
    return "".join(out)


def _svg_of(widget: Any) -> str | None:
    own = getattr(widget, "_static_svg", None)
    if callable(own):
        svg = own()
        if svg:
            return svg
    traits: list[str] = list(getattr(widget, "trait_names", lambda: [])())
    if "columns" in traits and "rows" in traits:
        cols, rows = list(widget.columns), list(widget.rows)
        if cols:
            return table_svg([str(c) for c in cols], [list(r) for r in rows])
    return None


def snapshot_html(widget: Any, depth: int = 0) -> str:
    """The static picture of ``widget`` as HTML: its SVG, or its children's, in order."""
    svg = _svg_of(widget)
    if svg:
        return f'<div class="mn-snapshot">{svg}</div>'
    if depth > 6:
        return ""
    try:
        import ipywidgets as W
    except ImportError:  # pragma: no cover - every widget here needs ipywidgets
        return ""
    if isinstance(widget, W.HTML):
        return f'<div class="mn-snapshot">{widget.value}</div>'
    parts = [snapshot_html(c, depth + 1) for c in getattr(widget, "children", ())]
    return "".join(p for p in parts if p)


def _default_text(widget: Any) -> str:
    trace = getattr(widget, "_trace", None) or getattr(widget, "trace", None)
    name = type(widget).__name__
    if trace is None or not hasattr(trace, "frames"):
        return f"{name} (mcp_notebook)"
    f, v = trace.frames, trace.violations
    sessions = int(f["session"].nunique())
    return (f"{name} (mcp_notebook): {len(f):,} frames, {len(trace.pairs):,} pairs, "
            f"{sessions:,} session{'s' if sessions != 1 else ''}, "
            f"{len(v):,} violation{'s' if len(v) != 1 else ''}")


class StaticFallback:
    """Adds ``text/plain`` and an SVG snapshot to a widget's display bundle.

    Put it first among the bases (``class Timeline(StaticFallback, AnyWidget)``) so its
    ``_repr_mimebundle_`` wraps the widget's own. Override ``_static_svg`` (return an
    ``<svg>`` string) and ``_static_text``; containers inherit their children's.
    """

    def _static_text(self) -> str:
        return _default_text(self)

    def _static_svg(self) -> str | None:
        return None

    def static_bundle(self) -> dict[str, str]:
        """The static entries alone: ``text/plain``, and ``image/svg+xml`` / ``text/html``
        when there is a picture."""
        out: dict[str, str] = {}
        try:
            out["text/plain"] = self._static_text()
        except Exception as exc:  # noqa: BLE001 - a summary must not stop the display
            out["text/plain"] = f"{type(self).__name__} (no summary: {type(exc).__name__}: {exc})"
        try:
            svg = _svg_of(self)
            html = "" if svg else snapshot_html(self)
        except Exception as exc:  # noqa: BLE001 - nor must a picture
            out["text/plain"] += f"\n(no static picture: {type(exc).__name__}: {exc})"
            return out
        if svg:  # one picture, once: nbconvert draws an SVG inline, GitHub as an image
            out[SVG] = svg
        elif html:  # a container: its parts' pictures, top to bottom
            out["text/html"] = html
        return out

    def static_output(self) -> dict[str, str] | None:
        """The picture as an output of its own (``text/html``), hiding once a live view
        is drawn after it; ``None`` when there is no picture."""
        static = self.static_bundle()
        picture = static.get(SVG) or static.get("text/html")
        if not picture:
            return None
        return {"text/html": f'<div class="mn-static">{picture}</div>{HIDE_WHEN_LIVE}',
                "text/plain": static["text/plain"]}

    def _ipython_display_(self) -> None:
        """Two outputs: the picture (see the module's docstring), then the widget view."""
        from IPython.display import display

        picture = self.static_output()
        if picture is not None:
            display(picture, raw=True)
        bundle = super()._repr_mimebundle_()  # type: ignore[misc]
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data)
        data.pop(SVG, None)  # the picture is in the output above
        data.pop("text/html", None)
        if picture is not None:
            data["text/plain"] = picture["text/plain"]
        display(data, metadata=metadata, raw=True)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data.update(self.static_bundle())
        return bundle
