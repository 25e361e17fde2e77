"""The fast paths give the reference's frames, pairs and violations, cell for cell.

Each case is loaded twice: by ``mn.load`` (fast loader for NDJSON and tap, columnar
pairing and checks) and by the reference pipeline of :mod:`reference` (reader records
classified one by one, the pure-Python pairing walk and checks). The three DataFrames
must be equal, with the frame text read from memory and from disk by offset.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from oracle.pipeline import comparable, materialised, reference_columns, reference_tables

import mcp_notebook as mn
from mcp_notebook import fast
from mcp_notebook.engine.fallback import STRICT_ENV, FallbackWarning

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "fixtures" / "wild"
DATA = ROOT / "data"


#: the reference's tables of each input, by the names and bytes of its files and the options:
#: the reference (record by record, pure Python) does not depend on the switches a test
#: runs under (the C scanner or the Python path, the text in memory or read by offset), so
#: the four runs of one input compare with one reference run
_REFERENCE: dict[tuple, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]] = {}


def _reference(paths: list[Path], fmt: str, version: object, opts: dict
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    import hashlib

    key = (tuple((p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths), fmt,
           version, tuple(sorted(opts.items())))
    if key not in _REFERENCE:
        _REFERENCE[key] = reference_tables(reference_columns(paths, fmt, **opts),
                                           version)  # type: ignore[arg-type]
    return _REFERENCE[key]


def assert_same(paths: list[Path], fmt: str = "auto", **opts: object) -> mn.Trace:
    version = opts.pop("version", None)
    t = mn.load(paths, format=fmt, version=version, **opts)  # type: ignore[arg-type]
    frames, pairs, violations = _reference(paths, fmt, version, opts)
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(comparable(t.violations), violations)
    return t


# -- lines the fast loader must hand to the reference, or decide as the reference does -------
ODD_LINES = [
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","id":-0,"result":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":0}}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":true}}',
    '{"jsonrpc":"2.0","id":"a\\"b","method":"ping"}',
    '{"jsonrpc":"2.0","id":"a\\u0062","method":"ping"}',
    '{"jsonrpc":"2.0","id":"ab","result":{}}',
    '{"jsonrpc":"2.0","id":"tab\\tid","method":"ping"}',
    '{"jsonrpc":"2.0","id":1.0,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1e3,"result":{}}',
    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}',
    '{"jsonrpc":"2.0","id":18446744073709551621,"method":"ping"}',
    '{"jsonrpc":"2.0","id":18446744073709551621,"result":{"isError":true}}',
    '{"jsonrpc":"2.0","id":9,"error":{"code":99999999999999999999,"message":"x"}}',
    '{"jsonrpc":"2.0","id":9,"error":{"code":-32601.5,"message":"x"}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_m\\u0065ta":{"progressToken":"t"}}}',
    '{"jsonrpc":"2.0","id":2,"result":{"is\\u0045rror":true}}',
    '{"jsonrpc":"2.0","id":3,"result":{"isError":"yes"}}',
    '{"jsonrpc":"2.0","id":4,"result":null}',
    '{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}',
    '{"jsonrpc":"2.0","id":5,"method":"rpc.discover"}',
    '{"jsonrpc":"2.0","id":6,"method":"x","result":{}}',
    '{"jsonrpc":"1.0","id":7,"method":"ping"}',
    '{"id":7,"method":"ping"}',
    '{"jsonrpc":"2.0","method":5}',
    '{"jsonrpc":"2.0","method":"a","method":"b"}',
    '{"jsonrpc":"2.0","method":5,"method":"b"}',
    '[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]',
    '[]',
    '[1, "x"]',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}',
    '   ',
    '\t{"jsonrpc":"2.0","id":11,"method":"ping"}\x0c',
    ' {"jsonrpc":"2.0","id":12,"method":"ping"} ',
    '{"jsonrpc":"2.0","id":12,"result":{"_meta":{}}}',
    '{"jsonrpc":"2.0","id":13,"method":"ping"}',
    '{"jsonrpc": "2.0", "id": 13, "result": {"pong": 1}}',
    '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":NaN}}',
    '{"jsonrpc":"2.0","method":"x",}',
    '{"jsonrpc":"2.0","method":"x"',
    'Content-Length: 52',
    '"just a string"',
    "[" * 3000 + "]" * 3000,
    '{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"_meta":{'
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    '{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"_meta":{'
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
    # what the C scanner reads itself: escapes, members the tables read, numbers, depth
    '{"jsonrpc":"2.0","id":16,"error":{"code":-32000,"message":"bad \\"x\\" \\\\ \\/ \\n\\t"}}',
    '{"jsonrpc":"2.0","id":17,"error":{"message":"m","code":1,"code":2}}',
    '{"jsonrpc":"2.0","id":17,"error":{"code":1}}',
    '{"jsonrpc":"2.0","id":17,"error":{"code":9223372036854775807,"message":"max"}}',
    '{"jsonrpc":"2.0","id":17,"error":{"code":-9223372036854775808,"message":"min"}}',
    '{"jsonrpc":"2.0","id":17,"error":{"code":123456789012345678,"message":"18 digits"}}',
    '{"jsonrpc":"2.0","id":18,"method":"tools\\/call"}',
    '{"jsonrpc":"2.0","id":"caf\u00e9","method":"ping"}',
    '{"jsonrpc":"2.0","id":"del\x7f","method":"ping"}',
    # long string ids: printable ASCII is checked 16 bytes at a time, the rest one at a time;
    # a DEL or a non-ASCII byte in either part sends the line to the Python path
    *('{"jsonrpc":"2.0","id":"' + i + '","method":"ping"}' for i in (
        "a" * 16 + "~", "a" * 15 + "\x7f" + "b" * 8, "b" * 20 + "\x7f", "c" * 31 + "\u00e9",
        "\x7f" + "d" * 33, "\u00e9" + "d" * 20, "e" * 40)),
    *('{"jsonrpc":"2.0","id":"' + i + '","result":{}}' for i in (
        "a" * 16 + "~", "a" * 15 + "\x7f" + "b" * 8, "\u00e9" + "d" * 20, "e" * 40)),
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"'
    + "a" * 15 + '\x7f' + "b" * 8 + '"}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"'
    + "t" * 17 + '\x7f","progress":1}}',
    '{"jsonrpc":"2.0","id":"","method":"ping"}',
    '{"jsonrpc":"2.0","id":"","result":{}}',
    '{"jsonrpc":"2.0","id":' + "7" * 1001 + ',"method":"ping"}',
    '{"jsonrpc":"2.0","id":-19,"method":"ping"}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1.5e3,"total":2}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1e999}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"caf\u00e9","progress":1}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":-4,"progress":-0.0}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":3}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"x"}}',
    '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"_meta":null,"name":"t"}}',
    '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"_meta":{"progressToken":"tok"},"name":"t"}}',
    '{"jsonrpc":"2.0","method":"x/y","params":{"_meta":{"progressToken":"tok"}}}',
    '{"jsonrpc":"2.0","id":22,"method":"x","params":{"requestId":1.5}}',
    '{"jsonrpc":"2.0","id":22,"method":"x","params":{"protocolVersion":7}}',
    '{"jsonrpc":"2.0","id":23,"method":"initialize","params":{"protocolVersion":"2025-\\/06"}}',
    '{"jsonrpc":"2.0","id":23,"result":{"protocolVersion":"2025-06-18","isError":false}}',
    '{"jsonrpc":"2.0","id":23,"result":{"isError":true,"isError":false}}',
    '{"jsonrpc":"2.0","id":24,"result":{},"params":{"progress":"x"}}',
    '{"jsonrpc":"2.0","id":24,"result":{},"extra":[1,{"a":[true,false,null]}]}',
    '{"jsonrpc":"2.0","id":25,"result":{"deep":' + "[" * 70 + "]" * 70 + '}}',
    '{"jsonrpc":"2.0","id":25,"result":{"deep":' + "[" * 60 + "]" * 60 + '}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":01}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":-}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":1.}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":"ctl\x01"}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":"\\x"}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":tru}}',
    '{"jsonrpc":"2.0","id":26,"result":{"a":1} x',
    '{"jsonrpc":"2.0","id":26,"result":{"a":1}}\r{"jsonrpc":"2.0"}',
    '{\r"jsonrpc"\t:\n"2.0" , "id":27,"result":{ }}',
    '{"jsonrpc":"2.0","id":28,"result":{"s":"\u4e2d\u6587 \U0001f680 r\u00e9sum\u00e9"}}',
    '{"jsonrpc":"2.0","id":29,"result":{"bad":"\x00BAD"}}',
    '{"jsonrpc":"2.0","id":30,"method":"notifications/message","params":{"level":"info"}}',
    '{"jsonrpc":"2.0","id":31,"result":{"payload":"' + "x" * 70000 + '"}}',
    # ping answers: empty, _meta only (both fine), with members (a finding); spaced out
    '{"jsonrpc":"2.0","id":40,"method":"ping"}', '{"jsonrpc": "2.0", "id": 40, "result": {}}',
    '{"jsonrpc":"2.0","id":41,"method":"ping"}',
    '{"jsonrpc": "2.0", "id": 41, "result": {"_meta": {"k": 1}}}',
    '{"jsonrpc":"2.0","id":42,"method":"ping"}',
    '{"jsonrpc": "2.0", "id": 42, "result": {"_meta": {}, "pong": true}}',
    '{"jsonrpc":"2.0","id":43,"method":"ping"}', '{"jsonrpc":"2.0","id":43,"result":{"x":1}}',
]


def _write_ndjson(path: Path, lines: list[str], crlf: bool = False, bom: bool = False) -> Path:
    end = b"\r\n" if crlf else b"\n"
    data = end.join(ln.encode("utf-8") for ln in lines) + end
    data = data.replace(b"\x00BAD", b"\xff\xfe")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


@pytest.mark.parametrize("crlf,bom", [(False, False), (True, True)])
def test_odd_lines_ndjson(tmp_path: Path, text_mode: str, crlf: bool, bom: bool) -> None:
    lines = ODD_LINES + ["", "\r", '{"jsonrpc":"2.0","id":16,"method":"x\x00BAD"}',
                         '{"jsonrpc":"2.0","id":17,"result":{"t":"\x00BAD"}}']
    assert_same([_write_ndjson(tmp_path / "odd.ndjson", lines, crlf, bom)])


@pytest.mark.parametrize("ascii_only", [True, False])
def test_odd_lines_tap(tmp_path: Path, text_mode: str, ascii_only: bool) -> None:
    path = tmp_path / "odd.jsonl"
    recs = [json.dumps({"ts": 1000.0 + i, "dir": ("c2s", "s2c")[i % 2], "raw": ln,
                        "session": "s" if i % 3 else None}, ensure_ascii=ascii_only)
            for i, ln in enumerate(ODD_LINES)]
    recs += ['{"ts":12,"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"a\\"}","session":""}',
             '{"ts":1e400,"dir":"c2s","raw":"{}"}', '{"ts":-1.5e-3,"dir":"s2c","raw":"{}"}',
             '{"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"b\\"}","session":"s\\/2"}',
             '{"dir":"c2s","dir":"s2c","raw":"{}"}', '{"ts":1,"dir":"c2s","raw":5}',
             '{"ts":1,"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"c\\"}"} ',
             '{"ts":1,"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"d\\"}",}']
    recs += [json.dumps({"ts": "2025-01-02T03:04:05Z", "dir": "c2s", "raw": ODD_LINES[0]}),
             json.dumps({"ts": 5, "dir": "stderr", "raw": "log \u00e9"}),
             json.dumps({"ts": None, "dir": "meta", "raw": "start", "event": "start"}),
             json.dumps({"ts": 6.5, "dir": "sideways", "raw": "x"}),
             json.dumps({"ts": 7.0, "dir": "s2c", "raw": "\ud800 lone"}),
             json.dumps({"ts": 8.0, "dir": "c2s", "raw": "{\n\"jsonrpc\":\"2.0\",\"method\":\"x\"}"}),
             json.dumps({"ts": 9.0, "dir": "c2s", "raw": "abc", "raw_b64": "YWL/"}),
             json.dumps({"ts": 9.5, "dir": "c2s", "raw": '{"jsonrpc":"2.0"', "truncated": 999}),
             json.dumps({"ts": 9.7, "dir": "s2c", "raw": "x", "kind": "invalid", "reason": "r",
                         "source": "elsewhere:3", "stream": "http", "local_time": True}),
             "not a tap record", "", json.dumps({"dir": "c2s"}), "[" * 3000]
    path.write_text("\n".join(recs) + "\n", encoding="utf-8", errors="surrogatepass")
    assert_same([path], "tap")


@pytest.mark.parametrize("name", ["edge.ndjson", "edge.tap.jsonl", "plain.tap.jsonl"])
def test_generated_edge_captures(edge_captures: dict[str, Path], text_mode: str,
                                 name: str) -> None:
    t = assert_same([edge_captures[name]])
    assert len(t.violations) and len(t.pairs)


def test_one_sided_ndjson_and_sessions(edge_captures: dict[str, Path]) -> None:
    assert_same([edge_captures["edge.ndjson"]], direction="s2c", session="named")


def test_several_files_and_formats(edge_captures: dict[str, Path], text_mode: str) -> None:
    data = sorted(DATA.glob("*.jsonl"))[:2] + sorted(DATA.glob("*.har"))[:1]
    assert_same([edge_captures["edge.ndjson"], *data, edge_captures["plain.tap.jsonl"]])


def test_gzip(tmp_path: Path, edge_captures: dict[str, Path]) -> None:
    import gzip

    gz = tmp_path / "edge.ndjson.gz"
    gz.write_bytes(gzip.compress(edge_captures["edge.ndjson"].read_bytes()))
    assert_same([gz])


CAPTURES = sorted([p for p in WILD.iterdir() if p.is_dir()]
                  + [p for p in DATA.iterdir() if p.suffix in (".jsonl", ".har")])


#: each real capture's reference (notes, summary, tables): the same for either scanner
_REAL: dict[Path, tuple] = {}


@pytest.mark.parametrize("capture", CAPTURES, ids=[p.name for p in CAPTURES])
def test_real_captures(capture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real captures of every format, as ``mn.load`` reads them (folders, dedupe, notes):
    the columnar engine against the reference one, on the same rows."""
    t = mn.load(capture)
    if capture not in _REAL:  # the reference once per capture (for either scanner)
        monkeypatch.setattr(fast, "ENABLED", False)
        ref = mn.load(capture)
        _REAL[capture] = (ref.notes, ref.summary(), reference_tables(ref.to_columns()))
    notes, summary, (frames, pairs, violations) = _REAL[capture]
    assert t.notes == notes
    pd.testing.assert_frame_equal(materialised(t.frames), frames)
    pd.testing.assert_frame_equal(t.pairs, pairs)
    pd.testing.assert_frame_equal(comparable(t.violations), violations)
    assert t.summary() == summary


