"""Tap JSONL, fast: tap records decoded 128 lines at a time, their frames 128 at a time.

The rows are those of ``readers.tap`` + ``table.collect``. Records of the usual shape
(``ts``, ``dir``, ``raw``, ``session``; ``dir`` c2s, s2c, stderr or meta) take the fast
path; any other line (not a tap record, an unknown ``dir``, ``raw_b64``, ``truncated``,
the fields ``convert`` writes) is read by the reference reader, line by line.
"""

from __future__ import annotations

import codecs
import io
from typing import BinaryIO

import msgspec
import numpy as np

from ..engine import native as _native
from ..readers import tap as tap_reader
from ..readers.base import Record
from ..table import collect
from .lines import (
    MAX_LINE_BYTES,
    Bounds,
    bad_utf8,
    blocks,
    bounds,
    line_spans,
    lines_with,
    too_long,
)
from .message import decoder, scan
from .rows import LineContext, Rows

__all__ = ["read_part"]

SEGMENT = 128
_DecodeErrors = (msgspec.DecodeError, RecursionError)
_parse_ts = tap_reader.parse_ts
_DIRS: dict[str | None, int] = {"c2s": 0, "s2c": 1, None: -1}
_OTHER: dict[str | None, tuple[int, str]] = {"stderr": (5, "stderr"), "meta": (6, "log")}


