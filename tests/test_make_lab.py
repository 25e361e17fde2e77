"""`make lab`, the README's first command, serves JupyterLab with the start notebook."""

import json
import os
import secrets
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.live
def test_make_lab_serves_the_start_notebook(tmp_path):
    if shutil.which("make") is None or not (ROOT / ".venv" / ".installed").exists():
        pytest.skip("needs make and the .venv that `make` creates")
    port, token = free_port(), secrets.token_hex(8)
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
            f"--IdentityProvider.token={token} --LabApp.news_url=None "
            f"--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    # given a notebook, Jupyter serves the notebook's folder and opens the notebook in it
    url = f"http://127.0.0.1:{port}/api/contents/00-start.ipynb?token={token}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
            try:
                with urllib.request.urlopen(url, timeout=15) as r:
                    model = json.load(r)
                break
            except OSError:
                assert time.monotonic() < deadline, "make lab did not come up"
                time.sleep(0.1)
        assert model["type"] == "notebook" and model["name"] == "00-start.ipynb"
        first = model["content"]["cells"][0]["source"]
        assert first.lstrip().startswith("# ")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
