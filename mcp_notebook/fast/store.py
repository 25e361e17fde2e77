"""The columnar store behind a Trace: numpy columns, sparse extras, lazy or in-memory text.

Both loaders end here: the reference path (reader records classified one by one into a
:class:`~mcp_notebook.table.Columns`) through :meth:`Store.from_columns`, the fast path
(:mod:`mcp_notebook.fast`) through :meth:`Store.from_parts`. Pairing, checks and the
three DataFrames read the store, so whichever loader ran, the same code answers.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..lazytext import LazyTextArray, ListSource, MultiSource, TextSource
from ..protocol.vocab import DIRECTIONS
from ..table import Columns, int64_or_na
from .rows import CALL_REC, DIR_CODE, KIND_CODE, KINDS, Codes

__all__ = ["Store", "Part", "Sparse", "CallColumn", "ArgTexts", "Call", "factorize", "KINDS", "call_column",
           "list_column"]

DIRS = DIRECTIONS
_INT64 = 1 << 63


def factorize(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes (int32, -1 for None/NaN) and the distinct values in order of first appearance."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    return codes.astype(np.int32, copy=False), list(uniques)


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
        self.blob = blob  # bytes, or a reader's bytearray (made bytes when first read)
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
            if self.blob.__class__ is not bytes:
                self.blob = bytes(self.blob)
            blob = self.blob
            for k in blob_at:
                out[k] = blob[a[k]:z[k]]
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


@dataclass
class Part:
    """One loaded piece (a file or a byte range of one), already in numpy columns."""

    n: int
    kind: np.ndarray  # int8
    id: np.ndarray  # object
    id_key: np.ndarray  # object
    id_code: tuple[np.ndarray, list[Any]]  # int32 codes of id_key (-1: none), distinct keys
    method: tuple[np.ndarray, list[Any]]  # codes, categories
    size: np.ndarray  # int64
    ts: np.ndarray  # float64
    session: tuple[np.ndarray, list[Any]]
    stream: tuple[np.ndarray, list[Any]]
    direction: np.ndarray  # int8
    sparse: dict[str, dict[int, Any]]
    flags: dict[int, tuple[str, ...]]
    extra: dict[int, dict[str, Any]]
    raw: TextSource
    source: TextSource
    blank: int = 0
    lines: int = 0
    ref: Sparse = field(default_factory=Sparse)
    progress: Sparse = field(default_factory=lambda: Sparse(dtype=np.float64))
    version: Sparse = field(default_factory=Sparse)
    empty_result: Sparse = field(default_factory=lambda: Sparse(dtype=bool))
    call: CallColumn = field(default_factory=CallColumn)
    listed: Sparse = field(default_factory=Sparse)
    #: id key -> code of ``id_code``'s keys, when the reader still holds that dict (a merge
    #: of parts starts from it instead of numbering the first part's keys again)
    id_index: dict[Any, int] | None = None
    #: rows whose id key is longer than ``rows.LONG_KEY`` (None: not noted)
    long_keys: np.ndarray | None = None


@dataclass
class Store:
    """Every frame column, plus what the checks need and the frames do not show."""

    n: int
    ts: np.ndarray  # float64 unix seconds, NaN unknown
    session: tuple[np.ndarray, list[Any]]  # int32 codes (-1: None), categories
    stream: tuple[np.ndarray, list[Any]]
    direction: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    kind: np.ndarray  # int8: index into KINDS
    id: np.ndarray  # object
    id_key: np.ndarray  # object
    id_code: tuple[np.ndarray, list[Any]]  # int32 codes of id_key (-1: none), distinct keys
    method: tuple[np.ndarray, list[Any]]
    error_code: Any  # pandas Int64 array
    error_message: np.ndarray  # object
    is_tool_error: np.ndarray  # bool
    size: np.ndarray  # int64
    raw: Any  # object array or LazyTextArray
    source: Any  # object array or LazyTextArray
    batch: np.ndarray  # int32, -1: none
    reason: np.ndarray  # object
    local_time: np.ndarray  # bool
    flags: dict[int, tuple[str, ...]] = field(default_factory=dict)
    ref: Sparse = field(default_factory=Sparse)  # cancelled request / progress token keys
    progress: Sparse = field(default_factory=lambda: Sparse(dtype=np.float64))
    version: Sparse = field(default_factory=Sparse)
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    blank_lines: int = 0
    #: results known to hold no member but ``_meta`` (the C scanner says so for the lines it
    #: reads; for other rows nothing is known: the checks read their text)
    empty_result: Sparse = field(default_factory=lambda: Sparse(dtype=bool))
    #: what the conversation rules read of requests of ``rows.CALL_METHODS`` (tools/call,
    #: prompts/get, resources/read and the list requests): ``(name, uri, arguments JSON
    #: text or b"", task given, cursor given)`` (:class:`CallColumn`), kept by the fast
    #: loader's scan (C or Python) for the rows it reads; a row not here (the reference
    #: path's, a name that is no string, ...) has its text read
    call: CallColumn = field(default_factory=CallColumn)
    #: the same for results with a member of ``rows.LISTED`` (tools, prompts, resources,
    #: resourceTemplates): ``{member: its JSON text}``, one bytes object per distinct text
    listed: Sparse = field(default_factory=Sparse)
    #: id key -> its code, when a merge of parts made that dict anyway: the pairing looks
    #: up the few keys it needs there (cancelled ids, id-type twins), then lets it go
    id_index: dict[Any, int] | None = None
    #: rows whose id key is longer than ``rows.LONG_KEY``, when the reader noted them (None:
    #: the check of big ids reads every request's key)
    long_keys: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.call.raw = self.raw  # the texts it reads again from the frames (tap records)

    def __len__(self) -> int:
        return self.n

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def from_columns(cls, c: Columns) -> Store:
        """The store of rows the reference path built."""
        n = len(c)

        def sparse(values: Sequence[Any], dtype: Any = object) -> Sparse:
            rows = [i for i, v in enumerate(values) if v is not None]
            return Sparse(rows, [values[i] for i in rows], dtype)

        return cls(
            n=n,
            ts=np.array([np.nan if v is None else v for v in c.ts], dtype=np.float64),
            session=factorize(c.session), stream=factorize(c.stream),
            direction=np.array([DIR_CODE.get(d, -1) for d in c.direction], dtype=np.int8),
            kind=np.array([KIND_CODE[k] for k in c.kind], dtype=np.int8),
            id=_objects(c.id), id_key=_objects(c.id_key), id_code=factorize(c.id_key),
            method=factorize(c.method),
            error_code=int64_or_na(c.error_code),
            error_message=_objects(c.error_message),
            is_tool_error=np.array(c.is_tool_error, dtype=bool),
            size=np.array(c.size, dtype=np.int64), raw=_objects(c.raw), source=_objects(c.source),
            batch=np.array([-1 if b is None else b for b in c.batch], dtype=np.int32),
            reason=_objects(c.reason), local_time=np.array(c.local_time, dtype=bool),
            flags={i: f for i, f in enumerate(c.flags) if f}, ref=sparse(c.ref),
            progress=sparse(c.progress, np.float64), version=sparse(c.version),
            extra=dict(c.extra),
            blank_lines=c.blank_lines)

    @classmethod
    def from_parts(cls, parts: Sequence[Part]) -> Store:
        """One store from consecutive parts (their row numbers follow on)."""
        n = sum(p.n for p in parts)
        bases = np.cumsum([0] + [p.n for p in parts])[:-1].tolist()

        def cat(name: str) -> tuple[np.ndarray, list[Any]]:
            return _small(_concat_codes([_take(p, name) for p in parts]))

        def arrays(name: str, dtype: Any) -> np.ndarray:
            return _cat_arrays([_take(p, name) for p in parts], dtype)

        def shifted(name: str) -> dict[int, Any]:
            out: dict[int, Any] = {}
            for p, b in zip(parts, bases, strict=True):
                d = p.sparse[name] if name in p.sparse else getattr(p, name)
                out.update(d if b == 0 else {r + b: v for r, v in d.items()})
            return out

        sp = {name: shifted(name) for name in ("error_code", "error_message", "is_tool_error",
                                                "batch", "reason", "local_time")}

        def sparse(name: str) -> Sparse:
            return Sparse.concat([(getattr(p, name), b) for p, b in zip(parts, bases,
                                                                         strict=True)])

        id_space = Codes()
        if parts[0].id_index is not None and len(parts[0].id_index) == len(parts[0].id_code[1]):
            id_space.index = parts[0].id_index
            id_space.values = list(parts[0].id_code[1])
        code_vals = np.zeros(n, dtype=np.int64)
        code_mask = np.ones(n, dtype=bool)
        fits = {r: v for r, v in sp["error_code"].items() if -_INT64 <= v < _INT64}
        if fits:
            rows = np.fromiter(fits, dtype=np.int64, count=len(fits))
            code_vals[rows] = np.fromiter(fits.values(), dtype=np.int64, count=len(rows))
            code_mask[rows] = False
        # each part's column is let go once copied: one column at a time is held twice
        return cls(
            n=n,
            ts=_unknown_ts(n) if all(_no_ts(p.ts) for p in parts)
            else arrays("ts", np.float64),
            session=cat("session"), stream=cat("stream"),
            direction=arrays("direction", np.int8), kind=arrays("kind", np.int8),
            id=arrays("id", object), id_key=arrays("id_key", object),
            id_code=_concat_codes([_take(p, "id_code") for p in parts], id_space),
            method=cat("method"),
            error_code=pd.arrays.IntegerArray(code_vals, code_mask),
            error_message=_fill(n, sp["error_message"], object, None),
            is_tool_error=_fill(n, sp["is_tool_error"], bool, False),
            size=arrays("size", np.int64),
            raw=_text([p.raw for p in parts]), source=_text([p.source for p in parts]),
            batch=_fill(n, sp["batch"], np.int32, -1),
            reason=_fill(n, sp["reason"], object, None),
            local_time=_fill(n, sp["local_time"], bool, False),
            flags=shifted("flags"), ref=sparse("ref"), progress=sparse("progress"),
            version=sparse("version"), extra=shifted("extra"),
            empty_result=sparse("empty_result"),
            call=CallColumn.concat([(p.call, b) for p, b in zip(parts, bases, strict=True)]),
            listed=sparse("listed"),
            blank_lines=sum(p.blank for p in parts), id_index=id_space.index or None,
            long_keys=None if any(p.long_keys is None for p in parts) else np.concatenate(
                [np.asarray(p.long_keys, dtype=np.int64) + b
                 for p, b in zip(parts, bases, strict=True)]))

    @classmethod
    def concat(cls, stores: Sequence[Store]) -> Store:
        """Stores end to end (files loaded by different paths, in load order)."""
        if len(stores) == 1:
            return stores[0]
        parts = [s.as_part() for s in stores]
        out = cls.from_parts(parts)
        # from_parts rebuilds error codes from the sparse dict; keep the exact arrays
        out.error_code = pd.array(np.concatenate([np.asarray(s.error_code, dtype=object)
                                                  for s in stores]), dtype="Int64")
        # (every piece's codes already fit int64)
        return out

    def as_part(self) -> Part:
        codes = self.error_code
        sparse = {
            "error_code": {int(i): int(codes[i]) for i in np.flatnonzero(~pd.isna(codes))},
            "error_message": _nonnull(self.error_message),
            "is_tool_error": {int(i): True for i in np.flatnonzero(self.is_tool_error)},
            "batch": {int(i): int(self.batch[i]) for i in np.flatnonzero(self.batch >= 0)},
            "reason": _nonnull(self.reason),
            "local_time": {int(i): True for i in np.flatnonzero(self.local_time)},
        }
        return Part(n=self.n, kind=self.kind, id=self.id, id_key=self.id_key,
                    id_code=self.id_code, method=self.method, size=self.size, ts=self.ts, session=self.session,
                    stream=self.stream, direction=self.direction, sparse=sparse,
                    flags=self.flags, extra=self.extra, raw=_source_of(self.raw),
                    source=_source_of(self.source), blank=self.blank_lines, ref=self.ref,
                    progress=self.progress, version=self.version,
                    empty_result=self.empty_result, long_keys=self.long_keys,
                    call=self.call, listed=self.listed)

    # -- reading ----------------------------------------------------------------------------
    def values(self, name: str) -> list[Any]:
        """A column as the reference ``Columns`` list (Python values, None where missing)."""
        if name in ("session", "stream", "method"):
            codes, cats = getattr(self, name)
            table = [*cats, None]
            return [table[c] for c in codes.tolist()]
        if name == "direction":
            return [(None, "c2s", "s2c")[d + 1] for d in self.direction.tolist()]
        if name == "kind":
            return [KINDS[k] for k in self.kind.tolist()]
        if name == "ts":
            return [None if v != v else v for v in self.ts.tolist()]
        if name == "batch":
            return [None if b < 0 else b for b in self.batch.tolist()]
        if name == "error_code":
            return [None if v is pd.NA else int(v) for v in self.error_code]
        if name == "flags":
            return [self.flags.get(i, ()) for i in range(self.n)]
        if name in ("ref", "progress", "version"):
            d = getattr(self, name).as_dict()
            return [d.get(i) for i in range(self.n)]
        col = getattr(self, name)
        return col.tolist() if hasattr(col, "tolist") else list(col)

    def codes_of(self, name: str, value: Any) -> int:
        """The code of ``value`` in a categorical column (-2 when absent: matches no row)."""
        cats = getattr(self, name)[1]
        try:
            return cats.index(value)
        except ValueError:
            return -2


def _take(part: Part, name: str) -> Any:
    """A column of a part, let go by the part (the caller keeps the only reference)."""
    value = getattr(part, name)
    setattr(part, name, None)
    return value


def _unknown_ts(n: int) -> np.ndarray:
    """Capture times of ``n`` frames that have none: one NaN seen ``n`` times (no memory)."""
    return np.broadcast_to(np.float64(np.nan), (n,))


def _no_ts(ts: np.ndarray) -> bool:
    return ts.strides == (0,) or (len(ts) > 0 and bool(np.isnan(ts).all()))


def _small(codes: tuple[np.ndarray, list[Any]]) -> tuple[np.ndarray, list[Any]]:
    """Codes in the smallest signed integer type that holds them."""
    c, cats = codes
    dtype = np.int8 if len(cats) < 127 else np.int16 if len(cats) < 32767 else np.int32
    return c.astype(dtype, copy=False), cats


def _objects(values: Sequence[Any]) -> np.ndarray:
    """An object array of the values as they are (a list value stays one element)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _nonnull(arr: np.ndarray) -> dict[int, Any]:
    idx = np.flatnonzero(pd.notna(arr)) if len(arr) else np.empty(0, dtype=np.int64)
    return {int(i): arr[i] for i in idx}


