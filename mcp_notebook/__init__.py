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

import sys
import types

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the tap start-up
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path  # not at run time either: the tap does not need pathlib
    from typing import Any

    from .collection import load_many
    from .compare import diff
    from .load import load
    from .protocol.rules import RULES, Rule
    from .readers import CaptureError, formats
    from .trace import Trace

__all__ = [
    "load",
    "load_many",
    "summarize",
    "diff",
    "Trace",
    "CaptureError",
    "formats",
    "RULES",
    "Rule",
    "rules",
    "sample_path",
    "datasets",
    "timeline",
    "inspect",
    "explore",
    "sequence",
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
    "RULES": ("protocol.rules", "RULES"),
    "Rule": ("protocol.rules", "Rule"),
    "timeline": ("widgets", "timeline"),
    "inspect": ("widgets", "inspect"),
    "explore": ("widgets", "explore"),
    "sequence": ("widgets", "sequence"),
    "teach": ("teach", None),
    "datasets": ("bundled", "datasets"),
    "summarize": ("stream", "summarize"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")
    import importlib  # here: importlib imports warnings, a cost the tap's start need not pay

    module, attr = _LAZY[name]
    mod = importlib.import_module(f"{__name__}.{module}")
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package module, which keeps ``mn.load`` the function: the import system binds
    each submodule to its parent's attribute once loaded, so the first ``import
    mcp_notebook.load`` anywhere would otherwise put the module where the function was."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "load" and isinstance(value, types.ModuleType):
            value = value.load
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def rules() -> Any:
    """The rule catalogue as a DataFrame: code, severity, topic, versions, title, spec, source."""
    import pandas as pd

    from .protocol.rules import RULES

    return pd.DataFrame([{"code": r.code, "severity": r.severity, "topic": r.topic,
                          "versions": ", ".join(r.versions), "title": r.title,
                          "spec": r.spec, "source": r.source, "advice": r.advice}
                         for r in RULES])


def sample_path(name: str | None = None) -> Path:
    """A bundled real trace, by name or file name (see :func:`datasets`); without one, the first."""
    from .bundled import sample_path

    return sample_path(name)
