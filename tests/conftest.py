import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# A fast path that falls back raises instead of being compared with the slow path (set at
# import, so that the subprocesses of the tests inherit it): mcp_notebook/engine/fallback.py
os.environ.setdefault("MCP_NOTEBOOK_STRICT", "1")

#: Debian's Chromium, driven by Playwright (``playwright install`` cannot download here)
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


#: the fixtures of the one wheel and its fresh venvs (tests/package, tests/userpaths): their
#: tests go to one xdist worker, so that the wheel is built and installed once
WHEEL_FIXTURES = frozenset({"wheel", "installed", "wheel_env", "script_runs"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Browser tests last: Playwright's sync API keeps an event loop running in the main
    thread for the rest of the session, which other tests' ``asyncio.run`` cannot share.

    Under ``pytest -n N --dist loadgroup`` (``make test``) each test module is one unit of
    work, so its module fixtures (a Dask cluster, a proxy, a batch of console-script runs)
    are made once; the browser tests are one unit (one Chromium, one JupyterLab), the last
    in the queue, so that nothing runs after them on their worker; the tests of the wheel
    are one unit (one build, one fresh venv)."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("browser") is not None:
            group = "browser"
        elif WHEEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            group = "wheel"
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session (two sync Playwrights cannot share a
    thread). Browser tests skip only when Chromium is absent; CI installs it."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
