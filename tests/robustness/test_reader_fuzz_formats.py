"""Fuzz the whole-document and log readers with one bad value: the good entries stay.

Structure-aware mutations of valid HAR, Inspector export, recorder cassette and VS
Code files: one entry
(or line) gets a hostile value (a lone surrogate, an unparsable URL, a wrong type, an
impossible date, terminal colour, a CR-only line end) and the file may be cut inside
or after it. Properties: no exception from the reader or ``mn.load``, and every JSON-RPC
frame of every other entry before the cut comes out exactly as from the intact file.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from readers import harkit

import mcp_notebook as mn
from mcp_notebook.readers import har, inspector, recorder, vscode
from mcp_notebook.table import collect

from .corpus import FUZZ

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ROOT / "readers" / "data" / "inspector-protocol-everything-2026-05-20T10-00-05.000Z.json"
CASSETTE = (ROOT / "fixtures" / "wild" / "recorder-mcp-recorder-cassette"
            / "devhelm-mock-session-cassette.json")
VSCODE = ROOT / "fixtures" / "wild" / "vscode-mcp-output" / "vscode-244377-client-says-server-says.txt"

#: values a damaged or hostile file puts where a good value was
HOSTILE: list[Any] = [
    "\ud800", "x\udfff", "http://[::1/mcp", "::::", "", None, 0, -1, 1e308, 2**70, True,
    [], {}, [1, {"a": None}], "2025-13-45T99:99:99Z", "0001-01-01T00:00:00+14:00",
    "\x1b[31mred\x1b[0m", "a\rb", "\ufeff{}", '{"jsonrpc":"2.0","id":1,"result":"\ud800"}',
]


def _har_entries() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as d:
        path = harkit.streamable(Path(d) / "s.har")
        return json.loads(path.read_text())["log"]["entries"]


HAR_ENTRIES = _har_entries()
INSPECTOR_ENTRIES = json.loads(EXPORT.read_text(encoding="utf-8"))
CASSETTE_DOC = json.loads(CASSETTE.read_text(encoding="utf-8"))
VSCODE_LINES = VSCODE.read_text(encoding="utf-8").splitlines() * 3


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path inside a JSON value."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


def _set(doc: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


@st.composite
def damaged(draw: st.DrawFn, entries: list[dict[str, Any]]) -> tuple[list, int, float | None]:
    """``(entries, the damaged entry, where to cut as a fraction or None)``."""
    entries = json.loads(json.dumps(entries))
    k = draw(st.integers(0, len(entries) - 1))
    if draw(st.integers(0, 9)) == 0:  # the entry itself is not an object
        entries[k] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
    else:
        for _ in range(draw(st.integers(1, 3))):
            paths = _paths(entries[k])
            if paths:
                _set(entries[k], draw(st.sampled_from(paths)),
                     copy.deepcopy(draw(st.sampled_from(HOSTILE))))
    cut = draw(st.one_of(st.none(), st.floats(0.0, 1.0)))
    return entries, k, cut


def _frames(records: list, entry_of) -> Counter:
    """JSON-RPC frames (not log or invalid rows) by entry."""
    return Counter((entry_of(r.source), r.direction, r.raw) for r in records
                   if r.kind is None and r.raw)


def _entry_of(source: str) -> int:
    tail = source.split("#", 1)[1] if "#" in source else ""
    word = "interaction" if tail.startswith("interaction") else "entry"
    if not tail.startswith(word):
        return -1
    return int(tail[len(word):].split("/")[0])


def _check_document(tmp_path: Path, module, wrap, entries: list, k: int, cut: float | None,
                    intact: Counter, name: str) -> None:
    text = json.dumps(wrap(entries), indent=1)  # ensure_ascii: a surrogate as \\ud800
    lost_from = len(entries)
    if cut is not None:
        at = int(len(text) * cut)
        text = text[:at]
        # entries wholly before the cut must stay; the one cut through may go
        lost_from = sum(1 for i in range(len(entries)) if _end(wrap, entries, i) <= at)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    records = list(module.read(path))
    collect(records)  # the table builder takes every record
    mn.load(path, format=module.name).violations  # noqa: B018 - loads, pairs, checks
    got = _frames(records, _entry_of)
    for key, count in intact.items():
        entry = key[0]
        if entry != k and entry < max(lost_from, 0):
            assert got[key] == count, (key, got[key], count)


def _end(wrap, entries: list, i: int) -> int:
    """Where entry ``i`` ends in the text of the whole document."""
    text = json.dumps(wrap(entries[:i + 1] + ["\x00mark"]), indent=1)
    return len(text[:text.index('"\\u0000mark"')].rstrip(", \n"))


def _intact(module, wrap, entries, tmp: Path) -> Counter:
    path = tmp / ("intact." + ("har" if module is har else "json"))
    path.write_text(json.dumps(wrap(entries), indent=1), encoding="utf-8")
    return _frames(list(module.read(path)), _entry_of)


def _har_doc(entries: list) -> dict:
    return {"log": {"version": "1.2", "entries": entries}}


def _same(entries: list) -> list:
    return entries


def _cassette(entries: list) -> dict:
    return {**CASSETTE_DOC, "interactions": entries}


with tempfile.TemporaryDirectory() as _d:
    HAR_INTACT = _intact(har, _har_doc, HAR_ENTRIES, Path(_d))
    INSPECTOR_INTACT = _intact(inspector, _same, INSPECTOR_ENTRIES, Path(_d))
    CASSETTE_INTACT = _intact(recorder, _cassette, CASSETTE_DOC["interactions"], Path(_d))


@FUZZ
@given(case=damaged(HAR_ENTRIES))
def test_har_one_bad_value_keeps_every_good_entry(case):
    entries, k, cut = case
    with tempfile.TemporaryDirectory() as d:
        _check_document(Path(d), har, _har_doc, entries, k, cut, HAR_INTACT, "x.har")


@FUZZ
@given(case=damaged(INSPECTOR_ENTRIES))
def test_inspector_one_bad_value_keeps_every_good_entry(case):
    entries, k, cut = case
    with tempfile.TemporaryDirectory() as d:
        _check_document(Path(d), inspector, _same, entries, k, cut, INSPECTOR_INTACT,
                        "x.json")


_LINE_DAMAGE = [
    lambda ln: ln.replace('"result":', '"x":"\\ud800","result":', 1),
    lambda ln: ln.replace('"id":', '"id":"\\udfff",', 1),
    lambda ln: "2025-13" + ln[7:],
    lambda ln: ln[:11] + "99" + ln[13:],
    lambda ln: "\x1b[2m" + ln[:23] + "\x1b[0m" + ln[23:],
    lambda ln: ln + "\r",
    lambda ln: ln[: len(ln) // 2],
    lambda ln: ln.encode("utf-8").decode("latin-1"),
    lambda ln: "\ufeff" + ln,
]


@FUZZ
@given(k=st.integers(0, len(VSCODE_LINES) - 1),
       # one damage per line: two could erase the time prefix, and a line without
       # one is, by the format, the continuation of the entry above
       damage=st.lists(st.sampled_from(range(len(_LINE_DAMAGE))), min_size=1, max_size=1),
       cr=st.booleans())
def test_vscode_one_bad_line_keeps_every_good_line(k, damage, cr):
    lines = list(VSCODE_LINES)
    for d in damage:
        lines[k] = _LINE_DAMAGE[d](lines[k])
    sep = "\r" if cr else "\n"  # CR-only line ends throughout, or LF
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mcp.log"
        path.write_text(sep.join(lines) + sep, encoding="utf-8", newline="")
        records = list(vscode.read(path))
        collect(records)
        mn.load(path, format="vscode").violations  # noqa: B018
    good = Counter(ln.split("] ", 2)[2] for i, ln in enumerate(lines)
                   if i != k and ("Says] {" in ln))
    got = Counter(r.raw for r in records if r.kind is None)
    assert all(got[raw] >= n for raw, n in good.items())


@FUZZ
@given(case=damaged(CASSETTE_DOC["interactions"]))
def test_recorder_one_bad_value_keeps_every_good_interaction(case):
    entries, k, cut = case
    with tempfile.TemporaryDirectory() as d:
        _check_document(Path(d), recorder, _cassette, entries, k, cut, CASSETTE_INTACT,
                        "x.json")


@pytest.mark.parametrize("which", ["har", "inspector", "recorder"])
def test_a_document_cut_right_after_its_last_entry_keeps_it(tmp_path, which):
    # found by a long random run: the last entry, whole, was read as cut through
    module, wrap, entries, intact, name = {
        "har": (har, _har_doc, HAR_ENTRIES, HAR_INTACT, "x.har"),
        "inspector": (inspector, _same, INSPECTOR_ENTRIES, INSPECTOR_INTACT, "x.json"),
        "recorder": (recorder, _cassette, CASSETTE_DOC["interactions"], CASSETTE_INTACT,
                     "x.json")}[which]
    text = json.dumps(wrap(entries), indent=1)
    path = tmp_path / name
    path.write_text(text[:_end(wrap, entries, len(entries) - 1)], encoding="utf-8")
    records = list(module.read(path))
    assert _frames(records, _entry_of) == intact
    assert records[-1].kind == "log"  # the cut itself is said
