"""The streaming walk: direction inference, pairing and the rules between frames, one
chunk of frames at a time, holding only what later frames can still need.

It follows :func:`mcp_notebook.engine.walks.infer` and :func:`~mcp_notebook.engine.walks.pair`
step by step (the reference both C walks implement), with their state made compact:

- the open requests (key -> the requests in flight, first in first out), as the walk;
- every request key ever seen, and for the answered ones the method of the last answer
  (what ``request-id-reused``, ``duplicate-response``, ``cancel-after-response`` and the
  inference's "the client already used this id" need): a :class:`~.keys.KeyTable`,
  a byte an integer id (kept by value), nine bytes another, updated at the end of each
  chunk;
- per session: what decides its protocol version, its first ``initialize``, the requests
  sent before it (a count and the first examples), its first null-id request per side.

Findings are counted per (rule, session) with the first examples; which of them count is
decided at the end, by each session's version (as ``run_vec_columns`` filters them).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..engine.walks import _digits_twin
from ..protocol.versions import direction_of
from ..protocol.vocab import Kind
from .keys import KeyTable, id_keys, key_of, mix_one

__all__ = ["Walk", "Found"]

REQ, NOTIF, RES, ERR = int(Kind.REQUEST), int(Kind.NOTIFICATION), int(Kind.RESULT), \
    int(Kind.ERROR)
_CANCEL, _PROGRESS = "notifications/cancelled", "notifications/progress"
#: open entry fields
SEQ, LINE, METHOD, IDKEY, SESS, SIDE, OUTCOME, INFLIGHT, TOKEN, TS, LASTP = range(11)


class Found:
    """Findings counted per (rule, session), with the first ``keep`` examples of each."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.count: dict[tuple[str, int], int] = {}
        self.examples: dict[tuple[str, int], list[tuple[int, int, str]]] = {}

    def want(self, rule: str, session: int) -> bool:
        """Whether an example of this rule and session is still wanted (else only count)."""
        return len(self.examples.get((rule, session), ())) < self.keep

    def add(self, rule: str, session: int, seq: int, line: int, detail: Any = "") -> None:
        k = (rule, session)
        self.count[k] = self.count.get(k, 0) + 1
        ex = self.examples.setdefault(k, [])
        if len(ex) < self.keep:
            ex.append((seq, line, detail() if callable(detail) else detail))


