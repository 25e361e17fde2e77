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


#: the open notebook's cells replaced by ``cells`` (one transaction, so that Lab never sees
#: an empty notebook), scrolled to the top and run; returns the error outputs, if any
SET_AND_RUN = """async (cells) => {
  const app = window.jupyterapp, panel = app.shell.currentWidget, nb = panel.content;
  const shared = nb.model.sharedModel, n = shared.cells.length;
  shared.transact(() => {
    shared.insertCells(n, cells.map((source) => ({cell_type: 'code', source, metadata: {}})));
    shared.deleteCellRange(0, n); });
  nb.activeCellIndex = 0;
  const outer = panel.node.querySelector('.jp-WindowedPanel-outer');
  if (outer) outer.scrollTop = 0;
  await app.commands.execute('notebook:run-all-cells');
  const errors = [];
  for (const cell of nb.widgets)
    for (const o of (cell.model.outputs ? cell.model.outputs.toJSON() : []))
      if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
  if (nb.widgets.length !== cells.length) errors.push(`${nb.widgets.length} cells shown`);
  return errors; }"""


def run_cells(page, cells: list[str]) -> None:
    """Make ``cells`` the shared notebook's cells and run them in its (shared) kernel.

    The kernel keeps what earlier tests defined: each test's cells define every name its
    assertions read, so the tests of a module pass in any order. A cell that raises fails
    the test at once with the kernel's error, instead of a wait for a widget that never
    comes."""
    errors = page.evaluate(SET_AND_RUN, cells)
    assert errors == [], f"a cell raised in the kernel: {errors}"


#: the theme's stylesheet is applied once its background colour is on ``body``
THEME_APPLIED = """(light) => {
  if (document.body.dataset.jpThemeLight !== String(light)) return false;
  const c = getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim();
  const el = document.createElement('div'); el.style.color = c; document.body.append(el);
  const v = (getComputedStyle(el).color.match(/[0-9.]+/g) || []).slice(0, 3).map(Number);
  el.remove();
  return v.length === 3 && (v[0] + v[1] + v[2] > 382) === light; }"""


def set_theme(page, theme: str, timeout: int = 30_000) -> None:
    """Switch Lab to ``theme`` ("JupyterLab Light" or "JupyterLab Dark") by its command and
    wait until its stylesheet is applied (rather than for a fixed time)."""
    light = theme.endswith("Light")
    if not page.evaluate(THEME_APPLIED, light):
        page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', "
                      "{theme: t})", theme)
    page.wait_for_function(THEME_APPLIED, arg=light, timeout=timeout)
