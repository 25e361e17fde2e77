"""``mcp-notebook open``: the analysis notebook, written with nbformat, valid, and run."""

from __future__ import annotations

import shutil
import sys

import nbformat
import pytest

import mcp_notebook as mn
from mcp_notebook import cli
from mcp_notebook.notebook import analysis

HEADINGS = ("## 1. Is every frame a JSON-RPC 2.0 message?",
            "## 2. Does every response answer a request?",
            "## 3. A protocol error, or a tool that failed?",
            "## 4. Method names, argument shapes, negotiated capabilities",
            "## 5. Redact before you share")


def _run(nb, folder):
    from nbclient import NotebookClient

    NotebookClient(nb, kernel_name="python3", timeout=120, startup_timeout=120,
                   resources={"metadata": {"path": str(folder)}}).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == [], errors[0]["traceback"][-1] if errors else None
    return {c.source.splitlines()[0]: c for c in nb.cells if c.cell_type == "code"}


def test_the_checklist_is_in_order_and_the_notebook_is_valid():
    nb = analysis("demo-stdio")
    nbformat.validate(nb)
    md = [c.source for c in nb.cells if c.cell_type == "markdown"]
    at = [next(i for i, s in enumerate(md) if s.startswith(h)) for h in HEADINGS]
    assert at == sorted(at)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for call in ("mn.sample_path('demo-stdio')", "t.summary()", "mn.explore(t)",
                 "t.latency_by_method()", '"spec"]]', "t.redact()"):
        assert call in code
    assert len({c.id for c in nb.cells}) == len(nb.cells)
    assert analysis("demo-stdio").cells == nb.cells  # stable ids: a rewrite diffs cleanly


def test_a_capture_beside_the_notebook_is_loaded_by_a_relative_path(tmp_path):
    shutil.copy(mn.sample_path("demo-stdio"), tmp_path / "mine.jsonl")
    nb = analysis(tmp_path / "mine.jsonl", notebook=tmp_path / "mine.ipynb")
    assert "t = mn.load('mine.jsonl')" in nb.cells[1].source
    elsewhere = analysis(tmp_path / "mine.jsonl", notebook=tmp_path / "sub" / "a.ipynb")
    assert f"t = mn.load({str((tmp_path / 'mine.jsonl').resolve())!r})" in \
        elsewhere.cells[1].source


@pytest.mark.slow
def test_open_writes_and_runs_on_a_broken_capture(tmp_path, monkeypatch, capsys):
    shutil.copy(mn.sample_path("broken-duplicate-response"), tmp_path / "cap.jsonl")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["open", "cap.jsonl", "--no-lab"]) == 0
    assert "wrote cap.ipynb" in capsys.readouterr().out
    nb = nbformat.read(tmp_path / "cap.ipynb", as_version=4)
    nbformat.validate(nb)
    cells = _run(nb, tmp_path)
    found = cells['t.violations[["seq", "related_seq", "severity", "rule", "message", "spec"]]']
    shown = found.outputs[0]["data"]["text/plain"]
    assert "duplicate-response" in shown and "id-type-mismatch" in shown
    pairs = cells["display(t.pairs[\"outcome\"].value_counts())"].outputs
    assert "orphan" in pairs[-1]["data"]["text/plain"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["demo-http", "everything-stdio-raw-frames", "demo-sse"])
def test_open_runs_on_other_bundled_traces(tmp_path, name):
    nb = analysis(name)
    nbformat.validate(nb)
    cells = _run(nb, tmp_path)
    assert "Explorer" in cells["mn.explore(t)"].outputs[0]["data"]["text/plain"]


def test_open_keeps_an_existing_notebook(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo-stdio.ipynb").write_text("mine")
    assert cli.main(["open", "demo-stdio", "--no-lab"]) == 0
    assert "kept as it is" in capsys.readouterr().out
    assert (tmp_path / "demo-stdio.ipynb").read_text() == "mine"
    assert cli.main(["open", "demo-stdio", "--no-lab", "--force", "-o", "x/y.ipynb"]) == 0
    nbformat.validate(nbformat.read(tmp_path / "x" / "y.ipynb", as_version=4))


def test_open_unknown_capture_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["open", "nothing-here", "--no-lab"]) == 2
    err = capsys.readouterr().err
    assert "no such file 'nothing-here'" in err and "demo-stdio" in err
    assert not list(tmp_path.iterdir())


def test_open_starts_jupyterlab_on_the_notebook(tmp_path, monkeypatch):
    calls = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("subprocess.call", lambda cmd: calls.append(cmd) or 0)
    assert cli.main(["open", "demo-stdio"]) == 0
    (cmd,) = calls
    assert cmd[:3] == [sys.executable, "-m", "jupyterlab"] and cmd[-1] == "demo-stdio.ipynb"
    assert ("--allow-root" in cmd) == (cli.os.geteuid() == 0)


def test_lab_args_go_to_jupyterlab(tmp_path, monkeypatch):
    calls = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("subprocess.call", lambda cmd: calls.append(cmd) or 0)
    assert cli.main(["open", "demo-stdio", "--lab-args=--port 8890 --no-browser"]) == 0
    assert calls[0][-4:] == ["--port", "8890", "--no-browser", "demo-stdio.ipynb"]


@pytest.mark.live
def test_open_serves_the_notebook_in_jupyterlab(tmp_path):
    """The real thing: JupyterLab started by ``open`` serves the notebook it wrote."""
    import json
    import os
    import secrets
    import signal
    import subprocess
    import time
    import urllib.request

    from helpers import free_port

    pytest.importorskip("jupyterlab")
    port, token = free_port(), secrets.token_hex(8)
    lab = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
           f"--IdentityProvider.token={token} --LabApp.news_url=None")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    proc = subprocess.Popen([sys.executable, "-m", "mcp_notebook.cli", "open", "demo-stdio",
                             f"--lab-args={lab}"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/api/contents/demo-stdio.ipynb?token={token}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
            try:
                with urllib.request.urlopen(url, timeout=15) as r:
                    model = json.load(r)
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not come up"
                time.sleep(0.1)
        assert model["type"] == "notebook"
        assert model["content"]["cells"][0]["source"].startswith("# `demo-stdio.jsonl`")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
