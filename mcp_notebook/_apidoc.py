"""``docs/api.md``: the public API as a page, written from the docstrings.

``python -m mcp_notebook._apidoc > docs/api.md`` (``make docs``) writes it;
``tests/package/test_api_docs.py`` fails when the page is older than the code.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from typing import Any

#: (module, names, heading)
SECTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("mcp_notebook", ("load", "sample_path", "datasets", "formats", "rules"),
     "Loading captures"),
    ("mcp_notebook", ("Trace",), "The trace"),
    ("mcp_notebook", ("load_many", "diff"), "Many captures"),
    ("mcp_notebook", ("summarize",), "Captures too large to hold"),
    ("mcp_notebook", ("explore", "timeline", "inspect", "sequence"), "Views (Jupyter)"),
    ("mcp_notebook", ("Rule", "RULES", "CaptureError"), "Rules and errors"),
    ("mcp_notebook.export", ("to_arrow", "to_parquet", "table", "id_type", "write",
                             "to_tap_records"), "Tables out"),
    ("mcp_notebook.boundary", ("write_boundary", "read_boundary"),
     "The server-boundary view (payload-free)"),
    ("mcp_notebook.otlp", ("to_otlp", "to_otlp_metrics", "write_otlp", "trace_from_otlp"),
     "OpenTelemetry"),
    ("mcp_notebook.report_formats", ("render_findings",), "Findings for CI"),
    ("mcp_notebook.teach", ("exercises", "exercise", "Exercise", "Feedback", "worksheets",
                            "cite", "show", "what_if", "run_rule", "with_rule", "plant",
                            "check_install"), "Teaching (`mn.teach`)"),
    ("mcp_notebook.notebook", ("analysis", "worksheet", "write", "resolve_capture"),
     "Notebooks written for you"),
    ("mcp_notebook.bundled", ("data_dir", "notebooks_dir", "copy_notebooks"),
     "Bundled files"),
)

#: values without a docstring of their own
DATA = {"RULES": "The rule catalogue: a sequence of `Rule`, in the order they were declared "
                 "(the engine's rule modules and other packages add theirs with "
                 "`RULES.register`); `mn.rules()` is the same as a DataFrame, and "
                 "[rules.md](rules.md) is the page.",
        "Rule": "One rule of the catalogue (a frozen dataclass): `code`, `severity` (error, "
                "warning or info), `title`, the quoted `spec` sentence and its `source`, "
                "`advice`, the protocol `versions` it applies to, its `topic`, and `quoted` "
                "(False when `spec` states a schema constraint rather than a sentence)."}

_SECTION = re.compile(r"^(Parameters|Returns|Raises|Yields|Attributes|Examples|Notes|See Also)$")
_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):`~?\.{0,2}([^`]+)`")


def _md(doc: str) -> list[str]:
    """A numpy-style docstring as Markdown: sections bold, entries as bullets, doctests
    fenced, RST literals and roles as code."""
    lines = doc.splitlines()
    out: list[str] = []
    section = None
    fence = False
    i = 0
    while i < len(lines):
        line = _ROLE.sub(r"`\1`", lines[i]).replace("``", "`")
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        stripped = line.strip()
        if stripped.startswith(">>>") and not fence:
            out += ["", "```python"]
            fence = True
        if fence:
            if not stripped:
                out += ["```", ""]
                fence = False
            else:
                out.append(lines[i].strip())  # doctest text as written (no role rewriting)
            i += 1
            continue
        if _SECTION.match(stripped) and set(nxt.strip()) == {"-"}:
            section = stripped
            out += ["", f"**{stripped}**", ""]
            i += 2
            continue
        if section in ("Parameters", "Returns", "Raises", "Yields", "Attributes") and stripped:
            if not line.startswith(" "):
                out.append(f"- `{stripped}`")
            else:
                out[-1] += (": " if out[-1].endswith("`") else " ") + stripped
            i += 1
            continue
        if not stripped:
            section = None if section != "Examples" else section
        out.append(line)
        i += 1
    if fence:
        out.append("```")
    return out


def _signature(obj: Any, name: str) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return name
    sig = re.sub(r"(: |-> )'([^']*)'", r"\1\2", sig)  # annotations are strings here
    sig = sig.replace("(self, ", "(").replace("(self)", "()")
    return f"{name}{sig}"


def _members(cls: type) -> list[tuple[str, Any]]:
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (property, staticmethod, classmethod)) or inspect.isfunction(
                value) or hasattr(value, "func"):  # cached_property
            out.append((name, value))
    return sorted(out)


def _entry(qualname: str, obj: Any, level: int = 3) -> list[str]:
    short = qualname.rsplit(".", 1)[-1]
    doc = DATA.get(short) if short in DATA else inspect.getdoc(obj)
    head = "#" * level
    if inspect.isclass(obj):
        lines = [f"{head} class `{qualname}`", ""]
    elif callable(obj):
        lines = [f"{head} `{_signature(obj, qualname)}`", ""]
    else:
        lines = [f"{head} `{qualname}`", ""]
    lines += [*_md(doc or "(no docstring)"), ""]
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        for name, member in _members(obj):
            target = member.fget if isinstance(member, property) else getattr(
                member, "func", member)
            kind = "property" if isinstance(member, property) or hasattr(member, "attrname") \
                else None
            title = f"`{short}.{name}`" + (" (property)" if kind else "")
            if not kind:
                title = f"`{short}.{_signature(target, name)}`"
            doc = inspect.getdoc(target) or "(no docstring)"
            lines += [f"{head}# {title}", "", *_md(doc), ""]
    return lines


def render() -> str:
    """The page, as text."""
    lines = ["# API", "",
             "Generated from the docstrings by `python -m mcp_notebook._apidoc` (`make docs`); "
             "a test fails when it is out of date. `import mcp_notebook as mn`: the names "
             "below are `mn.<name>` unless a module is given.", ""]
    for module_name, names, heading in SECTIONS:
        module = importlib.import_module(module_name)
        lines += [f"## {heading}", ""]
        if module_name != "mcp_notebook":
            lines += [f"In `{module_name}`.", ""]
        for name in names:
            prefix = "mn" if module_name == "mcp_notebook" else (
                "mn.teach" if module_name == "mcp_notebook.teach" else module_name)
            lines += _entry(f"{prefix}.{name}", getattr(module, name))
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"
    return text


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(render())
