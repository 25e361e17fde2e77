"""Everything rendered from a trace escapes its text: ``_repr_html_``, the pure renderers of
the widgets, the widgets' HTML panes, and the CLI's terminal output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ipywidgets as W
import pytest

import mcp_notebook as mn
from mcp_notebook.cli import main
from mcp_notebook.widgets import render

from .escaping import ANSI, ENTITIES, FILE_NAME, SCRIPT, SVG, assert_inert, hostile_capture


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> mn.Trace:
    return mn.load(hostile_capture(tmp_path_factory.mktemp("hostile")))


def test_repr_html_escapes_paths_versions_and_rules(trace: mn.Trace) -> None:
    html = trace._repr_html_()
    text = assert_inert(html, [FILE_NAME])
    assert trace.protocol_version in text  # the hostile version string, shown as text


def test_frame_panes_escape_every_frame(trace: mn.Trace) -> None:
    f = trace.frames
    shown = []
    for seq in range(len(f)):
        row = f.iloc[seq].to_dict()
        html = render.frame_html(row, trace.message(seq), row["raw"], f"frame {SCRIPT}")
        shown.append(assert_inert(html, [f"frame {SCRIPT}"]))
    everything = "\n".join(shown)
    for payload in (SCRIPT, ENTITIES, "javascript:window.__pwned=3", SVG.replace('"', "'")):
        assert payload in everything  # the payloads are visible, as text


def test_json_tree_escapes_keys_and_values() -> None:
    value = {SCRIPT: [SVG, {"<b>key</b>": ENTITIES}], "n": 1, "t": True, "z": None}
    text = assert_inert(render.json_tree_html(value, open_depth=9), ["<b>key</b>"])
    assert SCRIPT in text and ENTITIES in text


def test_violation_and_summary_panes(trace: mn.Trace) -> None:
    v = trace.violations
    assert len(v)  # the hostile capture breaks rules: their messages quote its text
    assert_inert(render.violations_html(v.to_dict("records")))
    text = assert_inert(render.summary_html(trace.summary(), trace.latency_by_method()))
    assert SCRIPT.split(">")[0] in text  # a hostile method name in the latency table


@pytest.mark.parametrize("make", [mn.inspect, mn.explore])
def test_widget_html_panes_escape_the_trace(trace: mn.Trace, make: object) -> None:
    w = make(trace)  # type: ignore[operator]
    inspector = w if isinstance(w, mn.widgets.Inspector) else next(
        c for c in _walk(w) if isinstance(c, mn.widgets.Inspector))
    panes = 0
    for seq in range(len(trace.frames)):
        inspector.selected_seq = seq
        for c in _walk(w):
            if isinstance(c, W.HTML):
                assert_inert(c.value)
                panes += 1
    assert panes > len(trace.frames)


def _walk(w: object) -> list[object]:
    out, todo = [], [w]
    while todo:
        x = todo.pop()
        out.append(x)
        todo.extend(getattr(x, "children", ()) or ())
    return out


def test_cli_output_neutralises_terminal_escapes(trace: mn.Trace,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = trace.paths[0]
    assert main(["summary", path]) == 0
    assert main(["check", "--all", "--spec", path]) in (0, 1)
    out, err = capsys.readouterr()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err), "a control character"
    assert "\\x1b]0;pwned\\x07" in out  # shown, as an escape
    assert main(["summary", "--json", path]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["methods"].get(SCRIPT + ANSI) == 1  # JSON keeps the exact text, escaped by JSON


def test_hostile_file_name_in_cli_errors(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / ("gone\x1b[2J" + FILE_NAME)
    assert main(["summary", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
