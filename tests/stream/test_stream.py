"""``mn.summarize``: the summary of a capture read in chunks equals ``mn.load``'s.

Every count of ``Trace.summary()`` is compared (the violations on the rules that run in
streaming mode; the others must be listed as not run), on every bundled capture and on the
benchmark generator's profiles with raised anomaly rates, with chunks small enough that
requests, their answers, cancels and progress fall in different chunks; with the C scanner
and with the Python path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcp_notebook as mn
from helpers import INIT, note, ok, req, tap
from mcp_notebook.engine import checks, native
from mcp_notebook.stream import FRAME_RULES, STREAMED, WALK_RULES, not_streamed
from mcp_notebook.stream.keys import KeyTable, mix, mix_one

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted((ROOT / "data").glob("*.jsonl")) + sorted((ROOT / "data").glob("*.har"))
LINE_FILES = [p for p in BUNDLED if p.suffix == ".jsonl"]


def differences(path: Path, **kw: Any) -> tuple[dict[str, Any], list[tuple[str, Any, Any]]]:
    """The streaming summary, and each key whose value differs from ``mn.load``'s."""
    load_kw = {k: v for k, v in kw.items() if k in ("direction", "version", "session")}
    full = mn.load(path, **load_kw).summary()
    got = mn.summarize(path, **kw)
    out = []
    for key, want in full.items():
        have = got[key]
        if key == "violations" and got["streaming"]["streamed"]:
            want_rules = {c: n for c, n in want["by_rule"].items() if n and c in STREAMED}
            if want_rules != have["by_rule"]:
                out.append(("by_rule", want_rules, have["by_rule"]))
            if sum(want_rules.values()) != have["total"]:
                out.append(("total", sum(want_rules.values()), have["total"]))
            dropped = {c for c, n in want["by_rule"].items() if n and c not in STREAMED}
            if dropped - set(got["streaming"]["rules_not_run"]):
                out.append(("silently dropped", dropped, got["streaming"]["rules_not_run"]))
        elif key == "violations":
            if {k: v for k, v in want.items()} != have:
                out.append((key, want, have))
        elif have != want:
            out.append((key, want, have))
    return got, out


@pytest.fixture
def python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "native", None)
    monkeypatch.setattr(native, "IMPORT_ERROR", None)


#: (chunk bytes, scanner): the default chunks and small ones with the C scanner, small
#: ones on the Python path
WAYS = [(None, "c"), (700, "c"), (700, "python")]