class _Plain(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """A tap record with only the usual members; any other member (``kind``, ``raw_b64``,
    ``truncated``, a meta record's event fields...) fails to decode, and the line goes to
    the reference reader. The members decode as ``readers.tap._TapLine``'s, but ``raw`` is
    kept as its JSON string literal (:func:`_unescape` makes the frame's bytes of it)."""

    raw: msgspec.Raw
    dir: str | None
    ts: float | str | None = None
    session: str | None = None


_plain_decoder = msgspec.json.Decoder(_Plain)


# CPython's bytes-escape decoder (undocumented but long-standing); without it, msgspec
_escape_decode = getattr(codecs, "escape_decode", None)
_decode_str = msgspec.json.Decoder(str).decode


def _unescape(literal: msgspec.Raw | bytes, uncommon: bool) -> bytes | None:
    """The UTF-8 bytes of a JSON string literal (valid UTF-8 already), or None when the
    literal is not a string or names a lone surrogate (the reference reader decides).

    Python's ``escape_decode`` undoes the JSON escapes ``\\" \\\\ \\b \\f \\n \\r \\t``
    exactly as JSON does (other escapes are not JSON: msgspec refused the line already);
    ``\\/`` and ``\\uXXXX`` it does not know, so a literal that may hold one of those
    (``uncommon``: its line holds ``\\u`` or ``\\/``) is decoded by msgspec instead.
    """
    mv = memoryview(literal)
    if mv[:1] != b'"':
        return None
    if uncommon or _escape_decode is None:
        try:
            return _decode_str(mv).encode("utf-8")
        except UnicodeError:
            return None
    return _escape_decode(mv[1:-1])[0]


def read_part(f: BinaryIO, name: str, session: str, direction: str | None = None,
              start: int = 0, stop: int | None = None,
              keep_text: bool = False,
              max_line: int = MAX_LINE_BYTES) -> tuple[Rows, list[np.ndarray]]:
    """The rows of tap lines from byte ``start`` to ``stop`` (see ``ndjson.read_part``)."""
    rows = Rows(per_row_context=True)
    rows.raw = [] if keep_text else None
    spans: list[np.ndarray] = []
    label = f"{name}:?"
    stem = session
    decode_lines = _plain_decoder.decode_lines
    decode = _plain_decoder.decode
    fake = _FakePath(name)
    sess_code = rows.sessions.index
    streams = rows.streams
    native = _native.native
    # the file is the store of the text (a plain file read lazily): the call column reads
    # the arguments of a record's frame from there again when asked (fast.store.CallColumn)
    in_file = -1 if keep_text or not isinstance(f, io.BufferedReader) else 0

    def stdio_code() -> int:
        code = streams.index.get("stdio")
        return code if code is not None else int(streams.codes(["stdio"])[0])

    for blk in blocks(f, start, stop, first_line=rows.lines, max_line=max_line):
        buf, starts, ends = blk.buf, blk.starts, blk.ends
        line0 = blk.first_line
        nonblank = np.flatnonzero(ends > starts)
        spans.append(line_spans(blk, nonblank))
        mv = memoryview(buf)
        st, en = bounds(blk, listed=native is None or keep_text)
        rows.blank += len(starts) - len(nonblank) + blk.skipped
        ctx = LineContext(line0, len(starts))
        frames: dict[int, bytes] = {}  # line -> frame, for the escape check of scan
        c_ts, c_sess, c_dir, c_stream, c_size = (ctx.ts, ctx.session, ctx.direction,
                                                 ctx.stream, ctx.size)

        def line_bytes(j: int, mv: memoryview = mv, st: Bounds = st, en: Bounds = en,
                       line0: int = line0) -> bytes:
            return bytes(mv[st[j - line0]:en[j - line0]])

        def escaped(j: int, frames: dict[int, bytes] = frames) -> bool:
            return b"\\u" in frames[j]

        def slow(j: int, line_bytes=line_bytes) -> None:  # noqa: ANN001
            text = line_bytes(j).decode("utf-8", "surrogateescape")
            records = tap_reader.read_lines(fake, [("?", text)], stem)
            rows.add_columns(collect(records), j, label, raw_mode="auto", line_text=text)

        pend = _Pending(rows, escaped, slow, c_size)

        def take(i: int, rec: _Plain | None, uncommon: bool, line0: int = line0,
                 slow=slow, pend: _Pending = pend, frames: dict[int, bytes] = frames,
                 c_ts: np.ndarray = c_ts, c_sess: np.ndarray = c_sess,
                 c_dir: np.ndarray = c_dir, c_stream: np.ndarray = c_stream,
                 c_size: np.ndarray = c_size) -> None:  # noqa: ANN001
            """The row of line ``i`` from its decoded record (None: not a plain record)."""
            j = line0 + i
            if rec is None:
                pend.flush()
                slow(j)
                return
            d = rec.dir
            dc = _DIRS.get(d, -2)
            other = _OTHER.get(d) if dc == -2 else None
            if dc == -2 and other is None:
                pend.flush()
                slow(j)
                return
            ts = rec.ts
            if ts is not None and ts.__class__ is not float:
                ts = _parse_ts(ts)
                if ts is None:  # a time that cannot be read: the reference says why
                    pend.flush()
                    slow(j)
                    return
            sess = rec.session or stem
            sc = sess_code.get(sess)
            if sc is None:
                sc = int(rows.sessions.codes([sess])[0])
            frame = _unescape(rec.raw, uncommon)
            if frame is None:
                pend.flush()
                slow(j)
                return
            c_ts[i] = np.nan if ts is None else ts
            c_sess[i] = sc
            if other is None:
                c_dir[i] = dc
                c_stream[i] = stdio_code()
                pend.raws.append(frame)
                pend.lines.append(j)
                pend.idx.append(i)
                frames[j] = frame
                return
            pend.flush()
            c_stream[i] = int(streams.codes([other[1]])[0])
            c_size[i] = len(frame)
            rows.kind.append(other[0])
            rows.id.append(None)
            rows.id_key.append(None)
            rows.method.append(-1)
            rows.line.append(j)

        if blk.long >= 0:  # a line over the limit: an invalid row of its head
            head = line_bytes(line0).decode("utf-8", "surrogateescape")
            rows.add_columns(collect([Record(raw=head, session=stem, source=label,
                                             kind="invalid",
                                             reason=too_long(blk.long, max_line))]),
                             line0, label, raw_mode="keep")
        elif native is not None:  # the C scanner; the Python path for the lines it leaves
            n = len(starts)

            # the context, and the stderr stream's code once the Python path gave it one
            block_ctx = (c_ts, c_sess, c_dir, c_stream, c_size, sess_code, stem, stdio_code())
            i = native.scan(buf, starts, ends, 0, n, line0, _native.out_lists(rows),
                            (*block_ctx, streams.index.get("stderr", -1)), in_file)
            while i < n:
                data = bytes(mv[st[i]:en[i]])
                try:
                    data.decode("utf-8")  # the reference refuses invalid UTF-8
                    rec = decode(data)
                except (UnicodeDecodeError, *_DecodeErrors):
                    rec = None
                take(i, rec, b"\\u" in data or b"\\/" in data)
                pend.flush()
                frames.clear()
                i = native.scan(buf, starts, ends, i + 1, n, line0, _native.out_lists(rows),
                                (*block_ctx, streams.index.get("stderr", -1)), in_file)
        else:
            bad = set(bad_utf8(buf, starts, ends).tolist())  # the reference refuses them
            uncommon = lines_with(buf, starts, ends, (b"\\u", b"\\/")).tolist()
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
                for i, rec in zip(seg, recs, strict=True):
                    take(i, None if bad and i in bad else rec, uncommon[i])
                pend.flush()
                frames.clear()
        if keep_text and rows.raw is not None:
            add = rows.raw.append
            for k, j in enumerate(rows.line):
                r = rows.base + k
                text = rows.raw_over.pop(r, None)
                if text is None:
                    line = line_bytes(j)
                    over = rows.ctx_over.get(r)
                    text = _raw_of(line) if over is None or over[5] else \
                        line.decode("utf-8", "surrogateescape")
                add(text)
        rows.flush(ctx)
        rows.lines = line0 + len(starts)
    return rows, spans


class _Pending:
    """Frames of plain c2s/s2c records waiting to be classified together."""

    def __init__(self, rows: Rows, escaped, slow, sizes: np.ndarray) -> None:  # noqa: ANN001
        self.rows, self.escaped, self.slow = rows, escaped, slow
        self.sizes = sizes  # frame size of each line of the block, filled here
        self.raws: list[bytes] = []  # the frames' UTF-8 bytes
        self.lines: list[int] = []
        self.idx: list[int] = []  # index of the line in its block

    def flush(self) -> None:
        if self.raws:
            _frames(self, self.sizes)
            self.raws.clear()  # (cleared in place: the read loop holds these lists)
            self.lines.clear()
            self.idx.clear()


def _raw_of(line: bytes) -> str:
    """The ``raw`` member of a tap line, as the tap reader gives it."""
    rec = tap_reader._decode(line)
    return tap_reader._exact(rec.raw_b64, rec.raw) if rec.raw_b64 is not None else rec.raw


def _frames(p: _Pending, sizes: np.ndarray) -> None:
    """Classify the frames of plain c2s/s2c records (128 at a time when they allow it)."""
    raws, lines, rows = p.raws, p.lines, p.rows
    for i, raw in zip(p.idx, raws, strict=True):
        sizes[i] = len(raw)
    joined = b"\n".join(raws)
    msgs = None
    if joined.count(b"\n") == len(raws) - 1:
        try:
            msgs = decoder.decode_lines(joined)
        except _DecodeErrors:
            msgs = None
        if msgs is not None and len(msgs) != len(raws):
            msgs = None
    if msgs is not None:
        scan(msgs, lines, rows, p.escaped, p.slow)
        return
    for raw, j in zip(raws, lines, strict=True):
        try:
            m = decoder.decode(raw)
        except _DecodeErrors:
            p.slow(j)
            continue
        scan((m,), (j,), rows, p.escaped, p.slow)


class _FakePath:
    """What ``tap.read_lines`` needs of a path: its name."""

    def __init__(self, name: str) -> None:
        self.name = name
