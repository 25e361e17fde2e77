"""mcp_notebook: see, check and teach Model Context Protocol traffic.

>>> import mcp_notebook as mn
>>> t = mn.load(mn.sample_path())
>>> t.summary()["pairs"] > 0
True

Names load lazily (PEP 562): ``import mcp_notebook`` stays light, so the stdio tap
(``mcp-notebook record``), which lives as long as the server it wraps, does not carry
pandas.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the tap start-up
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path  # not at run time either: the tap does not need pathlib
    from typing import Any

    from .collection import load_many
    from .compare import diff
    from .core.rules import RULES, Rule
    from .load import load
    from .readers import CaptureError, formats
    from .trace import Trace

__all__ = [
    "load",
    "load_many",
    "diff",
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

#: public name -> (module, attribute); None as attribute means the module itself
_LAZY: dict[str, tuple[str, str | None]] = {
    "load": ("load", "load"),
    "load_many": ("collection", "load_many"),
    "diff": ("compare", "diff"),
    "Trace": ("trace", "Trace"),
    "CaptureError": ("readers", "CaptureError"),
    "formats": ("readers", "formats"),
    "RULES": ("core.rules", "RULES"),
    "Rule": ("core.rules", "Rule"),
    "timeline": ("widgets", "timeline"),
    "inspect": ("widgets", "inspect"),
    "explore": ("widgets", "explore"),
    "teach": ("teach", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")
    module, attr = _LAZY[name]
    mod = importlib.import_module(f"{__name__}.{module}")
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def rules() -> Any:
    """The rule catalogue as a DataFrame: code, severity, topic, versions, title, spec, source."""
    import pandas as pd

    from .core.rules import RULES

    return pd.DataFrame([{"code": r.code, "severity": r.severity, "topic": r.topic,
                          "versions": ", ".join(r.versions), "title": r.title,
                          "spec": r.spec, "source": r.source, "advice": r.advice}
                         for r in RULES])


def sample_path(name: str | None = None) -> Path:
    """A bundled real trace in ``data/`` (of a source checkout), by file stem or name.

    Without a name, the first one.
    """
    from pathlib import Path

    data = Path(__file__).resolve().parent.parent / "data"
    files = sorted(p for p in data.glob("*")
                   if p.is_file() and p.suffix in (".jsonl", ".har", ".gz", ".log", ".ndjson"))
    if name is None:
        if not files:
            raise FileNotFoundError("no bundled traces: data/ is empty or missing")
        return files[0]
    for p in files:
        if p.stem == name or p.name == name:
            return p
    known = ", ".join(p.stem for p in files)
    raise FileNotFoundError(f"no bundled trace named {name!r}; known: {known}")
