"""The package as a user gets it: a wheel built from this checkout, installed into a fresh
virtual environment, run from a folder outside the checkout with nothing of it on the path.

``installed`` is the session's one wheel and fresh venv (``built_wheel`` and ``fresh_venv``
in tests/conftest.py, shared with tests/userpaths). ``run(*argv)`` runs a command of that
environment; ``python(code)`` runs Python code in it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import WHEEL_ENV_DROP

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Installed:
    wheel: Path
    prefix: Path
    home: Path  # an empty working folder outside the checkout

    @property
    def bin(self) -> Path:
        return self.prefix / ("Scripts" if os.name == "nt" else "bin")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in WHEEL_ENV_DROP}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *argv: str | Path, check: bool = True, timeout: float = 600,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [str(a) for a in argv]
        exe = self.bin / cmd[0]
        if exe.exists():
            cmd[0] = str(exe)
        done = subprocess.run(cmd, cwd=cwd or self.home, env=self.env(), text=True,
                              capture_output=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"{cmd} exited {done.returncode}\n--- stdout\n{done.stdout}"
                                 f"\n--- stderr\n{done.stderr}")
        return done

    def python(self, code: str, *argv: str | Path, **kw) -> subprocess.CompletedProcess[str]:
        return self.run("python", "-c", code, *argv, **kw)


@pytest.fixture(scope="session")
def wheel(built_wheel) -> Path:
    return built_wheel


@pytest.fixture(scope="session")
def installed(tmp_path_factory, built_wheel, fresh_venv) -> Installed:
    inst = Installed(built_wheel, fresh_venv, tmp_path_factory.mktemp("fresh-home"))
    where = inst.python("import mcp_notebook; print(mcp_notebook.__file__)").stdout.strip()
    assert Path(where).is_relative_to(inst.prefix), where  # the wheel's copy, not the checkout
    return inst