def test_reference_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          edge_captures: dict[str, Path]) -> None:
    monkeypatch.setattr(fast, "ENABLED", False)
    t = assert_same([edge_captures["edge.tap.jsonl"]])
    assert t.frames["raw"].dtype == object


def test_lazy_text_reads_the_file_and_sees_it_change(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast, "LAZY_TEXT_MIN_BYTES", 0)
    path = _write_ndjson(tmp_path / "a.ndjson", ODD_LINES[:4])
    t = mn.load(path)
    raw = t.frames["raw"]
    assert str(raw.dtype) == "lazytext" and raw[3] == ODD_LINES[3]
    assert t.message(0)["method"] == "initialize"
    assert raw[raw.str.contains("initialized")].tolist() == [ODD_LINES[3]]
    assert t.frames["source"].tolist() == [f"a.ndjson:{i}" for i in range(1, 5)]
    path.write_text("changed\n")
    from mcp_notebook.lazytext import StaleCaptureError

    with pytest.raises(StaleCaptureError, match="changed on disk"):
        raw.tolist()


@pytest.mark.parametrize("transfer", ["shared", "pipe"])
@pytest.mark.parametrize("name", ["edge.ndjson", "edge.tap.jsonl"])
def test_split_over_two_processes(edge_captures: dict[str, Path], text_mode: str, split: str,
                                  scanner: str, monkeypatch: pytest.MonkeyPatch,
                                  name: str, transfer: str) -> None:
    from mcp_notebook.fast import cores, parallel

    if scanner == "python" and split == "threads":
        pytest.skip("the Python path reads a half as in the fork case (the same read_part "
                    "from the cut); two threads are for the C scan without the GIL")
    if split == "threads" and transfer == "pipe":
        pytest.skip("two threads send nothing between processes")
    if transfer == "shared" and parallel._shared_file() is None:
        pytest.skip("no shared memory file here (memfd_create)")
    if transfer == "pipe":  # as where there is no memfd_create
        monkeypatch.setattr(parallel, "_shared_file", lambda: None)
    mapped: list[int] = []
    real_read = parallel._read_shared

    def read_shared(fd: int, where: list[tuple[int, int]]) -> object:
        mapped.append(len(where))
        return real_read(fd, where)

    monkeypatch.setattr(parallel, "_read_shared", read_shared)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    parts = parallel.read_file(edge_captures[name], "ndjson" if "ndjson" in name else "tap",
                               name, None, gz=False, keep_text=False)
    assert len(parts) == 2 and len(parts[1][0]) > 0  # the child's half came back
    if split == "fork":  # the arrays came as pages of the shared file, or through the pipe
        assert (mapped and mapped[0] > 1) if transfer == "shared" else not mapped
    assert_same([edge_captures[name]])
    # the merge keeps its dict of id keys for the pairing, which lets it go
    t = mn.load(edge_captures[name])
    s = t._store
    assert s.id_index == {k: i for i, k in enumerate(s.id_code[1])}
    assert len(t.pairs) and s.id_index is None


