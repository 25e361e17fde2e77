"""A sample of the user paths through the installed console script: what a shell or CI job
runs. Started from a folder outside the checkout, with the inputs by absolute path.

Each subcommand, and each exit code (0, 1 and 2, argparse's too), runs as a real process
of the script (``PROCESS``, two at a time): the entry point, the arguments and exit status
through the operating system, the output through a pipe. The other cases run the script's
own ``main`` in this process, from the same kind of folder, with the same checks of their
output: what they add is the flag, and a flag is parsed by the same code either way."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from .conftest import (
    DATA,
    INPUTS,
    ROOT,
    assert_clean,
    console_script,
    expected,
    run_parallel,
    sha256,
    strict_json,
)

BROKEN = "data/broken-duplicate-response.jsonl"
SAMPLE = "tests/fixtures/widgets/sample.tap.jsonl"
HOSTILE = "tests/fixtures/widgets/hostile.tap.jsonl"

#: (case name, argv with {in} for the input, {tmp} for the scratch folder, input or None)
CASES: list[tuple[str, list[str], str | None]] = [
    ("summary", ["summary", "{in}"], DATA[0]),
    ("summary --json", ["summary", "{in}", "--json"], DATA[1]),
    ("check", ["check", "{in}"], BROKEN),
    ("check --all --spec", ["check", "{in}", "--all", "--spec"], DATA[2]),
    ("check --fail-on error (clean)", ["check", "{in}", "--fail-on", "error"], SAMPLE),
    ("check --fail-on warning", ["check", "{in}", "--fail-on", "warning"], SAMPLE),
    ("check --fail-on info", ["check", "{in}", "--fail-on", "info"], "data/demo-http.har"),
    ("check --json", ["check", "{in}", "--json"], BROKEN),
    ("check --json --fail-on warning", ["check", "{in}", "--json", "--fail-on", "warning"],
     HOSTILE),
    ("check --json --all", ["check", "{in}", "--json", "--all"], INPUTS[-1]),
    ("convert jsonl", ["convert", "{in}", "--to", "jsonl", "--out", "{tmp}/o.jsonl"], DATA[3]),
    ("convert csv", ["convert", "{in}", "--to", "csv", "--out", "{tmp}/o.csv"], DATA[4]),
    ("convert parquet", ["convert", "{in}", "--to", "parquet", "--out", "{tmp}/o.parquet"],
     "data/everything-http.har"),
    ("convert onto its input", ["convert", "{in}", "--to", "jsonl", "--out", "{in}"], BROKEN),
    ("convert --table pairs", ["convert", "{in}", "--to", "csv", "--table", "pairs", "--out",
                               "{tmp}/p.csv"], "data/demo-http.har"),
    ("redact", ["redact", "{in}", "--out", "{tmp}/r.jsonl"], "data/demo-sse.har"),
    ("notebooks", ["notebooks", "{tmp}/tutorial"], None),
    ("check --report sarif", ["check", "{in}", "--report", "sarif"], BROKEN),
    ("check --report github", ["check", "{in}", "--report", "github", "--fail-on", "warning"],
     "data/demo-http.har"),
    ("check --report junit", ["check", "{in}", "--report", "junit"], SAMPLE),
    ("export --boundary", ["export", "{in}", "--boundary", "-o", "{tmp}/ev.jsonl"],
     "data/demo-sse.har"),
    ("export --otlp", ["export", "{in}", "--otlp", "{tmp}/spans.json"], DATA[0]),
    ("export --perfetto", ["export", "{in}", "--perfetto", "{tmp}/t.pftrace"], DATA[0]),
    ("export --har", ["export", "{in}", "--har", "{tmp}/copy.har"], "data/demo-sse.har"),
    ("export --har of stdio", ["export", "{in}", "--har", "{tmp}/x.har"], DATA[0]),
    ("diff of a capture with itself", ["diff", "{in}", "{in}", "--fail-on", "info"], DATA[0]),
    ("diff --json", ["diff", "{in}", "{in}", "--json"], BROKEN),
    ("open --no-lab", ["open", "{in}", "--no-lab", "-o", "{tmp}/a.ipynb"], BROKEN),
    ("rules", ["rules"], None),
    ("rules --json", ["rules", "--json"], None),
    ("formats", ["formats"], None),
    ("--version", ["--version"], None),
    ("--help", ["--help"], None),
    ("no command", [], None),
    ("missing file", ["check", "{tmp}/missing.jsonl"], None),
    ("bad --fail-on", ["check", "{in}", "--fail-on", "fatal"], BROKEN),
    ("record", ["record", "--out", "{tmp}/rec.jsonl", "--", sys.executable, "-c", "pass"],
     None),
    ("redact --help", ["redact", "--help"], None),  # every --help: test_help_examples.py
    ("proxy to a bad target", ["proxy", "--target", "ftp://example.org", "--listen",
                               "127.0.0.1:0"], None),  # a live proxy: test_readme.py
]


#: the cases run as real processes: the first case of every subcommand (a command added to
#: the CLI must be added to CASES: ``test_every_subcommand_is_sampled``), and beside them
#: exit 0 of ``check``, argparse's exits and the top-level flags
PROCESS = {*(next(n for n, a, _ in CASES if a and a[0] == c)
             for c in dict.fromkeys(a[0] for _, a, _ in CASES if a and not a[0].startswith("-"))),
           "check --fail-on error (clean)", "bad --fail-on", "no command", "--version", "--help"}


def _in_process(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``argv`` through the console script's ``main`` in this process, from ``cwd``."""
    from mcp_notebook.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as stop:  # argparse, --version and --help
                rc = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(argv, rc, out.getvalue(), err.getvalue())


