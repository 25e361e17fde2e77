"""Check that a machine is ready for the workshop: packages, bundled traces, checker, views."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pandas as pd

__all__ = ["check_install"]

#: Traces the notebooks open (names of ``mn.datasets()``).
NOTEBOOK_TRACES = ("demo-stdio", "demo-stdio-raw-frames", "everything-stdio-basics",
                   "everything-stdio-progress-cancel", "everything-stdio-server-requests",
                   "everything-stdio-raw-frames", "demo-http", "broken-duplicate-response")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        raise RuntimeError(f"{dist} is not installed: pip install {dist}") from None


def _python() -> str:
    return sys.version.split()[0]  # the package needs 3.10+; being imported is the proof


def _packages() -> str:
    names = ("pandas", "numpy", "msgspec", "ipywidgets", "anywidget", "nbformat")
    found = {n: _version(n) for n in names}
    if not found["ipywidgets"].startswith("8."):
        raise RuntimeError(f"ipywidgets {found['ipywidgets']}: version 8 is needed")
    try:  # optional: only parquet and Arrow output need it
        found["pyarrow"] = metadata.version("pyarrow")
    except metadata.PackageNotFoundError:
        found["pyarrow"] = "not installed (parquet output: pip install 'mcp_notebook[parquet]')"
    return ", ".join(f"{n} {v}" for n, v in found.items())


def _frontend() -> str:
    have = []
    for dist in ("jupyterlab_widgets", "widgetsnbextension", "jupyterlab", "notebook"):
        try:
            have.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    if not any(h.startswith(("jupyterlab_widgets", "widgetsnbextension")) for h in have):
        raise RuntimeError("no widget front end: pip install jupyterlab_widgets "
                           "(VS Code brings its own)")
    return ", ".join(have)


def _traces() -> str:
    from .. import sample_path

    for stem in NOTEBOOK_TRACES:
        sample_path(stem)  # FileNotFoundError names what is there
    return f"{len(NOTEBOOK_TRACES)} bundled traces found"


def _checker() -> str:
    from .. import load, sample_path

    t = load(sample_path("broken-duplicate-response"))
    rules = set(t.violations["rule"])
    if "duplicate-response" not in rules:
        raise RuntimeError(f"the checker missed the duplicate response (found {sorted(rules)})")
    return f"{len(t)} frames loaded, {len(t.violations)} findings"


def _views() -> str:
    from .. import load, sample_path
    from ..widgets import explore

    explore(load(sample_path("demo-stdio")))
    return "explorer, timeline and inspector build"


def _exercises() -> str:
    from . import exercise

    ex = exercise("duplicate-response", seed=0)
    return f"a fault planted in {ex.trace.paths[0]}"


CHECKS: tuple[tuple[str, Callable[[], str]], ...] = (
    ("python", _python), ("packages", _packages), ("jupyter widgets", _frontend),
    ("bundled traces", _traces), ("loader and checker", _checker), ("views", _views),
    ("exercises", _exercises),
)


def check_install() -> pd.DataFrame:
    """One row per check: ``check``, ``ok`` and what was found (or how to fix it)."""
    rows: list[dict[str, Any]] = []
    for name, fn in CHECKS:
        try:
            rows.append({"check": name, "ok": True, "detail": fn()})
        except Exception as exc:  # noqa: BLE001 - every failure is a row that says what to do
            rows.append({"check": name, "ok": False, "detail": f"{type(exc).__name__}: {exc}"})
    return pd.DataFrame(rows)
