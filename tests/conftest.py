import os
import shutil
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
WHEEL_FIXTURES = frozenset({"built_wheel", "fresh_venv", "wheel", "installed", "wheel_env",
                            "script_runs"})


def pytest_configure(config):
    # pytest-xdist declares it too; declared here, the suite's --strict-markers accepts the
    # groups below wherever they are made
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Browser tests last: Playwright's sync API keeps an event loop running in the main
    thread for the rest of the session, which other tests' ``asyncio.run`` cannot share.

    Under ``pytest -n N --dist loadgroup`` (``make test``) each test module is one unit of
    work, so its module fixtures (a Dask cluster, a proxy, a batch of console-script runs)
    are made once; the browser tests are one unit (one Chromium, one JupyterLab), the last
    in the queue, so that nothing runs after them on their worker; the tests of the wheel
    are one unit (one build, one fresh venv), the first in the queue: the longest unit but
    the browser's, started first so that it does not finish alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    groups = {}
    for item in items:
        if item.get_closest_marker("browser") is not None:
            group = "browser"
        elif WHEEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            group = "wheel"
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
        _name_group(item, group)
        groups[id(item)] = group
    items.sort(key=lambda item: groups[id(item)] != "wheel")  # stable: browser still last


def _name_group(item, group: str) -> None:
    """Put ``@group`` at the end of the test's nodeid, which is where xdist's loadgroup
    scheduler reads the group from. xdist's own hook writes it to ``item._nodeid``, which
    pytest 9 no longer reads (the nodeid is ``item._id``): there every test was a unit of its
    own, so module fixtures were made on both workers and the wheel was built twice."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest: xdist's own hook names the group
        return
    if isinstance(getattr(item, "_id", None), NodeId) and "@" not in item.nodeid.rpartition("]")[2]:
        item._id = NodeId.parse(f"{item.nodeid}@{group}")


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


#: what the tests of the installed package need in its venv besides the wheel: a kernel and
#: a runner for the notebooks
WHEEL_TEST_TOOLS = ("nbclient", "ipykernel")


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Path:
    """The wheel of this checkout as ``pip install .`` builds it (an isolated build), from a
    copy of the files a clean clone holds (tracked and new, not ignored): once per session,
    for every test of the wheel (tests/package, tests/userpaths)."""
    from helpers import project_files, run_or_fail

    root = Path(__file__).resolve().parents[1]
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    for rel in project_files(root):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, src / rel)
    run_or_fail([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                 str(base / "dist"), str(src)], "building the wheel")
    (wheel,) = (base / "dist").glob("mcp_notebook-*.whl")
    return wheel


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory, built_wheel) -> Path:
    """A new virtual environment (no pip inside: this Python's pip installs into it) with
    the wheel, its parquet extra and ``WHEEL_TEST_TOOLS``, dependencies from the package
    index: once per session. What a plain install (no extra) resolves to is checked by pip's
    own dry run (tests/package/test_installed.py)."""
    from helpers import run_or_fail

    prefix = tmp_path_factory.mktemp("fresh") / "venv"
    run_or_fail([sys.executable, "-m", "venv", "--without-pip", str(prefix)], "creating the venv")
    python = prefix / ("Scripts" if os.name == "nt" else "bin") / "python"
    clean = {k: v for k, v in os.environ.items()  # nothing of the checkout on the path
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    run_or_fail([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                 "--disable-pip-version-check", f"{built_wheel}[parquet]", *WHEEL_TEST_TOOLS],
                "installing the wheel and its dependencies", env=clean)
    return prefix
