"""Special files and decompression bombs given to ``mn.load`` (issue 14, item 5).

A named pipe, a socket or a device is refused at once with an error that says what to
do, never a hang (the loads run in a subprocess with a timeout, one after the other). A gzip bomb of newlines
or of zeros costs memory bounded by the block size and ``max_line_bytes``, not by its
expanded size (peak RSS of the loading subprocess, against a tiny capture's).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import mcp_notebook as mn
from helpers import INIT, need_native, tap

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # seconds: a hang fails the test, it does not stall the suite

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")


def _run(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter (the suite's environment, so strict too); it
    prints one JSON object, returned with the child's peak RSS in MiB added."""
    prog = ("import json, resource, sys\n" + code +
            "\nout['rss_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024"
            "\nprint(json.dumps(out))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", prog, *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


#: run in one fresh interpreter for every special file below (one start-up, not eleven):
#: each argument is ``refuse:PATH`` (``mn.load`` must raise ``CaptureError``) or ``load:PATH``;
#: one JSON line per argument as soon as it is done, so that a load that hangs is named
ONE_BY_ONE = """
import mcp_notebook as mn
out = {}
for arg in sys.argv[1:]:
    mode, path = arg.split(":", 1)
    try:
        t = mn.load(path)
        got = {"error": None, "frames": len(t.frames), "notes": t.notes}
    except mn.CaptureError as exc:
        got = {"error": str(exc)}
    print(json.dumps({"arg": arg, **got}), flush=True)
"""

KERNEL_FILES = ["/proc/kmsg", "/proc/self/status", "/proc", "/sys/kernel", "/dev"]


@pytest.fixture(scope="module")
def specials(tmp_path_factory: pytest.TempPathFactory):
    """``{case: what mn.load said}`` for every special file, each given to ``mn.load`` in one
    child process with a timeout: a hang fails every case not reached, naming the first."""
    base = tmp_path_factory.mktemp("specials")
    (base / "pipe").mkdir()
    fifo = base / "pipe" / "capture.jsonl"
    os.mkfifo(fifo)
    (base / "mixed").mkdir()
    tap(base / "mixed" / "a.jsonl", INIT)
    os.mkfifo(base / "mixed" / "capture.jsonl")
    link = base / "link.jsonl"
    link.symlink_to("/dev/zero")
    cases = {"fifo": f"refuse:{fifo}", "dev-zero": "refuse:/dev/zero",
             "socket": f"refuse:{base / 'mcp.sock'}", "symlink": f"refuse:{link}",
             "only-specials": f"refuse:{base / 'pipe'}", "mixed": f"load:{base / 'mixed'}",
             **{k: f"refuse:{k}" for k in KERNEL_FILES if os.path.exists(k)}}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(base / "mcp.sock"))
        try:
            done = subprocess.run([sys.executable, "-c", "import json, sys\n" + ONE_BY_ONE,
                                   *cases.values()], capture_output=True, text=True,
                                  timeout=TIMEOUT, env=env)
            lines, failed = done.stdout, (done.stderr[-3000:] if done.returncode else "")
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or b""
            lines = out.decode() if isinstance(out, bytes) else out
            failed = f"timed out after {TIMEOUT} s"
    got = {r["arg"]: r for r in map(json.loads, lines.splitlines())}
    return {k: got.get(arg, {"error": f"not reached: {failed}"}) for k, arg in cases.items()}


def test_a_named_pipe_is_refused_at_once(specials: dict) -> None:
    got = specials["fifo"]["error"]
    assert "named pipe" in got and "save it to a file first" in got


def test_dev_zero_is_refused_at_once(specials: dict) -> None:
    assert "character device" in specials["dev-zero"]["error"]


def test_a_socket_is_refused_at_once(specials: dict) -> None:
    assert "a socket" in specials["socket"]["error"]


def test_a_symlink_to_a_device_is_refused(specials: dict) -> None:
    assert "character device" in specials["symlink"]["error"]


@pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(), reason="Linux pseudo-filesystems")
@pytest.mark.parametrize("path", KERNEL_FILES)
def test_kernel_pseudo_files_are_refused_at_once(specials: dict, path: str) -> None:
    """Files of /proc and /sys say size 0 and may block (``/proc/kmsg`` waits for the
    kernel's next message) or never end; folders there hold thousands of them."""
    if path not in specials:
        pytest.skip(f"no {path} here")
    got = specials[path]["error"]
    assert got is not None and "filesystem (kernel pseudo-files" in got


