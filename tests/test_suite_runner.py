"""How ``make test`` runs the suite: with pytest-xdist, one worker per core and one more,
each test module one unit of work, the browser tests two units and the tests of the wheel
one, the long units first; a worker closes its browser before its next tests; and a
run that collects nothing fails."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

tomllib = pytest.importorskip("tomllib")
ROOT = Path(__file__).resolve().parents[1]


def _make_test_argv() -> list[str]:
    """The pytest arguments of the Makefile's ``test`` recipe, its variables filled in."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test: .*\n(?:\t.*\n)*?\t\$\(PY\) -m pytest(.*)$", text, re.M)
    assert recipe, "no `test:` target running `$(PY) -m pytest` in the Makefile"
    workers = re.search(r"^TEST_WORKERS \?= (\S+)$", text, re.M)
    return shlex.split(recipe[1].replace("$(TEST_WORKERS)", workers[1] if workers else ""))


def test_make_test_and_lab_write_the_bytecode_first():
    """Where PYTHONDONTWRITEBYTECODE is set, an editable install has no bytecode: every
    process of the suite (each CLI call, kernel, tap) would compile the package again."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^COMPILE := \$\(PY\) -m compileall -q mcp_notebook", text, re.M)
    for target in ("test", "lab"):
        assert re.search(rf"^{target}: .*\n\t\$\(COMPILE\)\n", text, re.M), target


def test_make_test_runs_on_every_core_by_module():
    argv = _make_test_argv()
    assert argv[argv.index("-n") + 1] == "auto"
    assert argv[argv.index("--dist") + 1] == "loadgroup"
    assert "--no-loadscope-reorder" in argv  # the queue in the suite's order: longest first
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = dev["project"]["optional-dependencies"]["dev"]
    assert any(re.match(r"pytest-xdist\b", r) for r in dev), dev


def _run_pytest(folder: Path, workers: int, *more: str) -> subprocess.CompletedProcess[str]:
    """pytest with ``make test``'s arguments on ``workers`` workers over ``folder``, run in
    it, with xdist the only plugin: the others installed (hypothesis, anyio, ...) took 4 of
    the 5.5 s of CPU such a run costs, and the folders' tests use none of them. Its
    temporary folders go under ``folder`` (``--basetemp``): a pytest with the default ones
    deletes the oldest of the user's earlier sessions' (all but three), and that of a whole
    suite, its fresh venv included, took 16 s of I/O to delete."""
    import os

    argv = _make_test_argv()
    argv[argv.index("-n") + 1] = str(workers)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", *argv,
                           "-p", "no:cacheprovider", f"--basetemp={folder / '.basetemp'}",
                           *more, str(folder)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


def _run_on_two_workers(folder: Path) -> subprocess.CompletedProcess[str]:
    return _run_pytest(folder, 2, "-q")


def test_a_run_that_collects_nothing_fails(tmp_path):
    """``make test``'s pytest arguments over a folder without tests: exit 5, not 0."""
    pytest.importorskip("xdist")
    (tmp_path / "test_nothing.py").write_text("X = 1\n")
    done = _run_on_two_workers(tmp_path)
    assert done.returncode == 5, done.stdout + done.stderr


class _Item:
    """What the grouping hook reads of a collected test."""

    def __init__(self, nodeid: str, browser: bool = False, fixtures: tuple[str, ...] = ()):
        self.nodeid, self.fixturenames, self.groups = nodeid, list(fixtures), []
        self.browser = browser

    def get_closest_marker(self, name: str):
        return object() if name == "browser" and self.browser else None

    def add_marker(self, mark) -> None:
        assert mark.name == "xdist_group"
        self.groups.append(mark.args[0])


def _suite_conftest(config: pytest.Config):
    """``tests/conftest.py`` as pytest registered it, found among its plugins by path.

    ``import conftest`` would give whichever conftest file of the suite pytest loaded last
    (it names each ``conftest`` and drops the previous one from ``sys.modules``), which
    depends on what a worker collected."""
    path = (Path(__file__).parent / "conftest.py").resolve()
    for plugin in config.pluginmanager.get_plugins():
        where = getattr(plugin, "__file__", None)
        if where and Path(where).resolve() == path:
            return plugin
    raise AssertionError(f"pytest did not register {path.name} of the suite's root")


def _config(xdist: bool) -> SimpleNamespace:
    return SimpleNamespace(pluginmanager=SimpleNamespace(hasplugin=lambda name: xdist))


def test_groups_module_wheel_and_browser(pytestconfig):
    conftest = _suite_conftest(pytestconfig)

    second = sorted(conftest.BROWSER_SECOND)[0]
    long = conftest.LONG_FIRST[0]
    items = [_Item("tests/test_short.py::test_s"),
             _Item(f"{second}::test_w", browser=True),
             _Item("tests/browser/test_a.py::test_x", browser=True),
             _Item("tests/fleet/test_dask.py::test_one[data]"),
             _Item("tests/package/test_installed.py::test_open", fixtures=("installed",)),
             _Item(f"{long}::test_l"),
             _Item("tests/fleet/test_dask.py::test_two[peers]"),
             _Item("tests/notebooks/test_handouts.py::test_y[00]", browser=True),
             _Item("tests/userpaths/test_wheel.py::test_z", fixtures=("wheel_env", "tmp_path"))]
    conftest.pytest_collection_modifyitems(None, _config(True), items)
    assert [(i.nodeid.split("::")[0], i.groups) for i in items] == [
        # the long units first: the wheel, the long modules in their listed order, the
        # browser groups (the first group first), then the rest in collection order
        ("tests/package/test_installed.py", ["wheel"]),
        ("tests/userpaths/test_wheel.py", ["wheel"]),
        (long, [long]),
        ("tests/fleet/test_dask.py", ["tests/fleet/test_dask.py"]),
        ("tests/fleet/test_dask.py", ["tests/fleet/test_dask.py"]),
        ("tests/browser/test_a.py", ["browser-1"]),
        ("tests/notebooks/test_handouts.py", ["browser-1"]),
        (second, ["browser-2"]),
        ("tests/test_short.py", ["tests/test_short.py"])]
    assert conftest.LONG_FIRST.index("tests/fleet/test_dask.py") > 0


