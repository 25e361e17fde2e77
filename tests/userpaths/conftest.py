"""What every user-path test shares: the inputs a user has, an oracle for what the command
line must say about each, and the checks every run must pass (no traceback, exit codes as
documented, the input unchanged)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEVERITIES = ("error", "warning", "info")


def _inputs() -> list[str]:
    """Every bundled trace in ``data/`` and every capture fixture under ``tests/fixtures/``
    (not the ``.source.txt`` notes beside the wild ones), as paths relative to the checkout."""
    data = sorted(p for p in (ROOT / "data").iterdir() if p.is_file() and p.suffix != ".md")
    fixtures = sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*")
                      if p.is_file() and not p.name.endswith((".source.txt", ".md"))
                      and p.name != "versions.json")  # the peer captures' versions
    assert data and fixtures, "no bundled traces or fixtures found"
    return [str(p.relative_to(ROOT)) for p in data + fixtures]


INPUTS = _inputs()
DATA = [p for p in INPUTS if p.startswith("data/")]
#: folders given whole (every capture in them, one trace)
FOLDERS = ["data", "tests/fixtures"]


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Expected:
    """What the library itself says about a capture: the command line must agree."""

    frames: int
    pairs: int  #: answered requests (`summary()["pairs"]`)
    severities: dict[str, int] = field(default_factory=dict)  #: as `check` (every rule)
    #: as `t.violations` and `summary` (the deep conversation rules deferred)
    summary_severities: dict[str, int] = field(default_factory=dict)

    def check_status(self, fail_on: str) -> int:
        """The documented exit code of ``check --fail-on fail_on``."""
        levels = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        return 1 if any(self.severities.get(s, 0) for s in levels) else 0

    def failing(self, fail_on: str) -> int:
        levels = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        return sum(self.severities.get(s, 0) for s in levels)


@cache
def expected(relpath: str) -> Expected:
    import mcp_notebook as mn
    from mcp_notebook import conversation

    summary = mn.load(ROOT / relpath).violations["severity"].astype(str).value_counts()
    t = mn.load(ROOT / relpath)
    with conversation.deep():  # as `mcp-notebook check`: every rule, the schema ones too
        counts = t.violations["severity"].astype(str).value_counts()
    return Expected(len(t.frames), t.summary()["pairs"], {k: int(v) for k, v in counts.items()},
                    {k: int(v) for k, v in summary.items()})


_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s+File \".*\", line \d+", re.M)


def assert_clean(rc: int, out: str, err: str) -> None:
    """What every run must show: a documented exit code, no traceback, and on exit 2 one
    line on stderr that names the tool."""
    assert rc in (0, 1, 2), f"exit {rc}: {err[-2000:]}"
    assert not _TRACEBACK.search(out + err), (out + err)[-3000:]
    if rc == 2:  # one line; after argparse's usage line(s) for a usage error
        lines = err.splitlines()
        assert lines and lines[-1].startswith("mcp-notebook"), err
        assert len(lines) == 1 or lines[0].startswith("usage: mcp-notebook"), err


@pytest.fixture
def unchanged():
    """``unchanged(paths)``: the files' checksums and their folders' listings now, compared
    again after the test (nothing changed, nothing written beside them)."""
    watched: dict[Path, str] = {}
    folders: dict[Path, list[str]] = {}

    def watch(*paths: Path) -> None:
        for p in map(Path, paths):
            if p.is_dir():  # a folder given whole: every file in it
                folders.setdefault(p, sorted(q.name for q in p.iterdir()))
                watch(*(q for q in p.rglob("*") if q.is_file()))
                continue
            watched[p] = sha256(p)
            folders.setdefault(p.parent, sorted(q.name for q in p.parent.iterdir()))

    yield watch
    for path, digest in watched.items():
        assert sha256(path) == digest, f"{path} was changed by the command"
    for folder, names in folders.items():
        now = sorted(q.name for q in folder.iterdir())
        assert now == names, f"files appeared in {folder}: {set(now) - set(names)}"


def console_script() -> Path:
    """The installed ``mcp-notebook`` script of the Python running the tests (``make test``
    installs the checkout into ``.venv``; the script lives beside its python)."""
    import shutil
    import sys

    beside = Path(sys.executable).parent / "mcp-notebook"
    found = beside if beside.exists() else shutil.which("mcp-notebook")
    assert found, ("no mcp-notebook console script beside " + sys.executable
                   + ": install the checkout (pip install -e .) first")
    return Path(found)


def run_parallel(jobs: dict[str, tuple[list[str], dict]], workers: int = 2) -> dict:
    """Run ``{name: (argv, subprocess.run keywords)}`` on ``workers`` threads; return
    ``{name: CompletedProcess}``. Two at a time: the machines running this have two cores."""
    import subprocess
    import time
    from concurrent.futures import ThreadPoolExecutor

    def one(item):
        name, (argv, kw) = item
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True,
                              **{"timeout": 180, "stdin": subprocess.DEVNULL, **kw})
        done.seconds = time.perf_counter() - t0  # type: ignore[attr-defined]
        return name, done

    with ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(one, jobs.items()))


def strict_json(text: str):
    """``json.loads`` that refuses NaN and Infinity (Python accepts them; JSON has neither,
    and other tools' parsers fail on them)."""
    import json

    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)