@pytest.mark.parametrize("path", LINE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk,way", WAYS, ids=[f"{c}-{w}" for c, w in WAYS])
def test_bundled_captures_give_the_loads_counts(path: Path, chunk: int | None, way: str,
                                                request: pytest.FixtureRequest) -> None:
    if way == "python":
        request.getfixturevalue("python_path")
    elif native.native is None:
        pytest.skip("the C extension is not built")
    got, diff = differences(path, chunk_bytes=chunk)
    assert not diff
    assert got["streaming"]["streamed"] is (not path.name.endswith(".gz"))
    if chunk and got["streaming"]["streamed"] and path.stat().st_size > 3 * chunk:
        assert got["streaming"]["chunks"] > 2


@pytest.mark.parametrize("path", [p for p in BUNDLED if p not in LINE_FILES],
                         ids=lambda p: p.name)
def test_other_formats_are_loaded_whole_and_say_so(path: Path) -> None:
    got, diff = differences(path)
    assert not diff
    assert got["streaming"]["streamed"] is False and "read whole" in got["streaming"]["why"]
    with pytest.raises(mn.CaptureError, match="cannot be summarized in streaming mode"):
        mn.summarize(path, stream=True)


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    import importlib.util
    import sys

    bench = ROOT / "benchmarks"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("gen_capture", bench / "gen_capture.py")
    gen = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    out = tmp_path_factory.mktemp("profiles")
    files = []
    for profile in gen.PROFILES:
        for fmt, ext in (("ndjson", "ndjson"), ("tap", "tap.jsonl")):
            path = out / f"{profile}.{ext}"
            gen.generate(path, 1200, fmt, seed=5, anomaly_scale=20.0, profile=profile)
            files.append(path)
    path = out / "edge.tap.jsonl"
    gen.generate(path, 2500, "tap", seed=11, sessions=4, anomaly_scale=40.0)
    files.append(path)
    return files


def test_generated_profiles_give_the_loads_counts(profiles: list[Path]) -> None:
    # chunks of 4 KiB: a seam every few frames of a profile (a few hundred per file), so
    # requests and their answers, sessions and findings fall on both sides of many; smaller
    # chunks add seams, not kinds of seam, and cost a chunk's fixed work each
    for path in profiles:
        got, diff = differences(path, chunk_bytes=4096)
        assert not diff, path.name
        assert got["streaming"]["streamed"] and got["streaming"]["chunks"] > 3
        assert got["violations"]["total"] > 0 and got["pairs"] > 0


def test_generated_profiles_on_the_python_path(profiles: list[Path], python_path: None) -> None:
    for path in profiles[::2] + profiles[-1:]:  # each profile's NDJSON, the edge tap file
        assert not differences(path, chunk_bytes=4096)[1], path.name


def test_options_of_the_load_give_the_same_counts(profiles: list[Path]) -> None:
    nd = next(p for p in profiles if p.name == "default.ndjson")
    for kw in ({"direction": "c2s"}, {"version": "2024-11-05"}, {"session": "one"}):
        assert not differences(nd, chunk_bytes=2000, **kw)[1], kw


def test_every_rule_is_streamed_or_said_not_run() -> None:
    import mcp_notebook.trace  # noqa: F401  (the conversation rules register on import)

    checks.load_rule_modules()
    codes = {r.code for r in mn.RULES}
    assert not set(FRAME_RULES) & set(WALK_RULES)
    assert STREAMED <= codes
    assert set(not_streamed()) == codes - STREAMED
    # the catalogue's own checks of the engine are all streamed, by the chunk or the walk
    engine = {c for c, fn in {**checks.CHECKS, **checks.ROW_CHECKS}.items()
              if fn.__module__.startswith("mcp_notebook.engine.rules")}
    assert engine == STREAMED


def test_examples_are_the_first_findings_with_their_lines(profiles: list[Path]) -> None:
    path = next(p for p in profiles if p.name == "default.ndjson")
    t = mn.load(path)
    got = mn.summarize(path, chunk_bytes=1500, examples=2)
    v = t.violations
    lines = t.frames["source"].map(lambda s: int(str(s).rsplit(":", 1)[1]))
    assert got["examples"]
    for code, ex in got["examples"].items():
        first = v[v["rule"] == code].sort_values("seq", kind="stable").head(2)
        assert [e["line"] for e in ex] == [int(lines.iat[int(s)]) for s in first["seq"]], code
        assert [e["message"] for e in ex] == first["message"].tolist(), code


def test_blank_and_broken_lines_are_counted_with_examples(tmp_path: Path) -> None:
    path = tmp_path / "c.ndjson"
    lines = [json.dumps(req(1, "ping")), "", "", "{not json", json.dumps(ok(1)), "",
             "[1, 2", json.dumps(req(2, "ping"))]
    path.write_text("\n".join(lines * 50) + "\n")
    got = mn.summarize(path, chunk_bytes=100)
    assert got["blank_lines"] == 150 == mn.load(path).summary()["blank_lines"]
    assert got["invalid"] == 100
    assert [e["line"] for e in got["invalid_examples"]] == [4, 7, 12]
    assert got["streaming"]["chunks"] > 20
    assert not differences(path, chunk_bytes=100)[1]


def test_latency_by_method_is_the_loads(profiles: list[Path]) -> None:
    path = next(p for p in profiles if p.name == "default.tap.jsonl")
    want = mn.load(path).latency_by_method()
    got = mn.summarize(path, chunk_bytes=3000)["latency"]
    assert set(got) == set(want.index)
    for method, row in want.iterrows():
        g = got[method]
        assert (g["count"], g["answered"], g["errors"], g["tool_errors"]) == (
            row["count"], row["answered"], row["errors"], row["tool_errors"])
        for q in ("p50_ms", "p90_ms", "p99_ms", "max_ms"):
            assert g[q] == pytest.approx(row[q], abs=0.002), (method, q)


def _meta(version: str) -> dict[str, Any]:
    return {"_meta": {"io.modelcontextprotocol/protocolVersion": version}}


@pytest.mark.parametrize("fmt", ["tap", "ndjson"])
def test_a_version_settled_late_checks_the_early_chunks_again(tmp_path: Path,
                                                              fmt: str) -> None:
    # no initialize: the session's version is its requests' most common _meta version,
    # 2024-11-05 in the first chunks, 2026-07-28 by the end of the file; in bare NDJSON
    # the early chunks are checked again with the directions inferred the first time
    rows = [("c2s", req(i, "tools/list", _meta("2024-11-05"))) for i in range(20)]
    rows += [("s2c", ok(i)) for i in range(20)]
    rows += [("c2s", req(100 + i, "tools/list", _meta("2026-07-28"))) for i in range(40)]
    rows += [("s2c", ok(100 + i)) for i in range(40)]
    rows += [("c2s", req(900, "sampling/createMessage"))]  # wrong way: a finding per version
    if fmt == "tap":
        path = tap(tmp_path / "late.jsonl", rows)
    else:
        path = tmp_path / "late.ndjson"
        path.write_text("".join(json.dumps(m) + "\n" for _, m in rows))
    got, diff = differences(path, chunk_bytes=1000)
    assert not diff
    assert got["streaming"]["rechecked_chunks"] > 0
    assert got["protocol_version"] == "2026-07-28"
    assert got["violations"]["by_rule"].get("result-type-missing") == 60


def test_state_across_chunks(tmp_path: Path) -> None:
    """Answers, cancels, progress and reuse far from their requests, in other chunks."""
    rows = list(INIT)
    rows += [("c2s", req(i, "tools/call", {"name": "t", "_meta": {"progressToken": f"p{i}"}}))
             for i in range(1, 30)]
    rows += [("s2c", note("notifications/progress", {"progressToken": f"p{i}", "progress": 1}))
             for i in range(1, 30)]
    rows += [("c2s", note("notifications/cancelled", {"requestId": 3}))]
    rows += [("s2c", ok(i, {"content": []})) for i in range(1, 25)]
    rows += [("s2c", ok(5, {"content": []})), ("s2c", ok(77, {})), ("s2c", ok("2", {}))]
    rows += [("s2c", note("notifications/progress", {"progressToken": "p4", "progress": 2}))]
    rows += [("c2s", req(6, "ping")), ("c2s", req(28, "ping")),
             ("c2s", note("notifications/cancelled", {"requestId": 7}))]
    path = tap(tmp_path / "far.jsonl", rows)
    got, diff = differences(path, chunk_bytes=400)
    assert not diff
    rules = got["violations"]["by_rule"]
    for code in ("duplicate-response", "orphan-response", "request-id-reused",
                 "request-id-in-flight", "progress-after-response", "cancel-after-response",
                 "unanswered-request", "response-after-cancel"):
        assert rules.get(code), code
    assert got["streaming"]["chunks"] > 10


def test_bare_ndjson_directions_inferred_across_chunks(tmp_path: Path) -> None:
    # both sides send ping with the same ids: the second use of an id is the server's
    lines = []
    for i in range(60):
        lines += [json.dumps(req(i, "ping")), json.dumps(req(i, "ping")),
                  json.dumps(ok(i)), json.dumps(ok(i))]
    path = tmp_path / "both.ndjson"
    path.write_text("\n".join(lines) + "\n")
    got, diff = differences(path, chunk_bytes=256)
    assert not diff and got["pairs"] == 120 and got["orphans"] == 0


@pytest.mark.parametrize("fmt", ["tap", "ndjson"])
def test_integer_ids_stored_by_value_give_the_loads_findings(tmp_path: Path,
                                                             fmt: str) -> None:
    """Integer ids (kept by value) beside string, far, negative and ``-0`` ids, reused,
    answered twice and cancelled chunks away from their requests."""
    rows: list[tuple[str, Any]] = list(INIT)
    rows += [("c2s", req(i, "ping")) for i in range(1, 80)]
    rows += [("s2c", ok(i)) for i in range(1, 70)]
    rows += [("c2s", req(10**9, "ping")), ("s2c", ok(10**9)), ("s2c", ok(10**9)),
             ("c2s", req(10**13, "ping")), ("s2c", ok(10**13)), ("c2s", req(-4, "ping")),
             ("s2c", ok(-4)), ("c2s", '{"jsonrpc":"2.0","id":-0,"method":"ping"}'),
             ("s2c", ok(0)), ("c2s", req("75", "ping")), ("s2c", ok(75)),
             ("s2c", ok("76")), ("c2s", req(3, "ping")), ("s2c", ok(3)), ("s2c", ok(5)),
             ("c2s", note("notifications/cancelled", {"requestId": 10})),
             ("c2s", note("notifications/cancelled", {"requestId": 77})),
             ("c2s", note("notifications/cancelled", {"requestId": "77"})),
             ("s2c", ok(77)), ("s2c", ok(500)), ("c2s", req(10**9, "ping"))]
    if fmt == "tap":
        path = tap(tmp_path / "ids.jsonl", rows)
    else:
        path = tmp_path / "ids.ndjson"
        path.write_text("".join((m if isinstance(m, str) else json.dumps(m)) + "\n"
                                for _, m in rows))
    got, diff = differences(path, chunk_bytes=300)
    assert not diff
    rules = got["violations"]["by_rule"]
    # (in bare NDJSON a reused id is the server's request: the inference's reading)
    for code in ("duplicate-response", "orphan-response", "cancel-after-response",
                 "response-after-cancel", "unanswered-request", "id-type-mismatch",
                 *(("request-id-reused",) if fmt == "tap" else ())):
        assert rules.get(code), code
    assert got["streaming"]["chunks"] > 20


def test_settled_sessions_are_counted_as_the_walk_goes(tmp_path: Path) -> None:
    """``Walk.settled`` (counted) is the scan of the open requests it replaces, at every
    chunk: initialize requests open, answered, cancelled, answered late, in two sessions."""
    from mcp_notebook.stream.chunks import chunks
    from mcp_notebook.stream.summary import _Run
    from mcp_notebook.stream.walk import METHOD, SESS

    init = INIT[0][1]
    lines = [init, {**init, "id": 1}, ok(0, INIT[1][1]["result"])]
    lines += [req(i, "ping") for i in range(2, 40)] + [ok(i) for i in range(2, 40)]
    lines += [note("notifications/cancelled", {"requestId": 1}), ok(1, INIT[1][1]["result"]),
              {**init, "id": 50}, req(51, "ping"), ok(50, INIT[1][1]["result"])]
    path = tmp_path / "init.ndjson"
    path.write_text("".join(json.dumps(m) + "\n" for m in lines))
    run = _Run(path, "ndjson", path.name, None, None, 300, 3)
    seen = []
    for c in chunks(path, "ndjson", path.name, None, 300):
        run.take(c)
        w = run.walk
        code = w._method_code.get("initialize")  # noqa: SLF001
        open_init = {e[SESS] for dq in (*w.live.values(), *w.cancelled.values()) for e in dq
                     if e[METHOD] == code}
        want = {s for s in w.init_result if s not in open_init}
        assert w.settled() == want
        seen.append(bool(want))
    assert False in seen and True in seen
    assert not differences(path, chunk_bytes=300)[1]


def test_key_table_finds_what_it_was_given() -> None:
    t = KeyTable()
    import numpy as np

    for start in range(0, 50_000, 1000):
        t.update({k * 7919: k % 97 for k in range(start, start + 1000)})
    t.update({7919 * 3: 55})  # a later value wins
    keys = np.asarray([7919 * k for k in (0, 3, 49_999)] + [1, 2], dtype=np.int64)
    assert t.lookup(keys).tolist() == [0, 55, 49_999 % 97, -1, -1]
    assert t.get(7919 * 3) == 55 and t.get(5) == -1
    assert len(t) == 50_000 and t.nbytes <= 9 * len(t) / 0.7 * 2  # 70% full at most
    h = np.asarray([hash("a"), hash('"b"'), -(2**63)], dtype=np.int64)
    assert mix(h, 3, 1).tolist() == [mix_one(int(x), 3, 1) for x in h.tolist()]


def test_cli_summary_stream_json_has_the_same_keys(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    from mcp_notebook.cli import main

    path = ROOT / "data" / "everything-stdio-progress-cancel.jsonl"
    assert main(["summary", str(path), "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main(["summary", str(path), "--json", "--stream"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert set(whole) <= set(streamed)
    assert streamed["streaming"]["streamed"] is True
    assert streamed["rules_not_run"] == not_streamed()
    for key in ("frames", "pairs", "unanswered", "cancelled", "blank_lines", "methods"):
        assert streamed[key] == whole[key], key
    assert main(["summary", str(path), "--stream"]) == 0
    text = capsys.readouterr().out
    assert "streamed in 1 chunk(s)" in text and "not run in streaming mode" in text
    assert main(["summary", str(ROOT / "data" / "demo-http.har"), "--stream"]) == 2
    assert "cannot be summarized in streaming mode" in capsys.readouterr().err


def test_cli_streams_a_large_file_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture) -> None:
    import mcp_notebook.stream as stream
    from mcp_notebook.cli import main

    path = ROOT / "data" / "demo-stdio.jsonl"
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", path.stat().st_size)
    assert main(["summary", str(path)]) == 0
    assert "streamed in" in capsys.readouterr().out
    assert main(["summary", str(path), "--no-stream"]) == 0
    assert "streamed in" not in capsys.readouterr().out


def test_a_scanner_not_built_is_a_fallback_raised_in_strict_mode(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from mcp_notebook.engine.fallback import STRICT_ENV, FallbackWarning, FastPathError

    path = ROOT / "data" / "demo-stdio.jsonl"
    monkeypatch.setattr(native, "native", None)
    monkeypatch.setattr(native, "IMPORT_ERROR", "ImportError: not built here")
    with pytest.raises(FastPathError, match="not built"):
        mn.summarize(path)
    monkeypatch.setenv(STRICT_ENV, "0")
    with pytest.warns(FallbackWarning):
        got = mn.summarize(path)
    assert any("not built" in n for n in got["streaming"]["notes"])
    with pytest.warns(FallbackWarning):
        want = mn.load(path).summary()
    assert got["frames"] == want["frames"] and got["pairs"] == want["pairs"]


def test_the_docstring_examples_run() -> None:
    import doctest

    import mcp_notebook.stream

    got = doctest.testmod(mcp_notebook.stream)
    assert got.attempted and not got.failed


@pytest.mark.parametrize("path", LINE_FILES[:4], ids=lambda p: p.name)
def test_a_chunk_of_several_blocks(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk read in several blocks (a chunk of 64 MiB is eight blocks of 8 MiB) joins
    their line spans end to end: blocks of 512 bytes here, so every chunk has many."""
    from functools import partial

    from mcp_notebook.fast import lines, ndjson
    from mcp_notebook.fast import tap as tap_reader

    small = partial(lines.blocks, block_bytes=512)
    monkeypatch.setattr(ndjson, "blocks", small)
    monkeypatch.setattr(tap_reader, "blocks", small)
    assert path.stat().st_size > 4 * 512  # several blocks in a chunk
    got, diff = differences(path, chunk_bytes=8192)
    assert not diff, path.name
    assert got["streaming"]["streamed"]
