"""data/README.md lists every bundled trace with counts that the library must reproduce.

The counts were taken from the captures by ``scripts/count_trace.py`` (no library code)
and checked by eye; here they are checked against ``mn.load(trace).summary()``.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from .conftest import ROOT

DATA = ROOT / "data"
README = DATA / "README.md"


def _table() -> dict[str, dict[str, int]]:
    """The ``## Counts`` table: ``{trace file name: {column: count}}``."""
    text = README.read_text("utf-8")
    section = text.split("## Counts", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    out = {}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        out[name] = {k: int(v) for k, v in zip(header[1:], cells[1:], strict=True)}
    return out


TABLE = _table()
COLUMNS = ["frames", "messages", "requests", "notifications", "results", "errors",
           "tool_errors", "invalid", "stderr", "log", "pairs", "unanswered", "cancelled",
           "orphans", "duplicates"]


def test_readme_lists_every_trace_and_enough_of_them():
    files = sorted(p.name for p in DATA.iterdir() if p.suffix in (".jsonl", ".har"))
    assert sorted(TABLE) == files
    assert len(files) >= 8
    text = README.read_text("utf-8")
    for name in files:
        section = text.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]
        assert "- peers:" in section and "- scenario:" in section, name
        assert re.search(r"\d+\.\d+", section), f"{name}: no versions"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_trace_is_small_and_names_no_machine_path(name):
    data = (DATA / name).read_bytes()
    assert len(data) < 200_000
    for needle in (b"/work/", b"/tmp/", b"/root/", b"/home/"):
        assert needle not in data, f"{name} names a machine path ({needle!r})"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_counts_match_the_independent_counter(name):
    spec = importlib.util.spec_from_file_location("count_trace", ROOT / "scripts" / "count_trace.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    counted = mod.count_file(DATA / name)
    assert {k: counted[k] for k in COLUMNS} == {k: TABLE[name][k] for k in COLUMNS}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_counts_match_the_library(name):
    import mcp_notebook as mn

    summary = mn.load(DATA / name).summary()
    got = {k: summary[k] for k in COLUMNS}
    assert got == {k: TABLE[name][k] for k in COLUMNS}
