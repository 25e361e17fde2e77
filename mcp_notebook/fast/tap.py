"""Tap JSONL, fast: tap records decoded 128 lines at a time, their frames 128 at a time.

The rows are those of ``readers.tap`` + ``table.collect``. Records of the usual shape
(``ts``, ``dir``, ``raw``, ``session``; ``dir`` c2s, s2c, stderr or meta) take the fast
path; any other line (not a tap record, an unknown ``dir``, ``raw_b64``, ``truncated``,
the fields ``convert`` writes) is read by the reference reader, line by line.
"""

from __future__ import annotations

from typing import BinaryIO

import msgspec
import numpy as np

from ..readers import tap as tap_reader
from ..table import collect
from .lines import blocks
from .message import decoder, scan
from .rows import Rows

__all__ = ["read_part"]

SEGMENT = 128
_DecodeErrors = (msgspec.DecodeError, RecursionError)
_tap_decoder = msgspec.json.Decoder(tap_reader._TapLine)
_parse_ts = tap_reader.parse_ts
_DIRS = {"c2s": 0, "s2c": 1, None: -1}
_OTHER = {"stderr": (5, "stderr"), "meta": (6, "log")}


def _plain(rec: tap_reader._TapLine) -> bool:
    """A record with only the usual members (the fast path reads it as the reader does)."""
    return (rec.kind is None and rec.raw_b64 is None and rec.truncated is None
            and rec.reason is None and rec.stream is None and rec.source is None
            and not rec.local_time)


def _size(raw: str) -> int:
    return len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogateescape"))


def read_part(f: BinaryIO, name: str, session: str, direction: str | None = None,
              start: int = 0, stop: int | None = None,
              keep_text: bool = False) -> tuple[Rows, list[np.ndarray]]:
    """The rows of tap lines from byte ``start`` to ``stop`` (see ``ndjson.read_part``)."""
    rows = Rows(per_row_context=True)
    rows.raw = [] if keep_text else None
    spans: list[np.ndarray] = []
    label = f"{name}:?"
    stem = session
    decode_lines = _tap_decoder.decode_lines
    decode = _tap_decoder.decode
    msg_lines = decoder.decode_lines
    msg_decode = decoder.decode
    fake = _FakePath(name)
    for blk in blocks(f, start, stop, first_line=rows.lines):
        buf, starts, ends = blk.buf, blk.starts, blk.ends
        spans.append(np.stack([starts + blk.offset, ends + blk.offset], axis=1))
        mv = memoryview(buf)
        st, en = starts.tolist(), ends.tolist()
        line0 = blk.first_line
        nonblank = np.flatnonzero(ends > starts)
        rows.blank += len(starts) - len(nonblank)

        def line_bytes(j: int, mv: memoryview = mv, st: list[int] = st, en: list[int] = en,
                       line0: int = line0) -> bytes:
            return bytes(mv[st[j - line0]:en[j - line0]])

        def slow(j: int, line_bytes=line_bytes) -> None:  # noqa: ANN001
            text = line_bytes(j).decode("utf-8", "surrogateescape")
            records = tap_reader.read_lines(fake, [("?", text)], stem)
            rows.add_columns(collect(records), j, label, raw_mode="auto", line_text=text)

        nb = nonblank.tolist()
        for k0 in range(0, len(nb), SEGMENT):
            seg = nb[k0:k0 + SEGMENT]
            recs: list | None
            try:
                recs = decode_lines(mv[st[seg[0]]:en[seg[-1]]])
            except _DecodeErrors:
                recs = None
            if recs is None or len(recs) != len(seg):
                recs = []
                for i in seg:
                    try:
                        recs.append(decode(mv[st[i]:en[i]]))
                    except _DecodeErrors:
                        recs.append(None)
            # frames to classify, in line order; other lines are added where they fall
            pend = _Pending(rows, line_bytes, slow, msg_lines, msg_decode)
            for i, rec in zip(seg, recs, strict=True):
                j = line0 + i
                if rec is None or not _plain(rec):
                    pend.flush()
                    slow(j)
                    continue
                d = rec.dir
                ts = rec.ts
                if ts is not None and ts.__class__ is not float:
                    ts = _parse_ts(ts)
                sess = rec.session or stem
                if d in _DIRS:
                    pend.add(rec.raw, j, (ts, sess, _DIRS[d]))
                    continue
                other = _OTHER.get(d)
                pend.flush()
                if other is None:
                    slow(j)
                    continue
                rows.kind.append(other[0])
                rows.id.append(None)
                rows.id_key.append(None)
                rows.method.append(None)
                rows.line.append(j)
                rows.ts.append(ts)
                rows.session.append(sess)
                rows.direction.append(-1)
                rows.stream.append(other[1])
                rows.tap_raw.append(True)
                rows.size.append(_size(rec.raw))
            pend.flush()
        if keep_text and rows.raw is not None:
            add = rows.raw.append
            for k, j in enumerate(rows.line):
                text = rows.raw_over.pop(rows.base + k, None)
                if text is None:
                    line = line_bytes(j)
                    text = _raw_of(line) if rows.tap_raw[k] else \
                        line.decode("utf-8", "surrogateescape")
                add(text)
        rows.flush()
        rows.lines = line0 + len(starts)
    return rows, spans


class _Pending:
    """Frames of plain c2s/s2c records waiting to be classified together."""

    def __init__(self, rows: Rows, line_bytes, slow, msg_lines, msg_decode) -> None:  # noqa: ANN001
        self.rows, self.line_bytes, self.slow = rows, line_bytes, slow
        self.msg_lines, self.msg_decode = msg_lines, msg_decode
        self.raws: list[str] = []
        self.lines: list[int] = []
        self.ctx: list[tuple] = []

    def add(self, raw: str, line: int, ctx: tuple) -> None:
        self.raws.append(raw)
        self.lines.append(line)
        self.ctx.append(ctx)

    def flush(self) -> None:
        if self.raws:
            _frames(self.raws, self.lines, self.ctx, self.rows, self.line_bytes, self.slow,
                    self.msg_lines, self.msg_decode)
            self.raws, self.lines, self.ctx = [], [], []


def _raw_of(line: bytes) -> str:
    """The ``raw`` member of a tap line, as the tap reader gives it."""
    rec = tap_reader._decode(line)
    return tap_reader._exact(rec.raw_b64, rec.raw) if rec.raw_b64 is not None else rec.raw


def _frames(raws: list[str], lines: list[int], ctx: list[tuple], rows: Rows, line_bytes,  # noqa: ANN001
            slow, msg_lines, msg_decode) -> None:  # noqa: ANN001
    """Classify the frames of plain c2s/s2c records (128 at a time when they allow it)."""
    joined = "\n".join(raws)
    msgs = None
    if joined.count("\n") == len(raws) - 1:
        try:
            msgs = msg_lines(joined)
        except (*_DecodeErrors, UnicodeError):
            msgs = None
        if msgs is not None and len(msgs) != len(raws):
            msgs = None
    if msgs is not None:
        scan(msgs, lines, rows, line_bytes, slow,
             [(*c, _size(r)) for c, r in zip(ctx, raws, strict=True)])
        return
    for raw, j, c in zip(raws, lines, ctx, strict=True):
        try:
            m = msg_decode(raw)
        except (*_DecodeErrors, UnicodeError):
            slow(j)
            continue
        scan((m,), (j,), rows, line_bytes, slow, ((*c, _size(raw)),))


class _FakePath:
    """What ``tap.read_lines`` needs of a path: its name."""

    def __init__(self, name: str) -> None:
        self.name = name
