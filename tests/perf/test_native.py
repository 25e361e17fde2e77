"""The C envelope scanner decides a line only as the reference does.

Random JSON-RPC messages (every member the tables read, with right and wrong types,
escapes, non-ASCII text, odd numbers, whitespace, deep nesting), written several ways and
then damaged by random byte edits, are loaded as NDJSON and as tap JSONL with the C
scanner and compared with the reference pipeline, table for table.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st
from test_equivalence import assert_same

from helpers import need_native
from mcp_notebook.engine import native


@pytest.fixture(autouse=True)
def scanner() -> str:
    """These tests are of the C scanner (tests/perf/conftest.py fails them if it is not built)."""
    need_native()
    return "c"

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8) | \
    st.sampled_from(["", "a", "tok", 'q"q', "b\\s", "sl/ash", "caf\u00e9", "\u4e2d", "\x7f",
                     "\U0001f680", "tab\t", "2025-06-18"])


def _weighted(*pairs: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """One of the strategies, each drawn with the given weight."""
    return st.sampled_from([s for w, s in pairs for _ in range(w)]).flatmap(lambda s: s)


_ids = _weighted((4, st.integers(-3, 3)), (3, st.integers(-(2**70), 2**70)), (3, _text),
                 (1, st.none()), (1, st.floats(allow_nan=False, allow_infinity=False)),
                 (1, st.booleans()))
_numbers = st.integers(-(2**65), 2**65) | st.floats(allow_nan=False, allow_infinity=False)
_scalar = _ids | _numbers
_json = st.recursive(_scalar, lambda kids: st.lists(kids, max_size=3) |
                     st.dictionaries(_text, kids, max_size=3), max_leaves=6)
_methods = st.sampled_from(["ping", "tools/call", "initialize", "notifications/progress",
                            "notifications/cancelled", "notifications/initialized",
                            "rpc.x", "tools\u00e9", "a/b"])


@st.composite
def messages(draw: st.DrawFn) -> dict:
    m: dict = {}
    if draw(st.integers(0, 19)):
        m["jsonrpc"] = draw(st.sampled_from(["2.0"] * 8 + ["1.0", 2]))
    if draw(st.integers(0, 4)):
        m["id"] = draw(_ids)
    shape = draw(st.integers(0, 3))
    if shape == 0 or draw(st.integers(0, 20)) == 0:
        m["method"] = draw(_methods)
    if shape in (0, 1) and draw(st.integers(0, 3)):
        params: dict = draw(st.dictionaries(_text, _json, max_size=2))
        for name, values in [("requestId", _ids), ("progressToken", _ids),
                             ("progress", _numbers | _text), ("protocolVersion", _text | _numbers)]:
            if draw(st.integers(0, 3)) == 0:
                params[name] = draw(values)
        if draw(st.integers(0, 3)) == 0:
            params["_meta"] = draw(st.none() | st.fixed_dictionaries(
                {}, optional={"progressToken": _ids,
                              "io.modelcontextprotocol/protocolVersion": _text}))
        m["params"] = params if draw(st.integers(0, 9)) else draw(_json)
    if shape == 2:
        res: dict = draw(st.dictionaries(_text, _json, max_size=2))
        if draw(st.booleans()):
            res["isError"] = draw(_weighted((6, st.booleans()), (1, _scalar)))
        if draw(st.integers(0, 3)) == 0:
            res["protocolVersion"] = draw(_text)
        m["result"] = res if draw(st.integers(0, 9)) else draw(_json)
    if shape == 3:
        err: dict = {}
        if draw(st.integers(0, 9)):
            err["code"] = draw(st.integers(-(2**64), 2**64) | st.sampled_from([-32601, 1.5]))
        if draw(st.integers(0, 9)):
            err["message"] = draw(_text)
        if draw(st.booleans()):
            err["data"] = draw(_json)
        m["error"] = err
    keys = list(m)
    draw(st.randoms(use_true_random=False)).shuffle(keys)
    return {k: m[k] for k in keys}


def _write(m: dict, style: int) -> str:
    if style == 0:
        return json.dumps(m, separators=(",", ":"), ensure_ascii=False)
    if style == 1:
        return json.dumps(m)  # spaces, \\u escapes
    if style == 2:
        return " " + json.dumps(m, indent=None, separators=(" , ", " : "), ensure_ascii=False) + "\t"
    return json.dumps(m, separators=(",", ":"), ensure_ascii=False).replace("/", "\\/")


def _damage(line: str, rnd: random.Random) -> str:
    data = bytearray(line.encode("utf-8"))
    for _ in range(rnd.randint(1, 2)):
        i = rnd.randrange(len(data) + 1)
        op = rnd.randrange(3)
        byte = rnd.choice(b'{}[]",:\\0123456789.-eEtrufalsn \x00\x7f\xc3\xa9\xff')
        if op == 0:
            data.insert(i, byte)
        elif op == 1 and i < len(data):
            del data[i]
        elif i < len(data):
            data[i] = byte
    return data.decode("utf-8", "surrogateescape")


@st.composite
def captures(draw: st.DrawFn) -> list[str]:
    rnd = draw(st.randoms(use_true_random=False))
    lines = []
    for m in draw(st.lists(messages(), min_size=1, max_size=12)):
        line = _write(m, draw(st.integers(0, 3)))
        if draw(st.integers(0, 4)) == 0:
            line = _damage(line, rnd)
        lines.append(line.replace("\n", " ").replace("\r", " "))
    return lines


_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@seed(20261130)
@_SETTINGS
@given(captures())
@example(['{"jsonrpc":"2.0","id":0,"method":"rpc.x","params":[]}',
          '{"jsonrpc":"2.0","id":0,"error":{"code":9223372036854775808}}'])
def test_ndjson_lines_as_the_reference(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.ndjson"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
        assert_same([path], "ndjson")


@seed(20261130)
@_SETTINGS
@given(captures(), st.booleans())
# found by a long random run: an error code above 2**53 (the reference's checker input
# held the codes as floats)
@example(['{{"method":"ping"}', '{"jsonrpc":"2.0","id":0,"method":"rpc.x"}',
          '{{"method":"ping"}', '{{"method":"ping"}',
          '{"jsonrpc":"2.0","id":0,"error":{"code":9007199254740993}}'], False)
@example(['{"jsonrpc":"2.0","id":0,"method":"rpc.x","params":[]}', '{{"method":"ping"}',
          '{{"method":"ping"}', '{"jsonrpc":"2.0","id":0,"error":{"code":9223372036854775808}}'],
         False)  # and one beyond int64: no code, as the frames' column holds it
def test_tap_lines_as_the_reference(lines: list[str], ascii_only: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        recs = [json.dumps({"ts": 1.5 + i, "dir": ("c2s", "s2c")[i % 2], "raw": ln,
                            "session": ("a", "b", "")[i % 3]}, ensure_ascii=ascii_only)
                for i, ln in enumerate(lines)]
        path.write_text("\n".join(recs) + "\n", encoding="utf-8", errors="surrogateescape")
        assert_same([path], "tap")


def test_the_scanner_takes_the_usual_lines(tmp_path: Path) -> None:
    """The usual lines are the scanner's: it stops only at the unusual one."""
    from mcp_notebook.fast.rows import Rows

    usual = [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}',
             b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}',
             b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
             b'{"progressToken":"t","progress":0.5}}',
             b'{"jsonrpc":"2.0","id":"r","error":{"code":-32601,"message":"no \\"such\\""}}',
             b'{"jsonrpc":"2.0","id":null,"method":"ping"}',  # null id: the Python path
             b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
    buf = b"\n".join(usual)
    import numpy as np

    ends = np.cumsum([len(u) + 1 for u in usual]) - 1
    starts = np.concatenate([[0], ends[:-1] + 1])
    rows = Rows(per_row_context=False)
    stop = native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 0,
                              len(usual), 0, native.out_lists(rows))
    assert stop == 4
    assert rows.kind.tolist() == [0, 2, 1, 3] and rows.line.tolist() == [0, 1, 2, 3]
    assert rows.id_key == ["1", "1", None, '"r"']
    assert rows.sparse["is_tool_error"] == {1: True}
    assert rows.sparse["error_message"] == {3: 'no "such"'}
    assert rows.ref_vals == ['"t"'] and rows.ref_rows.tolist() == [2]
    assert rows.prog_rows.tolist() == [2] and rows.prog_vals.tolist() == [0.5]
    # the line it stopped at, as the Python path adds it (row 4), then the scanner again:
    # its rows follow on (row numbers of the sparse columns included)
    rows.kind.append(0)
    rows.id.append(None)
    rows.id_key.append(None)
    rows.method.append(rows.method_code("ping"))
    rows.line.append(4)
    assert native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 5,
                              len(usual), 0, native.out_lists(rows)) == len(usual)
    assert rows.kind.tolist() == [0, 2, 1, 3, 0, 0]
    assert rows.line.tolist() == [0, 1, 2, 3, 4, 5] and rows.id_key[5] == "2"
    assert rows.method[4] == rows.method[5] and rows.methods.values[rows.method[5]] == "ping"
    assert rows.methods.values[rows.method[0]] == "tools/call"
    rows.id.append(None)  # one column longer than the rest: refused, nothing added
    with pytest.raises(ValueError, match="differ in length"):
        native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 5,
                           len(usual), 0, native.out_lists(rows))
    assert len(rows.kind) == 6
    rows.id.pop()
    # the sparse columns are checked too: progress values of the wrong type, or a row
    # without its value, are refused before anything is added
    from array import array

    good = rows.prog_vals
    rows.prog_vals = array("q", [0])  # type: ignore[assignment]
    rows.prog_rows.append(9)
    with pytest.raises(TypeError, match="float64"):
        native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 5,
                           len(usual), 0, native.out_lists(rows))
    rows.prog_vals = good
    rows.prog_rows.pop()
    rows.ref_vals.append('"u"')
    with pytest.raises(ValueError, match="differ in length"):
        native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 5,
                           len(usual), 0, native.out_lists(rows))
    assert len(rows.kind) == 6 and rows.ref_rows.tolist() == [2]