def test_a_folder_skips_specials_and_says_so(specials: dict) -> None:
    got = specials["mixed"]
    assert got["error"] is None and got["frames"] == 3
    assert "skipped capture.jsonl: a named pipe (FIFO), not a regular file" in got["notes"]


def test_a_folder_of_only_specials_is_an_error(specials: dict) -> None:
    got = specials["only-specials"]["error"]
    assert "no capture files found" in got and "named pipe" in got


# -- decompression bombs -----------------------------------------------------------------------
def _bomb(path: Path, head: bytes, fill: bytes, mib: int) -> tuple[Path, int]:
    """``head`` then ``mib`` MiB of ``fill`` repeated, gzipped in pieces (the file is about
    a thousandth of that; the expanded bytes are never in memory); ``(path, how many
    times fill is repeated)``."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: the gzip container
    chunk = fill * ((1 << 20) // len(fill))
    with open(path, "wb") as f:
        f.write(z.compress(head))
        for _ in range(mib):
            f.write(z.compress(chunk))
        f.write(z.flush())
    return path, mib * ((1 << 20) // len(fill))


#: MiB a bomb expands to, and the most its load may hold over a tiny capture's: the loader's
#: bound is a block (8 MiB) and its line spans, or one line of max_line_bytes (64 MiB) while
#: it is cut, whatever the expanded size. A loader that held the expanded bytes, or one span
#: per blank line, would go over EXTRA_MIB at BOMB_MIB (half a GiB: 192 MiB over the bound;
#: a whole GiB, as before, only took twice the time to show the same)
BOMB_MIB, EXTRA_MIB = 512, 320
assert BOMB_MIB > EXTRA_MIB * 3 // 2


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    d = tmp_path_factory.mktemp("bombs")
    first = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    return {"newlines": _bomb(d / "newlines.jsonl.gz", b"", b"\n", BOMB_MIB),
            "zeros": _bomb(d / "zeros.jsonl.gz", b"", b"\0", BOMB_MIB),
            "message-then-zeros": _bomb(d / "tail.jsonl.gz", first, b"\0", BOMB_MIB),
            "crlf": _bomb(d / "crlf.jsonl.gz", first, b"\r\n", 64)}


LOAD = """
import mcp_notebook as mn
from mcp_notebook.engine import native
if sys.argv[3] == "python":
    native.native = None  # the fast loader's Python path (switched off: not a fallback)
kw = {} if sys.argv[2] == "auto" else {"format": sys.argv[2]}
t = mn.load(sys.argv[1], **kw)
s = t.summary()
f = t.frames
out = {"blank": s["blank_lines"], "frames": len(f), "kinds": f["kind"].astype(str).tolist(),
       "reasons": f["reason"].fillna("").tolist(), "raw_len": f["raw"].str.len().tolist()}
