"""Driving JupyterLab from Playwright: open a notebook, run it, run code in its kernel.

Uses ``window.jupyterapp`` (``--LabApp.expose_app_in_browser``) rather than menus or
key chords, and the kernel's own ``requestExecute`` to read Python-side values.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

WAIT_KERNEL_IDLE = """async () => {
  const app = window.jupyterapp; await app.started; await app.restored;
  const panel = app.shell.currentWidget;
  await panel.context.ready; await panel.sessionContext.ready;
  const k = panel.sessionContext.session.kernel; await k.info; return k.name; }"""
RUN_ALL = "async () => { await window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
KERNEL_EXEC = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const fut = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '';
  fut.onIOPub = (msg) => {
    if (msg.header.msg_type === 'stream') out += msg.content.text;
    if (msg.header.msg_type === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue; };
  await fut.done; return out; }"""
SHUTDOWN = """async () => {
  const s = window.jupyterapp.shell.currentWidget.sessionContext; await s.shutdown(); }"""


def write_notebook(root: Path, relpath: str, cells: list[str]) -> str:
    """Write a code-only notebook under the Lab root; return its path relative to the root."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return relpath


def open_notebook(page, lab: dict, relpath: str, timeout: int = 90_000) -> str:
    """Open ``relpath`` in Lab and wait until its kernel is ready; return the kernel name."""
    page.goto(f"{lab['base']}/lab/tree/{relpath}?token={lab['token']}&reset")
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout)
    page.locator(".jp-NotebookPanel").first.wait_for(timeout=timeout)
    return page.evaluate(WAIT_KERNEL_IDLE)


def open_notebook7(page, lab: dict, relpath: str, timeout: int = 90_000) -> str:
    """Open ``relpath`` in Notebook 7 (served by the same server) and wait for its kernel."""
    page.goto(f"{lab['base']}/notebooks/{relpath}?token={lab['token']}")
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout)
    page.locator(".jp-NotebookPanel").first.wait_for(timeout=timeout)
    return page.evaluate(WAIT_KERNEL_IDLE)


def run_all(page) -> None:
    page.evaluate(RUN_ALL)


def kernel_exec(page, code: str) -> str:
    """Run ``code`` in the open notebook's kernel and return what it printed."""
    return page.evaluate(KERNEL_EXEC, code)


def shutdown_kernel(page) -> None:
    page.evaluate(SHUTDOWN)


def wait_kernel_output(page, code: str, expected: str, timeout: float = 15.0) -> str:
    """Run ``code`` until it prints ``expected`` (widget messages reach Python a bit later)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        out = kernel_exec(page, code).strip()
        if out == expected or time.monotonic() > deadline:
            return out
        page.wait_for_timeout(200)
