"""Where the text of a lazy text column comes from: memory, a file by offset, labels.

A :class:`TextSource` gives the text of row numbers, many at once (:meth:`texts`, read
in one pass over the file, sorted by offset) or one (:meth:`text`). Used by
:class:`mcp_notebook.lazytext.LazyTextArray`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np

__all__ = ["TextSource", "ListSource", "BufferSource", "FileSource", "LabelSource",
           "DocLabelSource", "MultiSource", "StaleCaptureError"]

_READ_GAP = 1 << 16  # rows closer than this in the file are read in one piece


class StaleCaptureError(RuntimeError):
    """The capture file changed on disk after it was loaded."""


class TextSource(ABC):
    """Text for row numbers: :meth:`texts` (many, in one pass) and :meth:`text` (one)."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def texts(self, rows: np.ndarray) -> list[str | None]: ...

    def text(self, row: int) -> str | None:
        return self.texts(np.array([row], dtype=np.int64))[0]


class ListSource(TextSource):
    """Text already in memory (a list or an object array)."""

    def __init__(self, values: Sequence[Any] | np.ndarray) -> None:
        self.values = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) \
            else values

    def __len__(self) -> int:
        return len(self.values)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        return self.values[rows].tolist()

    def text(self, row: int) -> str | None:
        return self.values[row]


class BufferSource(TextSource):
    """Texts kept as UTF-8 bytes in one buffer (by offset and length), decoded when asked;
    the rows of ``overrides`` keep their text as it is. For a document format's messages
    (a HAR's bodies, an export's compacted messages), which are not the file's bytes."""

    def __init__(self, buf: bytes, offsets: np.ndarray, lengths: np.ndarray,
                 overrides: dict[int, str] | None = None) -> None:
        self.buf = buf
        self.offsets = offsets
        self.lengths = lengths
        self.overrides = overrides or {}

    def __len__(self) -> int:
        return len(self.offsets)

    def text(self, row: int) -> str | None:
        if row in self.overrides:
            return self.overrides[row]
        a = int(self.offsets[row])
        return self.buf[a:a + int(self.lengths[row])].decode("utf-8", "surrogateescape")

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        buf, over = self.buf, self.overrides
        starts = self.offsets[rows].tolist()
        ends = (self.offsets[rows] + self.lengths[rows]).tolist()
        if not over:
            return [buf[a:b].decode("utf-8", "surrogateescape")
                    for a, b in zip(starts, ends, strict=True)]
        return [over[r] if r in over else buf[a:b].decode("utf-8", "surrogateescape")
                for r, a, b in zip(rows.tolist(), starts, ends, strict=True)]


_TAP_DECODE = None


def _tap_raw(line: bytes) -> str:
    """The ``raw`` member of a tap record, as the tap reader gives it."""
    global _TAP_DECODE
    if _TAP_DECODE is None:
        from .readers import tap

        _TAP_DECODE = tap
    rec = _TAP_DECODE._decode(line)
    if rec.raw_b64 is not None:
        return _TAP_DECODE._exact(rec.raw_b64, rec.raw)
    return rec.raw


