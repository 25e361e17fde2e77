"""Seeds, mutations and invariants shared by the robustness tests.

Seeds are real captures: the wild samples (``tests/fixtures/wild``), the reader tests'
hand-made captures (``tests/readers/data``), the project's own recorded traces
(``data/``) and the real Inspector exports (``tests/fixtures/inspector-web``), plus a few built here for shapes no sample has (a batch, a HAR with SSE).
Every check goes through the public surface: ``mn.load`` and what a Trace offers.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

import mcp_notebook as mn
from mcp_notebook import readers

ROOT = Path(__file__).resolve().parents[2]
SEED_DIRS = (ROOT / "tests" / "fixtures" / "wild", ROOT / "tests" / "readers" / "data",
             ROOT / "data", ROOT / "tests" / "fixtures" / "inspector-web")
FORMATS = tuple(readers.REGISTRY)
LINE_FORMATS = ("tap", "ndjson")  # one row per line (batch members share a line)
RANGE_FORMATS = ("claude-desktop", "vscode")  # rows cite the line ranges they came from

#: how many examples each hypothesis test runs (``make fuzz`` sets 20000; the default a
#: fixed-seed 50, as the same seed draws the same first examples at any count)
FUZZ_EXAMPLES = int(os.environ.get("MCP_NOTEBOOK_FUZZ_EXAMPLES", "50"))
#: a long run: every byte offset instead of a sample of them
LONG_RUN = FUZZ_EXAMPLES >= 1000

#: Fixed seed (``derandomize``) and a bounded budget, so CI is repeatable;
#: ``MCP_NOTEBOOK_FUZZ_RANDOM=1`` draws fresh random examples instead.
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    derandomize=os.environ.get("MCP_NOTEBOOK_FUZZ_RANDOM") != "1",
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.large_base_example],
)


def _built() -> dict[str, bytes]:
    """Small captures for shapes the real samples lack."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}}
    ok = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-03-26",
                                                "capabilities": {}}}
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
             {"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": 1, "progress": 1}}]
    nd = "\n".join(json.dumps(m) for m in (init, ok, batch, {"jsonrpc": "2.0", "id": 1,
                                                              "result": {}})) + "\n"
    tap = "".join(json.dumps({"ts": 1.7e9 + i, "dir": d, "raw": json.dumps(m)}) + "\n"
                  for i, (d, m) in enumerate([("c2s", init), ("s2c", ok), ("c2s", batch),
                                              ("stderr", "log line"), ("s2c", {
                                                  "jsonrpc": "2.0", "id": 1, "result": {}})]))
    sse = "event: message\nid: 1\ndata: " + json.dumps({"jsonrpc": "2.0", "id": 1,
                                                        "result": {}}) + "\n\n"
    har = {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
        {"startedDateTime": "2025-01-01T00:00:00.000Z", "time": 5,
         "request": {"method": "POST", "url": "http://127.0.0.1:1/mcp", "headers": [
             {"name": "Mcp-Session-Id", "value": "s1"}],
             "postData": {"mimeType": "application/json", "text": json.dumps(
                 {"jsonrpc": "2.0", "id": 1, "method": "ping"})}},
         "response": {"status": 200, "headers": [
             {"name": "Content-Type", "value": "text/event-stream"}],
             "content": {"mimeType": "text/event-stream", "text": sse}},
         "timings": {"send": 1, "wait": 2, "receive": 2}}]}}
    return {"built-batch.ndjson": nd.encode(), "built-tap.jsonl": tap.encode(),
            "built-sse.har": json.dumps(har).encode()}


@lru_cache(maxsize=1)
def seeds() -> tuple[tuple[str, bytes, str], ...]:
    """``(name, bytes, format)`` of every seed capture, smallest first."""
    out: list[tuple[str, bytes, str]] = []
    for folder in SEED_DIRS:
        if not folder.is_dir():
            continue
        for p in sorted(folder.rglob("*")):
            if not p.is_file() or p.name.endswith((".source.txt", ".md")) or p.name[0] == ".":
                continue
            try:
                fmt = readers.sniff(p)
            except readers.CaptureError:
                continue
            out.append((p.name, p.read_bytes(), fmt))
    for name, data in _built().items():
        out.append((name, data, _sniff_name(name)))
    out.sort(key=lambda s: len(s[1]))
    return tuple(out)