def _tap_escape_records() -> list[str]:
    """Tap records whose raw frame is dense with escapes (quotes, backslash runs, slashes,
    control and \\u escapes, non-ASCII), shifted through every offset of the unescaping
    loop's 16-byte chunk and on over eight of them."""
    pieces = ['a"b', "c\\\\d", "\\", '\\"', "e/f", "g\nh", "\u00e9", "\\u0041", "\t",
              '""', "\\\\\\", "x" * 15, "y" * 63]
    rnd = random.Random(7)
    recs = []
    for pad in range(131):
        for _ in range(3):
            text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 12)))
            frame = json.dumps({"jsonrpc": "2.0", "id": pad + 1, "method": "tools/call",
                                "params": {"p": "." * pad, "s": text}}, ensure_ascii=False)
            raw = json.dumps(frame, ensure_ascii=False)
            if rnd.random() < 0.3:
                raw = raw.replace("/", "\\/")
            recs.append(f'{{"ts":1.5,"dir":"c2s","session":"a","raw":{raw}}}')
    for pad in range(131):  # escaped whitespace between the frame's tokens: a valid frame
        ws = rnd.choice(["\\n", "\\t", "\\r", "\\n\\t"])
        recs.append('{"ts":1.5,"dir":"s2c","raw":"{\\"jsonrpc\\":\\"2.0\\",' + ws
                    + '\\"id\\":' + str(pad + 1) + ',' + ws + '\\"result\\":{\\"k\\":\\"'
                    + "y" * pad + '\\/\\"}}"}')
    for pad in range(131):  # a control escape inside a frame's string: an invalid frame
        esc = rnd.choice(["\\n", "\\t", "\\b", "\\f", "\\r"])
        recs.append('{"ts":1.5,"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"'
                    + "x" * pad + esc + "y" * 20 + '\\"}"}')
    for pad in range(131):  # a run of backslashes across a chunk's end
        frame = json.dumps({"jsonrpc": "2.0", "id": pad + 1, "method": "m",
                            "params": {"s": "z" * pad + "\\" * 40}})
        recs.append(f'{{"ts":1.5,"dir":"c2s","raw":{json.dumps(frame)}}}')
    return recs


