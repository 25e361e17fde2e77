"""Reader records into the column store: the path of every reader that is not a line
format with a scanner of its own (Claude Desktop, VS Code, HAR, Inspector, recorder, curl,
boundary, OTLP, and any reader's records).

Records come in blocks; the frames of a block are classified together by the C scanner
(the one the NDJSON path uses: the text of each record is one span of one buffer), the
frames it leaves by the reference classifier, one by one, as the NDJSON path does. The
rows go straight into :class:`~.rows.Rows` (numpy per block) and from there into one
:class:`~.store.Part`: no list per column, no second model.

What a reader decides from a frame's meaning runs here, after the classification, in
record order: each record's ``settle`` step once its ``frames`` are known (they are made
only for records that have such a step), and the ``arrange`` step of a file's records.
The rows are those of :func:`mcp_notebook.table.collect` (the reference: one row per
message, a batch array one per member, the record's context on each), with the same
values; ``tests/engine`` and ``tests/readers`` check it on every bundled capture.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..engine import native as _native
from ..engine.fallback import fell_back
from ..engine.gcpause import gc_paused
from ..lazytext import FileSource, LabelSource, ListSource, TextSource
from ..protocol.envelope import Envelope, classify
from ..readers._docspans import DocLabels
from ..readers._spans import Spans
from ..readers.base import Record
from ..textsources import BufferSource, DocLabelSource
from . import cores
from .message import decoder, scan
from .rows import DIR_CODE, KIND_CODE, KINDS, SPARSE, LineContext, Rows
from .store import Part, Sparse, call_column, list_column

__all__ = ["part_of", "BLOCK"]

#: records classified together
BLOCK = 8192


class Meaning(NamedTuple):
    """What an ``arrange`` step reads of a frame the table classified for it (its
    ``meaning`` argument): the kind, id key, method and ref (a cancel's request, a
    progress token: as :class:`~mcp_notebook.protocol.envelope.Envelope`) of each of the
    record's frames."""

    kind: str
    id_key: str | None
    method: str | None = None
    ref: str | None = None
_STDIO = "stdio"


def part_of(records: Iterable[Record],
            on_error: Callable[[Exception], Record | None] | None = None,
            scanner: bool = True) -> Part:
    """The rows of ``records`` as one part. ``on_error``: a reader that raises while its
    records are read ends there, with the record ``on_error(exc)`` gives (if any) as its
    last. ``scanner=False``: the Python path only (msgspec, and the reference classifier),
    for a file the C scanner already failed on. A failure of the C scanner here is noted
    (:func:`~mcp_notebook.engine.fallback.fell_back`: raised under strict mode) and the
    Python path reads on. The cyclic garbage collector is paused meanwhile (as the NDJSON
    path does: many small objects, none in a cycle) and left as it was."""
    with gc_paused():
        return _part_of(records, on_error, scanner)


def _part_of(records: Iterable[Record],
             on_error: Callable[[Exception], Record | None] | None, scanner: bool) -> Part:
    b = _Builder(scanner)
    pending: list[Record] = []
    held: list[Record] = []
    arrange: Any = None
    blocks = getattr(records, "blocks", None)
    for rec in _guarded(blocks() if blocks is not None else records, on_error):
        if type(rec) is Spans:  # a reader's usual lines, by their place in its bytes
            if held:
                b.add_arranged(held, arrange)
                held, arrange = [], None
            if pending:
                b.add(pending)
                pending = []
            b.add_spans(rec)
            continue
        if rec.kind == "blank":
            b.rows.blank += 1
            continue
        if rec.arrange is not None and (arrange is None or rec.arrange is arrange):
            if pending:
                b.add(pending)
                pending = []
            arrange = rec.arrange
            held.append(rec)
            continue
        if held:
            b.add_arranged(held, arrange)
            held, arrange = [], None
            if rec.arrange is not None:
                arrange = rec.arrange
                held.append(rec)
                continue
        pending.append(rec)
        if len(pending) >= BLOCK:
            b.add(pending)
            pending = []
    if held:
        b.add_arranged(held, arrange)
    if pending:
        b.add(pending)
    return b.part()