def test_a_child_that_cannot_write_shared_memory_sends_through_its_pipe(
        edge_captures: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A shared memory file the child cannot fill (a full memory cgroup, say) is no failure:
    the child sends its rows through the pipe, and nothing is noted (strict mode is on)."""
    from mcp_notebook.fast import cores, parallel

    if parallel._shared_file() is None:
        pytest.skip("no shared memory file here (memfd_create)")

    def full(fd: int, result: object) -> list[tuple[int, int]]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "SPLIT", "fork")
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    monkeypatch.setattr(parallel, "_write_shared", full)
    parts = parallel.read_file(edge_captures["edge.ndjson"], "ndjson", "edge", None, gz=False,
                               keep_text=False)
    assert len(parts) == 2 and len(parts[1][0]) > 0
    t = assert_same([edge_captures["edge.ndjson"]])
    assert not any("worker" in n for n in t.notes)


def test_rows_mapped_from_shared_memory_are_writable_and_equal(tmp_path: Path) -> None:
    """What comes back through the shared file equals what was sent, and its arrays can be
    written (copy-on-write pages: the file is not changed)."""
    import os

    from mcp_notebook.fast import parallel

    fd = parallel._shared_file()
    if fd is None:
        pytest.skip("no shared memory file here (memfd_create)")
    sent = {"codes": np.arange(100_003, dtype=np.int32), "ids": ["a", 1, None, 2**70],
            "blob": bytearray(b"x" * 70_001), "small": np.array([1.5, np.nan])}
    try:
        where = parallel._write_shared(fd, sent)
        assert len(where) >= 3 and all(a % parallel._ALIGN == 0 for a, _ in where[1:])
        got = parallel._read_shared(fd, where)
        again = parallel._read_shared(fd, where)
    finally:
        os.close(fd)
    assert got["ids"] == sent["ids"] and got["blob"] == sent["blob"]
    np.testing.assert_array_equal(got["codes"], sent["codes"])
    np.testing.assert_array_equal(got["small"], sent["small"])
    got["codes"][:10] = -1
    assert got["codes"][0] == -1 and again["codes"][0] == 0


def test_split_falls_back_when_the_child_fails(edge_captures: dict[str, Path], split: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_notebook.fast import cores, parallel

    if split == "threads":
        pytest.skip("the worker thread's failure: test_split_falls_back_when_the_thread_fails")

    def fail(child: tuple[int, int]) -> tuple[None, str]:
        parallel._abandon(child)
        return None, "made to fail"

    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "_finish", fail)
    monkeypatch.delenv(STRICT_ENV)  # noted and warned (strict: raised, see tests/test_fallback.py)
    with pytest.warns(FallbackWarning, match="made to fail"):
        t = assert_same([edge_captures["edge.ndjson"]])
    assert any("worker process" in n for n in t.notes)


def test_split_falls_back_when_the_thread_fails(edge_captures: dict[str, Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker thread that raises: its half is read by the loading thread, noted (and
    raised under strict mode)."""
    import threading

    from mcp_notebook.engine.fallback import FastPathError
    from mcp_notebook.fast import cores, ndjson, parallel

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "threads")
    real = ndjson.read_part

    def read_part(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        if threading.current_thread().name == "mcp-notebook-scan":
            raise ZeroDivisionError("injected thread failure")
        return real(*args, **kw)

    monkeypatch.setattr(ndjson, "read_part", read_part)
    path = edge_captures["edge.ndjson"]
    with pytest.raises(FastPathError, match="worker thread.*injected thread failure"):
        mn.load(path)
    monkeypatch.delenv(STRICT_ENV)
    with pytest.warns(FallbackWarning, match="injected thread failure"):
        t = assert_same([path])
    assert any("worker thread" in n for n in t.notes)


def test_split_by_threads_at_hostile_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           text_mode: str) -> None:
    """Two threads over two byte ranges: every odd line (and blank lines, a \r\n, a line
    without a newline at the end) placed right at the cut, in turn, gives the reference's
    tables."""
    from mcp_notebook.fast import cores, parallel

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "threads")
    usual = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}) for i in range(6)]
    cuts = []
    for k, odd in enumerate(ODD_LINES[:24]):
        lines = [*usual, odd, "", odd + "\r", *usual]
        path = tmp_path / f"cut{k}.ndjson"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
        cuts.append(parallel._cut(path, path.stat().st_size))
        assert_same([path])
    assert len(set(cuts)) > 1