class Walk:
    def __init__(self, infer: bool, keep: int) -> None:
        self.infer = infer
        self.found = Found(keep)
        self.methods: list[str] = []  # global method codes
        self._method_code: dict[str, int] = {}
        self.sessions: list[Any] = []
        self._session_code: dict[Any, int] = {}
        # request key -> 0 seen, > 0 answered (the method of the answered request, for the
        # rules that name it: see _answered); a byte a key
        self.keys = KeyTable(np.uint8, by_value=True)
        self.token_done = KeyTable(np.uint8)  # (session, requester, token) answered -> 1
        self._named: list[int] = []  # the methods values 3.. stand for
        self._named_value: dict[int, int] = {}
        self._named_over: dict[int, int] = {}  # key -> method, past the byte's values
        self.live: dict[int, deque[list[Any]]] = {}
        self.cancelled: dict[int, deque[list[Any]]] = {}
        self.tokens: dict[int, list[Any]] = {}
        self.pending: dict[int, list[int]] = {}  # (session, id key) -> sides (inference)
        self.first_init: dict[int, int] = {}
        self.open_init: dict[int, int] = {}  # session -> initialize requests still open
        self.before_init: dict[int, list[Any]] = {}  # session -> [count, examples]
        self.first_null: dict[tuple[int, int], int] = {}
        # versions: session -> (order, version) of the initialize result; the request's;
        # {version: [count, first seq]} of the others' _meta
        self.init_result: dict[int, tuple[tuple[int, int], str]] = {}
        self.init_request: dict[int, str] = {}
        self.meta: dict[int, dict[str, list[int]]] = {}
        self.ping_rows: list[tuple[int, int]] = []  # (local row, request seq) of this chunk
        self.counts = {"pairs": 0, "cancelled": 0, "orphans": 0, "duplicates": 0}
        # method -> [requests, answered, errors, tool errors, [latency ms]]
        self.latency: dict[int, list[Any]] = {}
        self._dir: list[int] = []  # per method code: its known direction (-1: both/unknown)
        self._notif: list[bool] = []

    # -- codes ---------------------------------------------------------------------------
    def method_codes(self, cats: list[Any]) -> np.ndarray:
        """Global codes of a chunk's method categories (one slot more for -1)."""
        out = []
        for name in cats:
            c = self._method_code.get(name)
            if c is None:
                c = self._method_code[name] = len(self.methods)
                self.methods.append(name)
                d = direction_of(name) if isinstance(name, str) else None
                self._dir.append({"c2s": 0, "s2c": 1}.get(d or "", -1))
                self._notif.append(isinstance(name, str) and name.startswith("notifications/"))
            out.append(c)
        return np.asarray([*out, -1], dtype=np.int32)

    def session_codes(self, cats: list[Any]) -> np.ndarray:
        out = []
        for name in cats:
            c = self._session_code.get(name)
            if c is None:
                c = self._session_code[name] = len(self.sessions)
                self.sessions.append(name)
            out.append(c)
        return np.asarray([*out, -1], dtype=np.int32)

    # -- one chunk -------------------------------------------------------------------------
    def feed(self, base: int, kind: np.ndarray, sess: np.ndarray, dirs: np.ndarray,
             ids: np.ndarray, id_keys_: np.ndarray, meth: np.ndarray, tool_error: np.ndarray, ref: dict[int, Any],
             prog: dict[int, float], version: dict[int, Any], batch: np.ndarray,
             flags: dict[int, tuple[str, ...]], ts: np.ndarray, line: np.ndarray) -> None:
        """Walk one chunk; ``dirs`` (int8) gets the directions the load infers."""
        n = len(kind)
        self.ping_rows = []
        id_key: list[Any] = id_keys_.tolist()
        k0, k1, km = id_keys(ids, id_keys_, sess.astype(np.int64), (0, 1, -1))
        # the table's answer for the keys the walk can ask about: requests and responses
        # (both sides where directions are inferred, else the one side each is on)
        need = np.flatnonzero(kind <= ERR) if n else np.empty(0, dtype=np.int64)
        need = need[kind[need] != NOTIF]
        ga = np.full(n, -1, dtype=np.int32)
        if self.infer:
            # the client's side for all; the server's for the requests of its methods, the
            # others' asked one at a time when the walk needs them (-2: not asked yet)
            gb = np.full(n, -2, dtype=np.int32)
            ga[need] = self.keys.lookup(k0[need])
            sides = np.asarray([*self._dir, -1], dtype=np.int8)
            srv = need[(kind[need] == REQ) & (sides[meth[need]] == 1)]
            gb[srv] = self.keys.lookup(k1[srv])
        else:
            side = np.where(kind[need] == REQ, dirs[need], 1 - dirs[need])
            ga[need] = self.keys.lookup(np.where(side == 1, k1[need], k0[need]))
            gb = ga
        g0, g1 = ga.tolist(), gb.tolist()
        k0l, k1l = k0.tolist(), k1.tolist()
        kml = km.tolist()
        kinds, sl, ml = kind.tolist(), sess.tolist(), meth.tolist()
        lines = line.tolist()
        dl = dirs.tolist()
        bl = batch.tolist()
        te = tool_error.tolist()
        tsl = ts.tolist()
        seen: dict[int, int] = {}  # this chunk's changes to self.keys
        tok_seen: dict[int, int] = {}
        live, cancelled, tokens, pending = self.live, self.cancelled, self.tokens, self.pending
        found, counts, methods, mdir, notif = (self.found, self.counts, self.methods,
                                               self._dir, self._notif)
        infer = self.infer
        init = self._method_code.get("initialize", -2)
        head_d = -1
        lat = self.latency
        for i in range(n):
            k = kinds[i]
            s = sl[i]
            if k > ERR:
                if infer:
                    if bl[i] == 0:
                        head_d = dl[i]
                    elif bl[i] > 0 and head_d >= 0:
                        dl[i] = head_d
                continue
            d = dl[i]
            ik = id_key[i]
            m = ml[i]
            if infer:
                if k == REQ or k == NOTIF:
                    if d < 0:
                        d = mdir[m] if m >= 0 else -1
                        if d < 0:
                            d = 0
                            if k == REQ:
                                v = seen.get(k0l[i])
                                if (g0[i] if v is None else v) >= 0:
                                    d = 1
                    if k == REQ:
                        pk = kml[i]
                        st = pending.get(pk)
                        if st is None:
                            pending[pk] = [d]
                        else:
                            st.append(d)
                elif d < 0:
                    pk = kml[i]
                    st = pending.get(pk)
                    if st:
                        d = 1 if st.pop() == 0 else 0
                        if not st:
                            del pending[pk]
                    else:
                        d = 1
                b = bl[i]
                if b == 0:
                    head_d = d
                elif b > 0 and head_d >= 0:
                    d = head_d
                dl[i] = d
            q = base + i
            if k == REQ:
                key = k1l[i] if d == 1 else k0l[i]
                v = seen.get(key)
                if v is None:
                    v = g1[i] if d == 1 else g0[i]
                    if v == -2:
                        v = g1[i] = self.keys.get(key)
                inflight = bool(live.get(key) or cancelled.get(key))
                if inflight:
                    found.add("request-id-in-flight", s, q, lines[i],
                              lambda ik=ik: f"id {ik} is still in flight")
                elif v > 0:
                    found.add("request-id-reused", s, q, lines[i],
                              f"id {ik} was used before in this session")
                if v < 0:
                    seen[key] = 0
                r = ref.get(i)
                e = [q, lines[i], m, ik, s, d, 0, inflight, None, tsl[i], None]
                if r is not None:
                    e[TOKEN] = tk = mix_one(hash(r), s, d)
                    tokens[tk] = e
                dq = live.get(key)
                if dq is None:
                    live[key] = deque([e])
                else:
                    dq.append(e)
                self._request(s, q, lines[i], m, d, ik, version.get(i))
                ls = lat.get(m)
                if ls is None:
                    lat[m] = [1, 0, 0, 0, []]
                else:
                    ls[0] += 1
            elif k == RES or k == ERR:
                if k == RES and i in flags:
                    self._null_result(s, d, q, lines[i], flags[i])
                if ik is None or ik == "null":
                    counts["orphans"] += 1
                    continue
                req = 1 - d if d >= 0 else -1
                key = k1l[i] if req == 1 else k0l[i] if req == 0 else kml[i]
                q1, q2 = live.get(key), cancelled.get(key)
                if q1 or q2:
                    e = q1.popleft() if q1 else q2.popleft()  # type: ignore[union-attr]
                    if q1 is not None and not q1:
                        del live[key]
                    if q2 is not None and not q2:
                        del cancelled[key]
                    counts["pairs"] += 1
                    if e[METHOD] == init:
                        self.open_init[e[SESS]] -= 1
                    ls = lat[e[METHOD]]
                    ls[1] += 1
                    if e[OUTCOME] != 2:  # not cancelled
                        outcome = "error" if k == ERR else "tool_error" if te[i] else "result"
                        if outcome == "error":
                            ls[2] += 1
                        elif outcome == "tool_error":
                            ls[3] += 1
                        elif e[METHOD] >= 0 and methods[e[METHOD]] == "ping":
                            self.ping_rows.append((i, e[SEQ]))
                    else:
                        found.add("response-after-cancel", s, q, lines[i],
                                  f"a {'error' if k == ERR else 'result'} for id {ik} "
                                  "after it was cancelled")
                    t0, t1 = e[TS], tsl[i]
                    if t0 == t0 and t1 == t1:
                        ls[4].append((t1 - t0) * 1000.0)
                    if e[METHOD] >= 0 and notif[e[METHOD]]:
                        found.add("notification-answered", s, q, lines[i],
                                  lambda m=e[METHOD]: f"a response to {methods[m]}")
                    seen[key] = self._answered(key, e[METHOD])
                    if e[TOKEN] is not None and tokens.get(e[TOKEN]) is e:
                        del tokens[e[TOKEN]]
                        tok_seen[e[TOKEN]] = 1
                    if version.get(i) is not None and e[METHOD] >= 0 and \
                            methods[e[METHOD]] == "initialize":
                        self._init_result(s, (e[SEQ], 0), version[i])
                    continue
                v = seen.get(key)
                if v is None:
                    v = (g1[i] if req == 1 else g0[i]) if req >= 0 else -2
                    if v == -2:
                        v = self.keys.get(key)
                if v > 0:
                    counts["duplicates"] += 1
                    found.add("duplicate-response", s, q, lines[i],
                              f"a second response for id {ik}")
                    mm = self._method_of(key, v)
                    if mm >= 0:
                        if notif[mm]:
                            found.add("notification-answered", s, q, lines[i],
                                      f"a response to {methods[mm]}")
                        if version.get(i) is not None and methods[mm] == "initialize":
                            self._init_result(s, (q, 1), version[i])
                    continue
                counts["orphans"] += 1
                twin = _digits_twin(ik)
                tkey = key_of(twin, s, req) if twin is not None else None
                if tkey is not None and (live.get(tkey) or cancelled.get(tkey)):
                    found.add("id-type-mismatch", s, q, lines[i],
                              f"response id {ik} but the request id was {twin}")
                else:
                    found.add("orphan-response", s, q, lines[i],
                              f"no request with id {ik} from this side")
            else:  # a notification
                r = ref.get(i)
                if r is None or m < 0:
                    continue
                name = methods[m]
                if name == _CANCEL:
                    self._cancel(s, d, r, q, lines[i], seen)
                elif name == _PROGRESS:
                    tk = mix_one(hash(r), s, 1 - d if d >= 0 else -1)
                    holder = tokens.get(tk)
                    if holder is not None:
                        value = prog.get(i)
                        last = holder[LASTP]
                        if value is not None and last is not None and value <= last:
                            found.add("progress-not-increasing", s, q, lines[i],
                                      f"progress {value:g} after {last:g}")
                        if value is not None:
                            holder[LASTP] = value
                    elif tok_seen.get(tk) or self.token_done.get(tk) > 0:
                        found.add("progress-after-response", s, q, lines[i],
                                  f"progress for token {r} after the response")
                    else:
                        found.add("progress-unknown-token", s, q, lines[i],
                                  f"no request in flight carries token {r}")
        dirs[:] = dl
        self.keys.update(seen)
        self.token_done.update(tok_seen)

    def _answered(self, key: int, m: int) -> int:
        """The value of an answered request's key: 1 any method the rules do not name
        again, 2 ``initialize``, 3-254 a ``notifications/*`` method sent as a request (by
        its order of first answer), 255 one of those past the 252nd (kept in a dict)."""
        if m < 0 or not self._notif[m]:
            return 2 if m >= 0 and self.methods[m] == "initialize" else 1
        v = self._named_value.get(m)
        if v is None:
            if len(self._named) < 252:
                v = self._named_value[m] = 3 + len(self._named)
                self._named.append(m)
            else:
                self._named_over[key] = m
                return 255
        return v

    def _method_of(self, key: int, v: int) -> int:
        """The method code of an answered key's value when the rules name it; -1 otherwise."""
        if v == 2:
            return self._method_code["initialize"]
        if v == 255:
            return self._named_over.get(key, -1)
        return self._named[v - 3] if v >= 3 else -1

    def _request(self, s: int, q: int, line: int, m: int, d: int, ik: Any,
                 version: Any) -> None:
        name = self.methods[m] if m >= 0 else None
        if ik == "null":
            self.first_null.setdefault((s, d), q)
        if name == "initialize":
            self.open_init[s] = self.open_init.get(s, 0) + 1
            if s not in self.first_init:
                self.first_init[s] = q
                got = self.before_init.pop(s, None)
                if got:
                    self.found.count[("lifecycle-order", s)] = got[0]
                    self.found.examples[("lifecycle-order", s)] = got[1]
            if version is not None:
                self.init_request.setdefault(s, version)
        else:
            if version is not None:
                got = self.meta.setdefault(s, {}).setdefault(version, [0, q])
                got[0] += 1
            if s not in self.first_init and d == 0 and name != "ping":
                b = self.before_init.setdefault(s, [0, []])
                b[0] += 1
                if len(b[1]) < self.found.keep:
                    b[1].append((q, line, f"{name} before initialize"))

    def _null_result(self, s: int, d: int, q: int, line: int, flags: tuple[str, ...]) -> None:
        if "response-id-missing" in flags:
            self.found.add("result-id-null", s, q, line)
        if "response-id-null" not in flags:
            return
        other = {0: 1, 1: 0}.get(d, -1)
        if (s, other) in self.first_null:
            return
        self.found.add("result-id-null", s, q, line)

    def _init_result(self, s: int, order: tuple[int, int], version: str) -> None:
        got = self.init_result.get(s)
        if got is None or order < got[0]:
            self.init_result[s] = (order, version)

    def _cancel(self, s: int, d: int, r: Any, q: int, line: int, seen: dict[int, int]) -> None:
        key = key_of(r, s, d)
        live, cancelled, found = self.live, self.cancelled, self.found
        q1, q2 = live.get(key), cancelled.get(key)
        if q1 or q2:
            if q1:
                e = q1.popleft()
                if not q1:
                    del live[key]
                cancelled.setdefault(key, deque()).append(e)
                self.counts["cancelled"] += 1
            else:
                e = q2[0]  # type: ignore[index]
            e[OUTCOME] = 2
            if e[METHOD] >= 0 and self.methods[e[METHOD]] == "initialize":
                found.add("cancel-initialize", s, q, line, "initialize was cancelled")
            return
        v = seen.get(key)
        if v is None:
            v = self.keys.get(key)
        if v > 0:
            found.add("cancel-after-response", s, q, line,
                      f"request {r} had already been answered")
        else:
            found.add("cancel-unknown-request", s, q, line,
                      f"no request {r} from this side is known")

    # -- at the end ------------------------------------------------------------------------
    def open_requests(self) -> list[list[Any]]:
        """The requests never answered (cancelled ones included), in request order."""
        out = [e for dq in self.live.values() for e in dq]
        out += [e for dq in self.cancelled.values() for e in dq]
        out.sort(key=lambda e: e[SEQ])
        return out

    def settled(self) -> set[int]:
        """The sessions whose version no later frame can change: named by an initialize
        result, with no initialize request still open (an earlier request's answer would
        win). Counted as the walk goes (a scan of the open requests at every chunk would
        cost what the file holds open, each time)."""
        return {s for s in self.init_result if not self.open_init.get(s)}

    def versions(self) -> dict[int, str]:
        """The version each session names (as ``session_versions_vec``)."""
        out: dict[int, str] = {}
        for s, (_, v) in sorted(self.init_result.items(), key=lambda kv: kv[1][0]):
            out[s] = v
        for s in range(len(self.sessions)):
            if s in out:
                continue
            if s in self.init_request:
                out[s] = self.init_request[s]
            elif s in self.meta:
                best = min(self.meta[s].items(), key=lambda kv: (-kv[1][0], kv[1][1]))
                out[s] = best[0]
        return out
