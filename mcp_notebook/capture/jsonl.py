"""Tap JSONL writing: split a byte stream into frames and append records.

The tap writes one JSON object per line (the project's own capture format, read back by
``mcp_notebook.readers.tap``)::

    {"ts": 1735689600.123456, "dir": "c2s", "session": "everything", "raw": "{...}"}

``dir`` is ``c2s``, ``s2c``, ``stderr`` or ``meta`` (the tap's own events: start, end of
input, exit code, with extra fields). ``raw`` is the exact line without its ``\\n``
(a trailing ``\\r`` is kept). Optional fields on frame records:

``raw_b64``
    the exact bytes, base64, when the line is not valid UTF-8 (``raw`` then holds the
    text decoded with U+FFFD replacements);
``partial``
    ``true`` for bytes the stream ended on without a newline (an incomplete frame);
``truncated``
    the frame's full length in bytes when it was longer than the tap's cap and only the
    first bytes were kept in ``raw`` (the relay itself still passed every byte).

This module uses the standard library only: the tap must start fast and run where
nothing but Python is installed.
"""

from __future__ import annotations

import _thread
import codecs
import errno
import os
import time

# Nothing here imports re, enum or collections before the tap has started its server:
# json (which imports re) is loaded by the first record, typing not at all, base64 is
# binascii's own function (loaded for the first frame that is not UTF-8) and the lock is
# threading's own type.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

__all__ = ["FrameSplitter", "TapWriter", "frame_fields"]

#: Default cap on the bytes of one frame kept in memory for its record (256 MiB).
DEFAULT_MAX_FRAME = 256 * 1024 * 1024
PIECE = 1024 * 1024  # the most bytes of a record handed to one write()


def _b64(data: bytes | memoryview) -> bytes:
    """``base64.b64encode`` (which is this call) without importing base64, which imports re."""
    import binascii

    return binascii.b2a_base64(data, newline=False)


_encode: list[Callable[[Any], str]] = []


