"""Row values of one part of a capture, as the fast loader gathers them.

Per-row values that most rows have (kind, id, id key, method, line) are gathered in
plain lists for one block of the file, then turned into numpy arrays
(:meth:`Rows.flush`), so that only one block of Python objects is alive at a time; values
that few rows have (error code, reason, flags, progress token, ...) are kept by row
number. :meth:`Rows.add_columns` appends rows that the reference path built (a
:class:`~mcp_notebook.table.Columns`), so that anything unusual is decided by exactly the
code the reference loader runs.
"""

from __future__ import annotations

import struct
from array import array
from typing import Any

import numpy as np

from ..engine import native as _native
from ..protocol import vocab
from ..protocol.vocab import KINDS
from ..table import Columns

__all__ = ["Rows", "LineContext", "KINDS", "KIND_CODE", "DIR_CODE", "Codes"]

KIND_CODE = {k: i for i, k in enumerate(KINDS)}
DIR_CODE: dict[Any, int] = {"c2s": 0, "s2c": 1, None: -1}

#: sparse per-row values kept in dicts (few rows have them)
SPARSE = ("error_code", "error_message", "is_tool_error", "batch", "reason", "version",
          "local_time")


#: an id key of more characters may be an integer above 2^53 (2^53 has 16 digits)
LONG_KEY = 15
#: the methods whose requests the call column keeps (``protocol.vocab``, as the C scanner)
CALL_METHODS = frozenset(vocab.CALL_METHODS)
#: one record of Rows.call_recs: row, name code, uri code, flags (task 1, cursor 2, the
#: first byte of the arguments text << 8), start and end of that text, and where it is (0:
#: the part's file, -1: Rows.call_blob, -2: the frame's text, [0, its length))
CALL_REC = 7
_CALL_REC = struct.Struct(f"={CALL_REC}q")
#: the members of a result the list column keeps (``protocol.vocab``, in the C scanner's order)
LISTED = vocab.LISTED


class Codes:
    """Integer codes for repeated values (methods, sessions), in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []
        self.paired: list[Any] = []

    def codes(self, values: list[Any], canon: bool = False,
              paired: list[Any] | None = None) -> np.ndarray:
        """The codes of ``values`` (-1 for None); with ``canon``, equal values in ``values``
        are replaced by one shared object (the first seen), which saves memory, and so are
        the entries of ``paired`` (a value that the code decides: the id of an id key)."""
        if canon and _native.native is not None and isinstance(values, list) and (
                paired is None or isinstance(paired, list)):
            got = _native.native.codes(values, self.index, self.values, paired, self.paired)
            return np.frombuffer(got, dtype=np.int32)
        index = self.index
        get = index.get
        firsts = self.values
        twins = self.paired
        out: list[int] = []
        add = out.append
        for k, v in enumerate(values):
            c = get(v)
            if c is None:
                if v is None:
                    c = -1
                else:
                    c = index[v] = len(firsts)
                    firsts.append(v)
                    if paired is not None:
                        twins.append(paired[k])
            elif canon:
                values[k] = firsts[c]
                if paired is not None:
                    paired[k] = twins[c]
            add(c)
        return np.array(out, dtype=np.int32)


class LineContext:
    """The context of each line of a block (tap): time (NaN: none), session code, direction
    code, stream code and frame size, as arrays; ``line0`` is the block's first line."""

    def __init__(self, line0: int, n: int) -> None:
        self.line0 = line0
        self.ts = np.full(n, np.nan)
        self.session = np.full(n, -1, dtype=np.int32)
        self.direction = np.full(n, -1, dtype=np.int8)
        self.stream = np.full(n, -1, dtype=np.int32)
        self.size = np.zeros(n, dtype=np.int64)


