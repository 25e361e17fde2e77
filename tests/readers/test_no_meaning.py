"""Readers turn formats into records and nothing more: the JSON-RPC meaning of a frame is
decided once, by the table layer (``mcp_notebook.table.settled``), never by a reader.

The test reads the source of every reader module and fails when one imports the
classifier (``protocol.envelope.classify``) or a module that classifies (the table, the
fast scanners' message classifier). A reader that needs a frame's meaning (Claude
Desktop's connections, HAR's untimed SSE events) gets it in its ``settle``/``arrange``
step, after the table classified the frame.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcp_notebook import readers
from mcp_notebook.table import settled

READERS = Path(readers.__file__).resolve().parent
#: names that decide what a frame means: module -> its names (empty: the whole module)
CLASSIFYING: dict[str, set[str]] = {
    "mcp_notebook.protocol.envelope": {"classify"},
    "mcp_notebook.table": {"classify", "collect", "settle", "settled"},
    "mcp_notebook.fast.message": set(),
}


def _absolute(module: str | None, level: int, package: str) -> str:
    if level == 0:
        return module or ""
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([module] if module else []))


def meaning_imports(path: Path, package: str = "mcp_notebook.readers") -> list[str]:
    """The imports of ``path`` that bring in the classifier or a classifying module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            mod = _absolute(node.module, node.level, package)
            for alias in node.names:
                names = CLASSIFYING.get(mod)
                if (names is not None and (not names or alias.name in names)) or \
                        CLASSIFYING.get(f"{mod}.{alias.name}") == set():
                    found.append(f"line {node.lineno}: from {mod} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if CLASSIFYING.get(alias.name) == set():
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr in ("classify", "settled",
                                                                "collect"):
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


@pytest.mark.parametrize("path", sorted(READERS.glob("*.py")), ids=lambda p: p.name)
def test_reader_does_not_classify(path):
    assert meaning_imports(path) == [], (
        f"{path.name} decides what frames mean; readers give records and the table "
        "classifies (put what needs the meaning in Record.settle or Record.arrange)")


def test_the_check_sees_a_classifying_reader(tmp_path):
    """The check itself can fail: the ways a reader could reach the classifier."""
    for text in ("from ..protocol.envelope import classify\n",
                 "from mcp_notebook.protocol.envelope import Envelope, classify\n",
                 "from ..table import collect\n",
                 "from .. import table\ntable.collect([])\n",
                 "from ..fast import message\n",
                 "from ..protocol import envelope\nenvelope.classify('{}')\n",
                 "import mcp_notebook.fast.message\n"):
        p = tmp_path / "reader.py"
        p.write_text(text, "utf-8")
        assert meaning_imports(p), text
    (tmp_path / "ok.py").write_text("from ..protocol.envelope import Envelope, id_key_of\n")
    assert meaning_imports(tmp_path / "ok.py") == []


def test_records_come_unclassified(tmp_path):
    """Readers hand over frames undecided (``frames`` None); the table decides them."""
    from .harkit import old_sse

    path = old_sse(tmp_path / "old.har")
    recs = list(readers.read(path, format="har"))
    messages = [r for r in recs if r.kind is None]
    assert messages and all(r.frames is None for r in messages)
    done = list(settled(recs))
    assert all(r.frames for r in done if r.kind is None)