def test_every_subcommand_and_exit_code_runs_as_a_process():
    commands = {a[0] for n, a, _ in CASES if n in PROCESS and a and not a[0].startswith("-")}
    assert commands == {a[0] for _, a, _ in CASES if a and not a[0].startswith("-")}
    assert {"check", "check --fail-on error (clean)", "bad --fail-on"} <= PROCESS  # 1, 0, 2
    assert len(PROCESS) < len(CASES) // 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every case, run once (the processes two at a time); with the inputs' checksums
    before and after."""
    script = str(console_script())
    jobs, before, done = {}, {}, {}
    for name, argv, rel in CASES:
        tmp = tmp_path_factory.mktemp("case")
        path = str(ROOT / rel) if rel else ""
        if rel:
            before[name] = sha256(ROOT / rel)
        args = [a.replace("{in}", path).replace("{tmp}", str(tmp)) for a in argv]
        if name in PROCESS:
            jobs[name] = ([script, *args], {"cwd": tmp})
        else:
            done[name] = _in_process(args, tmp)
            jobs[name] = (args, {"cwd": tmp})
    done |= run_parallel({n: j for n, j in jobs.items() if n in PROCESS})
    after = {name: sha256(ROOT / rel) for name, _, rel in CASES if rel}
    return {name: (done[name], before.get(name), after.get(name), Path(jobs[name][1]["cwd"]))
            for name in done}


@pytest.mark.parametrize("name, argv, rel", CASES, ids=[c[0] for c in CASES])
def test_console_script(runs, name, argv, rel):
    proc, before, after, tmp = runs[name]
    assert_clean(proc.returncode, proc.stdout, proc.stderr)
    assert before == after, f"{rel} was changed"
    want = expected(rel) if rel else None
    command = argv[0] if argv else None
    rc = proc.returncode
    if name in ("no command", "bad --fail-on", "missing file", "convert onto its input",
                "proxy to a bad target", "export --har of stdio"):
        assert rc == 2
        return
    if "--help" in argv:
        assert rc == 0 and proc.stdout.startswith("usage: mcp-notebook")
        if argv == ["--help"]:
            assert "exit codes:" in proc.stdout
        return
    if command == "check":
        fail_on = argv[argv.index("--fail-on") + 1] if "--fail-on" in argv else "error"
        assert rc == want.check_status(fail_on)
        if "--report" in argv:
            _check_report(argv[argv.index("--report") + 1], proc.stdout, want, fail_on)
        elif "--json" in argv:
            data = strict_json(proc.stdout)
            assert data["failing"] == want.failing(fail_on)
            assert len(data["violations"]) == sum(want.severities.values())
        else:
            assert f"; {want.failing(fail_on)} at or above {fail_on}" in proc.stdout
        return
    assert rc == 0, proc.stderr
    if command == "summary":
        if "--json" in argv:
            assert strict_json(proc.stdout)["frames"] == want.frames
        else:
            assert proc.stdout.startswith(f"{want.frames} frames in ")
    elif command == "convert" and "--table" in argv:
        import pandas as pd

        import mcp_notebook as mn

        out = Path(argv[-1].replace("{tmp}", str(tmp)))
        n = len(mn.load(ROOT / rel).pairs)
        assert proc.stdout == f"wrote {n} pairs to {out}\n" and len(pd.read_csv(out)) == n
    elif command == "convert":
        out = Path(argv[-1].replace("{tmp}", str(tmp)))
        assert proc.stdout == f"wrote {want.frames} frames to {out}\n" and out.stat().st_size
    elif command == "export" and "--boundary" in argv:
        events = [strict_json(line) for line in (tmp / "ev.jsonl").read_text().splitlines()]
        assert proc.stdout == f"wrote {len(events)} operations to {tmp / 'ev.jsonl'} " \
                              "(no payload text)\n" and events
        assert not [e for e in events if "params" in e or "result" in e or "raw" in e]
    elif command == "export" and "--perfetto" in argv:
        import mcp_notebook as mn

        n = mn.load(ROOT / rel).pairs["request_seq"].dropna().nunique()
        assert f" {n} slices, " in proc.stdout and (tmp / "t.pftrace").stat().st_size
    elif command == "export" and "--har" in argv:
        import mcp_notebook as mn

        a, b = mn.load(ROOT / rel), mn.load(tmp / "copy.har")
        assert a.frames["raw"].tolist() == b.frames["raw"].tolist()
        assert a.pairs["outcome"].astype(str).tolist() == b.pairs["outcome"].astype(str).tolist()
    elif command == "export":
        import mcp_notebook as mn

        spans = [s for rs in strict_json((tmp / "spans.json").read_text())["resourceSpans"]
                 for ss in rs["scopeSpans"] for s in ss["spans"]]
        assert len(spans) == mn.load(ROOT / rel).pairs["request_seq"].dropna().nunique() > 0
    elif command == "diff":
        if "--json" in argv:
            report = strict_json(proc.stdout)
            assert report["failing"] == 0 and report["fail_on"] == "error"
        else:
            assert proc.stdout.rstrip().endswith("0 change(s) at or above info")
    elif command == "notebooks":
        copied = sorted(p.name for p in (tmp / "tutorial").glob("*.ipynb"))
        assert copied == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
        assert "jupyter lab" in proc.stdout
    elif command == "open":
        import nbformat

        nb = nbformat.read(tmp / "a.ipynb", as_version=4)
        nbformat.validate(nb)
        assert "mn.load" in "".join(c.source for c in nb.cells)
    elif command == "redact":
        import mcp_notebook as mn

        assert mn.load(tmp / "r.jsonl").summary()["pairs"] == want.pairs
    elif command == "rules":
        from mcp_notebook.protocol.rules import RULES

        codes = ([r["code"] for r in strict_json(proc.stdout)] if "--json" in argv
                 else [ln.split()[0] for ln in proc.stdout.splitlines()])
        assert codes == [r.code for r in RULES]
    elif command == "formats":
        import mcp_notebook as mn

        assert [ln.split()[0] for ln in proc.stdout.splitlines()] == list(mn.formats())
    elif command == "record":
        assert (tmp / "rec.jsonl").exists()
    elif argv == ["--version"]:
        assert proc.stdout.startswith("mcp-notebook ")
    else:
        raise AssertionError(f"case {name} has no check")


def test_every_subcommand_is_sampled():
    """A command added to the CLI must be added here too."""
    from mcp_notebook.cli import build_parser

    parser, handlers = build_parser()
    sampled = {argv[0] for _, argv, _ in CASES if argv and not argv[0].startswith("-")}
    assert set(handlers) <= sampled, set(handlers) - sampled
    assert {"summary", "check", "convert", "rules", "formats", "redact", "record",
            "proxy"} <= set(handlers)


def _check_report(fmt: str, out: str, want, fail_on: str) -> None:
    """The CI formats hold one entry per finding (their schemas: tests/exports)."""
    n = sum(want.severities.values())
    if fmt == "sarif":
        (run,) = strict_json(out)["runs"]
        assert len(run["results"]) == n
    elif fmt == "github":
        lines = out.splitlines()
        assert len(lines) == n and all(ln.startswith(("::error ", "::warning ", "::notice "))
                                       for ln in lines)
    else:
        import xml.etree.ElementTree as ET

        root = ET.fromstring(out)
        failures = root.iter("failure")
        assert sum(1 for _ in failures) == want.failing(fail_on)
