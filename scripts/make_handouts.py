"""``make handouts``: every teaching notebook, executed, as HTML that opens offline.

Each notebook of ``notebooks/`` is run top to bottom (nbclient, kernel ``python3``, the
widget state saved) and exported with nbconvert's HTMLExporter pointed at local copies of
require.js, the ipywidgets html-manager (``embed-amd.js``) and anywidget's AMD module
(``scripts/fetch_widget_js.py`` fetches them once with ``npm pack`` into a git-ignored
cache). So the widgets are drawn from their saved state, and a page asks for nothing
outside its folder. Links between notebooks point at the HTML pages, and ``index.html``
lists them with the plan.

Usage: ``python scripts/make_handouts.py [--out DIR] [NOTEBOOK ...]`` (default out
``handouts/``, default all notebooks; a notebook by file name or stem).
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "handouts"
FONTS = (".woff", ".woff2", ".ttf", ".eot", ".svg")
CELL_TIMEOUT = 120


def _fetcher() -> Any:
    spec = importlib.util.spec_from_file_location("fetch_widget_js",
                                                  ROOT / "scripts" / "fetch_widget_js.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_assets(out: Path) -> None:
    """The widget JavaScript and its fonts beside the pages (fetched once, then cached)."""
    fetch = _fetcher()
    if not fetch.complete(fetch.DEFAULT) and shutil.which("npm") is None:
        raise SystemExit("make_handouts: npm is needed once to fetch the widget JavaScript "
                         "(apt-get install npm), or copy .cache/widget-js from a machine "
                         "that has it")
    js = fetch.fetch()
    out.mkdir(parents=True, exist_ok=True)
    for name in ("require.js", "embed-amd.js", "anywidget.js"):
        shutil.copyfile(js / name, out / name)
    # embed-amd.js asks for its icon fonts relative to the page, under two module paths
    for sub in ("@jupyter-widgets", "@jupyter-widgets/html-manager/dist"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for font in js.iterdir():
            if font.suffix in FONTS:
                shutil.copyfile(font, out / sub / font.name)


def execute(path: Path) -> Any:
    """The notebook at ``path``, run top to bottom in its folder, widget state saved."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, startup_timeout=120,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


_LINK = re.compile(r'href="(\d\d-[a-z-]+)\.ipynb"')


def page_html(nb: Any) -> str:
    """An executed notebook as one HTML page, its scripts and widget state from local files
    (``require.js``, ``embed-amd.js``: :func:`write_assets`)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(require_js_url="require.js", widget_renderer_url="embed-amd.js",
                            mathjax_url="")
    return exporter.from_notebook_node(nb)[0]


def write_page(body: str, name: str, out: Path) -> Path:
    """Write the page ``body`` of notebook ``name`` as ``out/<name>.html``, its links to
    the other notebooks turned to their pages."""
    body = _LINK.sub(r'href="\1.html"', body).replace('href="README.md"', 'href="index.html"')
    target = out / f"{name}.html"
    target.write_text(body, encoding="utf-8")
    return target


def export(nb: Any, name: str, out: Path) -> Path:
    """Write one executed notebook as ``out/<name>.html``, links turned to the pages."""
    return write_page(page_html(nb), name, out)


def write_index(out: Path, names: list[str]) -> Path:
    """``index.html``: the plan (from ``notebooks/README.md``) and a link per page."""
    import nbformat

    items = []
    for name in names:
        first = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4).cells[0].source
        title = first.splitlines()[0][2:]
        time = re.search(r"\*About (\d+ minutes[^*]*)\*", first)
        items.append(f"<li><a href='{name}.html'>{html.escape(name[:2])} "
                     f"{html.escape(title)}</a> <small>{html.escape(time.group(1)) if time else ''}"
                     "</small></li>")
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>MCP workshop "
            "handouts</title></head><body style='font-family:sans-serif;max-width:50em;"
            "margin:2em auto'><h1>MCP workshop handouts</h1><p>Every notebook, executed, "
            "with its widgets drawn from their saved state. The pages open offline.</p>"
            f"<ol start='0'>{''.join(items)}</ol></body></html>")
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def notebooks(selected: list[str]) -> list[str]:
    names = [p.stem for p in sorted(NB_DIR.glob("[0-9][0-9]-*.ipynb"))]
    if not selected:
        return names
    wanted = [Path(s).stem for s in selected]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise SystemExit(f"make_handouts: no notebook {unknown[0]!r}; there are {names}")
    return wanted


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_handouts", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("notebook", nargs="*")
    args = parser.parse_args(argv)
    names = notebooks(args.notebook)
    write_assets(args.out)
    for name in names:
        print(f"make_handouts: {name}", file=sys.stderr, flush=True)
        export(execute(NB_DIR / f"{name}.ipynb"), name, args.out)
    write_index(args.out, names)
    print(args.out / "index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
