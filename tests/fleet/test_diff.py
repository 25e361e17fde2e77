"""mn.diff and ``mcp-notebook diff`` on two real recordings of one scenario against two
releases of server-everything (scripts/record_versions.py), and on a planted regression.

Expected values are read from the files here with ``json`` (not by the library).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mcp_notebook as mn
from mcp_notebook.compare import diff_main, parse_threshold

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "tests" / "fixtures" / "fleet"
OLD = FLEET / "everything-old-2025.7.29.jsonl"
NEW = FLEET / "everything-new-2026.8.31.jsonl"
INSPECTOR = ROOT / "tests" / "fixtures" / "peers" / "inspector-cli-stdio.jsonl"


def _messages(path: Path) -> list[tuple[float, str, dict]]:
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["dir"] in ("c2s", "s2c"):
            out.append((rec["ts"], rec["dir"], json.loads(rec["raw"])))
    return out


def _result_of(path: Path, method: str) -> dict:
    """The result of the last client request ``method`` in a tap file."""
    msgs = _messages(path)
    ids = [m["id"] for _, d, m in msgs if d == "c2s" and m.get("method") == method]
    return [m["result"] for _, d, m in msgs if d == "s2c" and m.get("id") == ids[-1]][0]


def _names(path: Path, method: str, key: str, field: str = "name") -> set[str]:
    return {x[field] for x in _result_of(path, method)[key]}


@pytest.fixture(scope="module")
def versions():
    return mn.diff(OLD, NEW)


def _rows(df, change):
    return set(df.loc[df["change"] == change, "item"])


def test_tools_added_and_removed_between_releases(versions):
    old, new = _names(OLD, "tools/list", "tools"), _names(NEW, "tools/list", "tools")
    assert _rows(versions.tools, "removed") == old - new
    assert _rows(versions.tools, "added") == new - old
    # by hand: 2025.7.29 had add/printEnv/sampleLLM..., 2026.8.31 renamed them get-*...
    assert {"add", "printEnv", "sampleLLM", "startElicitation", "structuredContent"} \
        <= _rows(versions.tools, "removed")
    assert {"get-sum", "get-env", "get-structured-content", "gzip-file-as-resource",
            "simulate-research-query"} <= _rows(versions.tools, "added")
    assert set(versions.tools.loc[versions.tools["change"] == "removed", "severity"]) == {"error"}


def test_echo_schema_and_description_changed(versions):
    echo = versions.tools[versions.tools["item"] == "echo"].set_index("change")
    # by hand: the old inputSchema had "additionalProperties": false, the new one has not
    old = {t["name"]: t for t in _result_of(OLD, "tools/list")["tools"]}["echo"]
    new = {t["name"]: t for t in _result_of(NEW, "tools/list")["tools"]}["echo"]
    assert old["inputSchema"]["additionalProperties"] is False
    assert "additionalProperties" not in new["inputSchema"]
    assert echo.loc["inputSchema changed", "detail"] == "additionalProperties removed"
    assert echo.loc["inputSchema changed", "severity"] == "warning"
    assert json.loads(echo.loc["inputSchema changed", "a"]) == old["inputSchema"]
    assert json.loads(echo.loc["description changed", "b"]) == "Echoes back the input string"
    assert "outputSchema changed" not in echo.index  # neither has one


def test_prompts_resources_and_server(versions):
    old, new = _names(OLD, "prompts/list", "prompts"), _names(NEW, "prompts/list", "prompts")
    assert _rows(versions.prompts, "removed") == old - new == {
        "simple_prompt", "complex_prompt", "resource_prompt"}
    assert _rows(versions.prompts, "added") == new - old
    old_r = _names(OLD, "resources/list", "resources", "uri")
    new_r = _names(NEW, "resources/list", "resources", "uri")
    assert _rows(versions.resources, "removed") == old_r - new_r
    assert _rows(versions.resources, "added") == new_r - old_r
    caps_old = _result_of(OLD, "initialize")["capabilities"]
    caps_new = _result_of(NEW, "initialize")["capabilities"]
    server = versions.server
    caps = server[server["area"] == "capability"]
    assert _rows(caps, "removed") == set(caps_old) - set(caps_new) == {"elicitation"}
    assert _rows(caps, "added") == set(caps_new) - set(caps_old) == {"tasks"}
    version = server[(server["area"] == "server") & (server["item"] == "version")]
    assert version["detail"].tolist() == ["1.0.0 -> 2.0.0"]
    assert server[server["area"] == "protocol"].empty  # both negotiated 2025-11-25


def test_outcome_flips(versions):
    """get-sum is unknown to the old release (an error), the new one fails a resource read."""
    out = versions.changes[versions.changes["area"] == "outcome"].set_index("item")
    assert out.loc["resources/read", "change"] == "errors up"
    assert out.loc["resources/read", "severity"] == "error"
    assert out.loc["tools/call", "change"] == "errors down"
    assert float(out.loc["tools/call", "a"]) == 0.5 and float(out.loc["tools/call", "b"]) == 0
    assert versions.outcomes.loc["prompts/get", "errors_a"] == 1


def test_a_trace_against_itself_has_no_changes():
    d = mn.diff(NEW, NEW)
    assert d.changes.empty
    assert d.failing("info").empty
    assert "no changes" in d.text()


def _shifted(src: Path, dst: Path, method: str, delay: float) -> None:
    """A copy where every response to ``method`` arrives ``delay`` s later (and all after it)."""
    ids, shift, lines = set(), 0.0, []
    for line in src.read_text().splitlines():
        rec = json.loads(line)
        if rec["dir"] in ("c2s", "s2c"):
            m = json.loads(rec["raw"])
            if rec["dir"] == "c2s" and m.get("method") == method:
                ids.add(m["id"])
            elif rec["dir"] == "s2c" and "method" not in m and m.get("id") in ids:
                shift += delay
        rec["ts"] += shift
        lines.append(json.dumps(rec))
    dst.write_text("\n".join(lines) + "\n")


def _latencies_ms(path: Path, method: str) -> list[float]:
    msgs = _messages(path)
    sent = {m["id"]: ts for ts, d, m in msgs if d == "c2s" and m.get("method") == method}
    return [(ts - sent[m["id"]]) * 1000 for ts, d, m in msgs
            if d == "s2c" and "method" not in m and m.get("id") in sent]


def test_planted_latency_regression_fails_ci(tmp_path, capsys):
    slow = tmp_path / "slow.jsonl"
    _shifted(NEW, slow, "tools/call", 0.030)
    before, after = _latencies_ms(NEW, "tools/call"), _latencies_ms(slow, "tools/call")
    assert len(before) == 2 and np.allclose(np.array(after) - before, 30, atol=0.01)
    d = mn.diff(NEW, slow)
    lat = d.latency.loc["tools/call"]
    assert lat["p50_a"] == pytest.approx(np.percentile(before, 50), abs=1e-3)
    assert lat["p50_b"] == pytest.approx(np.percentile(after, 50), abs=1e-3)
    assert lat["p95_b"] == pytest.approx(np.percentile(after, 95), abs=1e-3)
    hits = d.changes[d.changes["area"] == "latency"]
    assert set(zip(hits["item"], hits["change"], hits["severity"], strict=True)) == {
        ("tools/call", "p50 up", "warning"), ("tools/call", "p95 up", "error")}
    # nothing else moved: the other methods answered as fast as before
    assert d.latency.drop(index="tools/call")["p50_shift"].abs().max() < 1e-3  # float seconds in JSON

    assert diff_main([str(NEW), str(slow)]) == 1  # p95 +50% is an error by default
    assert diff_main([str(NEW), str(slow), "--p95", "off"]) == 0  # only a warning left
    assert diff_main([str(NEW), str(slow), "--p95", "off", "--fail-on", "warning"]) == 1
    # a threshold above the rise: nothing crosses it
    rise = (np.percentile(after, 50) - np.percentile(before, 50)) / np.percentile(before, 50)
    assert diff_main([str(NEW), str(slow), "--p50", f"+{rise * 100 + 5:.0f}%:error",
                      "--p95", "off", "--fail-on", "info"]) == 0
    capsys.readouterr()
    assert diff_main([str(NEW), str(slow), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["failing"] == 1 and out["counts"] == {"error": 1, "warning": 1, "info": 0}
    assert {(c["item"], c["change"]) for c in out["changes"]} == {
        ("tools/call", "p50 up"), ("tools/call", "p95 up")}


def test_small_rises_under_min_ms_are_noise(tmp_path):
    slow = tmp_path / "slow.jsonl"
    _shifted(NEW, slow, "tools/call", 0.0005)  # +0.5 ms: a large percentage, no regression
    assert mn.diff(NEW, slow).changes.empty
    assert not mn.diff(NEW, slow, min_ms=0.1).changes.empty


def test_real_versions_cli_exit_and_json(capsys):
    assert diff_main([str(OLD), str(NEW), "--p50", "off", "--p95", "off"]) == 1
    text = capsys.readouterr().out
    assert "add: removed" in text and "get-sum: added" in text
    assert diff_main([str(OLD), str(NEW), "--json", "--p50", "off", "--p95", "off"]) == 1
    out = json.loads(capsys.readouterr().out)
    removed = {c["item"] for c in out["changes"] if c["area"] == "tool" and c["change"] == "removed"}
    assert removed == _names(OLD, "tools/list", "tools") - _names(NEW, "tools/list", "tools")


def test_unreadable_input_exits_2(tmp_path, capsys):
    assert diff_main([str(NEW), str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert diff_main([str(NEW), str(NEW), "--session-a", "nope"]) == 2


def test_sessions_matched_by_server_and_position():
    d = mn.diff(INSPECTOR, INSPECTOR)
    assert d.sessions == [(f"inspector-{i}", f"inspector-{i}") for i in range(7)]
    assert d.changes.empty


def test_sessions_named_by_the_user():
    # inspector-4 reads a missing resource, inspector-5 gets a prompt (by hand, from the file)
    d = mn.diff(INSPECTOR, INSPECTOR, session_a="inspector-4", session_b="inspector-5")
    assert d.sessions == [("inspector-4", "inspector-5")]
    methods = d.changes[d.changes["area"] == "method"].set_index("item")["change"].to_dict()
    assert methods.get("resources/read") == "gone" and methods.get("prompts/get") == "new"


def test_threshold_syntax():
    assert parse_threshold("+20%:warning").rise == pytest.approx(0.2)
    assert parse_threshold("0.5:error").severity == "error"
    assert parse_threshold("off").rise is None
    with pytest.raises(ValueError):
        parse_threshold("+20%:fatal")
    with pytest.raises(ValueError):
        parse_threshold("fast")


def test_sessions_left_over_are_listed():
    """Seven Inspector sessions against one: the first is compared, six are left over."""
    d = mn.diff(INSPECTOR, NEW)
    assert d.sessions == [("inspector-0", "everything-new")]
    left = d.changes[d.changes["area"] == "session"]
    assert left["item"].tolist() == [f"inspector-{i}" for i in range(1, 7)]
    assert set(left["change"]) == {"only in a"} and set(left["severity"]) == {"info"}
