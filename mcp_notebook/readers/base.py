"""What every reader gives back: records, one per captured frame or line.

Readers find frames and their context (time, direction, session, where in the file);
they never interpret JSON-RPC. The table layer (:func:`mcp_notebook.table.settled`)
classifies each record's ``raw`` text, once, and stores the envelopes in ``frames``.
What a reader decides from a frame's meaning (Claude Desktop: which connection an entry
belongs to; HAR: where an untimed SSE event goes) it decides after that, in the
record's ``settle`` step or the file's ``arrange`` step, which the table runs.
"""

from __future__ import annotations

import gzip
import io
import re
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..protocol.envelope import Envelope
from ._markdown import Wrapping, detect, unwrap

__all__ = ["BLANK", "Record", "Reader", "open_text", "read_head", "CaptureError",
           "in_time_order", "iter_log_lines", "strip_ansi", "wrapping"]


class CaptureError(ValueError):
    """A capture cannot be read at all (missing, unknown format, not text)."""


@dataclass(slots=True)
class Record:
    """One captured frame or line.

    ``raw`` is the exact text of the frame (for log formats: the JSON text after the
    log prefix, or the whole line for a log or stderr line).
    """

    raw: str
    ts: float | None = None  # unix seconds, UTC
    direction: str | None = None  # "c2s" | "s2c" | None (unknown, or not a message)
    session: str | None = None
    stream: str = "stdio"  # stdio | stderr | log | http | sse
    source: str = ""  # "file:line", "file#entry3/event2", ...
    kind: str | None = None  # force a non-message row: "stderr" | "log" | "invalid"
    reason: str | None = None  # why a forced invalid row is invalid
    envelope: Envelope | None = None  # pre-classified (e.g. redacted log lines)
    local_time: bool = False  # ts read from a local clock of unknown zone, taken as UTC
    extra: dict[str, Any] = field(default_factory=dict)  # http status, sse event id, ...
    size: int | None = None  # bytes of the frame on the wire, where raw is not that frame
    #: the envelopes of ``raw``, decided by the table (``table.settled``); None until then
    frames: tuple[Envelope, ...] | None = None
    #: a reader's step that needs the frames' meaning, run by the table once ``frames`` is
    #: set, in record order (it may set ``session`` and ``extra``)
    settle: Callable[[Record], None] | None = None
    #: a reader's step over consecutive records carrying the same function (the records
    #: of one file): it gives them back in the order the table keeps. Its second argument
    #: (``meaning(records)``) has the table decide the ``frames`` of the records it names,
    #: for the records whose place depends on what they are (the step reads only each
    #: frame's ``kind`` and ``id_key``: the fast table gives those alone)
    arrange: Callable[[list[Record], Callable[[list[Record]], None]], list[Record]] | None \
        = None


#: Yielded for an empty line: the table counts it (``blank_lines``) and makes no row.
BLANK = Record(raw="", kind="blank")