def test_tap_raw_escapes_at_every_alignment(tmp_path: Path) -> None:
    """The records of :func:`_tap_escape_records`: the unescaped frames are the
    reference's."""
    path = tmp_path / "escapes.jsonl"
    path.write_text("\n".join(_tap_escape_records()) + "\n", encoding="utf-8")
    t = assert_same([path], "tap")
    assert (t.frames["kind"] == "request").sum() >= 390  # the frames were read as frames
    assert (t.frames["kind"] == "result").sum() == 131
    assert (t.frames["kind"] == "invalid").sum() >= 131


_TAP_FRAMES = r"""
import json, sys
import mcp_notebook as mn
from mcp_notebook.engine import native
t = mn.load(sys.argv[1], format="tap")
# each record scanned alone by the C scanner: taken or not, and its frame's length
import numpy as np
from mcp_notebook.fast.rows import LineContext, Rows
taken = []
for rec in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    rows, ctx = Rows(per_row_context=True), LineContext(0, 1)
    context = (ctx.ts, ctx.session, ctx.direction, ctx.stream, ctx.size, {"a": 0, "s": 1},
               "s", 3, 7)
    got = native.native.scan(rec, np.array([0]), np.array([len(rec)]), 0, 1, 0,
                             native.out_lists(rows), context) if native.native else 0
    taken.append(int(ctx.size[0]) if got == 1 else -1)
print(json.dumps({"simd": native.native.simd() if native.native else None,
                  "kind": t.frames["kind"].astype(str).tolist(),
                  "raw": t.frames["raw"].tolist(), "taken": taken}))
"""


