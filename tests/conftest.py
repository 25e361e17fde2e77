import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# jsonschema (imported by nbformat, which the notebook and browser tests use) imports
# rfc3987_syntax where it is installed (Jupyter's jsonschema[format-nongpl] brings it), for
# its "iri" format checker, and that import compiles 38 lark grammars: 1.45 s of CPU in each
# pytest process, of the 1.8 s `import nbformat` costs. No test checks an "iri" format;
# without the module jsonschema leaves that format unchecked, as it does wherever the
# module is not installed. Only this process and its xdist workers: children are untouched.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

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


def compile_package() -> None:
    """Write the package's bytecode once, before any test: every Python process the suite
    starts (the command line, the tap, notebook kernels, a Dask worker: a few hundred)
    imports the package, and where ``PYTHONDONTWRITEBYTECODE`` is set (as on the machines
    of this project, and in a clean clone there is no ``__pycache__``) each of them
    compiled its ~150 modules again from source: about 0.27 s of CPU a process. This is
    what the first process writes anyway where the variable is unset; the files are the
    ignored ``__pycache__`` folders, which no wheel or clean-clone copy takes."""
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parents[1] / "mcp_notebook", quiet=1)


_REWRITE_CONFIG = []  # the controller's config, for the forked children of rewrite_tests


def _rewrite_one(fn: str) -> None:
    """pytest's own step for a test module it imports (``AssertionRewritingHook.exec_module``):
    its rewritten code written to ``__pycache__`` unless a current one is there."""
    from _pytest.assertion.rewrite import (
        PYC_TAIL,
        _read_pyc,
        _rewrite_test,
        _write_pyc,
        assertstate_key,
        get_cache_dir,
        try_makedirs,
    )

    config, path = _REWRITE_CONFIG[0], Path(fn)
    state = config.stash[assertstate_key]
    cache = get_cache_dir(path)
    pyc = cache / (path.name[:-3] + PYC_TAIL)
    if try_makedirs(cache) and _read_pyc(path, pyc, state.trace) is None:
        source_hash, co = _rewrite_test(path, config)
        _write_pyc(state, co, source_hash, pyc)


def rewrite_tests(config) -> None:
    """Write pytest's rewritten test modules once, two processes at a time, before the
    workers start. Each pytest process imports every test module to collect it, rewriting
    its asserts (about 9 s of CPU for this suite's ~280 files), and the modules of every
    plugin it loads (about 130: hypothesis, anyio, xdist ..., 1.3 s more); pytest keeps the
    result in ``__pycache__`` only where ``PYTHONDONTWRITEBYTECODE`` is unset, and on a
    clean clone both workers found nothing there and did it all at once, each. What is
    written is what pytest writes where the variable is unset (it reads a current file
    either way). This uses pytest's internal steps: if they move in a later pytest, the
    suite warns and each worker rewrites for itself, as before."""
    import warnings

    if config.getoption("assertmode") != "rewrite":
        return
    tests = Path(__file__).resolve().parent
    files = sorted(str(p) for p in tests.rglob("*.py")
                   if (p.name.startswith("test_") or p.name == "conftest.py")
                   and "fixtures" not in p.relative_to(tests).parts)
    _REWRITE_CONFIG[:] = [config]
    try:
        from _pytest.assertion.rewrite import assertstate_key

        must = config.stash[assertstate_key].hook._must_rewrite  # the plugins' names
        files += sorted({m.__file__ for name, m in list(sys.modules.items())
                         if getattr(m, "__file__", None) and m.__file__.endswith(".py")
                         and any(name == k or name.startswith(k + ".") for k in must)})
        if hasattr(os, "fork") and sys.platform != "darwin":
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(2) as pool:
                pool.map(_rewrite_one, files, chunksize=8)
        else:
            for fn in files:
                _rewrite_one(fn)
    except Exception as exc:  # noqa: BLE001  (a cache warm-up: the workers rewrite anyway)
        warnings.warn(f"the test modules were not rewritten ahead: {exc!r}", stacklevel=1)
    finally:
        _REWRITE_CONFIG.clear()


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (or the one process): once
        compile_package()
        if getattr(config.option, "numprocesses", None):  # xdist workers to come
            rewrite_tests(config)
    # pytest-xdist declares it too; declared here, the suite's --strict-markers accepts the
    # groups below wherever they are made
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker")
    if not config.pluginmanager.has_plugin("mcp-notebook-groups-in-ids"):
        config.pluginmanager.register(GroupsInIds(), "mcp-notebook-groups-in-ids")


