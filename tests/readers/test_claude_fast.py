"""Claude Desktop's usual one-line message entries are read by one regular expression;
the records are those the general entry parser gives, on any log (random ones here),
and the lines of a log are those of the line-by-line reading."""

from __future__ import annotations

import random
import re
from pathlib import Path

from mcp_notebook.readers import base
from mcp_notebook.readers import claude_desktop as cd

STAMPS = ["2025-02-22T04:14:49.169Z", "2025-13-22T04:14:49.169Z", "04:14:49.169Z",
          "2025-02-22T25:14:49.169Z", "2025-02-22T04:14:61.000Z"]
SERVERS = ["bench", "info", "error", "a]b", "x y", ""]
LEVELS = ["info", "error", "warn", "[info]"]
PAYLOADS = ['{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"id":1,"result":{}} ', "[]",
            '  {"id":2,"result":{}}', '{"a":"...[12 chars truncated]..."}', "x", "",
            'method="tools/list" id=1 params', "{", '{"x":"{ metadata: undefined }"}']
TAILS = [" { metadata: undefined }", " { metadata: undefined } ", "", " {",
         " { metadata: {} }"]
OTHER = ["", "  metadata: {}", "}", "    at f (x.js:1:2)", "plain stderr", "\x1b[32mok\x1b[0m",
         "\r", "a\rb", "\ufeffz", "2025-02-22T04:14:49.169Z [bench] [info] Initializing server..."]


def _pick(rng: random.Random, items: list[str]) -> str:
    """The first (the usual) item half of the time, else any."""
    return items[0] if rng.random() < 0.5 else rng.choice(items)


def _line(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(OTHER)
    who = _pick(rng, ["client", "server", "host"])
    first, second = _pick(rng, SERVERS), _pick(rng, LEVELS)
    if rng.random() < 0.2:
        first, second = second, first
    return (f"{_pick(rng, STAMPS)} [{first}] [{second}] Message from {who}: "
            f"{_pick(rng, PAYLOADS)}{_pick(rng, TAILS)}")


def _records(path: Path) -> list[tuple]:
    return [(r.raw, r.ts, r.direction, r.session, r.stream, r.source, r.kind, r.reason,
             r.envelope, r.extra, r.settle is not None) for r in cd.read(path)]


def test_fast_entries_are_the_general_parsers_entries(tmp_path, monkeypatch):
    rng = random.Random(18)
    fast = 0
    for k in range(300):
        lines = [_line(rng) for _ in range(rng.randint(1, 12))]
        fast += sum(cd._FAST.match(ln) is not None for ln in lines)
        path = tmp_path / f"mcp-server-{k}.log"
        path.write_text("\n".join(lines) + rng.choice(["", "\n"]), encoding="utf-8",
                        newline="")
        got = _records(path)
        with monkeypatch.context() as m:
            m.setattr(cd, "_FAST", re.compile(r"(?!)"))  # matches nothing: the general path
            want = _records(path)
        assert got == want, lines
    assert fast > 100  # the regular expression did read many of them


def test_log_lines_are_the_line_by_line_reading(tmp_path, monkeypatch):
    rng = random.Random(7)
    for k in range(200):
        text = "".join(rng.choice(["a", "\n", "\r", "\r\n", "\x1b[1m", "\ufeff", "é", "> "])
                       for _ in range(rng.randint(0, 40)))
        path = tmp_path / f"{k}.log"
        path.write_bytes(text.encode("utf-8"))
        monkeypatch.setattr(base, "CHUNK", rng.choice([1, 3, 1 << 22]))
        got = list(base.iter_log_lines(path))
        want = [piece for n, line in base.iter_lines(path)
                for piece in base._log_pieces(n, line)]
        assert got == want, repr(text)
