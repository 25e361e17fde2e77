"""Which connection of a Claude Desktop server a log entry belongs to.

Claude Desktop logs carry no connection id. It often opens two connections to the same
server within a second (each sends ``initialize`` with id 0), and it restarts servers
without always logging the close. This module guesses the connection of each entry
from what the log does say, and says when the guess is a guess:

- ``Initializing server...`` (or era A's ``Attempting to connect to MCP server X``)
  opens a connection; a connection quiet for more than :data:`STALE_AFTER` seconds is
  taken as gone when a new one opens (an app restart logs no close).
- ``Server transport closed`` (or ``MCP server X disconnected``) closes the oldest open
  connection; the close lines that follow it belong to that connection.
- a client ``initialize`` goes to an open connection that has not sent one yet (if
  none is left, a new connection is assumed: its ``Initializing`` line was not logged);
  a request goes to a connection that has not used its id yet; a response to the one
  that has that id in flight.
- when two or more connections fit, the oldest is taken (for a repeated notification,
  the next one that has not carried it yet) and the entry is marked ambiguous (its
  ``extra["ambiguous"]`` gives the reason); so is a later message with the same id on a
  connection whose earlier message with that id was a guess.

Sessions are named after the server: ``name`` for its first connection in the file,
then ``name#2``, ``name#3``...
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from operator import lt
from typing import Any

import numpy as np

__all__ = ["Conn", "Tracker", "STALE_AFTER", "MEMORY"]

#: Seconds of silence after which an open connection is taken as gone when another opens.
STALE_AFTER = 30.0
#: How many of its latest request ids each connection remembers (ids of Claude Desktop
#: and of most servers count up, so an id older than that is not reused in an overlap).
MEMORY = 4096

_STARTUP_KEYS = 40  # length of the message prefix that names a lifecycle step


#: why a message's connection is a guess, by what it is ({} is its id)
_WHY = {"initialize": "none had sent initialize yet",
        "request": "none had used request id {} yet",
        "answer": "each had a request id {} in flight",
        "notification": "a notification names no connection"}


@dataclass(slots=True)
class Conn:
    session: str
    # request ids each side has used, the last MEMORY of them (a dict as an ordered set)
    client_ids: dict[str, None] = field(default_factory=dict)
    server_ids: dict[str, None] = field(default_factory=dict)
    # the same ids in the same order (the oldest first, taken off when over MEMORY: a
    # dict's first key is found by skipping the ones deleted before it, slower each time)
    client_order: deque[str] = field(default_factory=lambda: deque(maxlen=MEMORY))
    server_order: deque[str] = field(default_factory=lambda: deque(maxlen=MEMORY))
    pending_c: dict[str, int] = field(default_factory=dict)  # host requests in flight
    pending_s: dict[str, int] = field(default_factory=dict)  # server requests in flight
    initialized: bool = False  # the host has sent ``initialize`` on it
    entangled: set[str] = field(default_factory=set)  # ids whose side was a guess
    steps: set[str] = field(default_factory=set)  # lifecycle lines it has logged
    last_ts: float | None = None
    order: int = 0  # message counter value at its last request (FIFO tie-breaks)


class Tracker:
    """The open connections of every server seen in one file."""

    def __init__(self) -> None:
        self.live: dict[str, list[Conn]] = {}
        self.count: dict[str, int] = {}
        self.closing: dict[str, Conn] = {}  # the connection whose close lines follow
        self.last: dict[str, Conn] = {}  # the last connection anything went to
        self._tick = 0
        #: the short way when one connection is open (the same choice; off in a test)
        self.one_open = True

    # -- opening and closing -------------------------------------------------------------

    def open(self, server: str, ts: float | None) -> Conn:
        live = self.live.setdefault(server, [])
        if ts is not None:
            live[:] = [c for c in live if c.last_ts is None or ts - c.last_ts <= STALE_AFTER]
        n = self.count.get(server, 0) + 1
        self.count[server] = n
        conn = Conn(server if n == 1 else f"{server}#{n}", last_ts=ts)
        live.append(conn)
        self.closing.pop(server, None)
        self.last[server] = conn
        return conn

    def close(self, server: str, ts: float | None) -> Conn:
        live = self.live.get(server)
        conn = live.pop(0) if live else self.closing.get(server) or self._any(server, ts)
        self.closing[server] = conn
        self.last[server] = conn
        return conn

    def _any(self, server: str, ts: float | None) -> Conn:
        """The newest open connection, or a new one when none is open."""
        live = self.live.get(server)
        if live:
            return live[-1]
        if server in self.last:
            return self.last[server]
        return self.open(server, ts)

    def current(self, server: str, ts: float | None) -> Conn:
        """The connection the last entry of ``server`` went to (opened if none)."""
        return self.last.get(server) or self._any(server, ts)

    # -- log lines --------------------------------------------------------------------------

    def for_log(self, server: str, message: str, ts: float | None, closing: bool) -> Conn:
        """The connection a Claude log line is about."""
        if closing and server in self.closing:
            return self.closing[server]
        self.closing.pop(server, None)
        key = message[:_STARTUP_KEYS]
        for conn in self.live.get(server, ()):
            if key not in conn.steps:
                conn.steps.add(key)
                break
        else:
            conn = self._any(server, ts)
        if ts is not None:
            conn.last_ts = ts
        self.last[server] = conn
        return conn

    # -- messages ---------------------------------------------------------------------------

    def for_message(self, server: str, ts: float | None, c2s: bool, kind: str,
                    id_key: str | None, method: str | None) -> tuple[Conn, str | None]:
        """The connection a message belongs to, and why the choice is a guess (or None)."""
        self.closing.pop(server, None)
        live = self.live.get(server)
        if self.one_open and live is not None and len(live) == 1 and not (
                c2s and kind == "request" and method == "initialize"):
            # one connection open: every branch below chooses it, and none is a guess
            conn = live[0]
            self._note(server, conn, ts, c2s, kind, id_key, method)
            return conn, None if id_key is None or id_key not in conn.entangled else \
                _after_guess(conn, id_key, server)
        live = live or [self._any(server, ts)]
        if c2s and kind == "request" and method == "initialize":
            fits = [c for c in live if not c.initialized]
            if not fits:  # a second initialize: a connection whose opening was not logged
                fits = [self.open(server, ts)]
            why = "initialize"
        elif kind == "request" and id_key is not None:
            fits = [c for c in live if id_key not in (c.client_ids if c2s else c.server_ids)]
            why = "request"
        elif kind in ("result", "error") and id_key is not None:
            fits = [c for c in live if id_key in (c.pending_s if c2s else c.pending_c)]
            fits.sort(key=lambda c: (c.pending_s if c2s else c.pending_c)[id_key])
            why = "answer"
        else:  # a notification: spread repeats over the connections, as for log lines
            fits = live if len(live) > 1 else []
            step = f"\0{c2s} {method}"
            fits = [c for c in fits if step not in c.steps] + [c for c in fits if step in c.steps]
            if fits:
                fits[0].steps.add(step)
            why = "notification"
        conn = fits[0] if fits else live[-1]
        ambiguous = None
        if len(fits) > 1:
            ambiguous = (f"{len(fits)} connections to {server!r} were open and "
                         f"{_WHY[why].format(id_key)}; "
                         f"assigned to {conn.session!r} as a best guess (Claude Desktop's "
                         "log names no connection)")
            if id_key is not None:
                for c in fits:
                    c.entangled.add(id_key)
        elif id_key is not None and id_key in conn.entangled:
            ambiguous = _after_guess(conn, id_key, server)
        self._note(server, conn, ts, c2s, kind, id_key, method)
        return conn, ambiguous

    def for_messages(self, server: str, ts: list[float], c2s: list[bool] | np.ndarray,
                     kinds: list[str],
                     id_keys: list[str | None], methods: list[str | None]
                     ) -> tuple[Conn, dict[int, str]] | None:
        """:meth:`for_message` of a run of messages of ``server`` at once, where it takes
        the short way for each (one connection open, no client ``initialize`` among them,
        none invalid): their connection, and why the choice is a guess for those where it
        is (by position); None where the run is not such a run."""
        live = self.live.get(server)
        if not (self.one_open and live is not None and len(live) == 1) or "invalid" in kinds:
            return None
        if "initialize" in methods and any(
                c and k == "request" and m == "initialize"
                for c, k, m in zip(c2s, kinds, methods, strict=True)):
            return None
        conn = live[0]
        self.closing.pop(server, None)
        tick = self._tick
        self._tick = tick + len(kinds)
        for t in reversed(ts):
            if t is not None:
                conn.last_ts = t
                break
        # the id keys and ticks of the requests and answers, by their side and role: 0 a
        # host request, 1 a server request, 2 the host's answer, 3 the server's
        role = np.fromiter(map(_KIND_ROLE.get, kinds, repeat(4)), dtype=np.int8,
                           count=len(kinds))
        role += ~np.asarray(c2s, dtype=bool)
        order = np.argsort(role, kind="stable")
        ends = np.cumsum(np.bincount(role, minlength=6)).tolist()
        taken = order[:ends[3]]
        named: list[Any] = list(map(id_keys.__getitem__, taken.tolist()))
        ticks = (taken + (tick + 1)).tolist()
        groups = []
        for lo, hi in zip([0, *ends[:3]], ends[:4], strict=True):
            ks, ats = named[lo:hi], ticks[lo:hi]
            if None in ks:  # a request or answer with no id key: nothing to note
                ats = [a for x, a in zip(ks, ats, strict=True) if x is not None]
                ks = [x for x in ks if x is not None]
            groups.append((ks, ats))
        _remember_all(conn.client_ids, conn.client_order, groups[0][0])
        _remember_all(conn.server_ids, conn.server_order, groups[1][0])
        _in_flight(conn.pending_c, groups[0], groups[3])
        _in_flight(conn.pending_s, groups[1], groups[2])
        self.last[server] = conn
        why: dict[int, str] = {}
        if conn.entangled:
            for k, key in enumerate(id_keys):
                if key is not None and key in conn.entangled:
                    why[k] = _after_guess(conn, key, server)
        return conn, why

    def _note(self, server: str, conn: Conn, ts: float | None, c2s: bool, kind: str,
              id_key: str | None, method: str | None) -> None:
        self._tick += 1
        if ts is not None:
            conn.last_ts = ts
        if kind == "request" and id_key is not None:
            if c2s:
                _remember(conn.client_ids, conn.client_order, id_key)
            else:
                _remember(conn.server_ids, conn.server_order, id_key)
            (conn.pending_c if c2s else conn.pending_s)[id_key] = self._tick
            if c2s and method == "initialize":
                conn.initialized = True
        elif kind in ("result", "error") and id_key is not None:
            (conn.pending_s if c2s else conn.pending_c).pop(id_key, None)
        self.last[server] = conn


#: the role of a message by its kind, the host's side (see ``Tracker.for_messages``; 4:
#: none), one more for the server's
_KIND_ROLE = {"request": 0, "result": 2, "error": 2}


def _remember(used: dict[str, None], order: deque[str], key: str) -> None:
    """Note a request id a side used: the last :data:`MEMORY` distinct ids are kept
    (bounded, for logs of millions of requests; an id used again keeps its place).
    ``order`` holds ``used``'s keys in order, at most MEMORY (a deque of that length)."""
    if key not in used:
        if len(order) == MEMORY:
            del used[order[0]]
        used[key] = None
        order.append(key)


