"""The input conventions of the command line: ``-`` reads stdin, a folder says what it
skipped (a line in text output, a key in ``--json``), and a folder where nothing loads is
exit 2; ``--quiet`` turns the progress bar off."""

from __future__ import annotations

import json
import shutil
import subprocess

from .conftest import ROOT, assert_clean, console_script, expected

BROKEN = "data/broken-duplicate-response.jsonl"


def _run(args: list[str], cwd, stdin=None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(console_script()), *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=180)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert_clean(done.returncode, out, err)
    return done


def test_dash_reads_the_capture_from_stdin(tmp_path):
    data = (ROOT / BROKEN).read_bytes()
    want = expected(BROKEN)
    done = _run(["check", "-", "--json", "--quiet"], tmp_path, stdin=data)
    assert done.returncode == want.check_status("error") == 1
    report = json.loads(done.stdout)
    assert len(report["violations"]) == sum(want.severities.values())
    assert report["skipped"] == []
    summary = json.loads(_run(["summary", "-", "--json"], tmp_path, stdin=data).stdout)
    assert summary["frames"] == want.frames


def test_dash_goes_alone(tmp_path):
    done = _run(["check", "-", str(ROOT / BROKEN)], tmp_path, stdin=b"")
    assert done.returncode == 2 and b"give it alone" in done.stderr


def test_a_folder_says_what_it_skipped(tmp_path):
    folder = tmp_path / "captures"
    folder.mkdir()
    shutil.copyfile(ROOT / BROKEN, folder / "broken.jsonl")
    (folder / "notes.txt").write_text("not a capture at all\n", "utf-8")
    report = json.loads(_run(["check", str(folder), "--json"], tmp_path).stdout)
    assert [s.split(":")[0] for s in report["skipped"]] == ["skipped notes.txt"]
    text = _run(["check", str(folder)], tmp_path).stdout.decode()
    lines = text.splitlines()
    assert lines[-2].startswith("skipped notes.txt: ") and " finding(s): " in lines[-1]
    summary = json.loads(_run(["summary", str(folder), "--json"], tmp_path).stdout)
    assert [s.split(":")[0] for s in summary["skipped"]] == ["skipped notes.txt"]


def test_a_folder_where_nothing_loads_is_exit_2(tmp_path):
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a capture at all\n", "utf-8")
    done = _run(["check", str(folder), "--json"], tmp_path)
    assert done.returncode == 2 and b"nothing in it loads" in done.stderr
    assert done.stdout == b""
