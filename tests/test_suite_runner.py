"""How ``make test`` runs the suite: on every core with pytest-xdist, each test module one
unit of work, the browser tests one unit at the end of the queue, the tests of the wheel
one unit; and a run that collects nothing fails."""

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
    recipe = re.search(r"^test: .*\n\t\$\(PY\) -m pytest(.*)$", text, re.M)
    assert recipe, "no `test:` target running `$(PY) -m pytest` in the Makefile"
    workers = re.search(r"^TEST_WORKERS \?= (\S+)$", text, re.M)
    return shlex.split(recipe[1].replace("$(TEST_WORKERS)", workers[1] if workers else ""))


def test_make_test_runs_on_every_core_by_module():
    argv = _make_test_argv()
    assert argv[argv.index("-n") + 1] == "auto"
    assert argv[argv.index("--dist") + 1] == "loadgroup"
    assert "--no-loadscope-reorder" in argv  # the queue in collection order: browser last
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = dev["project"]["optional-dependencies"]["dev"]
    assert any(re.match(r"pytest-xdist\b", r) for r in dev), dev


def _run_on_two_workers(folder: Path) -> subprocess.CompletedProcess[str]:
    """pytest with ``make test``'s arguments on two workers over ``folder``, run in it."""
    argv = _make_test_argv()
    argv[argv.index("-n") + 1] = "2"
    return subprocess.run([sys.executable, "-m", "pytest", *argv, "-p", "no:cacheprovider",
                           "-q", str(folder)], cwd=folder, capture_output=True, text=True,
                          timeout=300)


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
    items = [_Item(f"{second}::test_w", browser=True),
             _Item("tests/browser/test_a.py::test_x", browser=True),
             _Item("tests/fleet/test_dask.py::test_one[data]"),
             _Item("tests/package/test_installed.py::test_open", fixtures=("installed",)),
             _Item("tests/fleet/test_dask.py::test_two[peers]"),
             _Item("tests/notebooks/test_handouts.py::test_y[00]", browser=True),
             _Item("tests/userpaths/test_wheel.py::test_z", fixtures=("wheel_env", "tmp_path"))]
    conftest.pytest_collection_modifyitems(None, _config(True), items)
    assert [(i.nodeid.split("::")[0], i.groups) for i in items] == [
        ("tests/package/test_installed.py", ["wheel"]),  # the wheel first
        ("tests/userpaths/test_wheel.py", ["wheel"]),
        ("tests/fleet/test_dask.py", ["tests/fleet/test_dask.py"]),
        ("tests/fleet/test_dask.py", ["tests/fleet/test_dask.py"]),
        # browser last, in two groups (one per worker), the first group first
        ("tests/browser/test_a.py", ["browser-1"]),
        ("tests/notebooks/test_handouts.py", ["browser-1"]),
        (second, ["browser-2"])]


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

    from helpers import once_per_session

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    made = []

    def make():
        made.append(1)
        return {"cells": len(made)}

    key = f"test-{uuid.uuid4().hex}"
    got = [once_per_session(tmp_path_factory, key, make, json.dumps, json.loads)
           for _ in range(2)]
    assert got == [{"cells": 1}, {"cells": 1}] and made == [1]


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
