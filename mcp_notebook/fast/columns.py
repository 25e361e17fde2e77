"""The store's sparse columns: the values of a few rows (:class:`Sparse`: cancelled ids and
progress tokens, progress values, versions, listed items) and what the conversation rules
read of requests, packed without a Python object per request (:class:`CallColumn`, its
arguments texts as :class:`ArgTexts`)."""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np

from .rows import CALL_REC

__all__ = ["Sparse", "CallColumn", "ArgTexts", "Call", "call_column", "list_column"]


class Sparse:
    """The values of a few rows: ascending row numbers and their values (object or float)."""

    def __init__(self, rows: Any = None, values: Any = None, dtype: Any = object) -> None:
        self.rows = np.asarray([] if rows is None else rows, dtype=np.int64)
        if values is None:
            values = []
        self.values = (np.fromiter(values, dtype=object, count=len(self.rows))
                       if dtype is object and not isinstance(values, np.ndarray)
                       else np.asarray(values, dtype=dtype))
        if len(self.rows) > 1 and (np.diff(self.rows) < 0).any():
            order = np.argsort(self.rows, kind="stable")
            self.rows, self.values = self.rows[order], self.values[order]

    @classmethod
    def from_dict(cls, d: dict[int, Any], dtype: Any = object) -> Sparse:
        """The rows of ``d`` in ascending order and their values (the loaders add rows in
        order, so the keys come sorted and are read as they are; ``__init__`` sorts
        them otherwise)."""
        n = len(d)
        return cls(np.fromiter(d, dtype=np.int64, count=n),
                   np.fromiter(d.values(), dtype=dtype, count=n), dtype)

    def __len__(self) -> int:
        return len(self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sparse) and self.as_dict() == other.as_dict()

    def get(self, row: int, default: Any = None) -> Any:
        i = int(np.searchsorted(self.rows, row))
        if i < len(self.rows) and self.rows[i] == row:
            v = self.values[i]
            return v.item() if isinstance(v, np.generic) else v
        return default

    def where(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``rows`` have a value, and where it is in :attr:`values`: ``(hit,
        position)``, both as long as ``rows`` (a position counts where ``hit`` is True)."""
        if not len(self.rows):
            return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        return self.rows[pos] == rows, pos

    def at(self, rows: np.ndarray, default: Any) -> np.ndarray:
        """The values of ``rows`` (``default`` where a row has none)."""
        out = np.full(len(rows), default, dtype=self.values.dtype)
        if len(rows):
            hit, pos = self.where(rows)
            out[hit] = self.values[pos[hit]]
        return out

    def as_dict(self) -> dict[int, Any]:
        return dict(zip(self.rows.tolist(), self.values.tolist(), strict=True))

    @classmethod
    def concat(cls, pieces: Sequence[tuple[Sparse, int]]) -> Sparse:
        """Pieces ``(sparse, row base)`` end to end."""
        pieces = [(p, b) for p, b in pieces if len(p)]
        if not pieces:
            return cls()
        if len(pieces) == 1 and pieces[0][1] == 0:
            return pieces[0][0]
        vals = np.concatenate([p.values for p, _ in pieces])
        return cls(np.concatenate([p.rows + b for p, b in pieces]), vals, vals.dtype)


#: what :meth:`CallColumn.entries` gives of a request: (name, uri, arguments JSON text or
#: b"", task given, cursor given)
Call = tuple[Any, Any, bytes, bool, bool]


class CallColumn:
    """What the conversation rules read of requests of ``rows.CALL_METHODS``, packed: the
    rows (ascending), the codes of each one's ``name`` and ``uri`` in ``strs`` (-1:
    absent), its flags (1: a ``task`` member, 2: a ``cursor`` member, the first byte of the
    ``arguments`` text << 8, 0 when absent) and where that text is: ``[starts, ends)`` of
    the file ``paths[src]`` (a plain file read lazily: the file is the store of the text,
    as for the raw column), of ``blob`` (``src`` -1), or ``[0, length)`` of the frame's
    ``params.arguments``, read again from the store's text column (``src`` -2: tap records
    of a file read lazily). No Python object per request: the
    scan appends numbers, a forked reader sends arrays, and the rules make the tuples of
    the rows they read (:meth:`entries`) or read the codes and flags."""

    def __init__(self, rows: Any = None, name: Any = None, uri: Any = None, flags: Any = None,
                 starts: Any = None, ends: Any = None, blob: bytes = b"",
                 strs: Sequence[str] = (), src: Any = None, paths: Sequence[str] = ()) -> None:
        def ints(v: Any, dtype: Any) -> np.ndarray:
            return np.asarray([] if v is None else v, dtype=dtype)

        self.rows = ints(rows, np.int64)
        self.name = ints(name, np.int32)
        self.uri = ints(uri, np.int32)
        self.flags = ints(flags, np.int32)
        self.ends = ints(ends, np.int64)
        self.starts = ints(starts, np.int64) if starts is not None else \
            np.concatenate(([0], self.ends[:-1])).astype(np.int64) if len(self.ends) else \
            np.empty(0, dtype=np.int64)
        self.src = ints(src, np.int32) if src is not None else \
            np.full(len(self.rows), -1, dtype=np.int32)
        self.blob = blob  # bytes, or a reader's bytearray (read through a memoryview)
        self.strs = list(strs)
        self.paths = list(paths)
        #: the store's text column, for texts read again from the frames (source -2; set
        #: by :class:`Store`)
        self.raw: Any = None
        if len(self.rows) > 1 and (np.diff(self.rows) < 0).any():
            order = np.argsort(self.rows, kind="stable")
            for k in ("rows", "name", "uri", "flags", "starts", "ends", "src"):
                setattr(self, k, getattr(self, k)[order])

    @classmethod
    def from_rows(cls, rows: Any, path: Any = None) -> CallColumn:
        """The call column a scan of the file ``path`` gathered in ``rows`` (a
        ``fast.rows.Rows``)."""
        recs = np.frombuffer(rows.call_recs, dtype=np.int64).reshape(-1, CALL_REC)
        src = recs[:, 6]
        if path is None and (src >= 0).any():
            raise ValueError("a call column that points into a file needs the file's path")
        return cls(recs[:, 0].copy(), recs[:, 1], recs[:, 2], recs[:, 3], recs[:, 4],
                   recs[:, 5], rows.call_blob, rows.call_strs, src,
                   [] if path is None else [os.path.abspath(path)])

    @classmethod
    def from_entries(cls, rows: Sequence[int], entries: Sequence[Call]) -> CallColumn:
        """A column of the ``(name, uri, arguments, task, cursor)`` of ``rows``."""
        index: dict[str, int] = {}

        def code(v: str | None) -> int:
            return -1 if v is None else index.setdefault(v, len(index))
        name = [code(e[0]) for e in entries]
        uri = [code(e[1]) for e in entries]
        flags = [(1 if e[3] else 0) | (2 if e[4] else 0) | (e[2][0] << 8 if e[2] else 0)
                 for e in entries]
        ends = np.cumsum([len(e[2]) for e in entries], dtype=np.int64)
        return cls(rows, name, uri, flags, None, ends, b"".join(e[2] for e in entries),
                   list(index))

    def __len__(self) -> int:
        return len(self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallColumn) and self.as_dict() == other.as_dict()

    def str_table(self) -> np.ndarray:
        """``strs`` as an object array with None last: ``str_table()[codes]`` for codes
        that may be -1."""
        out = np.empty(len(self.strs) + 1, dtype=object)
        out[:-1] = self.strs
        return out

    def args(self, pos: np.ndarray) -> list[bytes]:
        """The arguments texts of the entries at ``pos`` (b"" where absent)."""
        pos = np.asarray(pos, dtype=np.int64)
        a, z, src = self.starts[pos].tolist(), self.ends[pos].tolist(), self.src[pos]
        out: list[bytes] = [b""] * len(pos)
        blob_at = np.flatnonzero(src == -1).tolist()
        if blob_at:
            # the texts asked for copied out as bytes (a reader's blob, a bytearray of all
            # the calls' arguments, is not copied whole: 71 MB at 1M messages)
            if self.blob.__class__ is bytes:
                blob = self.blob
                for k in blob_at:
                    out[k] = blob[a[k]:z[k]]
            else:
                view = memoryview(self.blob)
                for k in blob_at:
                    out[k] = view[a[k]:z[k]].tobytes()
        in_frame = np.flatnonzero(src == -2)
        if len(in_frame):  # read again from the frames' texts
            if self.raw is None:
                raise ValueError("a call column that reads its texts from the frames needs "
                                 "the store's text column")
            from ..lazytext import texts_of

            rows = self.rows[pos[in_frame]]
            for k, frame in zip(in_frame.tolist(), texts_of(self.raw, rows), strict=True):
                out[k] = _frame_args(frame)
        for s in np.unique(src[src >= 0]).tolist():
            at = np.flatnonzero(src == s).tolist()
            for k, got in zip(at, _file_texts(self.paths[s], [a[k] for k in at],
                                              [z[k] for k in at]), strict=True):
                out[k] = got
        return out

    def arg_texts(self, pos: np.ndarray) -> ArgTexts:
        """The arguments texts of the entries at ``pos``, made only when read."""
        return ArgTexts(self, np.asarray(pos, dtype=np.int64))

    def first_bytes(self, pos: np.ndarray) -> np.ndarray:
        """The first byte of the arguments text of each entry at ``pos`` (0: absent)."""
        return ((self.flags[pos] >> 8) & 0xFF).astype(np.uint8)  # type: ignore[no-any-return]

    def entries(self, pos: np.ndarray | None = None) -> list[Call]:
        """The ``(name, uri, arguments, task, cursor)`` of the entries at ``pos`` (all:
        None)."""
        if pos is None:
            pos = np.arange(len(self.rows))
        table = self.str_table()
        flags = self.flags[pos]
        return list(zip(table[self.name[pos]].tolist(), table[self.uri[pos]].tolist(),
                        self.args(pos), (flags & 1 > 0).tolist(), (flags & 2 > 0).tolist(),
                        strict=True))

    def as_dict(self) -> dict[int, Call]:
        return dict(zip(self.rows.tolist(), self.entries(), strict=True))

    def with_entry(self, pos: int, entry: Call) -> CallColumn:
        """A copy with the entry at ``pos`` replaced (its texts in a blob of its own)."""
        got = self.entries()
        got[pos] = entry
        return CallColumn.from_entries(self.rows.tolist(), got)

    @classmethod
    def concat(cls, pieces: Sequence[tuple[CallColumn, int]]) -> CallColumn:
        """Pieces ``(column, row base)`` end to end."""
        pieces = [(p, b) for p, b in pieces if len(p)]
        if not pieces:
            return cls()
        if len(pieces) == 1 and pieces[0][1] == 0:
            return pieces[0][0]
        index: dict[str, int] = {}
        paths: dict[str, int] = {}
        names, uris, starts, ends, srcs = [], [], [], [], []
        at = 0
        for p, _ in pieces:
            remap = np.asarray([index.setdefault(v, len(index)) for v in p.strs] + [-1],
                               dtype=np.int32)  # code -1 stays -1
            names.append(remap[p.name])
            uris.append(remap[p.uri])
            to_path = np.asarray([paths.setdefault(v, len(paths)) for v in p.paths],
                                 dtype=np.int32)
            # sources -1 (the blob) and -2 (the frame) stay
            srcs.append(np.where(p.src >= 0, to_path[np.maximum(p.src, 0)] if len(to_path)
                                 else 0, p.src).astype(np.int32))
            in_blob = p.src == -1  # blob offsets move on; file and frame ones stay
            starts.append(np.where(in_blob, p.starts + at, p.starts))
            ends.append(np.where(in_blob, p.ends + at, p.ends))
            at += len(p.blob)
        return cls(np.concatenate([p.rows + b for p, b in pieces]), np.concatenate(names),
                   np.concatenate(uris), np.concatenate([p.flags for p, _ in pieces]),
                   np.concatenate(starts), np.concatenate(ends),
                   b"".join(p.blob for p, _ in pieces), list(index), np.concatenate(srcs),
                   list(paths))


class _ArgsParams(msgspec.Struct, gc=False):
    arguments: msgspec.Raw = msgspec.Raw()


class _ArgsRequest(msgspec.Struct, gc=False):
    params: _ArgsParams | None = None


_args_request = msgspec.json.Decoder(_ArgsRequest).decode


def _frame_args(text: str | None) -> bytes:
    """The ``params.arguments`` text of a request's frame (b"" when absent); of a member
    given twice the last counts, as for the scanners."""
    if text is None:
        return b""
    try:
        p = _args_request(text).params
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return b""
    return bytes(p.arguments) if p is not None else b""


def _file_texts(path: str, starts: list[int], ends: list[int]) -> list[bytes]:
    """The bytes ``[start, end)`` of a file, for each pair (one mapping of the file)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if ends and max(ends) > size:
            raise OSError(f"{path}: the file is shorter than when it was loaded (it changed "
                          "on disk); load it again")
        if not size:
            return [b""] * len(starts)
        fd = f.fileno()
        if len(starts) * _DENSE < max(ends) - min(starts):  # a few texts far apart: a
            pread = os.pread                                  # read each (no page mapped)
            return [pread(fd, z - a, a) if z > a else b""
                    for a, z in zip(starts, ends, strict=True)]
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mm:
            return [mm[a:z] for a, z in zip(starts, ends, strict=True)]