@pytest.mark.parametrize("child_fails", [False, True])
def test_several_files_over_two_processes(edge_captures: dict[str, Path], text_mode: str,
                                          monkeypatch: pytest.MonkeyPatch,
                                          child_fails: bool) -> None:
    """Several files are shared between this process and a child; the result is the
    reference's, and it does not depend on the child (a failed child's files are read here)."""
    import os

    from mcp_notebook.fast import cores, parallel

    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(parallel, "MIN_MANY_BYTES", 0)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # whatever threads others left
    forks: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        elif child_fails:
            os._exit(3)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    data = sorted(DATA.glob("*.jsonl"))[:3]
    paths = [edge_captures["edge.ndjson"], *data, edge_captures["plain.tap.jsonl"],
             edge_captures["edge.tap.jsonl"]]
    if child_fails:
        monkeypatch.delenv(STRICT_ENV)  # noted and warned, not raised
        with pytest.warns(FallbackWarning, match="exit status 3"):
            t = assert_same(paths)
        assert any("worker process" in n for n in t.notes)
    else:
        assert_same(paths)
    assert len(forks) == 1  # one child took its share of the files


def test_rows_sent_packed_come_back_the_same(edge_captures: dict[str, Path],
                                             tmp_path: Path) -> None:
    """A child sends its rows packed (ids as codes); unpacked, every id and id key is the
    one read, with its type, and rows without an id key keep theirs."""
    import pickle

    from mcp_notebook.fast import parallel

    path = tmp_path / "odd.ndjson"
    path.write_bytes(edge_captures["edge.ndjson"].read_bytes() + "\n".join(ODD_LINES).encode(
        "utf-8", "surrogateescape") + b"\n")
    with open(path, "rb") as f:
        rows, _ = parallel._reader("ndjson")(f, path.name, path.name, None, 0, None, False)
    rows.flush()
    ids = np.concatenate(rows.arrays["id"]).tolist()
    keys = np.concatenate(rows.arrays["id_key"]).tolist()
    codes = np.concatenate(rows.arrays["id_code"])
    rows.keyless_ids = {}
    rows.pack()
    back = pickle.loads(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
    back.unpack()
    got_ids = back.column("id", object).tolist()
    got_keys = back.column("id_key", object).tolist()
    assert [(type(v), v) for v in got_ids] == [(type(v), v) for v in ids]
    assert got_keys == keys
    assert (back.column("id_code", np.int32) == codes).all()
    assert (codes < 0).any() and (codes >= 0).any()


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
@pytest.mark.parametrize("parts", ["one", "split"])
def test_runs_of_blank_lines(edge_captures: dict[str, Path], tmp_path: Path, text_mode: str,
                             monkeypatch: pytest.MonkeyPatch, fmt: str, parts: str) -> None:
    """Runs of blank lines are counted, not listed (``lines.BLANK_RUN``, made small here):
    rows, line labels, frame text and blank counts stay the reference's, runs at the
    start and end of a file and across the cut of a split file included."""
    import random

    from mcp_notebook.fast import cores, lines, parallel

    monkeypatch.setattr(lines, "BLANK_RUN", 3)
    if parts == "split":
        monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
        monkeypatch.setattr(cores, "workers", lambda: 2)
    rng = random.Random(7)
    name = "edge.ndjson" if fmt == "ndjson" else "edge.tap.jsonl"
    src = edge_captures[name].read_bytes().split(b"\n")[:400]
    out = [b"\n" * 5]
    for ln in src:
        out.append(ln + b"\n" + rng.choice([b"", b"\n", b"\r\n" * 3, b"\n" * rng.randint(3, 9)]))
    path = tmp_path / name
    path.write_bytes(b"".join(out) + b"\n" * 4)
    t = assert_same([path], fmt)
    assert t.summary()["blank_lines"] > 500
    with open(path, "rb") as f:  # the runs were cut out (not one block of every line)
        assert len([b for b in lines.blocks(f) if b.skipped]) > 50


def test_split_by_threads_of_one_long_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """A file whose middle falls in its last line (no line starts after it): one part, the
    reference's tables."""
    from mcp_notebook.fast import cores, parallel

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "SPLIT", "threads")
    path = _write_ndjson(tmp_path / "one.ndjson", [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "x" * 5000}})])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert parallel._cut(path, path.stat().st_size) == path.stat().st_size
    assert len(parallel.read_file(path, "ndjson", "s", None, gz=False, keep_text=True)) == 1
    assert_same([path])