class FileSource(TextSource):
    """Lines of a file, by byte offset and length; tap rows give their record's ``raw``.

    ``tap`` is None for a file whose lines are the text (bare NDJSON), or a boolean array:
    True where the row's text is the ``raw`` member of the tap record on that line.
    """

    def __init__(self, path: str | os.PathLike[str], offsets: np.ndarray, lengths: np.ndarray,
                 tap: np.ndarray | None = None, overrides: dict[int, str] | None = None) -> None:
        self.path = os.fspath(path)
        self.offsets = offsets
        self.lengths = lengths
        self.tap = tap
        self.overrides = overrides or {}  # rows whose text is kept in memory
        st = os.stat(self.path)
        self._stamp = (st.st_size, st.st_mtime_ns)

    def __len__(self) -> int:
        return len(self.offsets)

    def _check(self, fd: int) -> None:
        st = os.fstat(fd)
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            raise StaleCaptureError(
                f"{os.path.basename(self.path)} changed on disk after it was loaded; "
                "load it again (the frame text is read from the file on demand)")

    def _plain(self) -> FileSource:
        """This source without its overrides (same file, offsets and stamp)."""
        plain = object.__new__(FileSource)
        plain.__dict__.update(self.__dict__)
        plain.overrides = {}
        return plain

    def _decode(self, row: int, data: bytes) -> str:
        if self.tap is not None and self.tap[row]:
            try:
                return _tap_raw(data)
            except (msgspec.DecodeError, RecursionError):
                pass
        return data.decode("utf-8", "surrogateescape")

    def text(self, row: int) -> str | None:
        if row in self.overrides:
            return self.overrides[row]
        fd = os.open(self.path, os.O_RDONLY)
        try:
            self._check(fd)
            data = os.pread(fd, int(self.lengths[row]), int(self.offsets[row]))
        finally:
            os.close(fd)
        return self._decode(row, data)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        out: list[str | None] = [None] * len(rows)
        if self.overrides:
            over = self.overrides
            keep = []
            for k, r in enumerate(rows.tolist()):
                if r in over:
                    out[k] = over[r]
                else:
                    keep.append(k)
            if len(keep) < len(rows):
                sel = np.asarray(keep, dtype=np.int64)
                for k, v in zip(keep, FileSource.texts(self._plain(), rows[sel]), strict=True):
                    out[k] = v
                return out
        if not len(rows):
            return out
        order = np.argsort(self.offsets[rows], kind="stable")
        srt = rows[order]
        starts = self.offsets[srt]
        ends = starts + self.lengths[srt]
        # pieces: runs of rows whose gaps are small, read with one pread each
        gap = starts[1:] - np.maximum.accumulate(ends)[:-1]
        cut = np.flatnonzero(gap > _READ_GAP) + 1
        bounds = np.concatenate(([0], cut, [len(srt)]))
        his = np.maximum.reduceat(ends, bounds[:-1]).tolist() if len(srt) else []
        st, ln = starts.tolist(), self.lengths[srt].tolist()
        where, row_of = order.tolist(), srt.tolist()
        fd = os.open(self.path, os.O_RDONLY)
        try:
            self._check(fd)
            for a, b, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), his, strict=True):
                lo = st[a]
                mv = memoryview(os.pread(fd, hi - lo, lo))
                for k in range(a, b):
                    s = st[k] - lo
                    out[where[k]] = self._decode(row_of[k], bytes(mv[s:s + ln[k]]))
        finally:
            os.close(fd)
        return out


class LabelSource(TextSource):
    """``"<name>:<line>"`` labels made on demand, with explicit labels for some rows."""

    def __init__(self, name: str, lines: np.ndarray, overrides: dict[int, str] | None = None):
        self.name = name
        self.lines = lines
        self.overrides = overrides or {}

    def __len__(self) -> int:
        return len(self.lines)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        name, over = self.name, self.overrides
        rows_l = np.asarray(rows).tolist()
        lines = self.lines[rows].tolist()
        if not over:
            return [f"{name}:{n}" for n in lines]
        return [over.get(r, f"{name}:{n}") for r, n in zip(rows_l, lines, strict=True)]

    def text(self, row: int) -> str | None:
        got = self.overrides.get(row)
        return got if got is not None else f"{self.name}:{int(self.lines[row])}"


class DocLabelSource(TextSource):
    """A document's record labels made on demand from ``labels`` (the reader's
    ``readers._docspans.DocLabels``: ``<file>#entry<i>``, ``<file>#interaction<i>/response``;
    indexed by a row or an index array, as labels again, with ``tolist``), with explicit
    labels for some rows (``overrides``)."""

    def __init__(self, labels: Any, overrides: dict[int, str] | None = None) -> None:
        self.labels = labels
        self.overrides = overrides or {}

    def __len__(self) -> int:
        return len(self.labels)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        got: list[str | None] = self.labels[rows].tolist()
        over = self.overrides
        if over:
            mine = np.fromiter(over, dtype=np.int64, count=len(over))
            for k in np.flatnonzero(np.isin(rows, mine)).tolist():
                got[k] = over[int(rows[k])]
        return got

    def text(self, row: int) -> str | None:
        if row in self.overrides:
            return self.overrides[row]
        return self.labels[row]  # type: ignore[no-any-return]


class MultiSource(TextSource):
    """Several sources end to end: global row ``r`` is row ``r - base`` of its part."""

    def __init__(self, parts: Sequence[TextSource]) -> None:
        flat: list[TextSource] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, MultiSource) else [p])
        self.parts: list[TextSource] = flat
        self.bases = np.cumsum([0] + [len(p) for p in flat], dtype=np.int64)

    def __len__(self) -> int:
        return int(self.bases[-1])

    def texts(self, rows: np.ndarray) -> list[str | None]:
        rows = np.asarray(rows, dtype=np.int64)
        part = np.searchsorted(self.bases, rows, side="right") - 1
        out: list[str | None] = [None] * len(rows)
        for p in np.unique(part).tolist():
            sel = np.flatnonzero(part == p)
            got = self.parts[p].texts(rows[sel] - self.bases[p])
            for k, v in zip(sel.tolist(), got, strict=True):
                out[k] = v
        return out

    def text(self, row: int) -> str | None:
        p = int(np.searchsorted(self.bases, row, side="right")) - 1
        return self.parts[p].text(row - int(self.bases[p]))