class Reader(Protocol):
    """A capture format: a name, a sniffer and a reader."""

    name: str
    description: str

    def sniff(self, head: str, filename: str) -> int:
        """How sure (0-100) this reader is that ``head`` (the file's start) is its format."""

    def read(self, path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
        """Yield every record of the file, in capture order."""


def in_time_order(records: list[Record]) -> list[Record]:
    """The records sorted by ``ts``, stably: ties keep their order in the file.

    A record with no time keeps its place after the record before it (a response whose
    time the format does not give stays right after its request); untimed records at the
    start stay first.

    >>> rs = [Record("a", ts=2.0), Record("b"), Record("c", ts=1.0), Record("d", ts=2.0)]
    >>> [r.raw for r in in_time_order(rs)]
    ['c', 'a', 'b', 'd']
    """
    keys: list[float] = []
    last = float("-inf")
    for r in records:
        if r.ts is not None and r.ts == r.ts:  # not NaN
            last = r.ts
        keys.append(last)
    order = sorted(range(len(records)), key=keys.__getitem__)
    return [records[i] for i in order]


def refused(status: int | None, challenge: bool) -> str | None:
    """Why the server did not read a message it answered with an authorization challenge
    (401: the MCP authorization spec's "authorization required"; 403 with a
    ``WWW-Authenticate`` header, ``challenge``: "insufficient_scope", RFC 6750), or None
    for any other answer (a 403 without one, such as a refused ``Origin``, is a transport
    error as any other)."""
    if status == 401:
        why = "authorization required"
    elif status == 403 and challenge:
        why = "a scope or permission is missing"
    else:
        return None
    return f"HTTP {status}: {why}; the message was not processed"


GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def open_bytes(path: Path) -> io.BufferedIOBase:
    """Open a capture for reading bytes, decompressing ``.gz`` transparently (within
    :func:`reading_cut_gzip`, a compressed stream cut short ends where it is cut)."""
    f = open(path, "rb")
    if f.read(2) == GZIP_MAGIC:
        f.close()
        if getattr(_cut_gzip, "on", False):
            return _CutGzipFile(path)
        return gzip.open(path, "rb")  # type: ignore[return-value]
    f.seek(0)
    return f


_cut_gzip = threading.local()


@contextmanager
def reading_cut_gzip() -> Iterator[None]:
    """Within it, :func:`open_bytes` reads a ``.gz`` file whose compressed stream is cut
    short (a log still being written, a copy stopped) up to where it ends, instead of
    failing at its end (``EOFError``); a corrupt stream still fails."""
    was = getattr(_cut_gzip, "on", False)
    _cut_gzip.on = True
    try:
        yield
    finally:
        _cut_gzip.on = was


class _ToCut(io.RawIOBase):
    """A gzip stream's decompressed bytes, ending where the compressed file ends."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.cut = False  # the end was reached where the file is cut

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.cut:
            return 0
        try:
            return self.raw.readinto(b)  # type: ignore[no-any-return]
        except EOFError:  # the compressed file ends inside the stream: here it ends
            self.cut = True
            return 0

    def seekable(self) -> bool:
        return bool(self.raw.seekable())

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.raw.seek(offset, whence)  # type: ignore[no-any-return]

    def tell(self) -> int:
        return self.raw.tell()  # type: ignore[no-any-return]


class _CutGzipFile(gzip.GzipFile):
    """A GzipFile that ends where a cut compressed file ends (its reader wrapped in
    :class:`_ToCut`; the GzipFile itself, so ``fileobj`` still says how far it read)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        buffer = getattr(self, "_buffer", None)
        if isinstance(buffer, io.BufferedReader):  # (detached: its end would close the raw)
            self._buffer = io.BufferedReader(_ToCut(buffer.detach()))


def open_text(path: Path) -> io.TextIOWrapper:
    """Open a capture as text: UTF-8, undecodable bytes kept (surrogateescape), newlines as-is."""
    return io.TextIOWrapper(open_bytes(path), encoding="utf-8",  # type: ignore[arg-type]
                            errors="surrogateescape",
                            newline="")


def read_head(path: Path, size: int = 65536) -> str:
    """The first ``size`` bytes of a capture as text (for sniffing)."""
    with open_bytes(path) as f:
        data = f.read(size)
    return data.removeprefix(UTF8_BOM).decode("utf-8", "replace")


def head_lines(path: Path, size: int = 65536) -> list[str]:
    """The lines of the head of a capture (the last one may be cut)."""
    return [ln.removesuffix("\r") for ln in read_head(path, size).split("\n")]


def wrapping(path: Path) -> Wrapping:
    """The Markdown wrapping of a pasted capture (see :mod:`._markdown`); falsy if none
    (or when the file cannot be read: reading it says why)."""
    try:
        return detect(head_lines(path))
    except (OSError, EOFError, zlib.error):
        return Wrapping()


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line, split on ``\\n`` only.

    One trailing ``\\r`` is removed (as the reference SDKs' stdio readers do); bytes that
    are not UTF-8 are kept as surrogate escapes, so ``text.encode("utf-8",
    "surrogateescape")`` gives the exact bytes back. A UTF-8 byte order mark opening the
    file (an editor's, not the peer's) is not part of the first line. A capture pasted
    into Markdown (quoted, fenced, indented, in backticks) comes without that wrapping.
    """
    w = wrapping(path)
    n = 0
    for block in _line_blocks(path):
        for text in block.decode("utf-8", "surrogateescape").split("\n"):
            n += 1
            if text.endswith("\r"):
                text = text[:-1]
            yield n, unwrap(text, w) if w else text


#: bytes read at a time by :func:`iter_lines` (decoded a block of whole lines at once: a
#: ``\n`` byte is never inside a UTF-8 sequence, so this gives each line's own decoding)
CHUNK = 1 << 22


def _line_blocks(path: Path) -> Iterator[bytes]:
    """The file as blocks of whole lines, without the ``\n`` ending each block (a last
    line with no ``\n`` is a block of its own); the byte order mark opening it dropped."""
    for _, block in line_blocks_at(path):
        yield block


def line_blocks_at(path: Path) -> Iterator[tuple[int, bytes]]:
    """The blocks of :func:`_line_blocks`, each with its offset in the (decompressed)
    file: the next block starts one byte (its ``\n``) after the end of the one before."""
    pending: list[bytes] = []
    first = True
    at = 0
    with open_bytes(path) as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                pending.append(chunk)  # a line longer than a chunk
                continue
            # one copy of the chunk's whole lines (a slice then a join copied them twice)
            block = b"".join([*pending, memoryview(chunk)[:cut]]) if pending else chunk[:cut]
            pending = [chunk[cut + 1:]] if cut + 1 < len(chunk) else []
            if first:
                first = False
                if block.startswith(UTF8_BOM):
                    block, at = block[len(UTF8_BOM):], len(UTF8_BOM)
            yield at, block
            at += len(block) + 1
    if pending:
        tail = b"".join(pending)
        if first and tail.startswith(UTF8_BOM):
            tail, at = tail[len(UTF8_BOM):], len(UTF8_BOM)
        yield at, tail


#: terminal escapes a log copied from a terminal may hold: CSI (colours, ``ESC[32m``),
#: OSC (titles, links) and two-character escapes
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour and control escapes.

    >>> strip_ansi("\x1b[2m2025-01-01\x1b[0m \x1b[32m[info]\x1b[39m hi")
    '2025-01-01 [info] hi'
    """
    return _ANSI.sub("", text) if "\x1b" in text else text


def iter_log_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a text log, as :func:`iter_lines` gives them, but also split at a
    lone ``\\r`` (an old Mac line end, or a terminal's), without terminal colour
    escapes and without a byte order mark opening a line (files joined with ``cat``):
    a log's text, not its exact bytes. Line numbers stay those of :func:`iter_lines`
    (counted at ``\\n``): the pieces of a line split at a lone ``\\r`` share its number,
    and empty pieces make no line (a line of ``\\r`` alone is one blank line)."""
    if wrapping(path):
        for n, line in iter_lines(path):
            yield from _log_pieces(n, line)
        return
    n = 0
    for block in _line_blocks(path):
        text = block.decode("utf-8", "surrogateescape")
        lines = text.split("\n")
        if "\r" in text or "\x1b" in text or "\ufeff" in text:
            for k, line in enumerate(lines, n + 1):
                yield from _log_pieces(k, line.removesuffix("\r"))
        else:  # nothing to take off any line of the block: its lines as they are
            yield from zip(range(n + 1, n + 1 + len(lines)), lines, strict=True)
        n += len(lines)


def _log_pieces(n: int, line: str) -> Iterator[tuple[int, str]]:
    """The pieces of one line of :func:`iter_lines` (numbered ``n``) as a log's text."""
    pieces = [p for p in line.split("\r") if p] or [""] if "\r" in line else (line,)
    for piece in pieces:
        yield n, strip_ansi(piece.removeprefix("\ufeff"))


log_pieces = _log_pieces
