"""The README's examples run and print what the README says they print: the Python
example as a doctest, the shell session line by line, and every one-line command of
"From the shell" (on real captures standing for its placeholders)."""

import doctest
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from userpaths.conftest import assert_clean, console_script, expected

from helpers import free_port

ROOT = Path(__file__).resolve().parent.parent


def test_readme_example(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has no python example"
    monkeypatch.chdir(ROOT)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(blocks[0], {}, "README.md", "README.md", 0)
    assert test.examples, "the README example has no doctest lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, "README example output differs (see above)"


def test_readme_names_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text[: text.index("## A first look")]
    assert "make lab" in head and "make test" in head
    assert os.path.exists(ROOT / ".ci" / "run")


# -- the shell commands ------------------------------------------------------------------------

README = (ROOT / "README.md").read_text(encoding="utf-8")
SCRIPT = ".venv/bin/mcp-notebook"  # as the README writes it: `make` installs it there


def _sh_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def _session() -> list[tuple[str, list[str]]]:
    """The README's shell session: ``[(command after "$ ", [the lines it prints]), ...]``."""
    (block,) = [b for b in _sh_blocks() if b.startswith("$ ")]
    steps: list[tuple[str, list[str]]] = []
    for line in block.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _same(shown: list[str], printed: list[str]) -> bool:
    """Equal, a shown line ending in " ..." standing for any rest of its printed line."""
    return len(shown) == len(printed) and all(
        p == s or (s.endswith(" ...") and p.startswith(s[:-3]))
        for s, p in zip(shown, printed, strict=True))


def test_readme_shell_session_prints_what_it_shows():
    script = str(console_script())
    steps = _session()
    assert any(cmd.startswith(SCRIPT) for cmd, _ in steps)
    status = None
    for cmd, shown in steps:
        if cmd == "echo $?":
            assert [str(status)] == shown, f"the README says exit {shown}, it was {status}"
            continue
        assert cmd.startswith(SCRIPT + " "), f"unexpected README command {cmd!r}"
        argv = [script, *shlex.split(cmd)[1:]]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT,
                              stdin=subprocess.DEVNULL)
        assert_clean(done.returncode, done.stdout, done.stderr)
        status = done.returncode
        printed = done.stdout.rstrip("\n").split("\n")
        assert _same(shown, printed), "README shows:\n" + "\n".join(shown) + \
            "\n\nprinted:\n" + done.stdout


def _lines() -> list[str]:
    """The README's one-line commands (``make`` aside: those run the tests themselves)."""
    out = []
    for block in _sh_blocks():
        for line in block.split("\n"):
            if line.startswith(SCRIPT + " "):
                out.append(line.split("  #")[0].strip())
    return out


LINES = _lines()
ECHO_SERVER = ("import json, sys\n"
               "for line in sys.stdin:\n"
               "    m = json.loads(line)\n"
               "    if 'id' in m:\n"
               "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}),"
               " flush=True)\n")
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "readme", "version": "1"}}})


def test_the_readme_shows_every_command():
    commands = {shlex.split(line)[1] for line in LINES}
    assert commands == {"summary", "check", "convert", "open", "export", "diff", "record",
                        "proxy"}, commands


@pytest.fixture
def shell(tmp_path):
    """A folder holding the README's placeholders as real captures: CAPTURE.jsonl (a
    bundled trace) and CAPTURE.log (a Claude Desktop log from the wild)."""
    shutil.copyfile(ROOT / "data" / "demo-stdio.jsonl", tmp_path / "CAPTURE.jsonl")
    shutil.copyfile(ROOT / "tests/fixtures/wild/claude-desktop-mcp-log/"
                    "taptools-combined-mcp-log.txt", tmp_path / "CAPTURE.log")
    return tmp_path


def _run(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=cwd, **kw)
    assert_clean(done.returncode, done.stdout, done.stderr)
    return done


