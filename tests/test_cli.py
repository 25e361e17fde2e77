"""The mcp-notebook command: exit codes, JSON, one-line errors."""

import json
import subprocess
import sys

import pytest

from helpers import INIT, ok, req, tap

CLI = [sys.executable, "-m", "mcp_notebook.cli"]


def run(*args, cwd=None):
    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


@pytest.fixture
def clean(tmp_path):
    return tap(tmp_path / "clean.jsonl", INIT + [("c2s", req(1, "tools/list")),
                                                  ("s2c", ok(1, {"tools": []}))])


@pytest.fixture
def duplicated(tmp_path):
    return tap(tmp_path / "dup.jsonl", INIT + [("c2s", req(1, "tools/list")),
                                                ("s2c", ok(1, {"tools": []})),
                                                ("s2c", ok(1, {"tools": []}))])


def test_check_exit_codes(clean, duplicated, tmp_path):
    r = run("check", clean)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 finding(s)" in r.stdout
    r = run("check", duplicated)
    assert r.returncode == 1
    assert "duplicate-response" in r.stdout and "dup.jsonl:6" in r.stdout
    r = run("check", tmp_path / "missing.jsonl")
    assert r.returncode == 2
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "no such file" in r.stderr


def test_fail_on_levels(tmp_path):
    path = tap(tmp_path / "w.jsonl", INIT + [("c2s", req(1, "tools/list"))])  # unanswered: warning
    assert run("check", path).returncode == 0
    assert run("check", path, "--fail-on", "warning").returncode == 1
    assert run("check", path, "--fail-on", "info").returncode == 1


def test_check_json(duplicated):
    r = run("check", duplicated, "--json")
    data = json.loads(r.stdout)
    assert r.returncode == 1 and data["failing"] == 1
    v = data["violations"][0]
    assert (v["rule"], v["severity"], v["seq"], v["related_seq"]) == ("duplicate-response", "error", 5, 4)
    assert v["spec"] and v["message"]


def test_summary_json_uses_design_names(clean):
    r = run("summary", clean, "--json")
    assert r.returncode == 0
    s = json.loads(r.stdout)
    for key in ("frames", "messages", "requests", "notifications", "responses", "results",
                "errors", "tool_errors", "pairs", "unanswered", "cancelled", "orphans",
                "duplicates", "sessions", "protocol_version", "methods", "error_codes",
                "violations"):
        assert key in s
    assert (s["frames"], s["requests"], s["pairs"], s["protocol_version"]) == (5, 2, 2, "2025-06-18")
    assert s["responses"] == s["results"] + s["errors"]


def test_summary_human(clean):
    r = run("summary", clean)
    assert r.returncode == 0 and "5 frames in 1 session(s), protocol 2025-06-18" in r.stdout


def test_unknown_format_is_a_clear_error(tmp_path):
    junk = tmp_path / "picture.bin"
    junk.write_bytes(bytes(range(256)) * 10)
    r = run("summary", junk)
    assert r.returncode == 2 and "Known formats:" in r.stderr and "tap" in r.stderr
    r = run("summary", junk, "--format", "nosuch")
    assert r.returncode == 2 and "unknown format 'nosuch'" in r.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_convert(fmt, duplicated, tmp_path):
    out = tmp_path / f"out.{fmt}"
    r = run("convert", duplicated, "--to", fmt, "--out", out)
    assert r.returncode == 0 and out.exists(), r.stderr
    if fmt == "jsonl":
        import pandas as pd

        import mcp_notebook as mn

        a, b = mn.load(duplicated), mn.load(out)
        pd.testing.assert_frame_equal(a.frames.drop(columns=["session"]),
                                      b.frames.drop(columns=["session"]))
        pd.testing.assert_frame_equal(a.pairs.drop(columns=["session"]),
                                      b.pairs.drop(columns=["session"]))


def test_rules_and_formats():
    r = run("rules", "--json")
    assert r.returncode == 0 and any(x["code"] == "result-and-error" for x in json.loads(r.stdout))
    r = run("formats")
    assert r.returncode == 0 and "tap" in r.stdout and "ndjson" in r.stdout


ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def test_check_json_on_findings_without_a_related_frame():
    """The README's own example: orphans and unanswered requests have no related_seq."""
    r = run("check", ROOT / "data" / "broken-duplicate-response.jsonl", "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    data = json.loads(r.stdout)
    rows = {v["rule"]: v for v in data["violations"]}
    assert rows["orphan-response"]["related_seq"] is None
    assert rows["unanswered-request"]["related_seq"] is None
    assert rows["duplicate-response"]["related_seq"] == 8
    assert rows["orphan-response"]["source"] == "broken-duplicate-response.jsonl:7"
    assert data["failing"] == 2


_FAULT = """
import sys
import mcp_notebook.cli as cli
def broken(args):
    raise RuntimeError("injected fault")
cli.cmd_summary = broken
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("debug", ["", "env", "flag"])
def test_an_internal_error_exits_3_with_one_line(clean, debug):
    """A bug must not look like a result (0) or findings (1)."""
    import os

    env = {**os.environ, "MCP_NOTEBOOK_DEBUG": "1" if debug == "env" else ""}
    argv = ["summary", str(clean)] + (["--debug"] if debug == "flag" else [])
    r = subprocess.run([sys.executable, "-c", _FAULT, *argv], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 3 and r.stdout == "", r.stderr
    last = r.stderr.splitlines()[-1]
    assert last.startswith("mcp-notebook: internal error (RuntimeError: injected fault)")
    assert "bug in mcp-notebook" in last and "MCP_NOTEBOOK_DEBUG=1" in last
    if debug:
        assert "Traceback (most recent call last)" in r.stderr
    else:
        assert r.stderr.count("\n") == 1


def test_help_documents_the_exit_codes():
    r = run("--help")
    assert r.returncode == 0
    for line in ("0  done", "1  check found violations", "2  bad usage", "3  a bug"):
        assert line in r.stdout
