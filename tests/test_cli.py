"""The mcp-notebook command: exit codes, JSON, one-line errors.

The cases are about the library's answer, so ``run`` calls ``main([...])`` (the console
script's own entry point) in this process, its streams captured as bytes; a sample goes
through real processes (``run_process``: exit codes, a crash, a memory limit, stdout as a
stream), and tests/userpaths runs every subcommand as the installed console script.
"""

import json
import os
import subprocess
import sys

import pytest

from helpers import INIT, cli_in_process, ok, req, tap

CLI = [sys.executable, "-m", "mcp_notebook.cli"]


def run_process(*args, cwd=None):
    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def run(*args, cwd=None):
    """``main(argv)`` in this process: a ``CompletedProcess`` of its exit code and output."""
    return cli_in_process(*args, cwd=cwd)


@pytest.fixture
def clean(tmp_path):
    return tap(tmp_path / "clean.jsonl", INIT + [("c2s", req(1, "tools/list")),
                                                  ("s2c", ok(1, {"tools": []}))])


@pytest.fixture
def duplicated(tmp_path):
    return tap(tmp_path / "dup.jsonl", INIT + [("c2s", req(1, "tools/list")),
                                                ("s2c", ok(1, {"tools": []})),
                                                ("s2c", ok(1, {"tools": []}))])


@pytest.mark.parametrize("run", [run, run_process], ids=["main", "process"])
def test_check_exit_codes(clean, duplicated, tmp_path, run):
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
    for line in ("0    done", "1    check found violations", "2    bad usage", "3    a bug",
                 "130  interrupted"):
        assert line in r.stdout


# -- convert never writes over what it reads ------------------------------------------------

def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def big(tmp_path):
    """A tap capture over 16 MB: the size from which the frame text is read lazily."""
    blob = "x" * 8000
    rows = list(INIT)
    for i in range(1, 1100):
        rows += [("c2s", req(i, "tools/call", {"name": "echo", "arguments": {"text": blob}})),
                 ("s2c", ok(i, {"content": [{"type": "text", "text": blob}]}))]
    path = tap(tmp_path / "big.jsonl", rows)
    assert path.stat().st_size > 16 * 2**20
    return path