def test_tap_raw_escapes_alike_at_every_vector_width(tmp_path: Path) -> None:
    """The same records read by each of the C scanner's vector levels (AVX2 and SSSE3 where
    the CPU has them, SSE2: the level is chosen at import, so each is a child process) give
    the frames of the Python path (a child without the extension), and the scanner takes
    every record with a valid frame itself at each level: a record it declined would be
    read right by the Python path and hide a fault of the unescaping."""
    import os
    import subprocess
    import sys

    path = tmp_path / "escapes.jsonl"
    recs = _tap_escape_records()
    path.write_text("\n".join(recs) + "\n", encoding="utf-8")
    keys = ("MCP_NOTEBOOK_NO_AVX2", "MCP_NOTEBOOK_NO_SIMD", "MCP_NOTEBOOK_NO_NATIVE")
    base = {k: v for k, v in os.environ.items() if k not in keys}

    def frames(**env: str) -> dict:
        out = subprocess.run([sys.executable, "-c", _TAP_FRAMES, str(path)],
                             env={**base, **env}, capture_output=True, text=True,
                             check=True).stdout
        return json.loads(out)

    want = frames(MCP_NOTEBOOK_NO_NATIVE="1")
    assert want["simd"] is None and len(want["raw"]) == len(recs)  # a frame a record
    levels = {"": frames(), "ssse3": frames(MCP_NOTEBOOK_NO_AVX2="1"),
              "sse2": frames(MCP_NOTEBOOK_NO_SIMD="1")}
    # the records with a valid frame (the Python path's verdict): the C scanner must take
    # each itself at every level, its frame as long as json.loads makes it
    sizes = [len(json.loads(r)["raw"].encode()) for r in recs]
    must = [k for k, kind in enumerate(want["kind"]) if kind != "invalid"]  # a frame a record
    assert len(must) == len(recs) - 131
    for name, got in levels.items():
        assert got["kind"] == want["kind"], name
        assert got["raw"] == want["raw"], name
        assert [got["taken"][k] for k in must] == [sizes[k] for k in must], name
    assert [levels[k]["simd"] for k in ("ssse3", "sse2")] in (["ssse3", "sse2"],
                                                              ["sse2", "sse2"])
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if " avx2" in flags and " ssse3" in flags:  # the widest level ran
        assert levels[""]["simd"] == "avx2"