def _dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, json imported on
    the first call."""
    if not _encode:
        import json

        _encode.append(json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode)
    return _encode[0](value)


def frame_fields(data: bytes) -> dict[str, Any]:
    """The ``raw`` (and, for bytes that are not UTF-8, ``raw_b64``) fields of one line."""
    try:
        return {"raw": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"raw": data.decode("utf-8", "replace"), "raw_b64": _b64(data).decode("ascii")}


def _decoded(view: memoryview, errors: str) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    for i in range(0, len(view), PIECE):
        yield decoder.decode(view[i:i + PIECE])
    yield decoder.decode(b"", final=True)


def _is_utf8(view: memoryview) -> bool:
    try:
        for _ in _decoded(view, "strict"):
            pass
    except UnicodeDecodeError:
        return False
    return True


class FrameSplitter:
    """Cut a byte stream into newline-delimited frames, keeping at most ``cap`` bytes of one.

    Parameters
    ----------
    cap
        The most bytes of a single frame held in memory. Longer frames are reported with
        their first ``cap`` bytes and their full length, so memory stays bounded even on an
        endless line.

    Examples
    --------
    >>> s = FrameSplitter(cap=4)
    >>> s.feed(b'{"a"'), s.feed(b':1}\\n[]\\n{'), s.flush()
    ([], [(b'{"a"', 7), (b'[]', 2)], (b'{', 1))
    """

    def __init__(self, cap: int = DEFAULT_MAX_FRAME) -> None:
        self.cap = cap
        self._buf = bytearray()
        self._total = 0

    def _append(self, piece: memoryview) -> None:
        room = self.cap - len(self._buf)
        if room > 0:
            self._buf += piece[:room]
        self._total += len(piece)

    def _take(self) -> tuple[bytes | bytearray, int]:
        # a large frame's buffer is handed over, not copied (memory: one frame, not two)
        buf, total = self._buf, self._total
        self._total = 0
        if len(buf) > PIECE:
            self._buf = bytearray()
            return buf, total
        out = bytes(buf)
        buf.clear()
        return out, total

    def feed(self, chunk: bytes) -> list[tuple[bytes | bytearray, int]]:
        """Add bytes; return the frames completed by them as ``(kept bytes, full length)``."""
        frames: list[tuple[bytes | bytearray, int]] = []
        view = memoryview(chunk)
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if start < len(chunk):
                    self._append(view[start:])
                return frames
            self._append(view[start:nl])
            frames.append(self._take())
            start = nl + 1

    def flush(self) -> tuple[bytes | bytearray, int] | None:
        """The bytes after the last newline, if any (an incomplete frame at end of stream)."""
        if self._total == 0:
            return None
        return self._take()


class TapWriter:
    """Append tap records to a JSONL file, one whole line per record, thread-safe.

    Every record reaches the operating system before :meth:`write` returns (no user-space
    buffering), so a crash of the tap loses nothing already recorded. The file is opened
    for appending: several sessions can share one file, told apart by ``session``.

    A write that fails (a full disk, an I/O error, a file-size limit) stops the record,
    never the caller: the half-written line is cut off again where the file allows it, so
    every line left is a whole record, ``on_stop`` is called once with the reason, and
    later records are dropped.
    """

    def __init__(self, path: str | os.PathLike[str], session: str,
                 on_stop: Callable[[str], None] | None = None) -> None:
        self.path = os.fspath(path)
        self.session = session
        self.on_stop = on_stop
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._lock = _thread.allocate_lock()
        #: monotonic time of the last bytes written (a slow disk is still progress)
        self.moved = 0.0
        #: why recording stopped, once it has
        self.stopped: str | None = None

    def write(self, direction: str, fields: dict[str, Any], ts: float | None = None) -> None:
        """Append one record: ``ts``, ``dir``, ``session``, then ``fields``."""
        rec: dict[str, Any] = {"ts": round(time.time() if ts is None else ts, 6),
                               "dir": direction, "session": self.session}
        rec.update(fields)
        line = (_dumps(rec) + "\n").encode("utf-8")
        self._emit((line,))

    def _emit(self, pieces: Iterable[bytes]) -> None:
        """Write one record from its pieces, under the lock; stop recording if that fails."""
        with self._lock:
            if self._fd < 0:
                return
            try:
                start = os.lseek(self._fd, 0, os.SEEK_END)  # where O_APPEND will put it
            except OSError:  # a pipe or a terminal: nothing to cut back
                start = -1
            written = 0
            try:
                for piece in pieces:
                    view = memoryview(piece)
                    while view:
                        n = os.write(self._fd, view[:PIECE])
                        view = view[n:]
                        written += n
                        self.moved = time.monotonic()
            except OSError as exc:
                self._stop(exc, start, written)

    def _stop(self, exc: OSError, start: int, written: int) -> None:
        """Recording failed: cut the half line off (if nobody appended since), stop, say why."""
        if written > 0 and start >= 0:
            try:
                if os.fstat(self._fd).st_size == start + written:
                    os.ftruncate(self._fd, start)
            except OSError:
                pass
        try:
            os.close(self._fd)
        except OSError:
            pass
        self._fd = -1
        name = errno.errorcode.get(exc.errno or 0, "")
        self.stopped = f"cannot write {self.path}: {exc.strerror or exc}" + (
            f" ({name})" if name else "")
        if self.on_stop is not None:
            self.on_stop(self.stopped)

    def frame(self, direction: str, data: bytes | bytearray, total: int,
              partial: bool = False) -> None:
        """Record one frame (or stderr line) of ``total`` bytes whose kept bytes are ``data``.

        A frame over 1 MiB is encoded and written piece by piece, so recording it takes
        about 1 MiB beside the frame's own bytes, not copies of it.
        """
        if len(data) > PIECE:
            self._emit(self._frame_pieces(direction, data, total, partial))
            return
        fields = frame_fields(bytes(data))
        if total > len(data):
            fields["truncated"] = total
        if partial:
            fields["partial"] = True
        self.write(direction, fields)

    def _frame_pieces(self, direction: str, data: bytes | bytearray, total: int,
                      partial: bool) -> Iterator[bytes]:
        """The record of :meth:`frame`, the same bytes as one ``json.dumps``, in pieces."""
        head = {"ts": round(time.time(), 6), "dir": direction, "session": self.session}
        yield _dumps(head)[:-1].encode() + b',"raw":"'
        view = memoryview(data)
        utf8 = _is_utf8(view)
        for text in _decoded(view, "strict" if utf8 else "replace"):
            yield _dumps(text)[1:-1].encode("utf-8")
        tail = '"'
        if not utf8:
            yield b'","raw_b64":"'
            step = PIECE // 3 * 3  # whole groups of three bytes: the pieces join exactly
            for i in range(0, len(view), step):
                yield _b64(view[i:i + step])
        if total > len(data):
            tail += f',"truncated":{total}'
        if partial:
            tail += ',"partial":true'
        yield (tail + "}\n").encode()

    def meta(self, event: str, text: str, ts: float | None = None, **extra: Any) -> None:
        """Record one of the tap's own events (``dir: meta``), at ``ts`` (default: now)."""
        self.write("meta", {"event": event, **extra, "raw": text}, ts)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
