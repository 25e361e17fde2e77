"""Build the teaching notebooks from their percent-format sources.

``notebooks/source/NN-verb-noun.py`` holds each notebook as a plain Python script:
``# %% [markdown]`` starts a Markdown cell (its lines are comments, ``# `` stripped) and
``# %%`` a code cell; ``# %% tags=["a", "b"]`` sets cell tags. The script writes
``notebooks/NN-verb-noun.ipynb`` with no outputs, stable cell ids and a ``python3``
kernelspec, so the files in git are clean and a rebuild changes nothing. Each notebook
gets navigation links, previous, contents (``README.md``) and next, under its title and
at its end.

Usage: ``python scripts/build_notebooks.py [--check]`` (``--check`` only reports stale
notebooks and exits 1 if any).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks" / "source"
OUT = ROOT / "notebooks"
_MARK = re.compile(r"^# %%(?P<md> \[markdown\])?(?:\s+tags=(?P<tags>\[.*\]))?\s*$")


def parse(text: str) -> list[tuple[str, str, list[str]]]:
    """``[(kind, source, tags), ...]`` from a percent-format script."""
    cells: list[tuple[str, list[str], list[str]]] = []
    for line in text.splitlines():
        m = _MARK.match(line)
        if m:
            tags = json.loads(m.group("tags")) if m.group("tags") else []
            cells.append(("markdown" if m.group("md") else "code", [], tags))
        elif cells:
            cells[-1][1].append(line)
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"code before the first '# %%' marker: {line!r}")
    out = []
    for kind, lines, tags in cells:
        if kind == "markdown":
            lines = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in lines]
        body = "\n".join(lines).strip("\n")
        if body:
            out.append((kind, body, tags))
    return out


def _title(src: Path) -> str:
    for kind, body, _ in parse(src.read_text(encoding="utf-8")):
        if kind == "markdown" and body.startswith("# "):
            return body.splitlines()[0][2:].strip()
    return src.stem


def nav(src: Path) -> str:
    """The navigation line of one notebook: previous, contents, next."""
    names = sorted(src.parent.glob("[0-9][0-9]-*.py"))
    i = names.index(src)
    parts = []
    if i > 0:
        parts.append(f"[← {names[i - 1].stem[:2]} {_title(names[i - 1])}]"
                     f"({names[i - 1].stem}.ipynb)")
    parts.append("[Contents](README.md)")
    if i + 1 < len(names):
        parts.append(f"[{names[i + 1].stem[:2]} {_title(names[i + 1])} →]"
                     f"({names[i + 1].stem}.ipynb)")
    return "<small>" + " · ".join(parts) + "</small>"


def build(src: Path) -> nbformat.NotebookNode:
    nb = new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    cells = parse(src.read_text(encoding="utf-8"))
    links = ("markdown", nav(src), ["nav"])
    cells = [*cells[:1], links, *cells[1:], links]
    for n, (kind, body, tags) in enumerate(cells):
        cell = new_markdown_cell(body) if kind == "markdown" else new_code_cell(body)
        cell.id = hashlib.sha1(f"{src.stem}:{n}".encode()).hexdigest()[:8]
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for src in sorted(SOURCE.glob("[0-9][0-9]-*.py")):
        target = OUT / f"{src.stem}.ipynb"
        text = render(build(src))
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target.name)
        if not check:
            target.write_text(text, encoding="utf-8")
    verb = "stale" if check else "wrote"
    for name in stale:
        print(f"{verb}: notebooks/{name}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
