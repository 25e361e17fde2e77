"""Shared browser fixtures: headless Debian Chromium via Playwright, one JupyterLab per session.

Follows the recipe that was tested on this machine (see the project's testing notes):
``--allow-root``, notebooks copied into a temporary root (Lab autosaves into what it
opens), a random token, ``expose_app_in_browser``, readiness by polling ``/api/status``,
and a page that aborts every request that is not local (``page.external_requests``).
Browser tests skip only when Chromium is absent.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))  # labhelpers

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
LOCAL = ("file://", "http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "ws://localhost",
         "data:", "blob:", "about:")


VIEWPORT = {"width": 1280, "height": 900}


def guarded_page(ctx):
    """A page of ``ctx`` that aborts every request that is not local and records, in lists
    on the page, the outside requests, the console errors and the dialogs (dismissed)."""
    pg = ctx.new_page()
    pg.external_requests, pg.console_errors, pg.dialogs = [], [], []

    def guard(route):
        url = route.request.url
        if url.startswith(LOCAL):
            route.continue_()
        else:
            pg.external_requests.append(url)
            route.abort()

    pg.route("**/*", guard)  # register specific fulfill() routes after this one
    pg.on("console", lambda m: m.type == "error" and pg.console_errors.append(m.text))
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))

    def on_dialog(d):
        pg.dialogs.append(d.message)
        d.dismiss()

    pg.on("dialog", on_dialog)
    return pg


@pytest.fixture
def page(browser):
    """A fresh page of its own (Notebook 7, exported HTML, marimo)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    yield guarded_page(ctx)
    ctx.close()


def _shared_page(browser, lab_server, opener, relpath: str):
    """A page with one notebook open and its kernel started, for many tests."""
    from labhelpers import write_notebook

    ctx = browser.new_context(viewport=VIEWPORT)
    pg = guarded_page(ctx)
    # at the root, the kernel's working folder, beside the captures the tests copy there
    rel = write_notebook(lab_server["root"], relpath, ["import mcp_notebook"])
    assert opener(pg, lab_server, rel) == "python3"
    return ctx, pg


def _fresh(pg):
    """The shared page as a fresh page would be for a test: no outside request, console
    error or dialog recorded yet, the default size, the pointer out of the way."""
    for seen in (pg.external_requests, pg.console_errors, pg.dialogs):
        seen.clear()
    pg.set_viewport_size(VIEWPORT)
    pg.mouse.move(5, 5)
    return pg


@pytest.fixture(scope="session")
def lab_shared_page(browser, lab_server):
    """One JupyterLab page with one notebook and its kernel for every Lab test of a worker.

    Loading Lab's front end and starting a kernel is most of a browser test's time; the
    tests share them. Each test makes the notebook's cells its own with
    :func:`labhelpers.run_cells` (see :func:`lab_page`)."""
    from labhelpers import open_notebook, shutdown_kernel

    ctx, pg = _shared_page(browser, lab_server, open_notebook, "shared_lab.ipynb")
    yield pg
    shutdown_kernel(pg)
    ctx.close()


@pytest.fixture
def lab_page(lab_shared_page):
    """The shared Lab page, as a fresh page would be for this test: nothing recorded yet,
    the light theme, the default size, the notebook at the top (each test's
    :func:`labhelpers.run_cells` replaces the cells; the kernel keeps what earlier tests
    defined, so each test's cells define every name its assertions read)."""
    from labhelpers import set_theme

    pg = _fresh(lab_shared_page)
    set_theme(pg, "JupyterLab Light")
    return pg


@pytest.fixture(scope="session")
def notebook7_shared_page(browser, lab_server):
    """One Notebook 7 page (the same server) with one notebook and its kernel, for every
    Notebook 7 test of a worker, as :func:`lab_shared_page` is for Lab."""
    from labhelpers import open_notebook7, shutdown_kernel

    ctx, pg = _shared_page(browser, lab_server, open_notebook7, "shared_notebook7.ipynb")
    yield pg
    shutdown_kernel(pg)
    ctx.close()


@pytest.fixture
def notebook7_page(notebook7_shared_page):
    """The shared Notebook 7 page, as a fresh page would be for this test (see
    :func:`lab_page`); the test's :func:`labhelpers.run_cells` replaces its cells."""
    return _fresh(notebook7_shared_page)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, browser):
    """A JupyterLab on 127.0.0.1 over a temporary root.

    The repo's ``notebooks/`` (if any) is copied to ``root/notebooks``; tests write their
    own notebooks into ``root`` with :func:`labhelpers.write_notebook`.
    Yields ``{"base", "token", "root", "log"}``.
    """
    root = tmp_path_factory.mktemp("labroot")
    if (REPO / "notebooks").is_dir():
        shutil.copytree(REPO / "notebooks", root / "notebooks")
    state = tmp_path_factory.mktemp("labstate")
    notif = state / "settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
    notif.parent.mkdir(parents=True)
    notif.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False,
                                 "doNotDisturbMode": True}))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               JUPYTER_CONFIG_DIR=str(state / "config"), IPYTHONDIR=str(state / "ipython"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
           "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly", f"--LabApp.workspaces_dir={state / 'ws'}",
           f"--LabApp.user_settings_dir={state / 'settings'}",
           "--ServerApp.terminals_enabled=False",
           "--JupyterNotebookApp.expose_app_in_browser=True"]  # Notebook 7 on the same server
    log_path = state / "lab.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError("jupyter lab exited:\n" + log_path.read_text())
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("lab did not come up:\n" + log_path.read_text()) from None
                time.sleep(0.2)
        yield {"base": base, "token": token, "root": root, "log": log_path}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
