"""What the conversation rules read: the frames of the methods they need, decoded once.

A :class:`View` wraps the checker's column input (``engine.checks.VecInput``): it
selects rows by method code first (a numpy mask, no text read), decodes only the frames a
rule asks for (cached per frame), and knows each session's negotiated version, the
``initialize`` exchange and the pairs. Nothing here opens a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any, NamedTuple

import msgspec
import numpy as np
import pandas as pd

from ..protocol import versions as V
from ..protocol.envelope import bounded_recursion
from ..protocol.vocab import OUTCOMES

__all__ = ["Hit", "View", "Params", "Call", "pointer_text", "view_of"]

REQUEST, NOTIFICATION, RESULT, ERROR = 0, 1, 2, 3
_DIR = {0: "c2s", 1: "s2c"}
_DUPLICATE = OUTCOMES.index("duplicate")
_decode = msgspec.json.decode


class Hit(NamedTuple):
    """One finding: the frame, a related frame, what is wrong, and the JSON pointer of the
    failing member when there is one (for the inspector's highlight)."""

    seq: int
    related: int | None
    detail: str
    pointer: str | None = None


def pointer_text(path: Iterable[Any]) -> str:
    """An RFC 6901 JSON pointer from path parts."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "".join("/" + p for p in parts)


class Params(msgspec.Struct, gc=False):
    """The members of a request's params the contract rules read (decoded by type: the rest
    of the message is skipped, ``arguments`` kept as its raw JSON text, b"" when absent)."""

    name: Any = None
    uri: Any = None
    cursor: Any = msgspec.UNSET
    task: Any = msgspec.UNSET
    arguments: msgspec.Raw = msgspec.Raw()


#: what :meth:`View.calls` gives of a request: (name, uri, arguments text, task given,
#: cursor given)
Call = tuple[Any, Any, bytes, bool, bool]


class _Request(msgspec.Struct, gc=False):
    params: Params | None = None


class _Answer(msgspec.Struct, gc=False):
    result: msgspec.Raw = msgspec.Raw()


_request = msgspec.json.Decoder(_Request).decode
_answer = msgspec.json.Decoder(_Answer).decode
_EMPTY = Params()


def _utf8(text: Any) -> Any:
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text


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


class View:
    def __init__(self, vi: Any) -> None:
        self.vi = vi
        self._bodies: dict[int, Any] = {}
        self._memo: dict[str, Any] = {}
        #: set by the caller: leave out what needs many frames decoded (a large capture)
        self.light = False
        #: set by the caller: tool-arguments-schema judges only arguments that are no
        #: object (the schema validation of the rest deferred: conversation.DEEP)
        self.shallow_arguments = False

    def memo(self, key: str, fn: Any) -> Any:
        """``fn(self)`` computed once per view (rules that build on another's result)."""
        if key not in self._memo:
            self._memo[key] = fn(self)
        return self._memo[key]

    # -- rows ------------------------------------------------------------------------------
    def method_codes(self, names: Iterable[str]) -> np.ndarray:
        want = set(names)
        return np.asarray([i for i, m in enumerate(self.vi.method_cats) if m in want],
                          dtype=np.int32)

    def _method_table(self, names: Iterable[str]) -> np.ndarray:
        """A lookup table over method codes (code -1, no method, in the last slot: False):
        ``table[vi.method]`` is ``np.isin(vi.method, method_codes(names))``, without a sort."""
        table = np.zeros(len(self.vi.method_cats) + 1, dtype=bool)
        table[self.method_codes(names)] = True
        return table

    def rows(self, names: Iterable[str] | None = None,
             kinds: Sequence[int] = (REQUEST, NOTIFICATION)) -> list[int]:
        """Rows of these kinds whose method is one of ``names`` (None: any method)."""
        return self.row_array(names, kinds).tolist()  # type: ignore[no-any-return]

    def row_array(self, names: Iterable[str] | None = None,
                  kinds: Sequence[int] = (REQUEST, NOTIFICATION)) -> np.ndarray:
        """:meth:`rows` as an int64 array (no list of a large capture's rows)."""
        vi = self.vi
        kind_table = np.zeros(256, dtype=bool)  # kinds are small codes (vocab.KINDS)
        kind_table[np.asarray(kinds, dtype=np.int64)] = True
        mask = kind_table[vi.kind]
        if names is not None:
            mask &= self._method_table(names)[vi.method]
        else:
            mask &= vi.method >= 0
        return np.flatnonzero(mask).astype(np.int64, copy=False)

    def sessions_of(self, version: str) -> list[int]:
        """The session codes checked against ``version``."""
        vi = self.vi
        return [c for c in range(-1, len(vi.session_cats))
                if V.normalise(vi.version_of(c)) == version]

    def groups(self, rows: np.ndarray, *columns: np.ndarray, want: Any = None
               ) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """``rows`` grouped by the values of ``columns`` at them (small ints, e.g. codes):
        ``[(values, rows of the group)]``. ``want(values)``, when given, picks the groups
        to make (decided once per distinct values, before any sort of the rows)."""
        if not len(rows):
            return []
        key = np.zeros(len(rows), dtype=np.int64)
        cols = [c[rows].astype(np.int64) for c in columns]
        spans = []
        for c in cols:
            lo = int(c.min())
            spans.append((lo, int(c.max()) - lo + 1))
            key = key * spans[-1][1] + (c - lo)
        if want is not None:
            size = 1
            for _, n in spans:
                size *= n
            if size <= 1 << 22:  # a table of seen keys: no sort
                seen = np.zeros(size, dtype=bool)
                seen[key] = True
                distinct = np.flatnonzero(seen)
            else:
                distinct = np.unique(key)
            values = []
            rest = distinct.copy()
            for lo, n in reversed(spans):
                values.append(rest % n + lo)
                rest //= n
            heads0 = [v.tolist() for v in reversed(values)]
            picked = [k for g, k in enumerate(distinct.tolist())
                      if want(tuple(h[g] for h in heads0))]
            if len(picked) < len(distinct):
                sel = np.isin(key, np.asarray(picked, dtype=np.int64))
                rows, key, cols = rows[sel], key[sel], [c[sel] for c in cols]
                if not len(rows):
                    return []
        # one stable sort: groups in key order, each group's rows in their own order
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts = np.flatnonzero(np.concatenate(([True], sk[1:] != sk[:-1])))
        bounds = np.append(starts, len(sk)).tolist()
        firsts = order[starts]
        heads = [c[firsts].tolist() for c in cols]
        return [(tuple(h[g] for h in heads), rows[order[bounds[g]:bounds[g + 1]]])
                for g in range(len(starts))]

    def message_rows(self) -> list[int]:
        return self.rows(None)

    @cached_property
    def _pair_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.vi.pairs
        ok = (p.request_seq >= 0) & (p.response_seq >= 0) & (p.outcome != _DUPLICATE)
        return p.request_seq[ok], p.response_seq[ok], p.method[ok]

    def answered(self, names: Iterable[str] | None = None,
                 kind: str | None = None) -> list[tuple[int, int]]:
        """``(request seq, first response seq)`` of answered requests of these methods."""
        req, resp, method = self._pair_arrays
        mask = np.ones(len(req), dtype=bool)
        if names is not None:
            mask &= self._method_table(names)[method]
        if kind is not None:
            mask &= self.vi.kind[resp] == (RESULT if kind == "result" else ERROR)
        return list(zip(req[mask].tolist(), resp[mask].tolist(), strict=True))

    @cached_property
    def response_of(self) -> _ResponseOf:
        req, resp, _ = self._pair_arrays
        return _ResponseOf(req, resp)

    # -- one frame ---------------------------------------------------------------------------
    def body(self, seq: int) -> Any:
        """The decoded message of frame ``seq`` (None when it does not decode)."""
        if seq in self._bodies:
            return self._bodies[seq]
        self.prefetch([seq])
        return self._bodies[seq]

    def prefetch(self, seqs: Sequence[int]) -> None:
        todo = [s for s in seqs if s not in self._bodies]
        if not todo:
            return
        texts = self.vi.texts(np.asarray(todo, dtype=np.int64))
        batches = self.vi.batch[np.asarray(todo, dtype=np.int64)].tolist()
        with bounded_recursion():
            for seq, text, batch in zip(todo, texts, batches, strict=True):
                value: Any = None
                if text is not None:
                    try:
                        value = _decode(text.encode("utf-8", "surrogateescape")
                                        if isinstance(text, str) else text)
                    except (msgspec.DecodeError, RecursionError):
                        value = None
                if batch >= 0 and isinstance(value, list):
                    value = value[batch] if batch < len(value) else None
                self._bodies[seq] = value

    def texts(self, seqs: Sequence[int]) -> list[Any]:
        """The raw texts of frames ``seqs`` (not kept: the typed readers below keep what
        they decode)."""
        return self.vi.texts(np.asarray(seqs, dtype=np.int64)) if len(seqs) else []

    def containing(self, seqs: Sequence[int], needles: Sequence[str]) -> list[int]:
        """The frames of ``seqs`` whose raw text holds one of ``needles`` (a prefilter: a
        member a condition reads cannot be there when its name is not in the text, unless
        written with escapes: a text with a ``\\u`` escape is kept)."""
        return [s for s, text in zip(seqs, self.texts(seqs), strict=True)
                if text is not None and (any(n in text for n in needles) or "\\u" in text)]

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
            return self.vi.call.values[pos].tolist()  # type: ignore[no-any-return]
        out: list[Any] = [None] * len(rows)
        at = np.flatnonzero(hit)
        if len(at):
            for k, v in zip(at.tolist(), self.vi.call.values[pos[at]].tolist(), strict=True):
                out[k] = v
        miss = np.flatnonzero(~hit)
        for k, p in zip(miss.tolist(), self._decoded_params(rows[miss].tolist()), strict=True):
            out[k] = (p.name, p.uri, bytes(p.arguments), p.task is not msgspec.UNSET,
                      p.cursor is not msgspec.UNSET)
        return out

    def listed_members(self, seqs: Sequence[int], member: str) -> list[Any]:
        """The ``member`` of each result of ``seqs``, for the list walks: its JSON text
        (bytes) from the loader's list column where it holds the row (no text read), else
        the decoded member from the frame's text; None when the result has no such member
        (or is no object)."""
        rows = np.asarray(seqs, dtype=np.int64)
        hit, pos = self._in_column(rows, "listed")
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
                    rows[hit].tolist(), self.vi.call.values[pos[hit]].tolist(), strict=True):
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

    def scopes(self, seqs: Sequence[int]) -> list[int]:
        """The contract scope of each frame: its session, or -2 for every 2026-07-28 frame
        (no sessions there: the capture is the scope)."""
        table: dict[int, int] = self.__dict__.setdefault("_scopes", {})
        out = []
        for code in np.asarray(self.vi.session)[np.asarray(seqs, dtype=np.int64)].tolist() \
                if len(seqs) else []:
            got = table.get(code)
            if got is None:
                got = table[code] = -2 if V.normalise(self.vi.version_of(code)) == V.LATEST \
                    else code
            out.append(got)
        return out

    def scope_array(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`scopes` as an int64 array (a table over session codes, no loop per row)."""
        table = self.__dict__.get("_scope_table")
        if table is None:
            vi = self.vi
            codes = [*range(len(vi.session_cats)), -1]  # code -1 in the last slot
            table = self.__dict__["_scope_table"] = np.asarray(
                [-2 if V.normalise(vi.version_of(c)) == V.LATEST else c for c in codes],
                dtype=np.int64)
        return table[np.asarray(self.vi.session)[np.asarray(rows, dtype=np.int64)]]  # type: ignore[no-any-return]

    def params(self, seq: int) -> dict[str, Any]:
        msg = self.body(seq)
        p = msg.get("params") if isinstance(msg, dict) else None
        return p if isinstance(p, dict) else {}

    def result(self, seq: int) -> dict[str, Any] | None:
        msg = self.body(seq)
        r = msg.get("result") if isinstance(msg, dict) else None
        return r if isinstance(r, dict) else None

    def error(self, seq: int) -> dict[str, Any] | None:
        msg = self.body(seq)
        e = msg.get("error") if isinstance(msg, dict) else None
        return e if isinstance(e, dict) else None

    def error_code(self, seq: int) -> int | None:
        """error.code of an error frame, from the envelope column (no decoding)."""
        code = self.vi.error_code[seq]
        return None if code is None or code is pd.NA or code != code else int(code)

    def method(self, seq: int) -> str | None:
        code = int(self.vi.method[seq])
        return None if code < 0 else self.vi.method_cats[code]

    def direction(self, seq: int) -> str | None:
        return _DIR.get(int(self.vi.direction[seq]))

    def session(self, seq: int) -> int:
        return int(self.vi.session[seq])

    def version(self, seq: int) -> str:
        return V.normalise(self.vi.version_of(int(self.vi.session[seq])))

    def extra(self, seq: int) -> dict[str, Any]:
        return self.vi.extra.get(seq, {})

    # -- sessions ------------------------------------------------------------------------------
    @cached_property
    def initialize(self) -> dict[int, tuple[dict[str, Any], dict[str, Any] | None, int, int | None]]:
        """session code -> (initialize params, its result or None, request seq, result seq):
        the first initialize request of each session."""
        out: dict[int, tuple[dict[str, Any], dict[str, Any] | None, int, int | None]] = {}
        for seq in self.rows(["initialize"], (REQUEST,)):
            s = self.session(seq)
            if s in out:
                continue
            resp = self.response_of.get(seq)
            result = self.result(resp) if resp is not None else None
            out[s] = (self.params(seq), result, seq, resp if result is not None else None)
        return out


class _ResponseOf:
    """request seq -> its first response's seq, as a read-only mapping over the pair
    arrays (a binary search per look-up; no dict of every pair of a large capture)."""

    def __init__(self, req: np.ndarray, resp: np.ndarray) -> None:
        order = np.argsort(req, kind="stable")
        self._req, self._resp = req[order], resp[order]

    def _find(self, seq: Any) -> int:
        try:
            key = int(seq)
        except (TypeError, ValueError):
            return -1
        # the last of equal keys, as the dict of every pair (later ones won) answered
        i = int(np.searchsorted(self._req, key, side="right")) - 1
        return i if i >= 0 and int(self._req[i]) == key else -1

    def get(self, seq: Any, default: Any = None) -> Any:
        i = self._find(seq)
        return int(self._resp[i]) if i >= 0 else default

    def __getitem__(self, seq: Any) -> int:
        i = self._find(seq)
        if i < 0:
            raise KeyError(seq)
        return int(self._resp[i])

    def __contains__(self, seq: Any) -> bool:
        return self._find(seq) >= 0

    def __len__(self) -> int:
        return len(self._req)


def view_of(vi: Any) -> View:
    """The view of a check input, made once per input (every conversation rule shares it)."""
    got = vi.__dict__.get("_conversation_view")
    if got is None:
        got = View(vi)
        vi.__dict__["_conversation_view"] = got
    return got


_KINDS = ("request", "notification", "result", "error", "invalid", "stderr", "log")


class ListInput:
    """The column input the view reads, made from the reference checker's plain lists
    (the oracle's ``CheckInput`` (tests)), so both checkers give the same findings."""

    def __init__(self, ci: Any) -> None:
        kind_code = {k: i for i, k in enumerate(_KINDS)}
        self.kind = np.asarray([kind_code.get(k, 4) for k in ci.kind], dtype=np.int8)
        self.session_cats = list(dict.fromkeys(ci.session))
        s_code = {s: i for i, s in enumerate(self.session_cats)}
        self.session = np.asarray([s_code[s] for s in ci.session], dtype=np.int32)
        self.method_cats = sorted({m for m in ci.method if isinstance(m, str)})
        m_code = {m: i for i, m in enumerate(self.method_cats)}
        self.method = np.asarray([m_code.get(m, -1) if isinstance(m, str) else -1
                                  for m in ci.method], dtype=np.int32)
        d_code = {"c2s": 0, "s2c": 1}
        self.direction = np.asarray([d_code.get(d, -1) for d in ci.direction], dtype=np.int8)
        self.batch = np.asarray([-1 if b is None else b for b in ci.batch], dtype=np.int32)
        self.size = np.asarray([len(r.encode("utf-8", "surrogateescape")) if r else 0
                                for r in ci.raw], dtype=np.int64)
        self.id_key = np.asarray(ci.id_key, dtype=object)
        self.error_code = np.asarray([np.nan if c is None else c for c in ci.error_code],
                                     dtype=float)
        self.extra = ci.extra
        self._raw = ci.raw
        self.versions = ci.versions
        self.pairs = _Pairs(ci.pairs, self.method, m_code)

    def texts(self, rows: np.ndarray) -> list[str | None]:
        return [self._raw[i] for i in np.asarray(rows).tolist()]

    def version_of(self, code: int) -> str:
        s = self.session_cats[code] if code >= 0 else None
        return self.versions.get(s, V.DEFAULT)


class _Pairs:
    def __init__(self, rows: Any, method: np.ndarray, m_code: dict[str, int]) -> None:
        self.request_seq = np.asarray([-1 if r.request_seq is None else r.request_seq
                                       for r in rows], dtype=np.int64)
        self.response_seq = np.asarray([-1 if r.response_seq is None else r.response_seq
                                        for r in rows], dtype=np.int64)
        self.method = np.asarray([m_code.get(r.method, -1) if isinstance(r.method, str) else -1
                                  for r in rows], dtype=np.int32)
        self.outcome = np.asarray([_DUPLICATE if r.outcome == "duplicate" else 0
                                   for r in rows], dtype=np.int8)