def test_the_scanner_takes_stderr_records_once_their_stream_has_a_code() -> None:
    """A tap record's stderr line is a row of its own (kind stderr, no id, no direction,
    the stderr stream); until the Python path has coded that stream, the scanner stops."""
    import numpy as np

    from mcp_notebook.fast.rows import LineContext, Rows

    recs = [b'{"ts":1.5,"dir":"c2s","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"x\\"}"}',
            b'{"ts":2.5,"dir":"stderr","raw":"server log: \\"ready\\"\\tok"}',
            b'{"ts":3.5,"dir":"s2c","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":{}}"}']
    buf = b"\n".join(recs)
    ends = np.cumsum([len(r) + 1 for r in recs]) - 1
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    for stderr_code, taken in [(-1, 1), (7, 3)]:
        rows = Rows(per_row_context=True)
        ctx = LineContext(0, len(recs))
        context = (ctx.ts, ctx.session, ctx.direction, ctx.stream, ctx.size, {"s": 0}, "s", 3,
                   stderr_code)
        got = native.native.scan(buf, starts, ends.astype(np.int64), 0, len(recs), 0,
                                 native.out_lists(rows), context)
        assert got == taken
    assert rows.kind.tolist() == [0, 5, 2] and rows.id_key == ["1", None, "1"]
    assert ctx.stream.tolist() == [3, 7, 3] and ctx.direction.tolist() == [0, -1, 1]
    assert ctx.size[1] == len('server log: "ready"\tok') and ctx.ts.tolist() == [1.5, 2.5, 3.5]


_U_ESCAPES = ["\\u0000", "\\u001f", "\\u0041", "\\u00e9", "\\u00E9", "\\u07ff", "\\u0800",
              "\\u20ac", "\\uffff", "\\ud83d\\ude80", "\\uD83D\\uDE80", "\\udbff\\udfff",
              "\\u0022", "\\u005c", "\\u002f"]
_OTHER_ESCAPES = ["\\n", '\\"', "\\\\", "\\/", "\\t", "\\b", "\\f", "\\r", "caf\u00e9", "x"]
_LONE = ["\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\ud83dx", "\\ud83d\\u0041",
         "\\ud83d\\n", "\\ude80\\ud83d", "\\ud83d\\ud83d"]


def _escaped_lines(rnd: random.Random) -> tuple[list[str], list[str]]:
    """Error lines whose message mixes \\u escapes (surrogate pairs too) with the other
    escapes, shifted through every offset of a 16-byte chunk; and the same with a lone
    surrogate somewhere."""
    good, lone = [], []
    for pad in range(34):
        for _ in range(4):
            parts = [rnd.choice(_U_ESCAPES + _OTHER_ESCAPES) for _ in range(rnd.randint(1, 8))]
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(_U_ESCAPES))
            msg = "." * pad + "".join(parts)
            good.append('{"jsonrpc":"2.0","id":' + str(pad + 1) + ',"error":{"code":-32000,'
                        '"message":"' + msg + '","data":{"t":"' + "".join(parts) + '"}}}')
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(_LONE))
            lone.append('{"jsonrpc":"2.0","id":' + str(pad + 1) + ',"error":{"code":-32000,'
                        '"message":"' + "." * pad + "".join(parts) + '"}}')
    # a \u escape that ends the buffer (the line is the last bytes of the scanned buffer)
    good.append('{"jsonrpc":"2.0","id":"u","error":{"code":1,"message":"\\u20ac\\ud83d\\ude80"}}')
    return good, lone


