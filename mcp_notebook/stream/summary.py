"""The streaming summary: chunks through the walk and the one-frame checks, counts merged."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.checks import PeerClosed, VecInput, load_rule_modules, run_vec_columns, tap_event
from ..engine.gcpause import gc_paused
from ..engine.messages import message
from ..engine.pairing import PairTable
from ..engine.rules.exchange import unanswered_after_close
from ..lazytext import texts_of
from ..protocol import versions as V
from ..protocol.rules import RULES
from ..protocol.vocab import KINDS, Kind
from .chunks import Chunk, cuts, read_chunk
from .rules import FRAME_RULES, not_streamed
from .walk import IDKEY, INFLIGHT, LINE, METHOD, OUTCOME, SEQ, SESS, SIDE, Walk

__all__ = ["Summary", "summarize_stream"]

_LOG = KINDS.index("log")
_E = np.empty(0, dtype=np.int64)
_NO_PAIRS = PairTable(_E, _E, np.empty(0, np.int32), np.empty(0, np.int8),
                      np.empty(0, object), np.empty(0, np.int32), np.empty(0, np.int8), _E, _E,
                      [])


class Summary(dict):  # type: ignore[type-arg]
    """The counts of ``Trace.summary()`` (same keys), and ``latency`` (by method),
    ``examples`` (the first findings of each rule: line and message) and ``streaming``
    (how it was read: ``streamed``, ``chunks``, ``rules_not_run``, ...)."""

    @property
    def streamed(self) -> bool:
        return bool(self.get("streaming", {}).get("streamed"))

    @property
    def rules_not_run(self) -> list[str]:
        return list(self.get("streaming", {}).get("rules_not_run", []))


def _message(code: str, detail: str) -> str:
    """A finding's message, as ``Trace.violations`` words it."""
    r = RULES.get(code)
    assert r is not None, code
    return message(r, detail)


