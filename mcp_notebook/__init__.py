"""mcp_notebook: see, check and teach Model Context Protocol traffic.

>>> import mcp_notebook as mn
>>> t = mn.load(mn.sample_path())
>>> t.summary()["pairs"] > 0
True
"""

from __future__ import annotations

from pathlib import Path

from .core.rules import RULES, Rule
from .load import load
from .readers import CaptureError, formats
from .trace import Trace

__all__ = [
    "load",
    "Trace",
    "CaptureError",
    "formats",
    "RULES",
    "Rule",
    "rules",
    "sample_path",
    "timeline",
    "inspect",
    "explore",
    "teach",
]

__version__ = "0.1.0"


def rules():
    """The rule catalogue as a DataFrame: code, severity, versions, title, spec, source."""
    import pandas as pd

    return pd.DataFrame([{"code": r.code, "severity": r.severity, "topic": r.topic,
                          "versions": ", ".join(r.versions), "title": r.title,
                          "spec": r.spec, "source": r.source, "advice": r.advice}
                         for r in RULES])


def sample_path(name: str | None = None) -> Path:
    """A bundled real trace (``data/`` of a source checkout); the first one without a name."""
    data = Path(__file__).resolve().parent.parent / "data"
    files = sorted(p for p in data.glob("*") if p.suffix in (".jsonl", ".har", ".gz", ".log"))
    if name is None:
        if not files:
            raise FileNotFoundError("no bundled traces: data/ is empty or missing")
        return files[0]
    for p in files:
        if p.stem == name or p.name == name:
            return p
    known = ", ".join(p.stem for p in files)
    raise FileNotFoundError(f"no bundled trace named {name!r}; known: {known}")


def __getattr__(name: str):
    # the views and the teaching kit import ipywidgets: load them only when asked for
    if name in ("timeline", "inspect", "explore"):
        from . import widgets

        return getattr(widgets, name)
    if name == "teach":
        from . import teach

        return teach
    raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")