def _scan_one(line: str) -> tuple[int, object]:
    """Whether the C scanner takes the line alone (the buffer ends with it), and the
    error message it reads."""
    import numpy as np

    from mcp_notebook.fast.rows import Rows
    buf = line.encode()
    rows = Rows(per_row_context=False)
    taken = native.native.scan(buf, np.array([0], dtype=np.int64),
                               np.array([len(buf)], dtype=np.int64), 0, 1, 0,
                               native.out_lists(rows))
    return taken, rows.sparse.get("error_message", {}).get(0)


def test_u_escapes_decoded_in_c_as_json_loads(tmp_path: Path) -> None:
    """The C scanner takes strings with \\u escapes (surrogate pairs combined) and decodes
    them as json.loads does; a string with a lone surrogate is left to the Python path,
    whose load equals the reference's."""
    import msgspec

    good, lone = _escaped_lines(random.Random(11))
    for line in good:
        taken, msg = _scan_one(line)
        assert taken == 1, line
        want = json.loads(line)["error"]["message"]
        assert msg == want == msgspec.json.decode(line)["error"]["message"], line
    for line in lone:
        assert _scan_one(line)[0] == 0, line
    path = tmp_path / "u.ndjson"
    path.write_text("\n".join(good + lone) + "\n", encoding="utf-8")
    t = assert_same([path], "ndjson")
    assert (t.frames["kind"] == "error").sum() >= len(good)


def _long_string_lines() -> list[bytes]:
    """Error lines whose message is a long plain run with one byte of interest at every
    offset of the scanner's 16-byte steps (and of the UTF-8 check's 16- and 32-byte ones): a
    quote ending it early, a backslash escape, a control byte, a valid and an invalid UTF-8
    sequence, and nothing at all; the line goes on after the string."""
    out = []
    after = b',"data":"' + b"z" * 40 + b'"'  # the line goes on: the end is no chunk edge
    for n in (31, 32, 33, 47, 48, 63, 64, 65, 95, 96, 97, 130):
        for at in range(n):
            for mark in (b'\\"', b"\\n", b"\x01", "é".encode(), b"\xc3", b"\xff", b""):
                text = b"a" * at + mark + b"b" * (n - at)
                out.append(b'{"jsonrpc":"2.0","id":' + str(len(out) + 1).encode()
                           + b',"error":{"code":-1,"message":"' + text + b'"' + after + b"}}")
    return out


#: the scanner's verdict on each line of a file (one per line): taken, and the message read
_VERDICTS = """
import json, sys
import numpy as np
from mcp_notebook.engine import native
from mcp_notebook.fast.rows import Rows
got = []
for line in open(sys.argv[1], "rb").read().split(b"\\n")[:-1]:
    rows = Rows(per_row_context=False)
    taken = native.native.scan(line, np.array([0], dtype=np.int64),
                               np.array([len(line)], dtype=np.int64), 0, 1, 0,
                               native.out_lists(rows))
    got.append((taken, rows.sparse["error_message"].get(0)))
print(json.dumps(got))
"""