def _guarded(records: Iterable[Record],
             on_error: Callable[[Exception], Record | None] | None) -> Iterator[Record]:
    if on_error is None:
        yield from records
        return
    it = iter(records)
    while True:
        try:
            rec = next(it)
        except StopIteration:
            return
        except Exception as exc:  # a reader's bug on hostile input: kept, said, not raised
            last = on_error(exc)
            if last is not None:
                yield last
            return
        yield rec


class _Builder:
    def __init__(self, scanner: bool = True) -> None:
        self.scanner = scanner
        self.rows = Rows(per_row_context=True)
        self.raw: list[str | None] = []  # per record (None: a span's, read from its file)
        self.source: list[str | None] = []  # per record (None: a span's, "<name>:<line>")
        # the records of spans whose texts stay in the file: (first record, offsets,
        # lengths) (the others keep their text in ``raw``); not the spans' bytes
        self.spans: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.lazy: str | None = None  # the file whose texts stay on disk ("": none)
        self.labels: list[tuple[int, str, np.ndarray]] = []  # spans' records: name, lines
        # a document's spans whose texts stay in their buffer: (first record, offsets,
        # lengths), all of the one buffer ``kept``
        self.kept_spans: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.doc_labels: list[tuple[int, DocLabels]] = []  # spans' records: a document's
        self.kept: bytes | None = None
        self.n = 0  # records so far
        self.scanned: set[int] = set()  # records whose frames the scanner's rows gave

    # -- classification ------------------------------------------------------------------
    def add_arranged(self, recs: list[Record], arrange: Any) -> None:
        """Records whose order their reader decides, from the meaning of some of them:
        those are classified first (by the scanner, into rows of a block that are let go:
        only their ``frames``, no context, sizes or texts kept), the records arranged,
        then added in that order (the rows made again by the scanner)."""
        scanned: set[int] = set()

        def meaning(asked: list[Record]) -> None:
            for k in range(0, len(asked), BLOCK):
                scout = _Builder(self.scanner)
                scout.scanned = scanned
                scout.add(asked[k:k + BLOCK], frames=True, scout=True)
                self.scanner = self.scanner and scout.scanner

        recs = arrange(recs, meaning)
        if scanned:
            for rec in recs:
                if id(rec) in scanned:
                    rec.frames = None
        for k in range(0, len(recs), BLOCK):
            self.add(recs[k:k + BLOCK])

    def add(self, recs: list[Record], frames: bool = False, scout: bool = False) -> None:
        """Append the rows of ``recs``; with ``frames`` every record gets its ``frames``
        (else only those a reader's ``settle`` step needs); ``scout``: the frames only
        (the builder is let go after)."""
        rows = self.rows
        line0 = self.n
        r0 = len(rows.kind)
        n = len(recs)
        enc = [b"" if (r.kind is not None or r.frames is not None or r.envelope is not None)
               else r.raw.encode("utf-8", "surrogateescape") for r in recs]
        lens = np.fromiter(map(len, enc), dtype=np.int64, count=n)
        ends = np.cumsum(lens + 1) - 1
        starts = ends - lens
        buf = b"\n".join(enc)
        native = _native.native if self.scanner else None
        pipe = cores.scan_pipe()  # a worker thread reads the lines where a core is free
        mv = memoryview(buf)
        st, en = starts.tolist(), ends.tolist()
        i = 0
        while i < n:
            rec = recs[i]
            j = line0 + i
            if rec.kind is not None:  # a forced row: stderr, log or invalid
                _forced(rows, rec, j)
            elif rec.frames is not None or rec.envelope is not None or not enc[i]:
                envs = rec.frames if rec.frames is not None else (
                    (rec.envelope,) if rec.envelope is not None else tuple(classify(rec.raw)))
                rec.frames = envs
                for env in envs:
                    _envelope(rows, env, j)
            else:
                stop = i
                while stop < n and enc[stop] and recs[stop].kind is None \
                        and recs[stop].frames is None and recs[stop].envelope is None:
                    stop += 1
                k = i
                while k < stop:
                    if native is not None:
                        try:
                            k = native.scan(buf, starts, ends, k, stop, line0,
                                            _native.out_lists(rows), pipe=pipe)
                        except Exception as exc:  # a C bug must not cost the capture
                            fell_back("the C scanner failed on a reader's records; the "
                                      "Python path read them instead (same rows, slower); "
                                      "please report it", exc)
                            native = None
                            self.scanner = False
                            continue
                        if k >= stop:
                            break
                    self._one(mv[st[k]:en[k]], line0 + k, recs[k], buf, st[k], en[k])
                    k += 1
                i = stop
                continue
            i += 1
        self._settle(recs, line0, r0, frames)
        if scout:
            return
        self._context(recs, line0, r0, [
            rec.size if rec.size is not None else len(e) if e else _size(rec)
            for e, rec in zip(enc, recs, strict=True)])
        self.raw.extend(r.raw for r in recs)
        self.source.extend(r.source for r in recs)
        self.n += n

    def add_spans(self, sp: Spans) -> None:
        """Append the rows of the records of ``sp`` (classified in place in its bytes)."""
        rows = self.rows
        line0 = self.n
        r0 = len(rows.kind)
        n = len(sp)
        buf, starts, ends = sp.buf, sp.starts, sp.ends
        native = _native.native if self.scanner else None
        pipe = cores.scan_pipe()  # a worker thread reads the lines where a core is free
        mv = memoryview(buf)
        k = 0
        while k < n:
            if native is not None:
                try:
                    k = native.scan(buf, starts, ends, k, n, line0, _native.out_lists(rows),
                                    pipe=pipe)
                except Exception as exc:  # a C bug must not cost the capture
                    fell_back("the C scanner failed on a reader's records; the Python "
                              "path read them instead (same rows, slower); please report "
                              "it", exc)
                    native = None
                    self.scanner = False
                    continue
                if k >= n:
                    break
            a, b = int(starts[k]), int(ends[k])
            self._one(mv[a:b], line0 + k, sp.record(k), buf, a, b)
            k += 1
        ctx = LineContext(line0, n)
        ctx.ts = sp.ts
        if sp.settle is not None:
            ctx.session = _codes_of(rows.sessions, self._settle_spans(sp, line0, r0))
        elif sp.session_of is not None:
            ctx.session = _codes_in_order(rows.sessions, sp.sessions, sp.session_of)
        else:
            ctx.session[:] = rows.sessions.codes([sp.session])[0]
        if sp.stream is None:
            ctx.stream[:] = rows.streams.codes([sp.streams[0]])[0]
        else:
            ctx.stream = _codes_in_order(rows.streams, sp.streams, sp.stream)
        ctx.direction = sp.direction
        ctx.size = ends - starts
        rows.blank += sp.blank
        if sp.extras:
            _spread_extras(rows, sp.extras, line0, r0, n)
        if sp.local_time:
            base = rows.base + r0
            rows.sparse["local_time"].update(dict.fromkeys(range(base, base + len(rows.kind)
                                                                 - r0), True))
        rows.flush(ctx)
        if sp.labels is not None and (self.kept is None or self.kept is sp.buf) \
                and not self.spans and self._kept_large(sp.buf):
            # a large document's texts: kept as its buffer's bytes, as a large NDJSON
            # file's stay in the file
            self.kept = sp.buf
            self.raw.extend([None] * n)
            self.kept_spans.append((line0, starts, ends - starts))
        elif not self._on_disk(sp):
            self.raw.extend(sp.texts())
        else:
            self.raw.extend([None] * n)
            self.spans.append((line0, starts + sp.offset, ends - starts))
        if type(sp.labels) is DocLabels:  # a document's, made when asked
            self.source.extend([None] * n)
            self.doc_labels.append((line0, sp.labels))
        elif sp.labels is not None:  # a document's: its own labels, in memory
            self.source.extend(sp.labels)
        else:
            self.source.extend([None] * n)
            self.labels.append((line0, sp.name, sp.lines))
        self.n += n

    def _settle_spans(self, sp: Spans, line0: int, r0: int) -> list[str]:
        """The session of each record of ``sp`` from its reader's ``settle`` step, given
        the kind, id key and method of the record's frame (as ``_settle`` gives the
        records their ``frames``); the ``extra`` it gives goes on the record's rows."""
        rows = self.rows
        n = len(sp)
        settle = sp.settle
        assert settle is not None
        kind, key, method = rows.kind, rows.id_key, rows.method
        methods = rows.methods.values
        base = rows.base
        extra = rows.extra
        if sp.settle_block is not None and len(kind) - r0 == n:  # one frame a record
            named = [*methods, None]  # code -1: no method
            said = sp.settle_block(list(map(KINDS.__getitem__, kind[r0:])), key[r0:],
                                   list(map(named.__getitem__, method[r0:])))
            if said is not None:
                sessions, extras = said
                for k, given in extras.items():
                    extra[base + r0 + k] = given
                return sessions
        line = np.asarray(rows.line[r0:], dtype=np.int64) - line0
        first = np.searchsorted(line, np.arange(n + 1)).tolist()
        out: list[str] = []
        for k in range(n):
            a, b = r0 + first[k], r0 + first[k + 1]
            if b == a + 1:
                mc = method[a]
                session, more = settle(k, KINDS[kind[a]], key[a],
                                       methods[mc] if mc >= 0 else None)
            else:
                session, more = settle(k, None, None, None)
            out.append(session)
            if more:
                for r in range(a, b):
                    extra[base + r] = more
        return out

    @staticmethod
    def _kept_large(buf: bytes) -> bool:
        from . import LAZY_TEXT_MIN_BYTES

        return len(buf) >= LAZY_TEXT_MIN_BYTES

    def _on_disk(self, sp: Spans) -> bool:
        """Whether the texts of ``sp`` stay in its file (read by offset when asked), as the
        NDJSON path keeps them: a file of one path, large enough, not a temporary copy."""
        if sp.offset is None or sp.path is None:
            return False
        if self.lazy is None:
            from . import KEEP_TEXT, LAZY_TEXT_MIN_BYTES

            keep = Path(sp.path) in KEEP_TEXT or os.path.getsize(sp.path) < LAZY_TEXT_MIN_BYTES
            self.lazy = "" if keep else sp.path
        return sp.path == self.lazy

    def _one(self, line: memoryview, j: int, rec: Record, buf: bytes, a: int, b: int) -> None:
        """One frame by the Python path: msgspec, or the reference (as the NDJSON path)."""
        rows = self.rows

        def slow(_: int) -> None:
            envs = tuple(classify(rec.raw))
            rec.frames = envs
            for env in envs:
                _envelope(rows, env, j)

        try:
            bytes(line).decode("utf-8")  # the reference refuses invalid UTF-8
            m = decoder.decode(line)
        except Exception:  # noqa: BLE001 - anything msgspec refuses: the reference decides
            slow(j)
            return
        scan((m,), (j,), rows, lambda _: buf.find(b"\\u", a, b) >= 0, slow)

    # -- what readers decide from the meaning -----------------------------------------------
    def _settle(self, recs: list[Record], line0: int, r0: int, frames: bool) -> None:
        if not frames and not any(r.settle is not None for r in recs):
            return
        rows = self.rows
        line = np.asarray(rows.line[r0:], dtype=np.int64) - line0
        first = np.searchsorted(line, np.arange(len(recs) + 1)).tolist()
        # each row's ref (a cancel's request, a progress token), for the envelopes and
        # the scouts' meanings alike
        refs = dict(zip(rows.ref_rows, rows.ref_vals, strict=True))
        envelope_of = self._envelopes(refs)
        kind, key, method, methods = rows.kind, rows.id_key, rows.method, rows.methods.values
        base = rows.base
        scanned = self.scanned
        for i, rec in enumerate(recs):
            step = rec.settle
            if step is None and not frames:
                continue
            if rec.frames is None:
                a, b = first[i], first[i + 1]
                if frames and step is None:  # a scout's, for an arrange step: what it reads
                    light: Any = tuple(Meaning(KINDS[kind[k]], key[k],
                                               methods[method[k]] if method[k] >= 0 else None,
                                               refs.get(base + k))
                                       for k in range(r0 + a, r0 + b))
                    rec.frames = light
                else:
                    rec.frames = (envelope_of(r0 + a),) if b == a + 1 else tuple(
                        envelope_of(r0 + k) for k in range(a, b))
                if frames:  # a scout's: its records' rows are made again, in their order
                    scanned.add(id(rec))
            if step is not None:
                rec.settle = None
                step(rec)

    def _envelopes(self, refs: dict[int, str]) -> Callable[[int], Envelope]:
        """The envelope of row ``k`` (of the current block's lists), as the scanner found
        it: a function with the block's lists and sparse columns at hand (``refs``: the
        rows' refs, by row)."""
        rows = self.rows
        base = rows.base
        kind, ident, key, method = rows.kind, rows.id, rows.id_key, rows.method
        methods = rows.methods.values
        sp = rows.sparse
        code, message, tool_error = sp["error_code"], sp["error_message"], sp["is_tool_error"]
        batch, reason, version = sp["batch"], sp["reason"], sp["version"]

        def envelope_of(k: int) -> Envelope:
            r = base + k
            mc = method[k]
            return Envelope(KINDS[kind[k]], ident[k], key[k], methods[mc] if mc >= 0 else None,
                            code.get(r), message.get(r), bool(tool_error.get(r, False)),
                            batch.get(r), reason.get(r), (), refs.get(r), None,
                            version.get(r))

        return envelope_of

    # -- context ---------------------------------------------------------------------------
    def _context(self, recs: list[Record], line0: int, r0: int, sizes: list[int]) -> None:
        rows = self.rows
        n = len(recs)
        ctx = LineContext(line0, n)
        ctx.ts = np.fromiter((np.nan if r.ts is None else r.ts for r in recs),
                             dtype=np.float64, count=n)
        ctx.session = rows.sessions.codes([r.session for r in recs])
        ctx.stream = rows.streams.codes([r.stream for r in recs])
        dget = DIR_CODE.get
        ctx.direction = np.fromiter((dget(r.direction, -1) for r in recs), dtype=np.int8,
                                    count=n)
        ctx.size = np.asarray(sizes, dtype=np.int64)
        if any(r.extra or r.local_time for r in recs):
            line = np.asarray(rows.line[r0:], dtype=np.int64) - line0
            first = np.searchsorted(line, np.arange(n + 1)).tolist()
            base = rows.base + r0
            lt = rows.sparse["local_time"]
            for i, rec in enumerate(recs):
                if rec.extra or rec.local_time:
                    for k in range(first[i], first[i + 1]):
                        if rec.extra:
                            rows.extra[base + k] = rec.extra
                        if rec.local_time:
                            lt[base + k] = True
        rows.flush(ctx)

    # -- the part ------------------------------------------------------------------------
    def part(self) -> Part:
        rows = self.rows
        rows.flush()
        n = len(rows)
        line = rows.column("line", np.int64)
        raw, source = self._texts(line)
        rows.column("tap_raw", bool)
        return Part(n=n, kind=rows.column("kind", np.int8), id=rows.column("id", object),
                    id_key=rows.column("id_key", object),
                    id_code=(rows.column("id_code", np.int32), rows.keys.values),
                    method=(rows.column("method", np.int32), rows.methods.values),
                    size=rows.column("size", np.int64), ts=rows.column("ts", np.float64),
                    session=(rows.column("session", np.int32), rows.sessions.values),
                    stream=(rows.column("stream", np.int32), rows.streams.values),
                    direction=rows.column("direction", np.int8), sparse=rows.sparse,
                    flags=dict(rows.flags), extra=rows.extra,
                    raw=raw, source=source, blank=rows.blank,
                    lines=self.n, ref=Sparse(rows.ref_rows, rows.ref_vals),
                    progress=Sparse(rows.prog_rows, rows.prog_vals, np.float64),
                    version=Sparse.from_dict(rows.sparse["version"]),
                    empty_result=Sparse(rows.empty_rows,
                                        np.ones(len(rows.empty_rows), dtype=bool), bool),
                    call=call_column(rows), listed=list_column(rows),
                    id_index=rows.keys.index or None,
                    long_keys=np.asarray(rows.long_keys, dtype=np.int64))



    def _placed(self, spans: list[Any], line: np.ndarray, raw: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
        """Where the texts of the rows ``line`` are (offset, length), from ``spans`` (row
        of its first record, offsets, lengths); a row no span covers keeps its own text
        (``raw``), as an override at offset 0."""
        off = np.full(self.n, -1, dtype=np.int64)
        length = np.zeros(self.n, dtype=np.int64)
        for r0, offsets, lengths in spans:
            off[r0:r0 + len(offsets)] = offsets
            length[r0:r0 + len(offsets)] = lengths
        rows_off, rows_len = off[line], length[line]
        kept = np.flatnonzero(rows_off < 0)
        return (np.where(rows_off < 0, 0, rows_off), rows_len,
                dict(zip(kept.tolist(), raw[kept].tolist(), strict=True)))

    def _texts(self, line: np.ndarray) -> tuple[TextSource, TextSource]:
        """The text and the source label of each row (of record ``line[row]``): in memory,
        or, for the records of spans, read from the file / made when asked."""
        n = len(line)
        lazy_doc = self._doc_labels_lazily()
        raw = np.fromiter(self.raw, dtype=object, count=len(self.raw))[line] if n else \
            np.empty(0, dtype=object)
        source = np.fromiter(self.source, dtype=object, count=len(self.source))[line] if n \
            else np.empty(0, dtype=object)
        text: TextSource = ListSource(raw)
        label: TextSource = ListSource(source)
        if self.spans and n:
            at, size, own = self._placed(self.spans, line, raw)
            text = FileSource(self.lazy or "", at, size, overrides=own)
        if self.kept_spans and n:
            assert self.kept is not None
            at, size, own = self._placed(self.kept_spans, line, raw)
            text = BufferSource(self.kept, at, size, overrides=own)
        if self.labels and n:
            names = {name for _, name, _ in self.labels}
            lines = np.zeros(self.n, dtype=np.int64)
            for r0, _, at in self.labels:
                lines[r0:r0 + len(at)] = at
            if len(names) == 1 and self.lazy:  # labels made when asked, as the NDJSON path
                named = np.flatnonzero(lines[line] == 0)
                label = LabelSource(names.pop(), lines[line], overrides=dict(zip(
                    named.tolist(), source[named].tolist(), strict=True)))
            else:  # texts in memory: so are the labels
                for r0, name, at in self.labels:
                    for k, line_no in enumerate(at.tolist()):
                        self.source[r0 + k] = f"{name}:{line_no}"
                label = ListSource(np.fromiter(self.source, dtype=object,
                                               count=len(self.source))[line])
        if lazy_doc and n:
            label = self._doc_label_source(line, source)
        return text, label

    def _doc_labels_lazily(self) -> bool:
        """Whether the documents' labels stay made when asked: one large document (its
        texts kept as its buffer's bytes, as a large NDJSON file's labels are made when
        asked), one prefix, no line format's labels beside them. Else they are made
        here, into ``source`` (texts in memory: so are the labels)."""
        if not self.doc_labels:
            return False
        if self.kept_spans and not self.spans and not self.labels and \
                len({d.prefix for _, d in self.doc_labels}) == 1:
            return True
        for r0, labels in self.doc_labels:
            self.source[r0:r0 + len(labels)] = labels.tolist()
        self.doc_labels = []
        return False

    def _doc_label_source(self, line: np.ndarray, source: np.ndarray) -> DocLabelSource:
        """The label of each row (of record ``line[row]``) from the documents' labels; a
        row of another record keeps its own (``source``)."""
        entry = np.full(self.n, -1, dtype=np.int64)
        response = np.zeros(self.n, dtype=bool)
        events = any(labels.event is not None for _, labels in self.doc_labels)
        event = np.full(self.n if events else 0, -1, dtype=np.int64)
        for r0, labels in self.doc_labels:
            entry[r0:r0 + len(labels)] = labels.entry
            response[r0:r0 + len(labels)] = labels.response
            if labels.event is not None:
                event[r0:r0 + len(labels)] = labels.event
        entry, response = entry[line], response[line]
        own = np.flatnonzero(entry < 0)
        return DocLabelSource(DocLabels(self.doc_labels[0][1].prefix, entry, response,
                                        event[line] if events else None),
                              overrides=dict(zip(own.tolist(), source[own].tolist(),
                                                 strict=True)))


def _spread_extras(rows: Rows, extras: Mapping[int, dict[str, Any]], line0: int, r0: int,
                   n: int) -> None:
    """Each record's ``extra`` on each of its rows (the ``n`` records of a run of spans,
    numbered from ``line0``, their rows from ``r0`` on), record by record in the order of
    ``extras``. Where every record with one has one row (the usual), the record's dict is
    the row's, put in by one ``update``: the store's extras are read, never changed in
    place (``Trace.extra`` and ``contexts`` give copies), and a million copies cost 0.2 GB
    of fresh memory at 1M messages. A record of several rows (a batch) gives each a copy."""
    base = rows.base + r0
    at = getattr(extras, "at", None)  # a document's run (readers._spans.RunExtras)
    keys = at if at is not None else np.fromiter(extras, dtype=np.int64, count=len(extras))
    lines = rows.line
    if len(lines) - r0 == n and n and lines[r0] == line0 and lines[-1] == line0 + n - 1:
        # n rows whose (ascending) lines run from the first record's to the last's: one
        # row a record, record k's row is r0 + k
        rows.extra.update(zip((keys + base).tolist(), extras.values(), strict=True))
        return
    line = np.asarray(rows.line[r0:], dtype=np.int64) - line0
    first = np.searchsorted(line, np.arange(n + 1))
    lo, hi = first[keys], first[keys + 1]
    if bool((hi - lo == 1).all()):
        rows.extra.update(zip((lo + base).tolist(), extras.values(), strict=True))
        return
    for a, b, extra in zip(lo.tolist(), hi.tolist(), extras.values(), strict=True):
        for r in range(a, b):
            rows.extra[base + r] = dict(extra)


def _codes_of(codes: Any, values: list[Any]) -> np.ndarray:
    """``codes.codes(values)``, at once where every value is the first (a run of spans on
    one connection: one session)."""
    if values and values.count(values[0]) == len(values):
        return np.full(len(values), codes.codes(values[:1])[0], dtype=np.int32)
    return codes.codes(values)


def _codes_in_order(codes: Any, values: tuple[str, ...], of: np.ndarray) -> np.ndarray:
    """The codes of ``values[of[k]]`` for every ``k``, the values new to ``codes`` given
    theirs in the order they first appear in ``of`` (as record by record)."""
    if not len(of):
        return np.zeros(0, dtype=np.int32)
    used, first = np.unique(of, return_index=True)
    used = used[np.argsort(first)]
    table = np.full(len(values), -1, dtype=np.int32)
    table[used] = codes.codes([values[k] for k in used.tolist()])
    return table[of]


def _size(rec: Record) -> int:
    if rec.size is not None:
        return rec.size
    return len(rec.raw.encode("utf-8", "surrogateescape"))


def _forced(rows: Rows, rec: Record, j: int) -> None:
    r = len(rows)
    rows.kind.append(KIND_CODE[rec.kind or "log"])
    rows.id.append(None)
    rows.id_key.append(None)
    rows.method.append(-1)
    rows.line.append(j)
    if rec.reason is not None:
        rows.sparse["reason"][r] = rec.reason
    rec.frames = ()


def _envelope(rows: Rows, env: Envelope, j: int) -> None:
    """Append the row of one envelope the reference classifier made (as ``add_columns``)."""
    r = len(rows)
    rows.kind.append(KIND_CODE[env.kind])
    rows.id.append(env.id)
    rows.id_key.append(env.id_key)
    rows.method.append(rows.method_code(env.method))
    rows.line.append(j)
    sp = rows.sparse
    for name in SPARSE:
        if name == "local_time":
            continue
        v = getattr(env, name)
        if v is not None and v is not False:
            sp[name][r] = v
    if env.ref is not None:
        rows.ref_rows.append(r)
        rows.ref_vals.append(env.ref)
    if env.progress is not None:
        rows.prog_rows.append(r)
        rows.prog_vals.append(env.progress)
    if env.flags:
        rows.flags.append((r, env.flags))
