"""The exports, redaction, widgets and CLI use public Trace methods: ``column``,
``texts``, ``messages``, ``contexts``, ``to_columns``; no module reads a trace's store."""

from __future__ import annotations

import re
from pathlib import Path

import mcp_notebook as mn

PKG = Path(mn.__file__).resolve().parent


def test_no_module_reads_a_traces_private_columns():
    private = re.compile(r"\btrace\._(?:cols|store)\b|\bt\._(?:cols|store)\b")
    readers = [p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
               if p.name != "trace.py" and private.search(p.read_text(encoding="utf-8"))]
    assert readers == []


def test_the_public_columns_are_the_frames():
    t = mn.load(mn.sample_path("demo-stdio"))
    f = t.frames
    assert t.column("kind") == f["kind"].astype(str).tolist()
    assert t.column("raw") == f["raw"].tolist()
    assert t.texts([0, 2]) == [f["raw"][0], f["raw"][2]]
    assert t.messages([0, 1]) == [t.message(0), t.message(1)]
    ref = t.column("ref")
    assert len(ref) == len(f)
    c = t.to_columns()
    assert len(c) == len(t) and c.raw == t.column("raw")
    assert mn.Trace(c).frames.equals(f)
    try:
        t.column("nope")
    except KeyError as exc:
        assert "no column 'nope'" in str(exc)
    else:
        raise AssertionError("an unknown column is an error")