def _cat_arrays(arrays: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    if len(arrays) == 1:
        return np.asarray(arrays[0], dtype=dtype)
    return np.concatenate([np.asarray(a, dtype=dtype) for a in arrays]) if arrays \
        else np.empty(0, dtype=dtype)


def _fill(n: int, values: dict[int, Any], dtype: Any, default: Any) -> np.ndarray:
    out = np.full(n, default, dtype=dtype)
    if values:
        rows = np.fromiter(values, dtype=np.int64, count=len(values))
        if dtype is object:
            out[rows] = _objects(list(values.values()))
        else:
            out[rows] = np.array(list(values.values()), dtype=dtype)
    return out


def _concat_codes(pieces: Sequence[tuple[np.ndarray, list[Any]]],
                  space: Codes | None = None) -> tuple[np.ndarray, list[Any]]:
    """Codes of consecutive pieces in one code space (categories in order of first sight),
    numbered through ``space`` (its ``index`` then holds value -> code)."""
    if len(pieces) == 1:
        return pieces[0][0].astype(np.int32, copy=False), list(pieces[0][1])
    if space is None:
        space = Codes()  # the loader's numbering (in C when the scanner is built)
    out = []
    if space.values:  # the first piece numbered through it already: its codes stay
        if space.values != pieces[0][1]:
            raise ValueError("the first piece's values are not the code space's")
        out.append(pieces[0][0].astype(np.int32, copy=False))
        pieces = pieces[1:]
    for codes, local in pieces:
        remap = np.append(space.codes(list(local), canon=True), -1).astype(np.int32)
        out.append(remap[codes])  # codes of -1 pick the last entry: -1
    return np.concatenate(out), space.values


def _source_of(col: Any) -> TextSource:
    if isinstance(col, LazyTextArray):
        if col._rows is None or len(col) == len(col.source) and np.array_equal(
                col.rows, np.arange(len(col.source))):
            return col.source
        return ListSource(col.to_numpy())
    return ListSource(col)


def _text(sources: Sequence[TextSource]) -> Any:
    """An object array when every part holds its text in memory, else a lazy column."""
    if all(isinstance(s, ListSource) for s in sources):
        return _cat_arrays([s.values for s in sources], object)  # type: ignore[attr-defined]
    src = sources[0] if len(sources) == 1 else MultiSource(sources)
    return LazyTextArray(src)
