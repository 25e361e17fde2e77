"""The decoding of the call and list columns: what the contract rules read of a request's
params (:class:`Params`, :data:`Call`) and of a list answer's members, from the loader's
call and list columns where they hold the row (no text read), else decoded by type from
the frame's text (cached per frame, or per distinct text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np

from ..fast.store import ArgTexts
from ..fast.store import Call as Call  # (name, uri, arguments text, task, cursor)
from ..protocol.envelope import bounded_recursion
from ._frames import Frames, _decode


class Params(msgspec.Struct, gc=False):
    """The members of a request's params the contract rules read (decoded by type: the rest
    of the message is skipped, ``arguments`` kept as its raw JSON text, b"" when absent)."""

    name: Any = None
    uri: Any = None
    cursor: Any = msgspec.UNSET
    task: Any = msgspec.UNSET
    arguments: msgspec.Raw = msgspec.Raw()


class _Request(msgspec.Struct, gc=False):
    params: Params | None = None


class _Answer(msgspec.Struct, gc=False):
    result: msgspec.Raw = msgspec.Raw()


_request = msgspec.json.Decoder(_Request).decode
_answer = msgspec.json.Decoder(_Answer).decode
_EMPTY = Params()


def _requests_of(texts: list[Any], single: list[bool]) -> list[Params | None]:
    """The typed params of each text (None: refused, or not a frame of its own). One decode
    per text: joining the texts into one array first costs more (a join of mixed-width
    strings copies and widens every one)."""
    out: list[Params | None] = [None] * len(texts)
    for k, (text, one) in enumerate(zip(texts, single, strict=True)):
        if one and text is not None:
            try:  # a str straight in (no copy); one with lone surrogates is refused
                out[k] = _request(text).params or _EMPTY
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                pass
    return out


class Columns(Frames):
    """The readers of the call and list columns (the base of :class:`~._view.View`)."""

    def _in_column(self, rows: np.ndarray, name: str = "call") -> tuple[np.ndarray, np.ndarray]:
        """Where ``rows`` are in the loader's column ``name`` (call, listed): (hit mask,
        position)."""
        col = getattr(self.vi, name, None)
        if col is None or not len(col) or not len(rows):
            return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=np.int64)
        pos = np.minimum(np.searchsorted(col.rows, rows), len(col.rows) - 1)
        return col.rows[pos] == rows, pos

    def calls(self, seqs: Sequence[int] | np.ndarray) -> list[Call]:
        """``(name, uri, arguments JSON text or b"", task given, cursor given)`` of requests
        ``seqs``: from the loader's call column where it holds the row (no text read), else
        from the frame's text (:meth:`request_params`)."""
        rows = np.asarray(seqs, dtype=np.int64)
        if not len(rows):
            return []
        hit, pos = self._in_column(rows)
        if hit.all():
            return self.vi.call.entries(pos)  # type: ignore[no-any-return]
        out: list[Any] = [None] * len(rows)
        at = np.flatnonzero(hit)
        if len(at):
            for k, v in zip(at.tolist(), self.vi.call.entries(pos[at]), strict=True):
                out[k] = v
        miss = np.flatnonzero(~hit)
        for k, p in zip(miss.tolist(), self._decoded_params(rows[miss].tolist()), strict=True):
            out[k] = (p.name, p.uri, bytes(p.arguments), p.task is not msgspec.UNSET,
                      p.cursor is not msgspec.UNSET)
        return out

    def call_codes(self, seqs: np.ndarray, member: str = "name"
                   ) -> tuple[np.ndarray, list[Any], ArgTexts]:
        """The ``member`` (name or uri) of requests ``seqs`` as codes (-1: absent or no
        string) into a table of the distinct strings, and their arguments texts (b"" when
        absent): from the call column's codes and blob where it holds every row (no object
        per request), else from :meth:`calls`."""
        rows = np.asarray(seqs, dtype=np.int64)
        hit, pos = self._in_column(rows)
        if len(rows) and hit.all():
            col = self.vi.call
            return getattr(col, member)[pos].astype(np.int64), col.strs, col.arg_texts(pos)
        got = self.calls(rows)
        k = 0 if member == "name" else 1
        table: dict[Any, int] = {}
        codes = np.fromiter((table.setdefault(c[k], len(table)) if c[k].__class__ is str
                             else -1 for c in got), dtype=np.int64, count=len(got))
        return codes, list(table), ArgTexts.of([c[2] for c in got])

    def call_flags(self, seqs: np.ndarray) -> np.ndarray:
        """The flags of requests ``seqs`` (1: a task member, 2: a cursor member), from the
        call column's flags where it holds every row."""
        rows = np.asarray(seqs, dtype=np.int64)
        hit, pos = self._in_column(rows)
        if len(rows) and hit.all():
            return self.vi.call.flags[pos].astype(np.int64)
        return np.fromiter(((1 if c[3] else 0) | (2 if c[4] else 0) for c in self.calls(rows)),
                           dtype=np.int64, count=len(rows))

    def listed_members(self, seqs: Sequence[int], member: str) -> list[Any]:
        """The ``member`` of each result of ``seqs``, for the list walks: its JSON text
        (bytes) from the loader's list column where it holds the row (no text read), else
        the decoded member from the frame's text; None when the result has no such member
        (or is no object)."""
        rows = np.asarray(seqs, dtype=np.int64)
        hit, pos = self._in_column(rows, "listed")
        if len(rows) and hit.all():
            return [v.get(member) for v in self.vi.listed.values[pos].tolist()]
        out: list[Any] = [None] * len(rows)
        at = np.flatnonzero(hit)
        if len(at):
            for k, v in zip(at.tolist(), self.vi.listed.values[pos[at]].tolist(), strict=True):
                out[k] = v.get(member)
        miss = np.flatnonzero(~hit)
        if len(miss):
            for k, raw in zip(miss.tolist(), self.raw_results(rows[miss].tolist()), strict=True):
                result = self.parsed(raw) if raw is not None else None
                out[k] = result.get(member) if isinstance(result, dict) else None
        return out

    def request_params(self, seqs: Sequence[int]) -> list[Params]:
        """:class:`Params` of requests ``seqs`` (the members the contract rules read): from
        the loader's call column where it holds the row, else decoded by type from the
        text (:meth:`_decoded_params`)."""
        cache: dict[int, Params] = self.__dict__.setdefault("_params", {})
        rows = np.asarray([s for s in seqs if s not in cache], dtype=np.int64)
        hit, pos = self._in_column(rows)
        if hit.any():
            for s, (name, uri, args, task, cursor) in zip(
                    rows[hit].tolist(), self.vi.call.entries(pos[hit]), strict=True):
                cache[s] = Params(name=name, uri=uri, arguments=msgspec.Raw(args),
                                  task=True if task else msgspec.UNSET,
                                  cursor=True if cursor else msgspec.UNSET)
        if not hit.all():
            self._decoded_params(rows[~hit].tolist())
        return [cache[s] for s in seqs]

    def _decoded_params(self, seqs: Sequence[int]) -> list[Params]:
        """:class:`Params` of requests ``seqs``, decoded by type from their texts (cached per
        frame); a frame the typed decoder refuses (a batch element, params not an object)
        goes the general way."""
        cache: dict[int, Params] = self.__dict__.setdefault("_params", {})
        todo = [s for s in seqs if s not in cache]
        if todo:
            texts = self.texts(todo)
            single = (self.vi.batch[np.asarray(todo, dtype=np.int64)] < 0).tolist()
            got = _requests_of(texts, single)
            for k, p in enumerate(got):
                if p is None:
                    got[k] = self._params_of(todo[k])
            cache.update(zip(todo, got, strict=True))  # type: ignore[arg-type]
        return [cache[s] for s in seqs]

    def _params_of(self, seq: int) -> Params:
        p = self.params(seq)
        args = msgspec.Raw(msgspec.json.encode(p["arguments"])) if "arguments" in p \
            else msgspec.Raw()
        return Params(name=p.get("name"), uri=p.get("uri"),
                      cursor=p["cursor"] if "cursor" in p else msgspec.UNSET,
                      task=p["task"] if "task" in p else msgspec.UNSET, arguments=args)

    def raw_results(self, seqs: Sequence[int]) -> list[bytes | None]:
        """The raw JSON text of each result of ``seqs`` (None: not an object), found by a
        scan that builds no objects (a batch element goes the general way)."""
        out: list[bytes | None] = []
        batch = self.vi.batch
        for seq, text in zip(seqs, self.texts(seqs), strict=True):
            raw: bytes | None = None
            if text is not None and batch[seq] < 0:
                try:
                    raw = bytes(_answer(text).result)
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                    raw = None
            else:
                result = self.result(seq)
                raw = msgspec.json.encode(result) if result is not None else None
            out.append(raw if raw and raw[:1] == b"{" else None)
        return out

    def parsed(self, raw: bytes) -> Any:
        """``raw`` decoded, once per distinct text in this view (real traffic repeats its
        lists: one server answers tools/list alike in every session)."""
        cache: dict[bytes, Any] = self.__dict__.setdefault("_parsed", {})
        if raw not in cache:
            with bounded_recursion():
                try:
                    cache[raw] = _decode(raw)
                except (msgspec.DecodeError, RecursionError):
                    cache[raw] = None
        return cache[raw]