@pytest.mark.parametrize("line", [x for x in LINES if " record " not in x and " proxy " not in x])
def test_readme_line_runs(line, shell):
    import pandas as pd

    argv = [str(console_script()), *shlex.split(line)[1:]]
    done = _run(argv, shell)
    command = argv[1]
    want = expected("data/demo-stdio.jsonl")
    if command == "summary":
        assert done.returncode == 0 and json.loads(done.stdout)["frames"] == want.frames
    elif command == "check" and "--report" in argv:
        assert done.returncode == want.check_status("error") == 0
        assert json.loads(done.stdout)["version"] == "2.1.0"
    elif command == "check":
        assert done.returncode == want.check_status("error") == 0
    elif command == "export":
        events = (shell / "events.jsonl").read_text("utf-8").splitlines()
        assert done.returncode == 0 and f"wrote {len(events)} operations" in done.stdout
    elif command == "diff":
        assert done.returncode == 0 and "0 change(s) at or above warning" in done.stdout
    elif command == "convert":
        table = argv[argv.index("--table") + 1] if "--table" in argv else "frames"
        src = Path(argv[2])
        out = shell / (src.stem + ("" if table == "frames" else f".{table}") + ".parquet")
        assert done.returncode == 0 and done.stdout.endswith(f" {table} to {out.name}\n")
        n = len(pd.read_parquet(out))
        assert n == int(done.stdout.split()[1]) > 0
        if table == "pairs":
            import mcp_notebook as mn

            assert n == len(mn.load(shell / src.name).pairs)
    elif command == "open":
        import nbformat

        assert "--no-lab" in argv and done.returncode == 0
        nb = nbformat.read(shell / "CAPTURE.ipynb", as_version=4)
        nbformat.validate(nb)
        assert any("mn.load" in c.source for c in nb.cells if c.cell_type == "code")
    else:
        raise AssertionError(f"no check for {line}")


def _record_argv(live: bool) -> list[str]:
    (line,) = [x for x in LINES if " record " in x]
    argv = [str(console_script()), *shlex.split(line)[1:]]
    if not live:  # the same line around a small local server instead of npx
        argv = argv[: argv.index("--") + 1] + [sys.executable, "-c", ECHO_SERVER]
    return argv


def _check_record(shell: Path, live: bool) -> None:
    import mcp_notebook as mn

    # as a client does: the request written, its answer read, and only then the input
    # closed (closing it at once would leave a slow npx start only the tap's --grace
    # seconds, after which the tap stops the server: exit 143 on a busy machine)
    proc = subprocess.Popen(_record_argv(live), cwd=shell, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()),
                              daemon=True)
    try:
        proc.stdin.write(INIT + "\n")
        proc.stdin.flush()
        reader.start()
        reader.join(180)
        assert not reader.is_alive(), "no answer to initialize within 180 s"
        out, err = proc.communicate(timeout=180)  # closes the input, then reads the rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_clean(proc.returncode, "".join(first) + out, err)
    assert proc.returncode == 0 and first and json.loads(first[0])["id"] == 1, err[-2000:]
    pairs = mn.load(shell / "session.jsonl").pairs
    assert pairs.loc[pairs["method"] == "initialize", "outcome"].tolist() == ["result"]


def test_readme_record_line(shell):
    _check_record(shell, live=False)


@pytest.mark.live
def test_readme_record_line_live(shell):
    """Literally as the README has it: npx and the reference server."""
    if not shutil.which("npx"):
        pytest.skip("npx is not installed")
    _check_record(shell, live=True)


class _Target(BaseHTTPRequestHandler):
    """A Streamable HTTP server in miniature: every POSTed request answered as JSON."""

    def do_POST(self):  # noqa: N802 (the stdlib's name)
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_readme_proxy_line(shell):
    """The README's proxy line, on free ports instead of 8080 and 3001 (which may be taken)."""
    import urllib.request

    import mcp_notebook as mn

    (line,) = [x for x in LINES if " proxy " in x]
    listen, target = free_port(), free_port()
    line = line.replace("127.0.0.1:8080", f"127.0.0.1:{listen}").replace(
        "127.0.0.1:3001", f"127.0.0.1:{target}")
    server = ThreadingHTTPServer(("127.0.0.1", target), _Target)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = subprocess.Popen([str(console_script()), *shlex.split(line)[1:]], cwd=shell,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        reply = None
        end = time.monotonic() + 60
        while reply is None and time.monotonic() < end and proxy.poll() is None:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{listen}/mcp", INIT.encode(),
                                             {"Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream"})
                reply = json.loads(urllib.request.urlopen(req, timeout=10).read())
            except OSError:
                time.sleep(0.2)
        assert reply == {"jsonrpc": "2.0", "id": 1, "result": {}}
    finally:
        proxy.send_signal(signal.SIGTERM)
        out, err = proxy.communicate(timeout=30)
        server.shutdown()
    assert_clean(proxy.returncode, out, err)
    assert proxy.returncode == 0, err
    pairs = mn.load(shell / "session.har").pairs
    assert pairs.loc[pairs["method"] == "initialize", "outcome"].tolist() == ["result"]
