"""Build small captures for tests: lines of (direction, message) into tap JSONL; and a free
local port for the tests that start a server."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import mcp_notebook as mn


def need_native() -> None:
    """Fail a test of the C extension when it is not built; skip it when the suite runs on
    the Python path on purpose (``MCP_NOTEBOOK_NO_NATIVE=1``)."""
    import os

    import pytest

    from mcp_notebook.engine import native

    if native.native is not None:
        return
    if os.environ.get(native.NO_NATIVE_ENV, "").strip() not in ("", "0"):
        pytest.skip(f"{native.NO_NATIVE_ENV}=1: the Python path only")
    pytest.fail(f"the C extension is not built ({native.IMPORT_ERROR}): "
                "run `python setup.py build_ext --inplace` or `pip install -e .`")


def tap(path: Path, rows: list[tuple[str, Any]], session: str | None = None,
        t0: float = 1_700_000_000.0, step: float = 0.01) -> Path:
    """Write ``[(dir, message_or_raw_text), ...]`` as tap JSONL; messages are JSON-encoded."""
    with open(path, "w", encoding="utf-8") as f:
        for i, (d, msg) in enumerate(rows):
            raw = msg if isinstance(msg, str) else json.dumps(msg, separators=(",", ":"))
            rec = {"ts": t0 + i * step, "dir": d, "raw": raw}
            if session:
                rec["session"] = session
            f.write(json.dumps(rec) + "\n")
    return path


def load_rows(tmp_path: Path, rows: list[tuple[str, Any]], **kw: Any) -> mn.Trace:
    return mn.load(tap(tmp_path / "capture.jsonl", rows), **kw)


def req(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return m


def note(method: str, params: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def ok(id: Any, result: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": {} if result is None else result}


def err(id: Any, code: int = -32601, message: str = "Method not found") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


#: what the two sides of INIT declare (the conversation rules hold a session to it)
SERVER_CAPS = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
               "resources": {"subscribe": True, "listChanged": True}, "logging": {},
               "completions": {}}

CLIENT_CAPS = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}

INIT = [
    ("c2s", req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": CLIENT_CAPS,
                                  "clientInfo": {"name": "t", "version": "1"}})),
    ("s2c", ok(0, {"protocolVersion": "2025-06-18", "capabilities": SERVER_CAPS,
                   "serverInfo": {"name": "s", "version": "1"}})),
    ("c2s", note("notifications/initialized")),
]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until_stable(path: Path, limit: float, poll: float) -> None:
    """Wait until ``path`` stops growing (a relay is blocked): the same non-zero size two
    polls ``poll`` seconds apart, within ``limit`` seconds."""
    end = time.monotonic() + limit
    last = -1
    while time.monotonic() < end:
        size = path.stat().st_size if path.exists() else 0
        if size == last and size > 0:
            return
        last = size
        time.sleep(poll)
    raise AssertionError(f"{path.name} kept growing: nothing is blocked")


def shared_dir(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this session sees (the parent of the workers'
    own base temporary folders); without xdist, this session's base temporary folder."""
    import os

    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_session(tmp_path_factory, key: str, make, dump, load):
    """``make()`` once per test session, across pytest-xdist workers: the first worker to
    ask makes it and stores ``dump(value) -> str`` under ``key``; the others wait on a lock
    and ``load(text)`` it. Without xdist it is ``make()``."""
    import fcntl
    import os
    import re

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return make()
    folder = shared_dir(tmp_path_factory) / "once"
    folder.mkdir(exist_ok=True)
    stored = folder / re.sub(r"[^\w.-]", "_", key)
    with open(stored.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stored.exists():
            return load(stored.read_text(encoding="utf-8"))
        value = make()
        part = stored.with_suffix(".part")
        part.write_text(dump(value), encoding="utf-8")
        part.replace(stored)
        return value


#: folders of a checkout that a clean clone does not hold
#: what the processes of the fresh venv are started without: nothing of the checkout on the
#: path, and bytecode written on first import (tests/conftest.py ``fresh_venv``)
WHEEL_ENV_DROP = frozenset({"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP",
                            "PYTHONDONTWRITEBYTECODE"})


NOT_SOURCE = frozenset({".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache",
                        ".cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "node_modules"})


def project_files(root: Path) -> list[str]:
    """The files a clean clone would hold, with this checkout's changes: tracked and new
    (without git: every file outside the build and cache folders, no built extension)."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard",
                               "-z"], capture_output=True, text=True, timeout=60)
    except OSError:
        done = None
    if done is not None and done.returncode == 0:
        return [f for f in done.stdout.split("\0") if f and (root / f).is_file()]
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not NOT_SOURCE & set(p.relative_to(root).parts)
                  and not p.name.endswith((".so", ".pyc")) and ".egg-info" not in str(p))


def run_or_fail(argv: list[str], what: str, **kw: Any):
    """``subprocess.run`` that fails the test, with the tail of both streams, on a non-zero
    exit."""
    import subprocess

    import pytest

    done = subprocess.run(argv, capture_output=True, text=True, **{"timeout": 900, **kw})
    if done.returncode:
        pytest.fail(f"{what} failed ({done.returncode}):\n{done.stdout[-3000:]}"
                    f"\n{done.stderr[-3000:]}")
    return done


def script_module(path: Path) -> Any:
    """The module of a script that is not a package (``scripts/*.py``, a benchmark), loaded
    from its file under its stem as the module's name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cli_in_process(*args: Any, cwd: Path | None = None):
    """``mcp_notebook.cli.main(argv)`` in this process (the console script's own entry point,
    the same code as ``python -m mcp_notebook.cli``, without the ~0.5 s of a new
    interpreter's imports): a ``CompletedProcess`` of its exit code and output, the streams
    decoded as ``subprocess``'s text mode does (UTF-8, universal newlines). For what the
    command says and returns; the process boundary itself (exit status through the OS,
    signals, the installed script) keeps its own real-process tests."""
    import contextlib
    import io
    import os
    import subprocess

    from mcp_notebook.cli import main

    def text(stream: io.TextIOWrapper) -> str:
        stream.flush()
        raw = stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
        return raw.replace("\r\n", "\n").replace("\r", "\n")

    argv = [str(a) for a in args]
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
                for _ in range(2))
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as stop:  # argparse's usage errors and --help
                rc = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(argv, rc, text(out), text(err))
