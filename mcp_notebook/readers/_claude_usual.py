"""The usual message lines of a Claude Desktop per-server log, a block at a time.

Most lines of a per-server log are one whole message on one line of one server::

    2025-03-23T16:38:00.970Z [<server>] [info] Message from client: <json> { metadata: undefined }

Those are found for a whole block at once and given to the table as spans of the block
(:class:`~._spans.Spans`): in one C pass where the extension is built
(``_native.claude_lines``, ``csrc/claude.h``), with numpy otherwise (:func:`_usual`, the C
pass's reference in the tests). Every other line goes through the reader's own code."""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

import numpy as np

from ._claude_conn import Tracker
from ._claude_lines import _PER_SERVER_FIRST
from ._logtext import _day_epoch
from ._spans import Spans, gather, lines_of, matches, stamps
from .base import Record

__all__ = ["usual_block", "span_settle"]

#: the usual entry of a per-server file, a whole message on one line: what the general
#: path reads as a ``_SERVER_LEVEL`` line (the lookahead leaves to it a line that
#: ``_LEVEL_SERVER`` could take), an ``info`` entry that no later line continues, with
#: its JSON payload and util.inspect's ``{ metadata: undefined }`` after it
_FAST = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) "
                   r"\[(?!(?:info|error|warn|warning|debug|trace|verbose)\] \[)([^\]]+)\] "
                   r"\[info\] Message from (client|server): ([\[{].*) \{ metadata: undefined \}$")
#: the end of a usual line: util.inspect's metadata after the payload
_TAIL = b" { metadata: undefined }"
_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22)
_LEVELS = frozenset(("info", "error", "warn", "warning", "debug", "trace", "verbose"))