def test_ids_and_tokens_met_again_in_one_scan(tmp_path: Path, text_mode: str) -> None:
    """The scanner shares the objects of an id text (and a progress token's str) met again in
    one call, through a cache of direct-mapped slots that other texts overwrite: more
    distinct texts than its 4,096 slots, answers near and far from their requests, ids that
    differ only in type (1 and "1"), long ones, and lines the scanner leaves to the Python
    path in between; every frame, pair and finding stays the reference's."""
    lines = []
    n = 6000
    for k in range(n):
        ident = [str(k), f'"{k}"', f'"req-{k:090d}"'][k % 3]
        lines.append(f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
                     f'"params":{{"name":"t","_meta":{{"progressToken":{ident}}}}}}}')
        lines.append(f'{{"jsonrpc":"2.0","method":"notifications/progress",'
                     f'"params":{{"progressToken":{ident},"progress":1}}}}')
        if k % 7 == 0:  # read by the Python path (an escape in a string)
            lines.append('{"jsonrpc":"2.0","method":"notifications/message",'
                         '"params":{"level":"info","data":"caf\\u00e9"}}')
        if k % 2 == 0:  # answered at once
            lines.append(f'{{"jsonrpc":"2.0","id":{ident},"result":{{"content":[]}}}}')
    for k in range(1, n, 2):  # the rest answered far from their requests, in reverse
        ident = [str(k), f'"{k}"', f'"req-{k:090d}"'][k % 3]
        lines.append(f'{{"jsonrpc":"2.0","id":{ident},"result":{{"content":[]}}}}')
    t = assert_same([_write_ndjson(tmp_path / "again.ndjson", lines)])
    frames = t.frames
    assert frames["id"].map(type).value_counts().to_dict() == {
        int: 2 * (n // 3), str: 2 * (n - n // 3), type(None): n + len(range(0, n, 7))}
    assert len(t.pairs) == n


def test_the_2026_members_spelled_with_escapes(tmp_path: Path) -> None:
    """Names spelled with escapes are the names (the session's version included), and a
    name written elsewhere in a message is not its member: as the reference reads them."""
    from protocol.test_rules import ESCAPED_META, ESCAPED_TYPE, MENTIONED_META, NESTED_TYPE

    lines = [ESCAPED_META, ESCAPED_TYPE, MENTIONED_META, NESTED_TYPE,
             '[{"jsonrpc":"2.0","id":3,"method":"ping"},' + ESCAPED_META.replace('"id":1', '"id":4')
             + "]",
             '{"jsonrpc":"2.0","id":4,"result":{"result\\u0054ype":"bogus"}}']
    assert_same([_write_ndjson(tmp_path / "m.ndjson", lines)])
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"ts": 1.0 + i, "dir": ("c2s", "s2c")[i % 2],
                                        "raw": ln}) + "\n" for i, ln in enumerate(lines)))
    t = assert_same([path])
    assert {"request-meta-missing", "result-type-missing", "result-type-value"} <= set(
        t.violations["rule"])