def test_auto_is_one_worker_more_than_the_cores(pytestconfig):
    import os

    conftest = _suite_conftest(pytestconfig)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert conftest.pytest_xdist_auto_num_workers(pytestconfig) == cores + 1


def test_a_worker_closes_its_browser_before_its_next_tests(tmp_path, pytestconfig):
    """``make test``'s arguments on one worker, with the suite's conftest hooks and its
    ``browser`` fixture: the browser test runs first (real Chromium, skipped without it),
    then in the same worker a test that runs ``asyncio.run`` and ``anyio.run`` in the main
    thread, which fail while Playwright's event loop runs there."""
    pytest.importorskip("xdist")
    suite = Path(__file__).resolve().parent / "conftest.py"
    if not Path(_suite_conftest(pytestconfig).CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    (tmp_path / "conftest.py").write_text(
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(suite.parent)!r})\n"
        f"spec = importlib.util.spec_from_file_location('suite_conftest', {str(suite)!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "pytest_collection_modifyitems = suite.pytest_collection_modifyitems\n"
        "pytest_runtest_teardown = suite.pytest_runtest_teardown\n"
        "browser = suite.browser\n"
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'browser: drives a real Chromium')\n")
    (tmp_path / "test_a.py").write_text(
        "import asyncio, anyio, pytest\n"
        "async def answer():\n"
        "    return 42\n"
        "def test_after_the_browser():\n"
        "    assert asyncio.run(answer()) == 42 and anyio.run(answer) == 42\n")
    (tmp_path / "test_b.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.browser\n"
        "def test_browser(browser):\n"
        "    page = browser.new_page()\n"
        "    page.set_content('<p>drawn</p>')\n"
        "    assert page.locator('p').inner_text() == 'drawn'\n"
        "    page.close()\n")
    done = _run_pytest(tmp_path, 1, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.findall(r"PASSED (test_\w\.py::\w+)", done.stdout)
    assert ran == ["test_b.py::test_browser", "test_a.py::test_after_the_browser"], done.stdout


def test_without_xdist_only_the_order_changes(pytestconfig):
    conftest = _suite_conftest(pytestconfig)

    items = [_Item("tests/b.py::t", browser=True), _Item("tests/a.py::t")]
    conftest.pytest_collection_modifyitems(None, _config(False), items)
    assert [i.nodeid for i in items] == ["tests/a.py::t", "tests/b.py::t"]
    assert [i.groups for i in items] == [[], []]


def test_once_per_session_makes_a_value_once_across_workers(tmp_path_factory, monkeypatch):
    """The notebooks executed once for every worker: the second ask reads the first one's."""
    import json
    import uuid

    from helpers import once_per_session, shared_dir

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    made = []

    def make():
        made.append(1)
        return {"cells": len(made)}

    key = f"test-{uuid.uuid4().hex}"
    got = [once_per_session(tmp_path_factory, key, make, json.dumps, json.loads)
           for _ in range(2)]
    assert got == [{"cells": 1}, {"cells": 1}] and made == [1]
    # outside xdist the "worker's" shared folder is the parent of this session's: tidy up
    for left in (shared_dir(tmp_path_factory) / "once").glob(f"{key}*"):
        left.unlink()


def test_each_module_runs_on_one_worker(tmp_path):
    """``make test``'s arguments over two modules of eight tests each, with the suite's
    grouping hook: every test of a module runs on the same worker, its module fixture made
    once. (Under pytest 9 xdist's own naming of the group was lost, and each test was a unit
    of its own: both workers made each module's fixtures.)"""
    pytest.importorskip("xdist")
    suite = Path(__file__).resolve().parent / "conftest.py"
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('suite_conftest', {str(suite)!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "pytest_configure = suite.pytest_configure\n"
        "pytest_collection_modifyitems = suite.pytest_collection_modifyitems\n")
    for name in ("test_a", "test_b"):
        (tmp_path / f"{name}.py").write_text(
            "import os, pytest\n"
            "@pytest.fixture(scope='module')\n"
            "def made(tmp_path_factory):\n"
            f"    with open({str(tmp_path / 'made.txt')!r}, 'a') as f:\n"
            f"        f.write('{name} ' + os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n"
            "@pytest.mark.parametrize('k', range(8))\n"
            "def test_k(made, k):\n"
            "    import time; time.sleep(0.05)\n")
    done = _run_on_two_workers(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    made = sorted((tmp_path / "made.txt").read_text().split("\n")[:-1])
    assert [m.split()[0] for m in made] == ["test_a", "test_b"], made
