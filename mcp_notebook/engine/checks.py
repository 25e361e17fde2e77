"""The checks behind the rule catalogue: one registered check per rule, over the columns.

Sans-IO: a :class:`VecInput` holds numpy columns (codes for categorical values), the
sparse per-frame flags, the pairing's :class:`~mcp_notebook.engine.pairing.PairTable`
and the version of each session. A check is a function ``check(vi) -> (seq, related,
details)`` registered under its rule's code with :func:`check`; ``check(code,
rows=True)`` registers one that reads frame text, given only the rows of the sessions
its rule applies to. The checks of the catalogue live in :mod:`mcp_notebook.engine.rules`
(one module per group of rules, loaded on first use); a package outside can add rules
the same way (a :class:`~mcp_notebook.protocol.rules.Rule` registered with the catalogue and
a check registered here).
"""

from __future__ import annotations

import importlib
import pkgutil
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from typing import Any, NamedTuple

import numpy as np

from ..protocol import versions as V
from ..protocol.rules import RULES, Rule
from ..protocol.vocab import DIRECTIONS, KINDS, Kind
from .pairing import PairTable

__all__ = ["VecInput", "VecHits", "CHECKS", "ROW_CHECKS", "check", "run_vec",
           "run_vec_columns", "session_versions_vec",
           "distinct_codes", "hits", "Hits", "PeerClosed", "PEER_CLOSED", "TAP_EVENTS",
           "tap_event"]

REQUEST, NOTIFICATION, RESULT, ERROR = Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR
DIRS = (None, *DIRECTIONS)
Hits = tuple[np.ndarray, np.ndarray, Sequence[str]]  # seq, related (-1: none), details
NONE = np.empty(0, dtype=np.int64)

#: rule code -> its check over the whole input
CHECKS: dict[str, Callable[[VecInput], Hits]] = {}
#: rule code -> its check that reads frame text, given the rows its rule applies to
ROW_CHECKS: dict[str, Callable[[VecInput, np.ndarray], Hits]] = {}
#: packages whose modules register checks when imported (each module, once)
RULE_PACKAGES: list[str] = [f"{__package__}.rules"]
_loaded: set[str] = set()