def _sniff_name(name: str) -> str:
    return {"ndjson": "ndjson", "jsonl": "tap", "har": "har"}[name.rsplit(".", 1)[-1]]


def seed(fmt: str) -> tuple[str, bytes, str]:
    """The smallest seed of a format."""
    return next(s for s in seeds() if s[2] == fmt)


# -- running the library the way a user would ---------------------------------------------

def exercise(trace: mn.Trace, deep: bool = True) -> dict[str, Any]:
    """Touch what a Trace offers (everything when ``deep``); return its summary."""
    f = trace.frames
    s = trace.summary()  # builds pairs and violations too
    for seq in range(min(len(f), 60 if deep else 12)):
        trace.message(seq)
    if deep:
        repr(trace)
        trace._repr_html_()
        trace.latency_by_method()
        for seq in range(min(len(f), 60)):
            trace.extra(seq)
        trace.redact(salt="fuzz")
    assert s["frames"] == len(f)
    assert s["messages"] + s["invalid"] + s["stderr"] + s["log"] == s["frames"]
    return s


def exercise_views(trace: mn.Trace) -> None:
    """Build every view of a trace (the widgets and the pure functions under them)."""
    import numpy as np

    from mcp_notebook.widgets import aggregate, frametable, viewport

    prepared = aggregate.prepare(trace)
    viewport.view(prepared)
    viewport.view(prepared, 0.0, 1.0, width=10)
    table = frametable.frame_table(trace)
    frametable.page_rows(table, np.arange(len(table)), 0)
    mn.explore(trace)
    mn.timeline(trace)


def load_any(path: Path, fmt: str) -> mn.Trace | None:
    """``mn.load`` with ``fmt``; None for the two allowed refusals: a file that cannot be
    read (a corrupt .gz) and, with ``auto``, a file of no known format."""
    try:
        return mn.load(path, format=fmt)
    except mn.CaptureError as exc:
        assert "cannot be read" in str(exc) or (
            fmt == "auto" and "not a capture format" in str(exc)), f"{fmt}: {exc}"
        return None


def physical_lines(data: bytes) -> list[bytes]:
    """The lines a line reader sees (split on ``\\n``; no empty piece after a final one)."""
    if data[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except EOFError:  # a stream cut short: the load reads what decompresses before the cut
            try:
                data = zlib.decompressobj(31).decompress(data)
            except zlib.error:
                return []
        except (OSError, zlib.error):
            return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def check_lines(trace: mn.Trace, data: bytes, fmt: str) -> None:
    """Nothing lost: every input line is a row (or a counted blank line)."""
    f = trace.frames
    lines = physical_lines(data)
    blank = trace.summary()["blank_lines"]
    if fmt in LINE_FORMATS:
        rows = int((f["batch"].isna() | (f["batch"] == 0)).sum())
        assert rows + blank == len(lines), (rows, blank, len(lines))
        if fmt == "ndjson":  # the raw text is the exact line (its Markdown wrapping off)
            from mcp_notebook.readers._markdown import detect, unwrap

            texts = [ln.decode("utf-8", "surrogateescape") for ln in lines]
            if texts:
                texts[0] = texts[0].removeprefix("\ufeff")
            wrapped = any("Markdown wrapping taken off" in n for n in trace.notes)
            w = detect([t.removesuffix("\r") for t in texts]) if wrapped else None
            for seq, src, raw in zip(f["seq"], f["source"], f["raw"], strict=True):
                n = int(src.rsplit(":", 1)[1])
                line = texts[n - 1].removesuffix("\r")
                assert raw == (unwrap(line, w) if w else line), seq
    elif fmt in RANGE_FORMATS:
        covered: set[int] = set()
        for src in f["source"]:
            m = re.search(r":(\d+)(?:-(\d+))?$", src)
            assert m, src
            a = int(m.group(1))
            covered.update(range(a, int(m.group(2) or a) + 1))
        assert len(covered) + blank == len(lines), (len(covered), blank, len(lines))
