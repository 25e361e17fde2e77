"""The sequence diagram and the timeline in marimo (anywidget runs there), in real Chromium.

``marimo run`` serves a small app notebook on 127.0.0.1; the page must draw both views,
and a click on an arrow must reach Python (the app shows the widget's ``selected_seq``
in a cell that marimo re-runs when the widget's value changes). Skips when
marimo is not installed. Screenshots go to ``tests/artifacts/views-seq/``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import free_port

pytestmark = pytest.mark.browser

APP = '''import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import marimo as mo
    import mcp_notebook as mn

    t = mn.load({path!r})
    return mn, mo, t


@app.cell
def _(mn, mo, t):
    d = mo.ui.anywidget(mn.sequence(t))
    d
    return (d,)


@app.cell
def _(d, mo):
    mo.md(f"selected frame: **{{d.value.get('selected_seq')}}**")
    return


@app.cell
def _(mn, mo, t):
    tl = mo.ui.anywidget(mn.timeline(t))
    tl
    return (tl,)


if __name__ == "__main__":
    app.run()
'''


@pytest.fixture
def marimo_app(tmp_path):
    if importlib.util.find_spec("marimo") is None:
        pytest.skip("marimo is not installed (pip install marimo)")
    import mcp_notebook as mn

    app = tmp_path / "views_app.py"
    app.write_text(APP.format(path=str(mn.sample_path("everything-stdio-progress-cancel"))))
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[2])] + sys.path))
    log = open(tmp_path / "marimo.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "marimo", "run", str(app), "--headless",
                             "--host", "127.0.0.1", "-p", str(port), "--no-token",
                             "--no-sandbox", "--no-check"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError("marimo exited:\n" + (tmp_path / "marimo.log").read_text())
            try:
                urllib.request.urlopen(base, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("marimo did not start:\n"
                                       + (tmp_path / "marimo.log").read_text()) from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_views_in_marimo(page, marimo_app, artifacts):
    page.set_viewport_size({"width": 1400, "height": 1400})
    page.goto(marimo_app)
    arrows = page.locator(".mns svg .mns-msg line")
    arrows.first.wait_for(state="attached", timeout=90_000)
    assert arrows.count() == 30  # the capture's 30 messages (34 frames, 4 log lines)
    page.locator(".mnt-canvas").first.wait_for(state="attached", timeout=60_000)
    # marimo puts each anywidget in a shadow root: Playwright's locators go through it
    page.locator(".mnt-note", has_text="showing all 9 requests").wait_for(timeout=60_000)
    req = page.locator('.mns svg .mns-request[data-seq="12"]')
    req.scroll_into_view_if_needed()
    req.locator("line").click(force=True)
    page.get_by_text("selected frame: 12").wait_for(timeout=30_000)
    page.locator('.mns svg .mns-msg.mns-pair[data-seq="13"]').wait_for(
        state="attached", timeout=10_000)
    page.screenshot(path=str(artifacts / "views-seq" / "marimo.png"), full_page=True)
    assert page.external_requests == []
    assert not [e for e in page.console_errors if "mns" in e or "mnt" in e]