#: texts fewer than one per this many bytes of the file are read one by one, more through
#: one mapping of the file (where several texts share a page)
_DENSE = 16 << 10


class ArgTexts:
    """The arguments texts of some entries of a :class:`CallColumn` (b"" where absent),
    as the contract rules read them: selected like an array, their first bytes and lengths
    read without a bytes object per text, the texts made by :meth:`tolist`."""

    def __init__(self, col: CallColumn, pos: np.ndarray) -> None:
        self.col, self.pos = col, pos

    @classmethod
    def of(cls, texts: Sequence[bytes]) -> ArgTexts:
        """Texts given as bytes (rows the call column does not hold)."""
        col = CallColumn.from_entries(range(len(texts)),
                                      [(None, None, t, False, False) for t in texts])
        return cls(col, np.arange(len(texts), dtype=np.int64))

    def __len__(self) -> int:
        return len(self.pos)

    def __getitem__(self, sel: Any) -> ArgTexts:
        return ArgTexts(self.col, self.pos[sel])

    def tolist(self) -> list[bytes]:
        return self.col.args(self.pos)

    def lengths(self) -> np.ndarray:
        return self.col.ends[self.pos] - self.col.starts[self.pos]  # type: ignore[no-any-return]

    def first_bytes(self) -> np.ndarray:
        return self.col.first_bytes(self.pos)


def call_column(rows: Any, path: Any = None) -> CallColumn:
    """The call column a scan (of the file ``path``) gathered in ``rows`` (a
    ``fast.rows.Rows``)."""
    return CallColumn.from_rows(rows, path)


def list_column(rows: Any) -> Sparse:
    """The list column a scan gathered in ``rows``."""
    return Sparse(rows.list_rows, rows.list_vals)
