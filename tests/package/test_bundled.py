"""The bundled files as the checkout serves them (the same code finds them in a wheel:
``test_installed.py``): names, the listing from ``data/README.md``, copying the tutorial."""

from __future__ import annotations

import re

import pytest

import mcp_notebook as mn
from mcp_notebook import bundled
from mcp_notebook.cli import main

from .conftest import REPO


def _readme_files() -> list[str]:
    text = (REPO / "data" / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^### `([^`]+)`", text, flags=re.M)


def test_sample_path_by_stem_and_by_file_name():
    assert mn.sample_path("demo-stdio") == mn.sample_path("demo-stdio.jsonl")
    assert mn.sample_path("demo-http").suffix == ".har"
    assert mn.sample_path().name == sorted(_readme_files())[0]


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="known: .*demo-stdio"):
        mn.sample_path("no-such-trace")


def test_datasets_has_one_row_per_trace_described_in_the_readme():
    d = mn.datasets()
    assert list(d.columns) == ["name", "file", "transport", "server", "bytes", "about"]
    assert sorted(d["file"]) == sorted(_readme_files())
    row = d.set_index("name").loc["everything-http"]
    assert row["transport"] == "Streamable HTTP"
    assert row["server"].startswith("@modelcontextprotocol/server-everything")
    assert row["bytes"] == mn.sample_path("everything-http").stat().st_size
    assert row["about"].startswith("initialize (session id in `mcp-session-id`)")
    assert (d["about"].str.len() <= 112).all() and (d["about"] != "").all()
    assert not d["about"].str.contains(r"\*\*").any()


def test_copy_notebooks_keeps_a_learners_work(tmp_path):
    first = bundled.copy_notebooks(tmp_path)
    assert {p.name for p in first} >= {"00-start.ipynb", "README.md"}
    mine = tmp_path / "01-anatomy-of-a-frame.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    assert bundled.copy_notebooks(tmp_path) == []
    assert mine.read_text(encoding="utf-8") == "my answers"
    again = bundled.copy_notebooks(tmp_path, overwrite=True)
    assert len(again) == len(first) and mine.read_text(encoding="utf-8") != "my answers"


def test_notebooks_command_without_solutions(tmp_path, capsys):
    assert main(["notebooks", str(tmp_path / "nb"), "--no-solutions"]) == 0
    assert not (tmp_path / "nb" / "solutions").exists()
    assert len(list((tmp_path / "nb").glob("*.ipynb"))) == len(
        list((REPO / "notebooks").glob("*.ipynb")))
    assert f"jupyter lab {tmp_path / 'nb'}" in capsys.readouterr().out


def test_notebooks_command_refuses_a_file_as_destination(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(NotADirectoryError):
        bundled.copy_notebooks(target)


@pytest.mark.parametrize("module", ["mcp_notebook.bundled", "mcp_notebook.notebook"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