def check(code: str | Rule, *, rows: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated function as the check of rule ``code``.

    Given a :class:`Rule`, the rule is added to the catalogue too (a rule in one module).
    ``rows=True``: the check reads frame text and takes ``(vi, rows)``, the rows of the
    sessions whose version the rule applies to.
    """
    if isinstance(code, Rule):
        RULES.register(code)
        code = code.code

    def register(fn: Callable) -> Callable:
        (ROW_CHECKS if rows else CHECKS)[code] = fn
        return fn
    return register


def load_rule_modules() -> None:
    """Import every module of :data:`RULE_PACKAGES` (each registers its checks)."""
    for pkg in RULE_PACKAGES:
        if pkg in _loaded:
            continue
        mod = importlib.import_module(pkg)
        for info in pkgutil.iter_modules(mod.__path__):
            importlib.import_module(f"{pkg}.{info.name}")
        _loaded.add(pkg)


#: the names :meth:`VecInput.marks` looks for: a frame names a member only where its text
#: holds the name, or an escape that may spell it (``\\u``, ``\\/``; no other escape can
#: be in these names)
MARKS = ('"resultType"', '"resultType":"complete"', '"input_required"', "inputRequests",
         "\\u", "\\/")
MARK = {m: 1 << i for i, m in enumerate(MARKS)}
TWICE = 1 << len(MARKS)  # the text holds "resultType" more than once
NO_TEXT = 1 << (len(MARKS) + 1)


def text_marks(vi: Any, rows: np.ndarray) -> np.ndarray:
    """What the texts of ``rows`` hold among :data:`MARKS` (bit ``1 << i`` for
    ``MARKS[i]``, :data:`TWICE`, :data:`NO_TEXT` where a row has no text), aligned with
    ``rows``; ``vi`` is a check input (its ``kind``, ``texts`` and ``cache``).

    Several rules sift the same frames by the names in their text (the 2026 results:
    resultType, input_required, inputRequests) before they decode the few that name them;
    each row's text is read once for all of them."""
    table = vi.cache.get("marks")
    if table is None:
        table = vi.cache["marks"] = np.full(len(vi.kind), -1, dtype=np.int16)
    rows = np.asarray(rows, dtype=np.int64)
    todo = rows[table[rows] < 0]
    if len(todo):
        table[todo] = list(map(_marks_of, vi.texts(todo)))
    return table[rows]


def _marks_of(t: str | None) -> int:
    if t is None:
        return NO_TEXT
    m = 0
    if '"resultType"' in t:
        m = MARK['"resultType"']
        if '"resultType":"complete"' in t:
            m |= MARK['"resultType":"complete"']
        if t.count('"resultType"') > 1:
            m |= TWICE
    if "input" in t:
        if '"input_required"' in t:
            m |= MARK['"input_required"']
        if "inputRequests" in t:
            m |= MARK["inputRequests"]
    if "\\" in t:
        if "\\u" in t:
            m |= MARK["\\u"]
        if "\\/" in t:
            m |= MARK["\\/"]
    return m


#: the members of a row's extras the rules read: a transport's findings (``ambiguous``,
#: ``rule``, ``sse_event``: rules/transport.py) and what a capture does not hold
#: (``answer_not_held``, ``request_not_held``: rules/exchange.py)
RULE_EXTRA_KEYS = ("ambiguous", "rule", "sse_event", "answer_not_held", "request_not_held")


@dataclass
class VecInput:
    kind: np.ndarray  # int8 codes (KINDS)
    session: np.ndarray  # int32 codes
    session_cats: list[Any]
    direction: np.ndarray  # int8: 0 c2s, 1 s2c, -1 none
    id_key: np.ndarray  # object
    method: np.ndarray  # int32 codes
    method_cats: list[Any]
    error_code: Any  # Int64 array
    flags: dict[int, tuple[str, ...]]
    batch: np.ndarray  # int32, -1 none
    size: np.ndarray  # int64 bytes of each frame's text
    texts: Callable[[np.ndarray], list[str | None]]  # frame text of rows, read on demand
    pairs: PairTable
    versions: dict[Any, str]  # session -> checked version
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    # rows of results known to hold no member but _meta (their text need not be read)
    empty_results: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # rows whose id key is longer than 15 characters, when the reader noted them (None:
    # every request's key is measured)
    long_keys: np.ndarray | None = None
    # why a reader made a row invalid (object; None: no reasons given)
    reason: np.ndarray | None = None
    # the store's call and list columns (fast.store.Store.call, .listed; None: none, the
    # texts are read)
    call: Any = None
    listed: Any = None
    #: what several checks compute once (by name)
    cache: dict[str, Any] = field(default_factory=dict)

    def session_of(self, code: int) -> Any:
        return None if code < 0 else self.session_cats[code]

    def version_of(self, code: int) -> str:
        return self.versions.get(self.session_of(code), V.DEFAULT)

    @cached_property
    def flag_rows(self) -> dict[str, np.ndarray]:
        out: dict[str, list[int]] = {}
        for row in sorted(self.flags):
            for f in self.flags[row]:
                out.setdefault(f, []).append(row)
        return {f: np.asarray(rows, dtype=np.int64) for f, rows in out.items()}

    def method_codes(self, want: Callable[[str], bool]) -> np.ndarray:
        """Codes of the methods for which ``want(name)`` holds."""
        return np.asarray([i for i, m in enumerate(self.method_cats)
                           if isinstance(m, str) and want(m)], dtype=np.int32)

    def method_in(self, codes: np.ndarray, method: np.ndarray | None = None) -> np.ndarray:
        """Whether each method code (of ``method``, default: every frame's) is in ``codes``."""
        table = np.zeros(len(self.method_cats) + 1, dtype=bool)
        table[codes] = True  # code -1 (no method) reads the last slot: False
        return table[self.method if method is None else method]

    def name(self, code: int) -> Any:
        return None if code < 0 else self.method_cats[code]

    def marks(self, rows: np.ndarray) -> np.ndarray:
        """:func:`text_marks` of ``rows``."""
        return text_marks(self, rows)

    @cached_property
    def rule_extras(self) -> dict[int, dict[str, Any]]:
        """The extras of the rows holding any member a rule reads (:data:`RULE_EXTRA_KEYS`),
        in row order: one pass over every row's extra for all the rules (a HAR, a cassette
        or an Inspector export has one on every row; each rule's own pass took 0.014 s at
        a million), each rule then reading the few rows found."""
        from .native import extras_with

        return dict(extras_with(self.extra, RULE_EXTRA_KEYS))

    @cached_property
    def peer_closed(self) -> PeerClosed:
        """When each session's sides closed (the tap's records of it, among the log rows)."""
        rows = np.flatnonzero(self.kind == KINDS.index("log"))
        seqs = rows.tolist()
        return PeerClosed(zip(seqs, map(self.session_of, self.session[rows].tolist()),
                              self.texts(rows), map(self.extra.get, seqs), strict=True))


def distinct_codes(codes: np.ndarray) -> list[int]:
    """The distinct values of a code column, ascending (a table of seen values when the
    codes span a small range: no sort, no hash of a million values)."""
    if not len(codes):
        return []
    if codes.dtype.kind == "i" and codes.dtype.itemsize <= 2:
        bits = 8 * codes.dtype.itemsize
        seen = np.zeros(1 << bits, dtype=bool)
        seen[codes.view(np.uint8 if bits == 8 else np.uint16)] = True
        found = np.flatnonzero(seen)
        found[found >= 1 << (bits - 1)] -= 1 << bits
        return sorted(found.tolist())
    if codes.dtype.kind == "i":
        lo, hi = int(codes.min()), int(codes.max())
        if hi - lo < 1 << 20:
            seen = np.zeros(hi - lo + 1, dtype=bool)
            seen[codes - lo] = True
            return (np.flatnonzero(seen) + lo).tolist()
    return np.unique(codes).tolist()


def hits(seq: Any, related: Any = None, details: Sequence[str] | None = None) -> Hits:
    """A check's answer: the frames, the related frames (-1: none) and the details."""
    seq = np.asarray(seq, dtype=np.int64)
    rel = np.full(len(seq), -1, dtype=np.int64) if related is None \
        else np.asarray(related, dtype=np.int64)
    return seq, rel, details if details is not None else [""] * len(seq)


#: The stdio tap's own events (its ``meta`` records, loaded as ``log`` rows whose context
#: holds the record's ``event``: ``trace.extra(seq)["tap_event"]``) that say a side has
#: closed: the requester whose requests can no longer be answered (the other side is the
#: one that closed), and what happened. ``start`` (the server started again) opens both
#: sides. See ``mcp_notebook/capture/tap.py``.
TAP_EVENTS: dict[str, tuple[str, str]] = {
    "stdin-eof": ("s2c", "the client had closed its input to the server"),
    "stdout-closed": ("s2c", "the client had stopped reading the server's output"),
    "server-stdin-closed": ("c2s", "the server had stopped reading its input"),
    "exit": ("c2s", "the server had exited"),
}
_KILLED = "the server had been killed"
#: A meta record written without its event (hand-written, or by a tap before events were
#: recorded) is known by how its text starts, as the tap words each event.
PEER_CLOSED: tuple[tuple[str, str], ...] = (
    ("client closed stdin", "stdin-eof"),
    ("client no longer reads stdout", "stdout-closed"),
    ("the server no longer reads its stdin", "server-stdin-closed"),
    ("server exited", "exit"),
    ("server killed by", "exit"),
    ("started ", "start"),
)


def tap_event(text: str | None, context: dict[str, Any] | None) -> tuple[str | None, bool]:
    """The tap event of a log row (from its context, else its text) and whether it is an
    exit by a signal."""
    context = context or {}
    event = context.get("tap_event")
    if event is None and text:
        event = next((e for prefix, e in PEER_CLOSED if text.startswith(prefix)), None)
    killed = event == "exit" and ("tap_signal" in context or
                                  bool(text and text.startswith("server killed by")))
    return event, killed


class PeerClosed:
    """When each session's sides closed, from the tap's records of it.

    ``log_rows`` are ``(seq, session, text, context)`` of the ``log`` rows, in seq order."""

    def __init__(self, log_rows: Iterable[tuple[int, object, str | None, dict | None]]) -> None:
        # session -> [(seq, {requester: (close seq, what happened)})], the state after seq
        self._at: dict[object, tuple[list[int], list[dict[str, tuple[int, str]]]]] = {}
        for seq, session, text, context in log_rows:
            event, killed = tap_event(text, context)
            if event is None:
                continue
            seqs, states = self._at.setdefault(session, ([], []))
            state = dict(states[-1]) if states else {}
            if event == "start":
                state = {}
            else:
                hit = TAP_EVENTS.get(event)
                if hit is None or hit[0] in state:
                    continue
                state[hit[0]] = (seq, _KILLED if killed else hit[1])
            seqs.append(seq)
            states.append(state)

    def __bool__(self) -> bool:
        return bool(self._at)

    def closed(self, session: object, requester: str | None, seq: int) -> tuple[int, str] | None:
        """``(close seq, what happened)`` when the side that should answer a request of
        ``requester`` sent at ``seq`` had closed before it; else None."""
        got = self._at.get(session)
        if got is None or requester is None:
            return None
        i = bisect_left(got[0], seq) - 1
        return got[1][i].get(requester) if i >= 0 else None


def session_versions_vec(vi: VecInput, version: Any,
                         override: str | None = None) -> dict[Any, str]:
    """The protocol version each session is checked against (``version``: the version
    each frame names, a sparse column with ascending ``rows`` and their ``values``, or a
    dict row -> version).

    The initialize result's ``protocolVersion`` wins, then the request's; from 2026-07-28
    on, the most common ``_meta`` version of requests (a tie: the one named first); an
    ``override`` wins over all; sessions with none are left out.
    """
    codes = distinct_codes(vi.session)
    if override is not None:
        return {vi.session_of(c): V.normalise(override) for c in codes}
    if isinstance(version, dict):
        keys = sorted(version)
        rows = np.asarray(keys, dtype=np.int64)
        values = np.fromiter((version[r] for r in keys), dtype=object, count=len(keys))
    else:
        rows, values = np.asarray(version.rows, dtype=np.int64), version.values
    init_codes = vi.method_codes(lambda m: m == "initialize")
    # requests only, in row order (a capture with 2026-style _meta names one per request)
    req = vi.kind[rows] == int(REQUEST)
    rows, values = rows[req], values[req]
    sess = vi.session[rows].astype(np.int64)
    is_init = vi.method_in(init_codes, vi.method[rows])
    from_request: dict[int, str] = {}
    if is_init.any():
        s_init, v_init = sess[is_init], values[is_init]
        _, first = np.unique(s_init, return_index=True)  # rows ascend: first = earliest
        from_request = {int(s_init[i]): v_init[i] for i in first.tolist()}
    from_meta: dict[int, str] = {}
    meta = ~is_init
    if meta.any():
        s_meta, v_meta = sess[meta], values[meta]
        names: dict[Any, int] = {}
        vcode = np.fromiter((names.setdefault(v, len(names)) for v in v_meta.tolist()),
                            dtype=np.int64, count=len(v_meta))
        by_code = list(names)
        key = (s_meta - int(s_meta.min())) * len(names) + vcode
        ukey, first, count = np.unique(key, return_index=True, return_counts=True)
        u_sess = s_meta[first]
        # per session: the largest count, then the earliest first mention (Counter's
        # most_common keeps insertion order among equal counts)
        order = np.lexsort((first, -count, u_sess))
        u_sess = u_sess[order]
        lead = np.ones(len(order), dtype=bool)
        lead[1:] = u_sess[1:] != u_sess[:-1]
        for i in order[lead].tolist():
            from_meta[int(s_meta[first[i]])] = by_code[int(vcode[first[i]])]
    out: dict[Any, str] = {}
    p = vi.pairs
    for i in np.flatnonzero(vi.method_in(init_codes, p.method) & (p.response_seq >= 0)).tolist():
        s = vi.session_of(int(p.session[i]))
        if s not in out:
            v = version.get(int(p.response_seq[i]))
            if v is not None:
                out[s] = v
    for c in codes:
        s = vi.session_of(c)
        if s in out:
            continue
        if c in from_request:
            out[s] = from_request[c]
        elif c in from_meta:
            out[s] = from_meta[c]
    return out


class VecHits(NamedTuple):
    """The findings of :func:`run_vec_columns` as columns, sorted by (seq, code): each
    finding's rule (an index into ``rules``), frame, related frame (-1: none) and detail."""

    rules: list[Rule]
    rule: np.ndarray
    seq: np.ndarray
    related: np.ndarray
    detail: list[str]

    def __len__(self) -> int:
        return len(self.seq)


def run_vec(vi: VecInput, rules: Sequence[Rule] | None = None
            ) -> list[tuple[Rule, int, int | None, str]]:
    """Apply the catalogue; ``(rule, seq, related_seq, detail)`` sorted by (seq, code)."""
    h = run_vec_columns(vi, rules)
    rel: list[Any] = [None if q < 0 else q for q in h.related.tolist()]
    return list(zip([h.rules[i] for i in h.rule.tolist()], h.seq.tolist(), rel, h.detail,
                    strict=True))


def run_vec_columns(vi: VecInput, rules: Sequence[Rule] | None = None) -> VecHits:
    """:func:`run_vec` as columns: no tuple per finding (a capture of tiny frames can hold
    millions of findings)."""
    load_rule_modules()
    present = distinct_codes(vi.session)
    # each present session's checked version, as a code into the distinct versions (a
    # capture of thousands of sessions names a few): a rule's sessions are then a table
    # made from its verdict on each version, not on each session
    checked: dict[str, int] = {}
    v_code = np.asarray([checked.setdefault(V.normalise(vi.version_of(c)), len(checked))
                         for c in present], dtype=np.int64)
    where = np.asarray(present, dtype=np.int64)  # code -1 lands in the last slot
    used: list[Rule] = []
    seqs: list[np.ndarray] = []
    rels: list[np.ndarray] = []
    dets: list[str] = []
    # by code: one stable sort by seq at the end then orders by (seq, code)
    for r in sorted(RULES if rules is None else rules, key=lambda rule: rule.code):
        applies = np.asarray([v in r.versions for v in checked], dtype=bool)
        if not applies.any():
            continue
        table = np.zeros(len(vi.session_cats) + 1, dtype=bool)
        table[where] = applies[v_code]
        if r.code in ROW_CHECKS:
            seq, rel, det = ROW_CHECKS[r.code](vi, np.flatnonzero(table[vi.session]))
        elif r.code in CHECKS:
            seq, rel, det = CHECKS[r.code](vi)
        else:
            raise LookupError(f"rule {r.code!r} has no check: register one with "
                              "mcp_notebook.engine.checks.check")
        if not len(seq):
            continue
        seq = np.asarray(seq, dtype=np.int64)
        keep = table[vi.session[seq]]
        if not keep.all():
            seq, rel = seq[keep], rel[keep]
            det = list(compress(det, keep.tolist()))
        used.append(r)
        seqs.append(seq)
        rels.append(np.asarray(rel, dtype=np.int64))
        dets.extend(det)
    if not used:
        return VecHits([], NONE, NONE, NONE, [])
    rule = np.repeat(np.arange(len(used), dtype=np.int32), [len(x) for x in seqs])
    seq_all = np.concatenate(seqs)
    order = np.argsort(seq_all, kind="stable")
    if (order[1:] < order[:-1]).any():  # not already in frame order
        dets = list(map(dets.__getitem__, order.tolist()))
        return VecHits(used, rule[order], seq_all[order], np.concatenate(rels)[order], dets)
    return VecHits(used, rule, seq_all, np.concatenate(rels), dets)