#: the browser test modules of the second browser group, every one that drives JupyterLab or
#: Notebook 7, so that one worker starts the one Jupyter server, the one Lab page and the
#: one Notebook 7 page (session fixtures are per worker), and marimo's; the first group is
#: the pages opened from files (the handouts, the exported pictures, the hostile HTML).
#: A new module that opens Lab belongs here. The two groups go to two workers and take
#: about as long: in one run of the browser modules on two
#: workers (load ~11) the first took 115 s (handouts 73, exported pictures 33, hostile HTML
#: 9), the second 108 s (brush 26 with the server and the Lab page, explorer 20, marimo 16,
#: sequence views 16, table 15, fleet 6, finding marks 6, live pictures 4)
BROWSER_SECOND = frozenset({"tests/browser/test_fleet_lab.py",
                            "tests/browser/test_table_lab.py",
                            "tests/browser/test_explorer_lab.py",
                            "tests/browser/test_views_seq_lab.py",
                            "tests/browser/test_finding_marks_lab.py",
                            "tests/browser/test_brush_lab.py",
                            "tests/browser/test_static_pictures_live.py",
                            "tests/browser/test_views_marimo.py"})


def browser_group(module: str) -> str:
    """The xdist group of a browser test module: each group is one worker's unit, with its
    own JupyterLab and Chromium (session fixtures are per worker)."""
    return "browser-2" if module in BROWSER_SECOND else "browser-1"


#: the modules that took longest in an idle run of the suite (12 to 40 s each), queued
#: right after the wheel, before the browser groups, so that no long unit starts near the end
#: and finishes alone. Only the order: a name that no longer exists, or a module that got
#: faster, costs a few seconds of balance, never a test.
LONG_FIRST = ("tests/perf/test_equivalence.py", "tests/notebooks/test_html_export.py",
              "tests/robustness/test_hostile.py", "tests/fleet/test_dask.py",
              "tests/perf/test_profiles.py", "tests/exports/test_otlp_consumer.py",
              "tests/test_teach.py", "tests/robustness/test_special_files.py",
              "tests/robustness/test_fuzz.py", "tests/stream/test_stream.py",
              "tests/exports/test_boundary.py", "tests/userpaths/test_console_script.py")


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than the cores. The suite waits as well as computes (on
    Chromium's drawing, servers starting, pipes, deliberate stalls): on a 2-core machine,
    with one worker per core, the cores were busy 168% of a 415 s run; with three workers,
    179% of 401 s. The extra worker costs one more collection (about 7 s of CPU)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores + 1


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Under ``pytest -n N --dist loadgroup`` (``make test``) each test module is one unit of
    work, so its module fixtures (a Dask cluster, a proxy, a batch of console-script runs)
    are made once; the browser tests are two units (``browser_group``: each one Chromium,
    one JupyterLab), the tests of the wheel one (one build, one fresh venv). The queue puts
    the long units first, so that the run does not end on one long unit while the other
    workers wait: the wheel, ``LONG_FIRST``, the two browser groups, then the rest in
    collection order, the many short modules that fill the workers around the browser
    groups and even out the end. (The browser groups at the very head of the queue, beside
    the wheel and the notebook executions, took 115 s and 82 s instead of 65 s and 61 s, in
    a run 5% slower; at its end, the third worker waited for them.) A worker leaves its
    browser group with Chromium and Playwright closed (``pytest_runtest_teardown``), so the
    tests it runs next find no event loop running in the main thread.

    In one process (no xdist) the browser tests run last, as the only order in which
    Playwright's session-long browser ends the run."""
    def browser_rank(item) -> int:
        if item.get_closest_marker("browser") is None:
            return 0
        return 1 if browser_group(item.nodeid.split("::", 1)[0]) == "browser-1" else 2

    items.sort(key=browser_rank)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    groups = {}
    for item in items:
        if item.get_closest_marker("browser") is not None:
            group = browser_group(item.nodeid.split("::", 1)[0])
        elif WHEEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            group = "wheel"
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
        groups[id(item)] = group
    first = {"wheel": 0, **{name: 1 + k for k, name in enumerate(LONG_FIRST)}}
    first.update({"browser-1": len(first), "browser-2": len(first) + 1})
    items.sort(key=lambda item: first.get(groups[id(item)], len(first)))  # stable


class GroupsInIds:
    """pytest-xdist's ``loadgroup`` reads each test's group from an ``@group`` suffix of its
    id, which it writes to ``item._nodeid``; pytest 9.2 keeps the id in ``item._id`` (a
    ``NodeId``) and no longer reads ``_nodeid``, so no id had its group and every test was
    a unit of its own: a module's tests spread over both workers, its module fixtures made
    again on each (seen under ``make test`` with pytest 9.2.0 and pytest-xdist 3.8.0).
    Where the suffix is missing, it is written where pytest reads it."""

    @pytest.hookimpl(trylast=True)  # after xdist's own hook
    def pytest_collection_modifyitems(self, config, items):
        if not getattr(config.option, "loadgroup", False):  # set on xdist's workers
            return
        try:
            from _pytest.nodeid import NodeId
        except ImportError:  # a pytest whose ids are strings: xdist's own suffix works
            return
        for item in items:
            groups = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group")
                             if m.args})
            if groups and "@" not in item.nodeid.rsplit("]", 1)[-1] and \
                    isinstance(getattr(item, "_id", None), NodeId):
                item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