class _Run:
    def __init__(self, path: Path, fmt: str, session: str, direction: str | None,
                 version: str | None, chunk_bytes: int, keep: int) -> None:
        load_rule_modules()
        self.path, self.fmt, self.session, self.direction = path, fmt, session, direction
        self.override = version
        self.chunk_bytes, self.keep = chunk_bytes, keep
        self.walk = Walk(infer=fmt == "ndjson" and direction is None, keep=keep)
        codes = set(FRAME_RULES)
        self.frame_rules = [r for r in RULES if r.code in codes]
        self.kinds = np.zeros(len(KINDS), dtype=np.int64)
        self.methods: Counter[int] = Counter()
        self.error_codes: Counter[int] = Counter()
        self.tool_errors = self.blank = self.frames = 0
        self.sessions_seen: set[int] = set()
        self.closes: list[tuple[int, int, str | None, dict | None]] = []
        # per chunk: (start, stop, first line, base seq, versions assumed, its findings)
        self.done: list[list[Any]] = []
        self.invalid_examples: list[dict[str, Any]] = []
        self.n_chunks = 0
        self._keeping: list[list[Any]] = []  # chunks whose directions are kept
        self._state: tuple[Any, ...] = ()  # (settled, assumed) when _keeping was looked at

    # versions ----------------------------------------------------------------------------
    def checked_versions(self) -> dict[int, str]:
        """Session code -> the version its frames are checked against, from what the walk
        has seen so far."""
        if self.override is not None:
            return {s: V.normalise(self.override) for s in range(len(self.walk.sessions))}
        found = self.walk.versions()
        return {s: V.normalise(found[s]) if s in found else V.DEFAULT
                for s in range(len(self.walk.sessions))}

    # one chunk ---------------------------------------------------------------------------
    def take(self, c: Chunk) -> None:
        st = c.store
        w = self.walk
        n = len(st)
        base = self.frames
        sess_map = w.session_codes(list(st.session[1]))
        meth_map = w.method_codes(list(st.method[1]))
        sess = sess_map[st.session[0]]
        meth = meth_map[st.method[0]]
        dirs = np.array(st.direction, dtype=np.int8)
        if w.infer is False and n and ((dirs < 0) & (st.kind <= 3)).any():
            raise NotStreamable("messages of unknown direction in a tap capture")
        w.feed(base, st.kind, sess, dirs, st.id, st.id_key, meth, st.is_tool_error,
               st.ref.as_dict(), st.progress.as_dict(), st.version.as_dict(), st.batch,
               st.flags, st.ts, c.line)
        st.direction = dirs
        self._ping(c, base)
        self._count(st, sess, meth, c.line)
        self._closes(st, sess, base)
        self.blank += st.blank_lines
        self.frames += n
        self.n_chunks += 1
        assumed = self.checked_versions()
        found = self._frame_rules(c, sess, base, assumed)
        present = set(np.unique(sess).tolist()) - {-1}
        self.done.append([c.start, c.stop, c.first_line, base,
                          {s: assumed[s] for s in present}, found])
        if w.infer:  # the inferred directions, for a chunk checked again at the end
            self.done[-1].append(_pack(dirs))
            self._keeping.append(self.done[-1])
            settled = set(range(len(w.sessions))) if self.override is not None \
                else w.settled()
            # the chunks kept before are looked at again only when what decides changed
            # (else each chunk would look at every chunk before it)
            state = (frozenset(settled), tuple(sorted(assumed.items())))
            look = self._keeping if state != self._state else self._keeping[-1:]
            self._state = state
            keep = self._keeping[:-len(look)] if len(look) < len(self._keeping) else []
            for d in look:
                if all(s in settled and assumed[s] == v for s, v in d[4].items()):
                    d.pop()  # its versions are final: it is not checked again
                else:
                    keep.append(d)
            self._keeping = keep

    def _count(self, st: Any, sess: np.ndarray, meth: np.ndarray, line: np.ndarray) -> None:
        kind = st.kind
        self.kinds += np.bincount(kind, minlength=len(KINDS))[:len(KINDS)]
        self.tool_errors += int(np.count_nonzero(st.is_tool_error))
        msg = (kind == int(Kind.REQUEST)) | (kind == int(Kind.NOTIFICATION))
        m = meth[msg & (meth >= 0)]
        if len(m):
            for code, k in enumerate(np.bincount(m).tolist()):
                if k:
                    self.methods[code] += k
        err = np.flatnonzero(kind == int(Kind.ERROR))
        if len(err):
            codes = st.error_code[err]
            ok = ~np.asarray(codes.isna())
            self.error_codes.update(np.asarray(codes[ok], dtype=np.int64).tolist())
        self.sessions_seen.update(np.unique(sess[sess >= 0]).tolist())
        if len(self.invalid_examples) < self.keep:
            bad = np.flatnonzero(kind == KINDS.index("invalid"))[:self.keep]
            for r in bad.tolist():
                if len(self.invalid_examples) < self.keep:
                    why = st.reason[r] if st.reason is not None else None
                    self.invalid_examples.append({"line": int(line[r]),
                                                  "reason": why or ""})

    def _ping(self, c: Chunk, base: int) -> None:
        """``ping-result-not-empty`` on the ping results the walk paired in this chunk."""
        from ..engine.rules.payload import _decode_ping

        w = self.walk
        rows = w.ping_rows
        if not rows:
            return
        st = c.store
        empty = set(st.empty_result.rows.tolist())
        pick = []
        for r, _ in rows:
            if r in empty:
                continue
            unversioned = r in st.flags and "jsonrpc-version" in st.flags[r]
            if not unversioned and st.size[r] < 39 + len(st.id_key[r]):
                continue
            pick.append(r)
        if not pick:
            return
        import msgspec

        for r, text in zip(pick, texts_of(st.raw, np.asarray(pick)), strict=True):
            if text is None:
                continue
            try:
                result = _decode_ping(text).result
            except (msgspec.DecodeError, RecursionError):
                continue
            if result is not msgspec.UNSET and set(result) - {"_meta"}:
                s = int(w.session_codes(list(st.session[1]))[st.session[0][r]])
                w.found.add("ping-result-not-empty", s, base + r, int(c.line[r]),
                            f"ping answered with {sorted(result)}")

    def _closes(self, st: Any, sess: np.ndarray, base: int) -> None:
        rows = np.flatnonzero(st.kind == _LOG)
        if not len(rows):
            return
        for r, text in zip(rows.tolist(), texts_of(st.raw, rows), strict=True):
            ctx = st.extra.get(r)
            if tap_event(text, ctx)[0] is not None:
                self.closes.append((base + r, int(sess[r]), text, ctx))

    def _frame_rules(self, c: Chunk, sess: np.ndarray, base: int,
                     versions: dict[int, str]) -> dict[tuple[str, int], list[Any]]:
        """Counts and first examples of the one-frame rules on a chunk, by (rule, session)."""
        st = c.store
        w = self.walk
        raw = st.raw
        cats = list(st.session[1])
        local = {cats[i]: versions[int(code)] for i, code in
                 enumerate(w.session_codes(cats)[:-1].tolist())}
        vi = VecInput(
            kind=st.kind, session=st.session[0], session_cats=cats, direction=st.direction,
            id_key=st.id_key, method=st.method[0], method_cats=st.method[1],
            error_code=st.error_code, flags=st.flags, batch=st.batch, size=st.size,
            texts=lambda rows: texts_of(raw, rows), pairs=_NO_PAIRS, versions=local,
            extra=st.extra, empty_results=st.empty_result.rows, long_keys=st.long_keys,
            reason=st.reason, call=st.call, listed=st.listed)
        h = run_vec_columns(vi, self.frame_rules)
        out: dict[tuple[str, int], list[Any]] = {}
        if not len(h):
            return out
        codes = [r.code for r in h.rules]
        hs = sess[h.seq]
        for ri, q, s, det in zip(h.rule.tolist(), h.seq.tolist(), hs.tolist(), h.detail,
                                 strict=True):
            k = (codes[ri], s)
            got = out.get(k)
            if got is None:
                got = out[k] = [0, []]
            got[0] += 1
            if len(got[1]) < self.keep:
                got[1].append((base + q, int(c.line[q]), det))
        return out

    # the end -----------------------------------------------------------------------------
    def finish(self) -> Summary:
        versions = self.checked_versions()
        redo = [d for d in self.done if any(versions.get(s) != v for s, v in d[4].items())]
        for d in redo:  # checked under a version the rest of the file changed: again
            c = read_chunk(self.path, self.fmt, self.session, self.direction, d[0], d[1],
                           d[2])
            sess = self.walk.session_codes(list(c.store.session[1]))[c.store.session[0]]
            # the directions the walk gave these frames (the inference) are found again:
            # the same walk over the same frames, whose state has moved on, is not re-run;
            # a chunk whose directions were inferred keeps the recorded ones
            if len(d) > 6:
                c.store.direction = _unpack(d[6])
            d[5] = self._frame_rules(c, sess, d[3], versions)
        counts: dict[tuple[str, int], int] = {}
        examples: dict[str, list[tuple[int, int, str]]] = {}

        def add(code: str, s: int, k: int, ex: list[tuple[int, int, str]]) -> None:
            if k <= 0 or code not in applies or not applies[code].get(s, False):
                return
            counts[(code, s)] = counts.get((code, s), 0) + k
            examples.setdefault(code, []).extend(ex)

        applies = {r.code: {s: v in r.versions for s, v in versions.items()} for r in RULES}
        for d in self.done:
            for (code, s), (k, ex) in d[5].items():
                add(code, s, k, ex)
        self._unanswered()
        f = self.walk.found
        for (code, s), k in f.count.items():
            add(code, s, k, f.examples.get((code, s), []))
        by_rule: Counter[str] = Counter()
        for (code, _), k in counts.items():
            by_rule[code] += k
        sev = {r.code: r.severity for r in RULES}
        by_sev: Counter[str] = Counter()
        for code, k in by_rule.items():
            by_sev[sev[code]] += k
        out = self._summary(by_rule, by_sev, examples)
        out["streaming"]["rechecked_chunks"] = len(redo)
        return out

    def _unanswered(self) -> None:
        w = self.walk
        closes = PeerClosed(self.closes)
        owed = {i for i, m in enumerate(w.methods) if isinstance(m, str)
                and (m == "subscriptions/listen" or m.startswith("notifications/"))}
        for e in w.open_requests():
            if e[OUTCOME] != 0 or e[METHOD] in owed or e[IDKEY] == "null" or e[INFLIGHT]:
                continue
            side = {0: "c2s", 1: "s2c"}.get(e[SIDE])
            why = closes.closed(e[SESS], side, e[SEQ]) if closes else None
            name = w.methods[e[METHOD]] if e[METHOD] >= 0 else None
            if why is None:
                w.found.add("unanswered-request", e[SESS], e[SEQ], e[LINE],
                            lambda name=name, e=e: f"{name} id {e[IDKEY]} got no response")
            else:
                w.found.add("unanswered-after-close", e[SESS], e[SEQ], e[LINE],
                            lambda name=name, e=e, why=why: unanswered_after_close(
                                name, e[IDKEY], why[1]))

    def _summary(self, by_rule: Counter[str], by_sev: Counter[str],
                 examples: dict[str, list[tuple[int, int, str]]]) -> Summary:
        w = self.walk
        k = {name: int(self.kinds[i]) for i, name in enumerate(KINDS)}
        c = w.counts
        opened = w.open_requests()
        found = w.versions() if self.override is None else {}
        tally = Counter(found.values())
        proto = self.override or (max(tally, key=tally.__getitem__) if tally else None)
        return Summary({
            "frames": self.frames,
            "messages": k["request"] + k["notification"] + k["result"] + k["error"],
            "requests": k["request"], "notifications": k["notification"],
            "responses": k["result"] + k["error"], "results": k["result"],
            "errors": k["error"], "tool_errors": self.tool_errors, "invalid": k["invalid"],
            "stderr": k["stderr"], "log": k["log"], "blank_lines": self.blank,
            "pairs": c["pairs"], "unanswered": len(opened), "cancelled": c["cancelled"],
            "orphans": c["orphans"], "duplicates": c["duplicates"],
            "sessions": len(self.sessions_seen), "protocol_version": proto,
            "methods": {str(w.methods[m]): n for m, n in self.methods.most_common()},
            "error_codes": {str(code): n for code, n in self.error_codes.most_common()},
            "violations": {"total": sum(by_rule.values()), "by_severity": dict(by_sev),
                           "by_rule": dict(by_rule.most_common())},
            "latency": _latency(w),
            "examples": {code: [{"line": line, "message": _message(code, det)}
                                for _, line, det in sorted(ex)[:self.keep]]
                         for code, ex in sorted(examples.items())},
            "invalid_examples": self.invalid_examples,
            "streaming": {"streamed": True, "chunks": self.n_chunks,
                          "chunk_bytes": self.chunk_bytes, "rechecked_chunks": 0,
                          "open_requests": len(opened), "ids_remembered": len(w.keys),
                          "rules_not_run": not_streamed()},
        })


