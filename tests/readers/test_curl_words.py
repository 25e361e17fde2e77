"""The curl reader splits commands into words as ``shlex.split`` (POSIX) does, without
shlex's character-by-character loop (which cost most of the reader's time)."""

from __future__ import annotations

import random
import shlex
import time

from mcp_notebook.readers.curl import _shell_words

ALPHABET = ["a", "b", " ", "\t", "\n", "\r", "\\", '"', "'", "$", "#", "é", "-d", "{}"]
#: no double quote, no backslash: the texts the split at quotes and blanks reads
SINGLE = ["a", "b", " ", "  ", "\t", "\n", "\r", "'", "''", "\x0b", "\xa0", "é", "-d", "{}"]


def _shlex(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


def test_words_are_shlex_words():
    rng = random.Random(16)
    for _ in range(20000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))
        assert _shell_words(text) == _shlex(text), repr(text)


def test_single_quoted_words_are_shlex_words():
    rng = random.Random(26)
    for _ in range(20000):
        text = "".join(rng.choice(SINGLE) for _ in range(rng.randint(0, 16)))
        assert _shell_words(text) == _shlex(text), repr(text)


def test_a_real_command():
    cmd = ("curl -sN http://127.0.0.1:3001/mcp -H 'content-type: application/json' "
           "-H \"mcp-session-id: 5f13\" -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
           "\"params\":{\"q\":\"it'\\''s\"}}'")
    assert _shell_words(cmd) == shlex.split(cmd)


def test_an_unclosed_quote_takes_no_long_time():
    text = "a" * 5000 + " '" + "b" * 3000
    t0 = time.perf_counter()
    assert _shell_words(text) is None
    assert time.perf_counter() - t0 < 0.5
