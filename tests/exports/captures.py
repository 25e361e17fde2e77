"""The captures the export tests run on: each bundled trace (``data/``, as the package lists
them: ``.jsonl``, ``.har``, the gzipped one ...) and each peer capture
(``tests/fixtures/peers/``).

``CAPTURES`` is all of them (40 today). The costly round trips (chunked writers, a written
file read back, a real consumer) run on ``REPRESENTATIVE``: the few captures that between
them hold every *feature* (``features``) that any capture holds — each format, each kind of
frame in each direction, each pair outcome, each finding, each id type, several sessions,
batches, cancellations, progress, frames without a time ... A capture that brings a feature
none of them has makes ``tests/exports/test_captures.py`` fail and name it, so the set grows
with the corpus instead of drifting from it. The cheap checks (no payload in the boundary
files, one row per operation) still run on every capture.
"""

from __future__ import annotations

from pathlib import Path

from mcp_notebook.bundled import TRACE_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p for p in (ROOT / "data").iterdir()
                 if p.is_file() and p.suffix in TRACE_SUFFIXES)
PEERS = sorted(p for p in (ROOT / "tests" / "fixtures" / "peers").iterdir()
               if p.suffix in (".jsonl", ".har"))
CAPTURES = sorted(BUNDLED + PEERS)

#: a smallest cover of the features of ``CAPTURES`` (greedy: each next one brings the most
#: features not yet held), by file name
REPRESENTATIVE_NAMES = (
    "python-2026-stateless-http.har", "everything-stdio-envelopes.jsonl",
    "broken-duplicate-response.jsonl", "ts-client-demo-http.har",
    "conversation-large-result-mb.jsonl.gz", "demo-stdio-big-id.jsonl",
    "conformance-demo-http.har", "inspector-cli-stdio.jsonl",
    "python-auto-everything-stdio.jsonl", "python-reused-id-stdio.jsonl",
    "ts-client-everything-http.har", "demo-sse.har",
)
REPRESENTATIVE = [p for p in CAPTURES if p.name in REPRESENTATIVE_NAMES]


def is_har(path: Path) -> bool:
    return ".har" in path.suffixes


def features(path: Path) -> set[tuple]:
    """What an export of this capture has to get right, as a set of tags."""
    import mcp_notebook as mn

    trace = mn.load(path)
    frames, pairs = trace.frames, trace.pairs
    tags: set[tuple] = {("format", "".join(path.suffixes))}
    tags |= {("frame", k, d) for k, d in
             set(zip(frames["kind"].astype(str), frames["direction"].astype(str), strict=True))}
    tags |= {("stream", s) for s in frames["stream"].dropna().astype(str).unique()}
    tags |= {("outcome", o) for o in pairs["outcome"].dropna().astype(str).unique()}
    tags |= {("finding", r) for r in trace.violations["rule"].astype(str).unique()}
    ids = frames["id"].dropna()
    tags |= {("id", type(i).__name__) for i in ids}
    flags = {
        "an id beyond 2**53": ids.map(lambda i: isinstance(i, int) and abs(i) > 2**53).any(),
        "several sessions": frames["session"].nunique() > 1,
        "a batch": frames["batch"].notna().any(),
        "a tool error": frames["is_tool_error"].any(),
        "a frame without a time": frames["ts"].isna().any(),
        "local times": frames["local_time"].any(),
        "a cancellation": pairs["cancel_seq"].notna().any(),
        "progress": (pairs["progress_count"] > 0).any(),
        "a frame that says why it is not valid": frames["reason"].notna().any(),
    }
    return tags | {(name,) for name, held in flags.items() if held}
