"""The package as a user gets it: a wheel built from this checkout, installed into a fresh
virtual environment, run from a folder outside the checkout with nothing of it on the path.

``installed`` builds and installs once per session (about half a minute with pip's cache;
the dependencies come from the package index). ``run(*argv)`` runs a command of that
environment; ``python(code)`` runs Python code in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: what the tests need besides the wheel: a kernel and a runner for the notebooks
TEST_TOOLS = ("nbclient", "ipykernel")


@dataclass
class Installed:
    wheel: Path
    prefix: Path
    home: Path  # an empty working folder outside the checkout

    @property
    def bin(self) -> Path:
        return self.prefix / ("Scripts" if os.name == "nt" else "bin")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
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

    def python(self, code: str, **kw) -> subprocess.CompletedProcess[str]:
        return self.run("python", "-c", code, **kw)


def _build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(REPO)], check=True, capture_output=True,
                   text=True)
    (wheel,) = out.glob("mcp_notebook-*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def installed(tmp_path_factory, wheel) -> Installed:
    root = tmp_path_factory.mktemp("fresh")
    venv.EnvBuilder(with_pip=True, clear=True).create(root / "venv")
    inst = Installed(wheel, root / "venv", root / "work")
    inst.home.mkdir()
    inst.run("python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel,
             *TEST_TOOLS)
    where = inst.python("import mcp_notebook; print(mcp_notebook.__file__)").stdout.strip()
    assert Path(where).is_relative_to(inst.prefix), where  # the wheel's copy, not the checkout
    return inst
