"""The files that ship with the package: real traces and the tutorial notebooks.

An installed package holds them in ``mcp_notebook/data`` and ``mcp_notebook/notebooks``
(the build copies them there from the repository's ``data/`` and ``notebooks/``) and finds
them with :mod:`importlib.resources`; a source checkout (``pip install -e .``, or the
repository on ``sys.path``) reads the repository's folders themselves.

>>> import mcp_notebook as mn
>>> mn.sample_path("demo-stdio").name
'demo-stdio.jsonl'
>>> "broken-duplicate-response" in set(mn.datasets()["name"])
True
"""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["copy_notebooks", "data_dir", "datasets", "notebooks_dir", "sample_path"]

TRACE_SUFFIXES = (".jsonl", ".har", ".gz", ".log", ".ndjson")


def _folder(name: str) -> Path:
    packaged = resources.files("mcp_notebook") / name
    if packaged.is_dir():
        return Path(str(packaged))  # an installed package is a folder on disk, not a zip
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"the bundled {name}/ folder is missing from this install of "
                            "mcp_notebook: reinstall it (pip install --force-reinstall "
                            "mcp_notebook)")


def data_dir() -> Path:
    """The folder of the bundled traces (with their ``README.md``)."""
    return _folder("data")


def notebooks_dir() -> Path:
    """The folder of the tutorial notebooks (with ``solutions/``)."""
    return _folder("notebooks")


def _traces() -> list[Path]:
    return sorted(p for p in data_dir().iterdir() if p.is_file() and p.suffix in TRACE_SUFFIXES)


def sample_path(name: str | None = None) -> Path:
    """A bundled real trace, by name (``"demo-stdio"``) or file name (``"demo-stdio.jsonl"``).

    Without a name, the first one. :func:`datasets` lists them with what each contains.

    Raises
    ------
    FileNotFoundError
        No trace of that name; the message lists the names there are.
    """
    files = _traces()
    if name is None:
        if not files:
            raise FileNotFoundError(f"no bundled traces in {data_dir()}")
        return files[0]
    for p in files:
        if p.stem == name or p.name == name:
            return p
    known = ", ".join(p.stem for p in files)
    raise FileNotFoundError(f"no bundled trace named {name!r}; known: {known}")


_HEAD = re.compile(r"^### `(?P<file>[^`]+)`\s*$")
_ITEM = re.compile(r"^- (?P<key>peers|transport|scenario): (?P<value>.*)$")


def _described() -> dict[str, dict[str, str]]:
    """``file -> {peers, transport, scenario}`` from the data folder's README."""
    readme = data_dir() / "README.md"
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in readme.read_text(encoding="utf-8").splitlines() if readme.exists() else ():
        if m := _HEAD.match(line):
            current = out.setdefault(m["file"], {})
        elif current is not None and (m := _ITEM.match(line)):
            current[m["key"]] = m["value"]
    return out


def _line(text: str, width: int = 110) -> str:
    """The first sentence, cut at a word to ``width`` characters."""
    text = text.replace("**", "").split(". ")[0].rstrip(".")
    if len(text) <= width:
        return text
    return text[: text.rfind(" ", 0, width - 1)].rstrip(",;:") + " …"


def datasets() -> Any:
    """The bundled traces, one row each: ``name`` (for :func:`sample_path`), ``file``,
    ``transport``, ``server``, ``bytes`` and ``about``: the start of what happens in it,
    from the data folder's README (``data_dir() / "README.md"``), which tells it in full."""
    import pandas as pd

    about = _described()
    rows = []
    for p in _traces():
        d = about.get(p.name, {})
        transport = d.get("transport", "")
        rows.append({"name": p.stem, "file": p.name,
                     "transport": transport.split(",")[0].strip(),
                     "server": d.get("peers", "").partition(" / ")[2].split(" (")[0].replace("`", ""),
                     "bytes": p.stat().st_size,
                     "about": _line(d.get("scenario", ""))})
    return pd.DataFrame(rows, columns=["name", "file", "transport", "server", "bytes", "about"])


def copy_notebooks(dest: str | Path, *, solutions: bool = True,
                   overwrite: bool = False) -> list[Path]:
    """Copy the tutorial notebooks (and their ``solutions/``) into ``dest``.

    The notebooks find their traces with :func:`sample_path`, so they run from any
    folder: ``jupyter lab dest``. Files already in ``dest`` are kept unless ``overwrite``
    (a learner's work is not lost to a second copy).

    Returns
    -------
    list of Path
        The files written.
    """
    src = notebooks_dir()
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"{dest} exists and is not a folder")
    names = ["README.md", *sorted(p.name for p in src.glob("*.ipynb"))]
    if solutions:
        names += [f"solutions/{p.name}" for p in sorted((src / "solutions").glob("*.py"))]
    written = []
    for name in names:
        source, target = src / name, dest / name
        if not source.is_file() or (target.exists() and not overwrite):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
    return written