def _latency(w: Walk) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in sorted(w.latency, key=lambda m: str(w.methods[m]) if m >= 0 else "?"):
        count, answered, errors, tool_errors, ms = w.latency[m]
        a = np.asarray(ms, dtype=np.float64)

        def q(p: float, a: np.ndarray = a) -> float | None:
            return round(float(np.quantile(a, p)), 3) if len(a) else None
        out[str(w.methods[m]) if m >= 0 else "?"] = {
            "count": count, "answered": answered, "p50_ms": q(0.5), "p90_ms": q(0.9),
            "p99_ms": q(0.99), "max_ms": round(float(a.max()), 3) if len(a) else None,
            "errors": errors, "tool_errors": tool_errors,
            "error_rate": round(errors / count, 4) if count else None}
    return out


def _pack(dirs: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Direction codes (-1, 0, 1) in two bits a frame."""
    return np.packbits(dirs >= 0), np.packbits(dirs == 1), len(dirs)


def _unpack(packed: tuple[np.ndarray, np.ndarray, int]) -> np.ndarray:
    known, s2c, n = packed
    return np.where(np.unpackbits(known, count=n).astype(bool),
                    np.unpackbits(s2c, count=n).astype(np.int8), np.int8(-1)).astype(np.int8)


class NotStreamable(Exception):
    pass


def summarize_stream(path: Path, fmt: str, session: str, direction: str | None,
                     version: str | None, chunk_bytes: int, keep: int) -> Summary:
    """The summary of ``path`` read in chunks. A C scanner that is not built is a
    fallback, as in ``mn.load``: noted and warned, raised under ``MCP_NOTEBOOK_STRICT=1``."""
    from ..engine import fallback
    from ..engine.native import missing

    with fallback.collecting() as fell:
        if (why := missing()) is not None:
            fallback.fell_back(why)
        run = _Run(path, fmt, session, direction, version, chunk_bytes, keep)
        first = 0
        for a, b in cuts(path, chunk_bytes):
            # a chunk makes many small objects and no cycles: the cyclic collector runs
            # between chunks, not again and again inside one (13% of the time on 4M lines)
            with gc_paused():
                c = read_chunk(path, fmt, session, direction, a, b, first)
                first += c.lines
                run.take(c)
            del c
        out = run.finish()
    out["streaming"]["notes"] = list(fell)
    fallback.warn(fell)
    return out