class Rows:
    """The rows of one part of a capture (a file, or a byte range of one)."""

    def __init__(self, per_row_context: bool) -> None:
        self.context = per_row_context
        self.base = 0  # rows already flushed into arrays
        self._new_lists()
        self.arrays: dict[str, list[np.ndarray]] = {}
        self.methods = Codes()
        self.method_info: dict[str, tuple[int, int]] = {}  # see message.scan
        self.keys = Codes()  # id keys
        self.sessions = Codes()
        self.streams = Codes()
        # sparse
        self.sparse: dict[str, dict[int, Any]] = {name: {} for name in SPARSE}
        # rows as arrays (int64; progress values float64): the C scanner adds a call's rows
        # to them in one piece, with no int or float object per row
        self.ref_rows: array[int] = array("q")
        self.ref_vals: list[str] = []
        self.ref_intern: dict[str, str] = {}
        self.prog_rows: array[int] = array("q")
        self.prog_vals: array[float] = array("d")
        self.empty_rows: array[int] = array("q")  # results with no member but _meta (C only)
        # the call column (store.CallColumn), packed: for each request of CALL_METHODS a
        # record of CALL_REC int64 in call_recs (its row, the codes of its name and uri in
        # call_strs (-1: absent), its flags, where its arguments text is: in the file, or in
        # call_blob, the texts end to end; an absent one is empty): what the conversation
        # rules read of them, and no Python object per request
        self.call_recs = bytearray()
        self.call_blob = bytearray()
        self.call_index: dict[str, int] = {}
        self.call_strs: list[str] = []
        # the list column: results with LISTED members -> {member: its JSON text}
        self.list_rows: list[int] = []
        self.list_vals: list[dict[str, bytes]] = []
        self.list_intern: dict[bytes, bytes] = {}
        self.flags: list[tuple[int, tuple[str, ...]]] = []
        self.extra: dict[int, dict[str, Any]] = {}
        self.raw_over: dict[int, str] = {}  # raw text that is neither the line nor its tap raw
        self.source_over: dict[int, str] = {}
        self.raw: list[str] | None = None  # every row's text, when the text is kept
        self.keyless_ids: dict[int, Any] = {}  # see pack()
        self.long_keys: list[int] = []  # rows whose id key is longer than LONG_KEY
        self.blank = 0
        self.lines = 0  # lines seen (blank ones included)

    def _new_lists(self) -> None:
        # kind, method and line are arrays (int8, int32, int64): the C scanner adds a call's
        # rows to them in one piece, with no int object per row
        self.kind: array[int] = array("b")
        self.id: list[object] = []
        self.id_key: list[str | None] = []
        self.method: array[int] = array("i")  # method codes (self.methods), -1: none
        self.line: array[int] = array("q")  # line index (0-based, within the part) of each row
        # context of rows the reference built, for formats with per-line context (tap):
        # row -> (ts, session, direction code, stream, size, raw is the record's raw member)
        self.ctx_over: dict[int, tuple] = {}

    def __len__(self) -> int:
        return self.base + len(self.kind)

    def method_code(self, method: str | None) -> int:
        """The code of a method name (-1: none)."""
        return self.methods.codes([method])[0] if method is not None else -1

    def flush(self, line_ctx: LineContext | None = None) -> None:
        """Turn the rows gathered so far into arrays (call at the end of each block).

        ``line_ctx``, for formats with per-line context, holds the context of the block's
        lines; rows the reference built keep their own (``ctx_over``).
        """
        if not self.kind:
            return
        a = self.arrays

        def put(name: str, value: np.ndarray) -> None:
            a.setdefault(name, []).append(value)

        put("kind", np.array(self.kind, dtype=np.int8))
        # rows whose id key is long enough to be an id above 2^53 (found while the keys are
        # fresh in the cache: the check of big ids then reads only these)
        self.long_keys.extend((np.flatnonzero(_native.str_lengths(self.id_key) > LONG_KEY)
                               + self.base).tolist())
        put("id_code", self.keys.codes(self.id_key, canon=True, paired=self.id))
        put("id", _objects(self.id))
        put("id_key", _objects(self.id_key))
        put("method", np.array(self.method, dtype=np.int32))
        put("line", np.array(self.line, dtype=np.int64))
        if self.context:
            assert line_ctx is not None
            idx = np.array(self.line, dtype=np.int64) - line_ctx.line0
            ts = line_ctx.ts[idx]
            sess = line_ctx.session[idx]
            direct = line_ctx.direction[idx]
            stream = line_ctx.stream[idx]
            size = line_ctx.size[idx]
            tap_raw = np.ones(len(idx), dtype=bool)
            for r, (t, se, d, st, sz, tr) in self.ctx_over.items():
                k = r - self.base
                if 0 <= k < len(idx):
                    ts[k] = np.nan if t is None else t
                    sess[k] = self.sessions.codes([se])[0]
                    direct[k] = d
                    stream[k] = self.streams.codes([st])[0]
                    size[k] = sz
                    tap_raw[k] = tr
            self.ctx_over = {}
            put("size", size)
            put("ts", ts)
            put("session", sess)
            put("direction", direct)
            put("stream", stream)
            put("tap_raw", tap_raw)
        self.base += len(self.kind)
        self._new_lists()

    def pack(self) -> None:
        """Shrink flushed rows for sending to another process (:meth:`unpack` undoes it).

        The id and id key of a row with a key are the key's first-seen objects (``keys``
        values and paired ids: :meth:`Codes.codes` made them so), so only the codes travel,
        and the ids of rows without a key that have one; row lists become arrays; of the
        codes, the receiver needs the values only (and the paired ids of the keys)."""
        codes = self.column("id_code", np.int32)
        ids = self.column("id", object)
        self.column("id_key", object)
        self.arrays["id_code"] = [codes]
        keyless = np.flatnonzero(codes < 0)
        self.keyless_ids = {int(r): v for r, v in zip(keyless.tolist(),
                                                      ids[keyless].tolist(), strict=True)
                            if v is not None}
        for space in (self.methods, self.keys, self.sessions, self.streams):
            space.index = {}
            if space is not self.keys:
                space.paired = []
        self.ref_intern = {}
        self.call_index = {}
        self.list_intern = {}
        for name in ("ref_rows", "prog_rows", "empty_rows", "long_keys", "list_rows"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        self.prog_vals = np.asarray(self.prog_vals, dtype=np.float64)  # type: ignore[assignment]

    def unpack(self) -> None:
        """The id and id key columns of rows that :meth:`pack` sent without them."""
        codes = self.column("id_code", np.int32)
        self.arrays["id_code"] = [codes]
        keys = np.empty(len(self.keys.values) + 1, dtype=object)  # code -1: the last, None
        keys[:-1] = self.keys.values
        ids = np.empty(len(keys), dtype=object)
        ids[:-1] = self.keys.paired
        id_col = ids[codes]
        for r, v in self.keyless_ids.items():
            id_col[r] = v
        self.arrays["id"] = [id_col]
        self.arrays["id_key"] = [keys[codes]]
        self.keyless_ids = {}

    def column(self, name: str, dtype: Any) -> np.ndarray:
        """A flushed column, whole (its per-block pieces are let go)."""
        parts = self.arrays.pop(name, [])
        if not parts:
            return np.empty(0, dtype=dtype)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def add_call(self, row: int, name: str | None, uri: str | None, args: bytes, task: bool,
                 cursor: bool) -> None:
        """One entry of the call column (as the C scanner's ``add_call``)."""
        a = len(self.call_blob)
        self.call_blob += args
        self.call_recs += _CALL_REC.pack(row, self._call_code(name), self._call_code(uri),
                                         (1 if task else 0) | (2 if cursor else 0)
                                         | (args[0] << 8 if args else 0), a,
                                         len(self.call_blob), -1)

    def _call_code(self, text: str | None) -> int:
        if text is None:
            return -1
        code = self.call_index.get(text)
        if code is None:
            code = self.call_index[text] = len(self.call_strs)
            self.call_strs.append(text)
        return code

    def add_columns(self, c: Columns, line: int, source: str, raw_mode: str = "line",
                    line_text: str | None = None) -> None:
        """Append the rows of ``c`` (built by the reference path) as rows of ``line``.

        ``raw_mode`` says where the lazy raw column will find the text: ``"line"``,
        ``"tap"`` (the record's ``raw`` member), or ``"keep"`` (keep ``c.raw`` here).
        With ``"auto"`` the text is compared with ``line_text`` to pick line or keep.
        ``source`` is the label the row gets unless the reference gave another.
        """
        self.blank += c.blank_lines
        sp = self.sparse
        for i in range(len(c)):
            r = len(self)
            self.kind.append(KIND_CODE[c.kind[i]])
            self.id.append(c.id[i])
            self.id_key.append(c.id_key[i])
            self.method.append(self.method_code(c.method[i]))
            self.line.append(line)
            for name in SPARSE:
                v = getattr(c, name)[i]
                if v is not None and v is not False:
                    sp[name][r] = v
            ref, prog = c.ref[i], c.progress[i]
            if ref is not None:
                self.ref_rows.append(r)
                self.ref_vals.append(ref)
            if prog is not None:
                self.prog_rows.append(r)
                self.prog_vals.append(prog)
            if c.flags[i]:
                self.flags.append((r, c.flags[i]))
            if i in c.extra:
                self.extra[r] = c.extra[i]
            mode = raw_mode
            if mode == "auto":
                mode = "line" if c.raw[i] == line_text else "keep"
            if self.context:
                self.ctx_over[r] = (c.ts[i], c.session[i], DIR_CODE.get(c.direction[i], -1),
                                    c.stream[i], c.size[i], mode == "tap")
            if mode == "keep":
                self.raw_over[r] = c.raw[i]
            if c.source[i] != source:
                self.source_over[r] = c.source[i]


def _objects(values: list[Any]) -> np.ndarray:
    """An object array of the values as they are (a list value stays one element)."""
    return np.fromiter(values, dtype=object, count=len(values))