def _usual(block: bytes, a: np.ndarray, st: np.ndarray, en: np.ndarray, server: str
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which lines of a block are usual message lines of ``server`` (as ``_FAST`` reads
    them, with a real time and no cut by Claude's logger), each one's direction code and
    time: with numpy (the reference of ``_native.claude_lines``, and the path where the
    extension is not built). ``server`` holds no ``]`` and is not a level's name."""
    n = len(st)
    none = np.zeros(n, dtype=bool)
    name = server.encode("utf-8", "surrogateescape")
    usual = [(b"0000-00-00T00:00:00.000Z [" + name + b"] [info] Message from " + who + b": ",
              code) for who, code in ((b"client", 0), (b"server", 1))]
    head = len(usual[0][0])
    cand = np.flatnonzero(en - st > head + len(_TAIL))
    heads = gather(a, st[cand], head)
    which = np.full(len(cand), -1, dtype=np.int8)
    for template, code in usual:
        which[matches(heads, template, _DIGITS)] = code
    first = a[st[cand] + head]
    which[(first != 0x7B) & (first != 0x5B)] = -1  # the payload opens with "{" or "["
    tails = gather(a, en[cand] - len(_TAIL), len(_TAIL))
    which[~(tails == np.frombuffer(_TAIL, dtype=np.uint8)).all(axis=1)] = -1
    sel = np.flatnonzero(which >= 0)
    ts_sel, ok = stamps(heads[sel], 0, 11)
    fast = none
    fast[cand[sel[ok]]] = True
    if b"chars truncated]" in block:  # Claude's logger cut it: the line's own reading
        at, cuts = 0, []
        while (at := block.find(b"chars truncated]", at)) >= 0:
            cuts.append(at)
            at += 1
        fast[np.searchsorted(st, np.asarray(cuts, dtype=np.int64), side="right") - 1] = False
    direction = np.full(n, -1, dtype=np.int8)
    direction[cand] = which
    ts = np.full(n, np.nan)
    ts[cand[sel]] = ts_sel
    return fast, direction, ts


def _usual_native(lines: Any, block: bytes, server: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The line bounds of a block and what :func:`_usual` gives, from
    ``_native.claude_lines`` (one pass in C) and the days of its few distinct dates."""
    stb, enb, db, dtb, ckb = lines(block, server.encode("utf-8", "surrogateescape"))
    st, en = np.frombuffer(stb, dtype=np.int64), np.frombuffer(enb, dtype=np.int64)
    direction = np.frombuffer(db, dtype=np.int8)
    sel = np.flatnonzero(direction >= 0)
    uniq, inv = np.unique(np.frombuffer(dtb, dtype=np.int32)[sel], return_inverse=True)
    day = np.zeros(len(uniq), dtype=np.int64)
    good = np.ones(len(uniq), dtype=bool)
    for k, d in enumerate(uniq.tolist()):
        try:
            day[k] = _day_epoch(f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}")
        except ValueError:
            good[k] = False
    fast = np.zeros(len(st), dtype=bool)
    fast[sel[good[inv]]] = True
    ts = np.full(len(st), np.nan)
    ts[sel] = (day[inv] * 1000 + np.frombuffer(ckb, dtype=np.int64)[sel]) / 1000.0
    return st, en, fast, direction, ts


def _native_lines() -> Any:
    """``_native.claude_lines``, or None where the extension is not built (or is switched
    off: then :func:`_usual` reads the blocks)."""
    from ..engine.native import native

    return getattr(native, "claude_lines", None) if native is not None else None


def _head(server: str) -> int:
    """The length of a usual line's head (its payload starts after it)."""
    return 56 + len(server.encode("utf-8", "surrogateescape"))


def _usual_server(block: bytes) -> str | None:
    """The server of the block's usual message lines: that of its first such line (among
    its first 64)."""
    at, fast = 0, _FAST.match
    for _ in range(64):
        end = block.find(b"\n", at)
        m = fast(block[at:end if end >= 0 else len(block)].decode("utf-8", "surrogateescape"))
        if m is not None:
            return m.group(2)
        if end < 0:
            break
        at = end + 1
    return None


def usual_block(reader: Any, block: bytes, n: int, offset: int | None
                ) -> Generator[Record | Spans, None, int]:
    """The records of one block of whole lines of a Claude Desktop log (``n`` lines
    before it) for ``reader`` (its ``_Reader``): runs of usual lines as spans, every
    other line through the reader's ``step``; returns how many lines the block has."""
    server = _usual_server(block)
    if server is not None and (server in _LEVELS or "]" in server):
        server = None  # not a name the usual shape can hold
    fast: np.ndarray | None = None
    direction: np.ndarray | None = None
    ts: np.ndarray | None = None
    if server is not None and (lines := _native_lines()) is not None:
        st, en, fast, direction, ts = _usual_native(lines, block, server)
    else:
        a, st, en = lines_of(block)
        if server is not None:
            fast, direction, ts = _usual(block, a, st, en, server)
    idx = np.flatnonzero(fast) if fast is not None else np.zeros(0, dtype=np.int64)
    sl, el = st, en  # the bounds of the lines read one by one (few, mostly)
    at = 0  # the next line to read
    if len(idx):
        assert direction is not None and ts is not None and server is not None
        head = _head(server)
        cut = np.flatnonzero(np.diff(idx) > 1) + 1
        for lo, hi in zip(np.concatenate(([0], cut)).tolist(),
                          np.concatenate((cut, [len(idx)])).tolist(), strict=True):
            first, last = int(idx[lo]), int(idx[hi - 1]) + 1
            for k in range(at, first):
                yield from reader.step(n + 1 + k, block[sl[k]:el[k]].decode(
                    "utf-8", "surrogateescape"))
            yield from reader.finish()
            reader.order = _PER_SERVER_FIRST
            reader.server = server
            yield Spans(block, st[first:last] + head, en[first:last] - len(_TAIL),
                        np.arange(n + 1 + first, n + 1 + last, dtype=np.int64),
                        ts[first:last], direction[first:last], server, reader.name,
                        False, str(reader.path) if offset is not None else None, offset,
                        *span_settle(reader.tracker, server, ts[first:last],
                                           direction[first:last]),
                        reader._settle_message)
            at = last
    for k in range(at, len(st)):
        yield from reader.step(n + 1 + k, block[sl[k]:el[k]].decode("utf-8",
                                                                   "surrogateescape"))
    return len(st)


def span_settle(tracker: Tracker, server: str, ts: np.ndarray, direction: np.ndarray
                ) -> tuple[Any, Any]:
    """The ``settle`` and ``settle_block`` steps of a run of spans of ``server`` (as the
    reader's ``_settle_message`` for each)."""
    c2s = direction == 0
    ts_l, c2s_l = ts.tolist(), c2s.tolist()

    def settle(k: int, kind: str | None, id_key: str | None,
               method: str | None) -> tuple[str, dict[str, Any] | None]:
        if kind is not None and kind != "invalid":
            conn, why = tracker.for_message(server, ts_l[k], c2s_l[k], kind, id_key,
                                            method)
            return conn.session, {"ambiguous": why} if why else None
        return tracker.current(server, ts_l[k]).session, None

    def settle_block(kinds: list[str], keys: list[str | None], methods: list[str | None]
                     ) -> tuple[list[str], dict[int, dict[str, Any]]] | None:
        said = tracker.for_messages(server, ts_l, c2s, kinds, keys, methods)
        if said is None:
            return None
        conn, why = said
        return [conn.session] * len(kinds), {k: {"ambiguous": w} for k, w in why.items()}

    return settle, settle_block
