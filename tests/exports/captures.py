"""The captures every export test runs on: each bundled trace (``data/``, as the package
lists them: ``.jsonl``, ``.har``, the gzipped one ...) and each peer capture
(``tests/fixtures/peers/``)."""

from __future__ import annotations

from pathlib import Path

from mcp_notebook.bundled import TRACE_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p for p in (ROOT / "data").iterdir()
                 if p.is_file() and p.suffix in TRACE_SUFFIXES)
PEERS = sorted(p for p in (ROOT / "tests" / "fixtures" / "peers").iterdir()
               if p.suffix in (".jsonl", ".har"))
CAPTURES = sorted(BUNDLED + PEERS)


def is_har(path: Path) -> bool:
    return ".har" in path.suffixes