_LIVE_BROWSER: list = []  # the `browser` fixture while it is open: (its definition, request)


@pytest.fixture(scope="session")
def browser(request):
    """One headless Chromium for a worker's browser tests (two sync Playwrights cannot share
    a thread). Browser tests skip only when Chromium is absent; CI installs it. Closed after
    the worker's last browser test (``pytest_runtest_teardown``), with everything made from
    it (pages, the Jupyter server); a browser test after that would open a new one."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    _LIVE_BROWSER[:] = [(getattr(request, "_fixturedef", None), request)]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
    _LIVE_BROWSER.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a browser test whose next test is not one, the browser closes now, not at the
    session's end: Playwright's sync API keeps an event loop running in the main thread
    while it is open, and a later ``asyncio.run`` or ``anyio.run`` there would fail.
    pytest's own finish of the fixture runs its teardown and those of the fixtures made
    from it (the pages, the Jupyter server, its kernels)."""
    result = yield
    if (_LIVE_BROWSER and nextitem is not None and item.get_closest_marker("browser")
            and nextitem.get_closest_marker("browser") is None):
        fixturedef, request = _LIVE_BROWSER.pop()
        finish = getattr(fixturedef, "finish", None)
        if finish is None:  # a pytest whose internals moved: say so, the tests after may fail
            import warnings

            warnings.warn("the browser could not be closed before the worker's next tests "
                          "(pytest's FixtureDef.finish is gone)", stacklevel=1)
        else:
            finish(request)
    return result


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
    own dry run (tests/package/test_installed.py).

    Installed without pip's bytecode pass (``--no-compile``): it compiles every module of
    every package, their test suites too (pandas, numpy, pyarrow ship theirs), about 10 s of
    CPU, where the tests' processes import a part of them. Those processes are started
    without ``PYTHONDONTWRITEBYTECODE`` (``WHEEL_ENV_DROP``), so the first import of a module
    writes its bytecode into the venv, as a Python without the variable does; the
    package's own bytecode is compiled either way."""
    from helpers import run_or_fail

    prefix = tmp_path_factory.mktemp("fresh") / "venv"
    run_or_fail([sys.executable, "-m", "venv", "--without-pip", str(prefix)], "creating the venv")
    python = prefix / ("Scripts" if os.name == "nt" else "bin") / "python"
    clean = {k: v for k, v in os.environ.items()  # nothing of the checkout on the path
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    run_or_fail([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                 "--disable-pip-version-check", "--no-compile", f"{built_wheel}[parquet]",
                 *WHEEL_TEST_TOOLS],
                "installing the wheel and its dependencies", env=clean)
    return prefix
