"""One generated session written in every capture format gives the findings of its NDJSON.

``benchmarks/gen_formats.py`` writes the same traffic (progress, cancels, server requests,
ids above 2^53, calls in flight together) as NDJSON, a Claude Desktop log, a VS Code
output log, a curl transcript and an HTTP+SSE HAR whose GET stream has no event times. A
reader that puts a frame in the wrong place makes findings the NDJSON does not have (an
untimed stream's progress once gave 4,694 false findings in 20,000 messages), so each
format's findings are held to the NDJSON's, rule by rule and frame by frame.

The Inspector export is held to it on two other sessions (seeds 12 and 13), each with a
progress notification stamped in the millisecond its call's response arrived in (the
export's durations are whole milliseconds): read in the export's order, each was a false
``progress-after-response``.

Left out, with the reason: the cassette holds the client's calls only; the Streamable
HTTP HAR carries the generator's own rounding of times (a reply stream stamped at its
entry's first byte), which moves a few frames across their neighbours.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

import mcp_notebook as mn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gen_formats  # noqa: E402

#: the one thing an HTTP+SSE stream with no event times cannot tell: whether a call's
#: result left before or after the client's cancel (the result goes right after its call)
_RACE = {"response-after-cancel": "cancel-after-response"}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    return gen_formats.write_all(4000, tmp_path_factory.mktemp("formats"), seed=11,
                                 only=["ndjson", "claude-desktop", "vscode", "curl",
                                       "har-sse"])


def _findings(path: Path) -> tuple[Counter, int, int]:
    t = mn.load(path)
    progress = int((t.frames["method"] == "notifications/progress").sum())
    return Counter(t.violations["rule"]), len(t.frames), progress


@pytest.mark.parametrize("fmt", ["claude-desktop", "vscode", "curl", "har-sse"])
def test_every_format_finds_what_the_ndjson_finds(written, fmt):
    want, n, progress = _findings(written["ndjson"])
    got, m, _ = _findings(written[fmt])
    # the traffic has what a misplaced frame shows in
    assert progress > 500 and {"response-after-cancel", "big-id",
                               "unanswered-request"} <= set(want)
    assert abs(m - n) <= 2  # (a log's own lines: the server's start, its exit)
    if fmt == "har-sse":
        for rule, told in _RACE.items():
            want[told] += want.pop(rule, 0)
    assert got == want


@pytest.mark.parametrize("seed", [12, 13])
def test_the_inspector_export_finds_what_the_ndjson_finds(tmp_path, seed):
    written = gen_formats.write_all(4000, tmp_path, seed=seed, only=["ndjson", "inspector"])
    want, n, progress = _findings(written["ndjson"])
    got, m, _ = _findings(written["inspector"])
    assert progress > 500 and m == n
    assert got == want