def _remember_all(used: dict[str, None], order: deque[str], keys: list[str]) -> None:
    """:func:`_remember` of each of ``keys`` in turn."""
    if len(set(keys)) != len(keys) or not used.keys().isdisjoint(keys):
        for key in keys:  # an id used twice: one at a time, as it is kept in place
            _remember(used, order, key)
        return
    # all new: the last MEMORY of the ids before and these are kept
    gone = len(order) + len(keys) - MEMORY
    if gone > 0:  # the oldest before, then (more than MEMORY new) the first new ones
        deque(map(used.__delitem__, islice(order, min(gone, len(order)))), maxlen=0)
        used.update(dict.fromkeys(islice(keys, max(0, gone - len(order)), None)))
    else:
        used.update(dict.fromkeys(keys))
    order.extend(keys)  # keeps the last MEMORY


def _in_flight(pending: dict[str, int], asked: tuple[list[str], list[int]],
               answered: tuple[list[str], list[int]]) -> None:
    """The requests of one side in flight after a run of messages: ``asked`` (their id
    keys and ticks) added, each taken off by an answer (``answered``) after it, as
    :meth:`Tracker._note` does one message at a time: a request's tick is the latest
    with its id, and an answer takes it off when it comes later."""
    pending.update(zip(*asked, strict=True))
    last = dict(zip(*answered, strict=True))  # the latest answer to each id
    if not last:
        return
    was = list(map(pending.get, last, repeat(-1)))
    deque(map(pending.pop, compress(last, map(lt, was, last.values())), repeat(None)),
          maxlen=0)  # each answered after its request's latest tick taken off


def _after_guess(conn: Conn, id_key: str, server: str) -> str:
    return (f"assigned to {conn.session!r} because an earlier message with id {id_key} was "
            f"assigned by a guess (two connections to {server!r} overlapped)")