def test_convert_default_name_is_never_the_input(big, tmp_path):
    before = _sha(big)
    r = run("convert", big, "--to", "jsonl")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote 2201 frames to {tmp_path / 'big.converted.jsonl'}\n"
    assert _sha(big) == before
    import mcp_notebook as mn

    assert len(mn.load(tmp_path / "big.converted.jsonl").pairs) == 1100


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_convert_refuses_to_write_its_input(big, tmp_path, how):

    before = _sha(big)
    out = {"same": big, "relative": "big.jsonl", "symlink": tmp_path / "link.jsonl",
           "hardlink": tmp_path / "hard.jsonl"}[how]
    if how == "symlink":
        os.symlink(big, out)
    elif how == "hardlink":
        os.link(big, out)
    r = run("convert", big, "--to", "jsonl", "--out", out, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.count("\n") == 1 and "name another output file" in r.stderr
    assert _sha(big) == before


def test_convert_refuses_a_file_of_an_input_folder(tmp_path):
    folder = tmp_path / "caps"
    folder.mkdir()
    tap(folder / "a.jsonl", INIT)
    assert run("convert", folder, "--to", "jsonl", "--out", folder / "all.jsonl").returncode == 0
    before = _sha(folder / "all.jsonl")  # now an input of the folder: refused the next time
    r = run("convert", folder, "--to", "jsonl", "--out", folder / "all.jsonl")
    assert r.returncode == 2 and "is the input" in r.stderr
    assert _sha(folder / "all.jsonl") == before


_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
from mcp_notebook.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_convert_failing_midway_leaves_no_partial_file(big, tmp_path, fmt):
    """A full disk (here a 1 MB file-size limit): the old output stays, no temporary left."""
    out = tmp_path / f"out.{fmt}"
    out.write_text("the previous output\n")
    r = subprocess.run([sys.executable, "-c", _LIMITED, "convert", str(big), "--to", fmt,
                        "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"mcp-notebook: cannot write {out}: File too large")
    assert "Traceback" not in r.stderr
    assert out.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl", out.name]


def test_check_fails_on_every_garbage_line_of_a_tap_file(clean):
    """Lines that are not tap records are findings: --fail-on error cannot pass them."""
    good = clean.read_text()
    clean.write_text(good + "garbage from an editor\n" + '{"foo": 1}\n' + good.splitlines()[0][:20]
                     + "\n")
    r = run("check", clean, "--fail-on", "error")
    assert r.returncode == 1, r.stdout
    lines = [ln for ln in r.stdout.splitlines() if "[unreadable-record]" in ln]
    assert [ln.split(": ")[0] for ln in lines] == ["clean.jsonl:6", "clean.jsonl:7",
                                                    "clean.jsonl:8"]
    assert "not a tap record" in lines[0]


BIDI = "\u202e\u202a\u202b\u202c\u202d\u200e\u200f\u2066\u2067\u2068\u2069\u061c\u200b\u2028\u2029\ufeff"


@pytest.mark.parametrize("command", [["summary"], ["check", "--all", "--spec"]])
def test_bidi_controls_are_shown_as_escapes(tmp_path, command):
    """A method name that reverses the rest of the line on a terminal ("Trojan Source")."""
    evil = "tools/\u202ecall\u2066x\u2069" + BIDI
    path = tap(tmp_path / "bidi.jsonl", INIT + [("c2s", req(1, evil)), ("s2c", ok(1))])
    r = run(*command, path)
    assert r.returncode in (0, 1) and r.stderr == ""
    assert not set(BIDI) & set(r.stdout), [c for c in r.stdout if c in BIDI]
    assert "tools/\\u202ecall\\u2066x" in r.stdout
    r = run(*command, tmp_path / f"gone{BIDI}.jsonl")  # in error lines too
    assert r.returncode == 2 and not set(BIDI) & set(r.stderr) and "\\u202e" in r.stderr


def test_json_output_is_strict_json():
    """NaN and infinities (a latency of no frames, say) are null: JSON has no NaN."""
    from mcp_notebook.cli.output import json_text as _json

    text = _json({"p50": float("nan"), "max": [float("inf"), 1.5], "n": 2})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == {
        "p50": None, "max": [None, 1.5], "n": 2}


# -- convert to streams and through links ---------------------------------------------------

def test_convert_to_a_named_pipe_writes_the_stream(duplicated, tmp_path):
    """A FIFO (as /dev/stdout can be) is written, never replaced by a file."""
    import stat
    import threading

    run("convert", duplicated, "--to", "jsonl", "--out", tmp_path / "plain.jsonl")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = run("convert", duplicated, "--to", "jsonl", "--out", fifo)
    reader.join(30)
    if reader.is_alive():  # nothing opened the pipe for writing: let the reader go
        with open(fifo, "wb"):
            pass
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the named pipe was replaced by a file"
    assert got == [(tmp_path / "plain.jsonl").read_bytes()]


def test_convert_to_stdout(duplicated, tmp_path):
    """The frames alone on stdout; the report of what was written on stderr."""
    run("convert", duplicated, "--to", "jsonl", "--out", tmp_path / "plain.jsonl")
    r = subprocess.run(CLI + ["convert", str(duplicated), "--to", "jsonl", "--out",
                              "/proc/self/fd/1"], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (tmp_path / "plain.jsonl").read_bytes()
    assert r.stderr == b"wrote 6 frames to /proc/self/fd/1\n"


def test_convert_through_a_symlink_replaces_the_file_it_names(duplicated, tmp_path):

    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    os.symlink(real, link)
    r = run("convert", duplicated, "--to", "csv", "--out", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith("seq,") and len(real.read_text().splitlines()) == 7


@pytest.mark.parametrize("report", ["github", "sarif", "junit"])
def test_check_format_names_a_report_as_report_does(duplicated, report):
    """`check --format github` (issue 19's spelling) gives what `--report github` gives."""
    by_format = run("check", duplicated, "--format", report)
    by_report = run("check", duplicated, "--report", report)
    assert by_format.returncode == by_report.returncode == 1
    assert by_format.stdout == by_report.stdout and by_format.stdout
    if report == "github":
        assert len(by_format.stdout.splitlines()) == 1  # the one duplicate response
        assert by_format.stdout.startswith("::error ")


def test_check_format_and_report_naming_two_reports_is_a_usage_error(duplicated):
    r = run("check", duplicated, "--format", "github", "--report", "sarif")
    assert r.returncode == 2 and not r.stdout
    assert "give one of them" in r.stderr
