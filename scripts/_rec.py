"""Plumbing for ``make_data.py``: npm pins, servers, the tap and proxy, a raw JSON-RPC client.

Everything runs from the project root with relative paths, so the recorded command lines
name no machine paths.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
NPM_SRC = ROOT / "scripts" / "npm"  # package.json + package-lock.json (committed pins)
NPM = ROOT / "scripts" / ".npm"  # node_modules (git-ignored)
PY = sys.executable
LOOPBACK = "scripts/node_loopback.cjs"
TIMEOUT = 60


def log(text: str) -> None:
    print(f"make_data: {text}", file=sys.stderr, flush=True)


# -- npm --------------------------------------------------------------------------------

def ensure_npm() -> dict[str, str]:
    """Install the pinned npm servers into scripts/.npm; return ``{package: version}``."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise SystemExit("make_data: node and npm are needed (apt-get install nodejs npm)")
    NPM.mkdir(parents=True, exist_ok=True)
    lock = NPM_SRC / "package-lock.json"
    changed = False
    for src in (NPM_SRC / "package.json", lock):
        dst = NPM / src.name
        if src.exists() and (not dst.exists() or dst.read_bytes() != src.read_bytes()):
            shutil.copy(src, dst)
            changed = True
    cmd = ["npm", "ci" if lock.exists() else "install", "--no-audit", "--no-fund"]
    if changed or not (NPM / "node_modules" / ".package-lock.json").exists():
        log(" ".join(cmd) + " (scripts/.npm)")
        subprocess.run(cmd, cwd=NPM, check=True, timeout=600, stdout=subprocess.DEVNULL)
    if not lock.exists():
        shutil.copy(NPM / "package-lock.json", lock)
    deps = json.loads((NPM_SRC / "package.json").read_text())["dependencies"]
    versions = {}
    for name in [*deps, "@modelcontextprotocol/sdk"]:
        meta = NPM / "node_modules" / name / "package.json"
        versions[name] = json.loads(meta.read_text())["version"]
    return versions


def npm_server(package: str, *args: str) -> list[str]:
    """The node command line of an installed npm server (relative to the project root)."""
    meta = json.loads((NPM / "node_modules" / package / "package.json").read_text())
    bin_ = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    script = (Path("scripts/.npm/node_modules") / package / bin_).as_posix()
    return ["node", "--require", f"./{LOOPBACK}", script.replace("/./", "/"), *args]


# -- the tap ----------------------------------------------------------------------------

def tap_command(out: Path, session: str, server: list[str]) -> list[str]:
    """``python -m mcp_notebook.capture.record`` around ``server``, out path relative to ROOT."""
    if out.exists():
        out.unlink()  # the tap appends
    return ["-m", "mcp_notebook.capture.record", "--out", str(out.relative_to(ROOT)),
            "--session", session, "--grace", "5", "--", *server]


@asynccontextmanager
async def sdk_stdio(out: Path, session: str, server: list[str], **callbacks: Any):
    """An official-SDK ``ClientSession`` over stdio to ``server`` through the tap."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=PY, args=tap_command(out, session, server),
                                   cwd=str(ROOT), env=dict(os.environ))
    async with stdio_client(params, errlog=sys.stderr) as (r, w), \
            ClientSession(r, w, **callbacks) as s:
        yield s


class RawClient:
    """Hand-written JSON-RPC frames over the same real stdio pipe, through the tap.

    For what the SDK client will not send: string ids, unknown methods, bad params,
    unparsable lines.
    """

    def __init__(self, out: Path, session: str, server: list[str]) -> None:
        self.proc = subprocess.Popen([PY, *tap_command(out, session, server)], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.seen: list[dict[str, Any]] = []

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.inbox.put(json.loads(line))
            except ValueError:
                pass
        self.inbox.put(None)

    def send(self, frame: dict[str, Any] | str) -> None:
        text = frame if isinstance(frame, str) else json.dumps(frame, separators=(",", ":"))
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, mid: Any, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 10
             ) -> dict[str, Any] | None:
        """The next incoming message matching ``pred`` (others are kept in ``seen``)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                msg = self.inbox.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            if msg is None:
                return None
            self.seen.append(msg)
            if pred(msg):
                return msg
        return None

    def reply_to(self, mid: Any, timeout: float = 10) -> dict[str, Any] | None:
        return self.wait(lambda m: "method" not in m and m.get("id") == mid
                         and type(m.get("id")) is type(mid), timeout)

    def quiet(self, seconds: float) -> None:
        """Take in whatever arrives during ``seconds``."""
        self.wait(lambda m: False, seconds)

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)


# -- HTTP servers and the proxy ---------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen[Any]) -> None:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"make_data: server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"make_data: nothing listens on 127.0.0.1:{port}")


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextmanager
def http_recording(server: list[str], port: int, out: Path, env: dict[str, str] | None = None
                   ) -> Iterator[str]:
    """Start an HTTP server on 127.0.0.1:port and the recording proxy; yield the proxy URL."""
    srv = subprocess.Popen(server, cwd=ROOT, env={**os.environ, **(env or {})},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        _wait_port(port, srv)
        proxy = subprocess.Popen(
            [PY, "-m", "mcp_notebook.capture.proxy", "--listen", "127.0.0.1:0", "--target",
             f"http://127.0.0.1:{port}", "--out", str(out.relative_to(ROOT))],
            cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert proxy.stdout is not None
        line = proxy.stdout.readline()
        yield "http://127.0.0.1:" + line.split("http://127.0.0.1:")[1].split()[0]
    finally:
        if proxy is not None:
            _stop(proxy)
        _stop(srv)


# -- after recording --------------------------------------------------------------------

def redact(path: Path, replacements: dict[str, str]) -> int:
    """Replace machine paths in a recorded trace; return how many were replaced."""
    text = path.read_text("utf-8")
    n = 0
    for old, new in replacements.items():
        n += text.count(old)
        text = text.replace(old, new)
    if n:
        path.write_text(text, "utf-8")
    return n