"""


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory: pytest.TempPathFactory) -> float:
    small = tap(tmp_path_factory.mktemp("small") / "small.jsonl", INIT)
    return _run(LOAD, str(small), "auto", "c")["rss_mib"]


# Every bomb on the C path; on the Python path one bomb of a line of zeros. The two paths
# differ only in how ``lines.blocks`` finds the newlines of each 8 MiB block (C, or numpy),
# which is the same for every format and every line of zeros: the message-then-zeros case
# holds what the others do (a line cut while it streams past, after a frame). How each
# reader (NDJSON, tap, gzip) turns a cut line into its invalid row, on both paths, is
# ``test_max_line_bytes_cuts_and_can_be_raised``'s. The two bombs of a billion blank lines
# (newlines, crlf) take a minute there and hold nothing the C path's run and the Python
# line splitter's own tests (tests/perf/test_lines.py) do not; the zeros-only bombs under
# the Python path (25 to 40 s of CPU each under load) hold nothing this one does not.
_BOMBS = [("newlines", "auto"), ("zeros", "ndjson"), ("zeros", "tap"),
          ("message-then-zeros", "auto"), ("crlf", "auto")]


@pytest.mark.parametrize(("bomb", "fmt", "scanner"),
                         [(b, f, "c") for b, f in _BOMBS]
                         + [("message-then-zeros", "auto", "python")])
def test_a_gzip_bomb_takes_bounded_memory(bombs: dict[str, tuple[Path, int]],
                                          baseline_rss: float, bomb: str, fmt: str,
                                          scanner: str) -> None:
    if scanner == "c":  # the C scanner's case: on the Python path only its own cases run
        need_native()
    path, fill = bombs[bomb]
    got = _run(LOAD, str(path), fmt, scanner)
    extra = got["rss_mib"] - baseline_rss
    # BOMB_MIB expanded (crlf: 64 MiB, 32 million lines of a span each)
    assert extra < EXTRA_MIB, \
        f"{bomb}: {got['rss_mib']:.0f} MiB peak, {extra:.0f} MiB over a tiny load"
    if bomb == "newlines":
        assert (got["blank"], got["frames"]) == (fill, 0) and fill == BOMB_MIB << 20
    elif bomb == "crlf":
        assert (got["blank"], got["kinds"]) == (fill, ["request"])
    else:
        long = got["kinds"][-1], got["reasons"][-1]
        assert long[0] == "invalid" and "max_line_bytes" in long[1]
        assert "longer than the limit of 67,108,864 bytes" in long[1]
        assert got["raw_len"][-1] == 4096  # only its first bytes are kept
        assert f"line of {fill:,} bytes" in long[1]
        assert got["frames"] == (2 if bomb == "message-then-zeros" else 1)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("scanner", ["c", "python"])
def test_max_line_bytes_cuts_and_can_be_raised(tmp_path: Path, scanner: str, lazy: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A line over the limit is one invalid row of its head; the lines around it load as
    before; a raised limit reads it whole (plain and .gz, NDJSON and tap; the frame text
    in memory, or read from the file by offset)."""
    from mcp_notebook import fast
    from mcp_notebook.engine import native

    if scanner == "python":
        monkeypatch.setattr(native, "native", None)
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0 if lazy else 1 << 62)
    big = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"p": "y" * 9000}})
    lines = ['{"jsonrpc":"2.0","id":1,"method":"a"}', big, "", '{"jsonrpc":"2.0","id":1,"result":{}}']
    nd = tmp_path / "c.ndjson"
    nd.write_text("\n".join(lines) + "\n")
    tp = tmp_path / "c.jsonl"
    tp.write_text("\n".join(json.dumps({"ts": 1.0 + i, "dir": "c2s" if i < 2 else "s2c",
                                        "raw": ln}) if ln else "" for i, ln in enumerate(lines))
                  + "\n")
    import gzip

    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(tp.read_bytes()))
    for path in (nd, tp, gz):
        t = mn.load(path, max_line_bytes=5000)
        f = t.frames
        assert f["kind"].astype(str).tolist() == ["request", "invalid", "result"], path
        assert "max_line_bytes" in f["reason"][1] and len(f["raw"][1]) == 4096
        assert f["raw"][0] == lines[0] and f["raw"][2] == lines[3]
        assert f["source"].tolist() == [f"{path.name}:{k}" for k in (1, 2, 4)]
        assert t.summary()["blank_lines"] == 1
        whole = mn.load(path).frames
        assert whole["kind"].astype(str).tolist() == ["request", "request", "result"]
    with pytest.raises(ValueError, match="max_line_bytes"):
        mn.load(nd, max_line_bytes=0)


@pytest.mark.parametrize("blank", ["\r\n", " \n", "\t\r\n"])
def test_sniffing_a_head_of_blank_lines_takes_linear_time(blank: str) -> None:
    """``load`` sniffs the first 64 KiB; a head of blank lines after one message (the crlf
    bomb's) took the curl sniffer 30 s or more (a ``^\\s*`` from every line start ran over
    all the blank lines after it), now milliseconds; a curl command after them is still
    found."""
    import time

    from mcp_notebook.readers import REGISTRY

    first = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    head = first + blank * (65536 // len(blank))
    start = time.perf_counter()
    for mod in REGISTRY.values():
        mod.sniff(head, "x.jsonl")
    assert time.perf_counter() - start < 2.0  # on a loaded box; was 30-50 s
    pasted = blank * 100 + "  $ curl -s -d '" + first.strip() + "' http://127.0.0.1:1/mcp\n"
    assert REGISTRY["curl"].sniff(pasted, "x.txt") == 60
