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


# -- gzipped traces ------------------------------------------------------------------------
# A trace of a large payload (megabytes on one line) is bundled gzipped. The 200 KB cap is
# on the bytes stored in the repository and shipped in the wheel, which for a gzipped trace
# are the compressed ones: the cap holds for them as for any file. Only the plain text may be
# larger (a bound keeps the tests quick); its counts sit in a table of their own.
GZ_PLAIN_CAP = 32 << 20


def _gz_table() -> dict[str, dict[str, int]]:
    """The count rows of gzipped traces, in whichever table of the README they are."""
    out = {}
    header: list[str] = []
    for line in README.read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| trace |") or line.startswith("| file |"):
            header = cells
        elif line.startswith("| `") and cells[0].strip("`").endswith(".gz") and header:
            out[cells[0].strip("`")] = {k: int(v) for k, v in zip(header[1:], cells[1:],
                                                                   strict=True)}
    return out


GZ_TABLE = _gz_table()
GZ = sorted(p.name for p in DATA.iterdir() if p.name.endswith(".jsonl.gz"))


def test_every_gzipped_trace_has_its_counts():
    assert GZ and sorted(GZ_TABLE) == GZ


@pytest.mark.parametrize("name", GZ)
def test_gzipped_trace_is_small_compressed_and_names_no_machine_path(name):
    import gzip

    stored = (DATA / name).read_bytes()
    assert len(stored) < 200_000
    plain = gzip.decompress(stored)
    assert len(plain) < GZ_PLAIN_CAP
    for needle in (b"/work/", b"/tmp/", b"/root/", b"/home/"):
        assert needle not in plain, f"{name} names a machine path ({needle!r})"


@pytest.mark.parametrize("name", GZ)
def test_gzipped_counts_match_the_counter_and_the_library(name, tmp_path):
    import gzip

    import mcp_notebook as mn

    spec = importlib.util.spec_from_file_location("count_trace", ROOT / "scripts" / "count_trace.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    plain = tmp_path / name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress((DATA / name).read_bytes()))
    want = {k: GZ_TABLE[name][k] for k in COLUMNS}
    assert {k: mod.count_file(plain)[k] for k in COLUMNS} == want
    summary = mn.load(DATA / name).summary()
    assert {k: summary[k] for k in COLUMNS} == want
