"""``iter_lines`` decodes blocks of whole lines at once; the lines are those of reading
the file line by line (the list-based oracle here), whatever the chunk size."""

from __future__ import annotations

import random

import pytest

from mcp_notebook.readers import base

PIECES = [b"a", b"\n", b"\r", b"\r\n", b"\xef\xbb\xbf", b"\xc3", b"\xa9", b"\xff", b"{}", b"  "]


def _line_by_line(path):
    w = base.wrapping(path)
    with base.open_bytes(path) as f:
        for n, line in enumerate(f, 1):
            if n == 1:
                line = line.removeprefix(base.UTF8_BOM)
            line = line.removesuffix(b"\n").removesuffix(b"\r")
            text = line.decode("utf-8", "surrogateescape")
            yield n, base.unwrap(text, w) if w else text


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 22])
def test_lines_as_read_one_by_one(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(base, "CHUNK", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "f"
    for _ in range(300):
        path.write_bytes(b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 20))))
        assert list(base.iter_lines(path)) == list(_line_by_line(path)), path.read_bytes()
