"""``_native.claude_lines`` (one C pass over a block of a Claude Desktop per-server log)
against the numpy reading it replaces (``claude_desktop._usual``, the path where the
extension is not built): the same line bounds, the same usual lines, directions and
times, on random logs and on lines at every edge of the usual shape."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mcp_notebook.engine.native import native
from mcp_notebook.readers import _claude_usual as cu
from mcp_notebook.readers import claude_desktop as cd
from mcp_notebook.readers._spans import lines_of

from .test_claude_spans import _log

pytestmark = pytest.mark.skipif(native is None, reason="the C extension is not built")

_MSG = '{} [{}] [info] Message from {}: {} {{ metadata: undefined }}'
_OK = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
_T = "2025-03-23T16:38:00.970Z"


def _edges(server: str) -> list[str]:
    """Lines at each edge of the usual shape (some usual, most not)."""
    out = [_MSG.format(_T, server, who, p) for who in ("client", "server")
           for p in (_OK, "[1]", "{", "[", "x", "", " {}", '{"a":"...[5 chars truncated]"}',
                     '{"a":"chars truncated"}', '{"a":"]chars truncated]"}')]
    for t in ("2025-02-30T10:00:00.000Z", "2025-01-01T24:00:00.000Z",
              "2025-01-01T23:60:00.000Z", "2025-01-01T10:00:60.500Z",
              "2025-01-01T10:00:61.000Z", "2025-13-01T10:00:00.000Z",
              "2025-00-10T10:00:00.000Z", "0000-01-01T00:00:00.000Z",
              "9999-12-31T23:59:59.999Z", "2024-02-29T00:00:00.000Z",
              "2023-02-29T00:00:00.000Z", "2025-01-01T10:00:00.00aZ",
              "2025-01-01 10:00:00.000Z", "2025-01-01T10:00:00.000+", "2025/01/01T10:00:00.000Z"):
        out.append(_MSG.format(t, server, "client", _OK))
    line = _MSG.format(_T, server, "client", _OK)
    out += [line[:k] for k in range(0, len(line), 7)]  # every cut of a usual line
    out += [line + " ", line[:-1], line.replace("[info]", "[error]"),
            line.replace("client:", "Client:"), line.replace("client: ", "client:  "),
            line.replace(f"[{server}]", f"[{server}x]"), line.replace(f"[{server}]", "[]"),
            _MSG.format(_T, server, "client", "{}"), _MSG.format(_T, server, "server", "[]"),
            f"{_T} [{server}] [info] Message from client: {{ metadata: undefined }}",
            f"{_T} [{server}] [info] Message from client: {_OK} {{ metadata: {{}} }}",
            f"{_T} [{server}] [info] Message from client: {_OK} {{ metadata: undefined }}x"]
    return out


def _compare(block: bytes, server: str) -> int:
    a, st, en = lines_of(block)
    fast, direction, ts = cu._usual(block, a, st, en, server)
    st2, en2, fast2, direction2, ts2 = cu._usual_native(native.claude_lines, block, server)
    assert st2.tolist() == st.tolist() and en2.tolist() == en.tolist()
    assert fast2.tolist() == fast.tolist()
    assert direction2[fast].tolist() == direction[fast].tolist()
    assert ts2[fast].tolist() == ts[fast].tolist()
    return int(fast.sum())


@pytest.mark.parametrize("seed", range(6))
def test_random_logs(seed):
    data = _log(random.Random(seed), 600)
    assert _compare(data, "srv") > 50
    assert _compare(data, "other") > 10


@pytest.mark.parametrize("server", ["srv", "x chars truncated", "naïve 中文", "a [b",
                                    "chars truncated", "s" * 200])
def test_edges(server):
    lines = _edges(server)
    rng = random.Random(len(server))
    for _ in range(3):
        rng.shuffle(lines)
        got = _compare("\n".join(lines).encode(), server)
        if "chars truncated" in server:
            assert got == 0  # the name itself says Claude cut the line
        else:
            # the usual ones above: 2 x 5 payloads, 3 real times (year 0 is none), {} and []
            assert got == 15


def test_blocks_of_one_line_and_none():
    for block in (b"", b"\n", b"\n\n", _MSG.format(_T, "srv", "client", _OK).encode(),
                  (_MSG.format(_T, "srv", "client", _OK) + "\n").encode()):
        _compare(block, "srv")


def test_line_count_is_the_reader_s(tmp_path):
    """The reader's ``block`` returns the block's line count (the labels after it)."""
    data = _log(random.Random(9), 300)
    path = tmp_path / "mcp-server-srv.log"
    path.write_bytes(data)
    reader = cd._Reader(path, None)
    gen = reader.block(data, 0, 0)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            assert stop.value == data.count(b"\n") + 1
            break
    assert np.frombuffer(native.claude_lines(data, b"srv")[0], dtype=np.int64).size == \
        data.count(b"\n") + 1