def test_long_strings_at_every_offset_as_json_loads() -> None:
    """A long string's bytes of interest at every offset: the scanner takes a line exactly
    when it is valid JSON and valid UTF-8 and reads its message as json.loads does, with the
    AVX2 UTF-8 check and with the SSSE3 one (a child process with MCP_NOTEBOOK_NO_AVX2 set:
    the level is chosen at import)."""
    import os
    import subprocess
    import sys

    lines = _long_string_lines()
    want = []
    for line in lines:
        try:
            want.append([1, json.loads(line.decode("utf-8"))["error"]["message"]])
        except (UnicodeDecodeError, json.JSONDecodeError):
            want.append([0, None])
    assert sum(t for t, _ in want) > len(lines) // 2  # most lines are taken, some are not
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.bin"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        for level in ({}, {"MCP_NOTEBOOK_NO_AVX2": "1"}):  # AVX2 where the CPU has it; SSE2
            env = {k: v for k, v in os.environ.items() if k != "MCP_NOTEBOOK_NO_AVX2"}
            out = subprocess.run([sys.executable, "-c", _VERDICTS, str(path)],
                                 env={**env, **level}, capture_output=True, text=True,
                                 check=True).stdout
            assert json.loads(out) == want, level


def test_integer_ids_of_every_length_as_python_reads_them() -> None:
    """Integer ids are read to the int Python's int() makes of their text (a short one in C
    as an int64, a longer one by Python's conversion), both signs, at the 18/19-digit edge,
    at the int64 limits and far beyond them; the id key is the text itself."""
    import numpy as np

    from mcp_notebook.fast.rows import Rows
    texts = ["1", "-1", "7", "-42", str(10**17), str(10**18 - 1), str(-(10**18 - 1)),
             str(10**18), str(-(10**18)), str(2**63 - 1), str(-(2**63)), str(2**63),
             str(2**64 + 1), "9" * 40, "-" + "9" * 40]
    lines = [f'{{"jsonrpc":"2.0","id":{t},"method":"ping"}}' for t in texts]
    buf = "\n".join(lines).encode()
    ends = np.cumsum([len(x) + 1 for x in lines]) - 1
    starts = np.concatenate([[0], ends[:-1] + 1])
    rows = Rows(per_row_context=False)
    assert native.native.scan(buf, starts.astype(np.int64), ends.astype(np.int64), 0,
                              len(lines), 0, native.out_lists(rows)) == len(lines)
    assert rows.id == [int(t) for t in texts]
    assert all(type(v) is int for v in rows.id)
    assert rows.id_key == texts


@seed(18)
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.lists(
    st.sampled_from(["rule", "ambiguous", "sse_event", "ts_error", "entry_kind", "x"]),
    max_size=3)), max_size=40), st.lists(st.sampled_from(
        ["rule", "ambiguous", "sse_event", "ts_error", "zz"]), max_size=3, unique=True))
def test_extras_with_is_the_python_walk(rows: list, keys: list[str]) -> None:
    """``_native.extras_with`` gives the rows of the Python walk, in its order, with the
    same objects: fresh dicts, one dict shared by runs of rows (as the Inspector pass
    shares a kind's), and a non-dict extra (a key test by ``in``)."""
    shared = [{"entry_kind": "request"}, {"rule": "stdout-noise"}, {"sse_event": "ping"}]
    extra: dict = {}
    for row, (pick, members) in enumerate(rows):
        if pick < 3:
            extra[row * 7] = shared[pick]
        elif pick == 3:
            extra[row * 7] = dict.fromkeys(members, 1)
        else:
            extra[row * 7] = list(members)
    want = [(i, e) for i, e in extra.items() if any(k in e for k in keys)]
    got = native.native.extras_with(extra, tuple(keys))
    assert got == want
    assert all(g[1] is w[1] for g, w in zip(got, want, strict=True))
    assert native.extras_with(extra, tuple(keys)) == want
    built, native.native = native.native, None  # the path without the extension
    try:
        assert native.extras_with(extra, tuple(keys)) == want
    finally:
        native.native = built


def test_extras_with_refuses_what_is_not_its_input() -> None:
    with pytest.raises(TypeError):
        native.native.extras_with({1: {}}, ("rule", 2))
    with pytest.raises(TypeError):
        native.native.extras_with([(1, {})], ("rule",))
    with pytest.raises(TypeError):  # an extra that is no container: as `in` raises
        native.native.extras_with({1: 5}, ("rule",))
