"""Every subcommand, with each of its flags, on a sample of the bundled traces and capture
fixtures that holds every format and every pattern of ``check`` exit codes (``SAMPLE``, its
cover tested), and every trace and fixture once through ``summary --json`` and
``check --json``.

The flags are parsed and printed by the same code whatever the capture; what a capture
changes is its format (the reader), its counts and which ``--fail-on`` levels it fails. So
the sample runs every flag on every format and every exit-code pattern, and every other
capture still goes through the loader and the command line (frames, pairs, findings by
severity and the exit code checked): a fault of one flag or one format, or one capture the
command line reads wrongly, still fails here, in a fifth of the cases of the full cross
product.

Run in this process through ``main([...])`` (the console script's own entry point) with the
output captured; ``test_console_script.py`` runs each subcommand through a real process.
The exit code, counts and lines are checked against what the library itself says about the
capture (``conftest.expected``), not only that the command finished.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.cli import main

from .conftest import FOLDERS, INPUTS, ROOT, SEVERITIES, assert_clean, expected, sha256, strict_json

CHECKS = [(), ("--all",), ("--all", "--spec"),
          *[("--fail-on", s) for s in SEVERITIES],
          ("--json",), *[("--json", "--fail-on", s) for s in SEVERITIES],
          ("--json", "--all")]


#: every format of the bundled inputs, and every pattern of ``check``'s exit code over the
#: three ``--fail-on`` levels (fails at error / from warning / only at info / never), gzip
#: too; ``test_the_sample_covers_every_format_and_exit_code`` keeps it so
SAMPLE = ["data/broken-duplicate-response.jsonl",
          "data/conversation-large-result-mb.jsonl.gz",
          "data/demo-stdio.jsonl",
          "data/pages-stdio.jsonl",
          "data/demo-http.har",
          "tests/fixtures/peers/inspector-cli-http.har",
          "tests/fixtures/inspector-web/inspector-protocol-node-2026-12-07T18-40-58.367Z.json",
          "tests/fixtures/inspector-web/inspector-network-127.0.0.1%3A41135-2026-12-07T20-53-49.328Z.json",
          "tests/fixtures/wild/claude-desktop-mcp-log/servers-106-nov2024-connect-lines.txt",
          "tests/fixtures/wild/claude-desktop-server-log/anytype-34-multiline-inspect.txt",
          "tests/fixtures/wild/http-sse-capture/agentgateway-readme-inspector-proxy-curl-sse.txt",
          "tests/fixtures/wild/recorder-mcp-recorder-cassette/devhelm-mock-session-cassette.json",
          "tests/fixtures/wild/vscode-mcp-output/appium-41-failed-to-parse.txt",
          *FOLDERS]
#: the rest: each once through ``summary --json`` and ``check --json``
REST = [p for p in INPUTS + FOLDERS if p not in SAMPLE]


def _cover(paths: list[str]) -> tuple[set[str], set[tuple[int, ...]]]:
    from mcp_notebook.readers import sniff

    files = [p for p in paths if p not in FOLDERS]
    return ({sniff(ROOT / p) for p in files},
            {tuple(expected(p).check_status(s) for s in SEVERITIES) for p in files})


def test_the_sample_covers_every_format_and_exit_code():
    """The sample has every format and every exit-code pattern the inputs have (a new
    format or fixture that needs its own row fails here), and the inputs all four patterns."""
    assert all(p in INPUTS for p in SAMPLE if p not in FOLDERS)
    formats, patterns = _cover(INPUTS)
    assert patterns == {(1, 1, 1), (0, 1, 1), (0, 0, 1), (0, 0, 0)}
    assert _cover(SAMPLE) == (formats, patterns)
    assert any(p.endswith(".gz") for p in SAMPLE)


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert_clean(rc, out, err)
    return rc, out, err


@pytest.fixture
def capture(request, unchanged) -> Path:
    """The input file of the case, watched: it must not change."""
    path = ROOT / request.param
    unchanged(path)
    return path


def _ids(flags: tuple[str, ...]) -> str:
    return " ".join(flags) or "plain"


@pytest.mark.parametrize(("capture", "as_json"),
                         [pytest.param(c, j, id=f"{c}-{'--json' if j else 'plain'}")
                          for c in SAMPLE for j in (False, True)]
                         + [pytest.param(c, True, id=f"{c}---json") for c in REST],
                         indirect=["capture"])
def test_summary(capture, as_json, capsys):
    want = expected(str(capture.relative_to(ROOT)))
    rc, out, err = cli(["summary", capture, *(["--json"] if as_json else [])], capsys)
    assert rc == 0 and err == ""
    if as_json:
        s = strict_json(out)
        assert (s["frames"], s["pairs"]) == (want.frames, want.pairs)
        assert s["violations"]["by_severity"] == {k: v for k, v in want.summary_severities.items()
                                                  if v}
    else:
        assert out.startswith(f"{want.frames} frames in ")
        assert f"  {want.pairs} answered, " in out


@pytest.mark.parametrize(("capture", "flags"),
                         [pytest.param(c, f, id=f"{c}-{_ids(f)}") for c in SAMPLE for f in CHECKS]
                         + [pytest.param(c, ("--json",), id=f"{c}---json") for c in REST],
                         indirect=["capture"])
def test_check(capture, flags, capsys):
    want = expected(str(capture.relative_to(ROOT)))
    fail_on = flags[flags.index("--fail-on") + 1] if "--fail-on" in flags else "error"
    rc, out, err = cli(["check", capture, *flags], capsys)
    assert rc == want.check_status(fail_on) and err == ""
    total = sum(want.severities.values())
    if "--json" in flags:
        data = strict_json(out)
        assert data["fail_on"] == fail_on and data["failing"] == want.failing(fail_on)
        assert len(data["violations"]) == total
        for v in data["violations"]:
            assert v["severity"] in SEVERITIES and v["spec"] and v["message"]
            assert v["related_seq"] is None or isinstance(v["related_seq"], int)
        return
    lines = out.splitlines()
    counts = ", ".join(f"{want.severities.get(s, 0)} {s}" for s in SEVERITIES)
    assert lines[-1].startswith(f"{total} finding(s): {counts}; "
                                f"{want.failing(fail_on)} at or above {fail_on}")
    found = [ln for ln in lines if re.match(r"^\S.*: (error|warning|info): \[[a-z-]+\] ", ln)]
    assert len(found) == (total if "--all" in flags else want.failing(fail_on))
    if "--spec" in flags:
        assert sum(ln.startswith("    spec: ") for ln in lines) == len(found)


@pytest.mark.parametrize("capture", SAMPLE, indirect=True)
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_convert(capture, fmt, tmp_path, capsys):
    want = expected(str(capture.relative_to(ROOT)))
    out = tmp_path / f"out.{fmt}"
    rc, stdout, err = cli(["convert", capture, "--to", fmt, "--out", out], capsys)
    assert rc == 0 and err == "" and stdout == f"wrote {want.frames} frames to {out}\n"
    if fmt == "jsonl":  # tap JSONL loads back to the same frames and pairs
        back = mn.load(out)
        assert (len(back.frames), back.summary()["pairs"]) == (want.frames, want.pairs)
    elif fmt == "csv":
        assert len(pd.read_csv(out)) == want.frames
    else:
        assert len(pd.read_parquet(out)) == want.frames
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temporary left


@pytest.mark.parametrize("capture", SAMPLE, indirect=True)
def test_redact(capture, tmp_path, capsys):
    want = expected(str(capture.relative_to(ROOT)))
    out = tmp_path / "shared.out"
    rc, stdout, err = cli(["redact", capture, "--out", out, "--salt", "s"], capsys)
    assert rc == 0 and err == "" and stdout.startswith("redacted ")
    assert stdout.endswith(f"; wrote {out}\n")
    assert mn.load(out).summary()["pairs"] == want.pairs  # the copy pairs like the original


@pytest.mark.parametrize("command", ["convert", "redact"])
def test_default_output_names_are_beside_a_copy(command, tmp_path, capsys):
    """Without --out the output goes beside the input, under another name."""
    for rel in INPUTS[:: max(1, len(INPUTS) // 6)]:
        src = tmp_path / Path(rel).name
        shutil.copyfile(ROOT / rel, src)
        before = sha256(src)
        argv = [command, src] + (["--to", "jsonl"] if command == "convert" else [])
        rc, out, _ = cli(argv, capsys)
        assert rc == 0 and sha256(src) == before
        written = Path(out.rstrip("\n").rsplit(" ", 1)[-1])
        assert written.parent == tmp_path and written.name != src.name and written.exists()


@pytest.mark.parametrize("argv", [["rules"], ["rules", "--json"], ["formats"], ["--version"]],
                         ids=" ".join)
def test_listings(argv, capsys):
    if argv == ["--version"]:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
        assert capsys.readouterr().out == f"mcp-notebook {mn.__version__}\n"
        return
    rc, out, err = cli(argv, capsys)
    assert rc == 0 and err == ""
    from mcp_notebook.protocol.rules import RULES

    if argv == ["rules", "--json"]:
        assert [r["code"] for r in strict_json(out)] == [r.code for r in RULES]
    elif argv == ["rules"]:
        assert [ln.split()[0] for ln in out.splitlines()] == [r.code for r in RULES]
    else:
        assert [ln.split()[0] for ln in out.splitlines()] == list(mn.formats())


# -- what cannot be read: exit 2, one line ---------------------------------------------------

def _unreadable(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    import gzip

    binary = tmp_path / "picture.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress((ROOT / INPUTS[0]).read_bytes())[:40])
    empty_dir = tmp_path / "nothing-here"
    empty_dir.mkdir()
    return {"missing": (tmp_path / "missing.jsonl", "no such file"),
            "unknown-format": (binary, "Known formats:"),
            "cut-gzip": (cut, "cannot be read"),
            "empty-folder": (empty_dir, "no capture files found")}


UNREADABLE = ["missing", "unknown-format", "cut-gzip", "empty-folder"]
ON_A_FILE = [["summary"], ["summary", "--json"], ["check"], ["check", "--json"],
             ["convert", "--to", "jsonl", "--out", "{tmp}/x.jsonl"],
             ["redact", "--out", "{tmp}/x.jsonl"]]


@pytest.mark.parametrize("case", UNREADABLE)
@pytest.mark.parametrize("argv", ON_A_FILE, ids=lambda a: " ".join(a[:2]))
def test_unreadable_input_exits_2(case, argv, tmp_path, capsys):
    path, message = _unreadable(tmp_path)[case]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    rc, out, err = cli([argv[0], path, *argv[1:]], capsys)
    assert rc == 2 and out == "" and message in err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("argv", [[], ["nosuch"], ["check"], ["check", "x", "--fail-on", "fatal"],
                                  ["convert", "x"], ["summary", "x", "--format", "nosuch"],
                                  ["check", "x", "--protocol-version", "nonsense"]],
                         ids=lambda a: " ".join(a) or "nothing")
def test_usage_errors_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").write_text("")  # the file exists: only the usage is wrong
    try:
        rc = main(argv)
    except SystemExit as stop:  # argparse: usage on stderr
        rc = stop.code
    out, err = capsys.readouterr()
    assert rc == 2 and not re.search("Traceback", out + err)
    assert "usage: mcp-notebook" in out + err or "unknown format 'nosuch'" in err
