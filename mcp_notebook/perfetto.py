"""Perfetto export: a trace in Perfetto's native protobuf format, for ui.perfetto.dev.

What the file holds (``TracePacket``\\ s of ``TrackEvent``\\ s, written with no dependency:
the few protobuf fields needed are encoded here and checked in the tests with the protos
of the ``perfetto`` package):

- one track per session and requester (``<session> · client requests`` /
  ``· server requests``), with child tracks of the same name when requests overlap in
  time (Perfetto's documented form for async slices: slices of one track must nest, and
  the UI draws a track and its children of the same name as one track with a row per
  child): one slice per request (each distinct ``request_seq`` of
  ``t.pairs``), from the request's time to its (first) response's, named ``method`` or
  ``method tool`` (``tools/call echo``), category ``request``, with the debug annotations
  ``seq``, ``id``, ``outcome``, ``error_code`` and ``error_type`` when set. A request never
  answered ends at the last time of the capture (outcome ``unanswered``);
- a ``notifications`` track per session: one instant per ``notifications/progress``
  (category ``progress``) and ``notifications/cancelled`` (category ``cancel``) that names
  a request of the capture, each the end of a flow that starts at that request's slice;
  a cancelled request answered after the cancel has its flow go on to a ``response after
  cancel`` instant (category ``response``) at the answer's time;
- a ``violations`` track per session: one instant per row of ``t.violations``, named by
  its rule, with its ``message``, ``severity`` and ``seq`` (category ``violation``); a
  violation of no frame goes on a ``violations`` track of the capture.

Times are the frames' times in nanoseconds since the Unix epoch. A frame with no time
takes the time of the frame before it (the first such frames, 0).

>>> import mcp_notebook as mn, tempfile, os
>>> t = mn.load(mn.sample_path("everything-stdio-basics"))
>>> path = os.path.join(tempfile.mkdtemp(), "t.pftrace")
>>> counts = write_perfetto(t, path)
>>> counts["slices"] == t.pairs["request_seq"].nunique()
True
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

__all__ = ["write_perfetto", "perfetto_bytes", "open_snippet", "PerfettoButton", "UI_URL"]

UI_URL = "https://ui.perfetto.dev"

# TrackEvent.Type
_BEGIN, _END, _INSTANT = 1, 2, 3
_SEQ = 1  # trusted_packet_sequence_id of every packet
_CHRONOLOGICAL = 2  # TrackDescriptor.ChildTracksOrdering


# -- protobuf wire format (the few types needed) -------------------------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 as two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _vint(field: int, n: int) -> bytes:
    return _key(field, 0) + _varint(n)


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode("utf-8", "backslashreplace"))


def _fixed64(field: int, n: int) -> bytes:
    return _key(field, 1) + int(n).to_bytes(8, "little")


def _annotation(name: str, value: Any) -> bytes:
    body = _str(10, name)  # DebugAnnotation.name
    if isinstance(value, bool):
        body += _vint(2, int(value))  # bool_value
    elif isinstance(value, int):
        body += _vint(4, value)  # int_value
    else:
        body += _str(6, str(value))  # string_value
    return _bytes(4, body)  # TrackEvent.debug_annotations


def _track(uuid: int, name: str, parent: int | None = None, ordering: int | None = None,
           rank: int | None = None) -> bytes:
    body = _vint(1, uuid) + _str(2, name)
    if parent is not None:
        body += _vint(5, parent)
    if ordering is not None:
        body += _vint(11, ordering)
    if rank is not None:
        body += _vint(12, rank)
    return _vint(10, _SEQ) + _bytes(60, body)  # TracePacket.track_descriptor


def _event(ts: int, kind: int, track: int, name: str | None = None,
           category: str | None = None, args: dict[str, Any] | None = None,
           flows: Sequence[int] = (), ends: Sequence[int] = ()) -> bytes:
    body = _vint(9, kind) + _vint(11, track)
    if category is not None:
        body += _str(22, category)
    if name is not None:
        body += _str(23, name)
    for k, v in (args or {}).items():
        if v is not None:
            body += _annotation(k, v)
    for f in flows:
        body += _fixed64(47, f)
    for f in ends:
        body += _fixed64(48, f)
    return _vint(8, ts) + _vint(10, _SEQ) + _bytes(11, body)  # timestamp, track_event


# -- the trace ------------------------------------------------------------------------------

def _times(trace: Any) -> np.ndarray:
    """Each frame's time in ns; a frame with no time has the time of the one before (the
    first frames, 0). One int64 per frame (and two while it is made)."""
    ts = trace.frames["ts"].to_numpy(dtype="datetime64[ns]")
    known = ~np.isnat(ts)
    ns = ts.view(np.int64)
    last = np.maximum.accumulate(np.where(known, np.arange(len(ns)), -1)) if len(ns) \
        else np.zeros(0, dtype=np.int64)
    out = np.where(last >= 0, ns[last.clip(0)], 0)
    return np.asarray(out, dtype=np.int64)


def _label(session: Any) -> str:
    return "-" if session is None or (not isinstance(session, str) and pd.isna(session)) \
        else str(session)


def _slice_names(trace: Any, method: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """``method`` or ``method target`` of each request (target: the tool or prompt name),
    the messages read a chunk at a time; equal names share one string."""
    from .boundary.view import CHUNK, _targets

    out = np.array([str(m) for m in method], dtype=object)
    named = np.flatnonzero(np.isin(method, ["tools/call", "prompts/get"]))
    shared: dict[str, str] = {}
    for lo in range(0, len(named), CHUNK):
        rows = named[lo:lo + CHUNK]
        targets = _targets(trace, seqs[rows].tolist())
        for r in rows.tolist():
            target = targets.get(int(seqs[r]))
            if isinstance(target, str):
                text = f"{method[r]} {target}"
                out[r] = shared.setdefault(text, text)
    return out


class _Plan:
    """What the Perfetto trace holds, as arrays: the slices (a row of the pairs each, by
    request seq), their lanes, the notifications with their flows, the tracks; and every
    packet's time, so that they can be written in time order one at a time."""

    def __init__(self, trace: Any) -> None:
        from .boundary.links import notification_targets

        self.trace = trace
        ns = self.ns = _times(trace)
        end_of_capture = int(ns.max()) if len(ns) else 0
        p = trace.pairs
        rows = np.flatnonzero(p["request_seq"].notna().to_numpy())
        seqs = p["request_seq"].to_numpy(dtype="float64", na_value=np.nan)[rows].astype(np.int64)
        first = np.unique(seqs, return_index=True)[1]  # the first pair of each request
        self.rows = rows[first]
        self.seq = seqs[first]

        def column(name: str, **kw: Any) -> np.ndarray:  # of the slices' rows only
            return np.asarray(p[name].iloc[self.rows].to_numpy(**kw))

        answer = column("response_seq", dtype="float64", na_value=np.nan)
        self.answer = np.where(np.isnan(answer), -1, answer).astype(np.int64)
        self.start = ns[self.seq]
        self.end = np.maximum(np.where(self.answer >= 0, ns[self.answer.clip(0)],
                                       end_of_capture), self.start)
        self.names = _slice_names(trace, column("method", dtype=object), self.seq)
        # the columns a slice's packet reads (pointers to the pairs' values)
        self.code = column("error_code", dtype="float64", na_value=np.nan)
        self.ident = column("id", dtype=object)
        self.outcome = column("outcome", dtype=object)
        self.packets: list[bytes] = []  # the track descriptors, in the order made
        self._uuids = iter(range(1, 1 << 62))
        self.tracks: dict[tuple[str, str], int] = {}
        self._track_name: dict[int, str] = {}
        self.lane = np.zeros(len(self.seq), dtype=np.int64)
        lanes: dict[int, list[tuple[int, int]]] = {}  # parent -> [(lane uuid, busy until)]
        sessions = column("session", dtype=object).tolist()
        sides = column("requester", dtype=object).tolist()
        for i, (session, side) in enumerate(zip(sessions, sides, strict=True)):
            start, end = int(self.start[i]), int(self.end[i])
            parent = self.track(session, "client requests" if str(side) == "c2s"
                                else "server requests")
            pool = lanes.setdefault(parent, [(parent, 0)])  # the first lane: the track
            for k, (lane, busy) in enumerate(pool):
                if busy <= start:
                    pool[k] = (lane, end)
                    break
            else:  # a child track of the same name: the UI shows them as one, in rows
                lane = next(self._uuids)
                self.packets.append(_track(lane, self._track_name[parent], parent=parent,
                                           rank=len(pool)))
                pool.append((lane, end))
            self.lane[i] = lane
        # notifications that name a slice: a flow each, numbered in capture order
        notes, targets, progress = notification_targets(trace)
        self.note_seq, self.note_progress = notes, progress
        self.note_slice = np.searchsorted(self.seq, targets)
        reply = self.answer[self.note_slice] if len(notes) else np.zeros(0, dtype=np.int64)
        late = (~progress) & (reply >= 0) & (ns[reply.clip(0)] >= ns[notes]) if len(notes) \
            else np.zeros(0, dtype=bool)
        self.note_reply = np.where(late, reply, -1)
        self.note_track = np.zeros(len(notes), dtype=np.int64)
        session_of = trace.frames["session"]
        for k, session in enumerate(session_of.iloc[notes].astype(object).tolist()):
            self.note_track[k] = self.track(session, "notifications")
        order = np.argsort(self.note_slice, kind="stable")  # the flows of each slice
        self.flows_of = order + 1  # flow ids (1-based, in capture order) by slice
        self.flow_lo = np.searchsorted(self.note_slice[order], np.arange(len(self.seq)))
        self.flow_hi = np.searchsorted(self.note_slice[order], np.arange(len(self.seq)),
                                       side="right")
        # violations: a track per session of a frame (or of the capture)
        v = trace.violations
        at = v["seq"].to_numpy(dtype="float64", na_value=np.nan)
        self.v_at = np.where(np.isnan(at), -1, at).astype(np.int64)
        self.v_track = np.zeros(len(v), dtype=np.int64)
        where = session_of.iloc[self.v_at.clip(0)].astype(object).tolist()
        for k, a in enumerate(self.v_at.tolist()):
            self.v_track[k] = self.track(where[k] if a >= 0 else None, "violations")
        self.v_ts = np.where(self.v_at >= 0, ns[self.v_at.clip(0)] if len(ns) else 0,
                             int(ns[0]) if len(ns) else 0)

    def track(self, session: Any, what: str) -> int:
        key = (_label(session), what)
        if key not in self.tracks:
            uuid = self.tracks[key] = next(self._uuids)
            self._track_name[uuid] = f"{key[0]} · {what}"
            self.packets.append(_track(uuid, self._track_name[uuid], ordering=_CHRONOLOGICAL))
        return self.tracks[key]

    def counts(self) -> dict[str, int]:
        n_progress = int(self.note_progress.sum())
        return {"slices": len(self.seq), "progress_flows": n_progress,
                "cancel_flows": len(self.note_seq) - n_progress,
                "violations": len(self.v_at), "tracks": len(self.tracks)}

    def order(self) -> tuple[np.ndarray, np.ndarray]:
        """(what, index) of every event packet, in time order: slices' begins and ends,
        then notification instants (and a cancel's late answer), then violations, each
        group in its own order at equal times."""
        n, m = len(self.seq), len(self.note_seq)
        late = np.flatnonzero(self.note_reply >= 0)
        times = np.concatenate([np.stack([self.start, self.end], axis=1).ravel(),
                                self.ns[self.note_seq] if m else np.zeros(0, np.int64),
                                self.ns[self.note_reply[late]] if len(late)
                                else np.zeros(0, np.int64), self.v_ts]).astype(np.int64)
        what = np.concatenate([np.tile(np.array([0, 1], dtype=np.int8), n),
                               np.full(m, 2, np.int8), np.full(len(late), 3, np.int8),
                               np.full(len(self.v_at), 4, np.int8)])
        index = np.concatenate([np.repeat(np.arange(n), 2), np.arange(m), late,
                                np.arange(len(self.v_at))])
        # a note and its late answer are written in note order: interleave as one group
        notes = (what == 2) | (what == 3)
        key = np.arange(len(times), dtype=np.int64)
        key[notes] = np.flatnonzero(notes)[0] + np.argsort(np.argsort(
            index[notes] * 2 + (what[notes] == 3), kind="stable"), kind="stable") \
            if notes.any() else key[notes]
        order = np.lexsort((key, times))
        return what[order], index[order]

    def write(self, out: IO[bytes], chunk: int = 50_000) -> None:
        out.write(_bytes(1, _vint(10, _SEQ) + _vint(13, 1)))  # SEQ_INCREMENTAL_STATE_CLEARED
        for pk in self.packets:
            out.write(_bytes(1, pk))
        what, index = self.order()
        found = self.trace.violations
        v = {"message": found["message"].to_numpy(dtype=object),
             "severity": found["severity"].astype(object).to_numpy(),
             "rule": found["rule"].to_numpy(dtype=object),
             "related": found["related_seq"].to_numpy(dtype="float64", na_value=np.nan)}
        for lo in range(0, len(what), chunk):
            out.write(b"".join(_bytes(1, self.packet(int(w), int(i), v))
                               for w, i in zip(what[lo:lo + chunk], index[lo:lo + chunk],
                                               strict=True)))

    def packet(self, what: int, i: int, v: dict[str, np.ndarray]) -> bytes:
        from .readers.boundary_table import error_type

        if what == 0:
            code = None if self.code[i] != self.code[i] else int(self.code[i])
            ident, outcome = self.ident[i], str(self.outcome[i])
            args = {"seq": int(self.seq[i]), "id": None if ident is None else json.dumps(ident),
                    "outcome": outcome, "error_code": code,
                    "error_type": error_type(code, outcome == "tool_error")}
            flows = self.flows_of[self.flow_lo[i]:self.flow_hi[i]].tolist()
            return _event(int(self.start[i]), _BEGIN, int(self.lane[i]), self.names[i],
                          "request", args, flows=flows)
        if what == 1:
            return _event(int(self.end[i]), _END, int(self.lane[i]))
        if what in (2, 3):
            seq, flow = int(self.note_seq[i]), i + 1
            target = int(self.seq[self.note_slice[i]])
            reply = int(self.note_reply[i])
            track = int(self.note_track[i])
            if what == 3:
                return _event(int(self.ns[reply]), _INSTANT, track, "response after cancel",
                              "response", {"seq": reply, "request_seq": target}, ends=[flow])
            progress = bool(self.note_progress[i])
            note: dict[str, Any] = {"seq": seq, "request_seq": target}
            if progress:
                _, value = self.trace.references([seq])
                if value[0] == value[0]:
                    note["progress"] = str(float(value[0]))
            method = "notifications/progress" if progress else "notifications/cancelled"
            return _event(int(self.ns[seq]), _INSTANT, track, method,
                          "progress" if progress else "cancel", note,
                          flows=[flow] if reply >= 0 else (), ends=[flow] if reply < 0 else ())
        at, related = int(self.v_at[i]), v["related"][i]
        finding = {"message": v["message"][i], "severity": str(v["severity"][i]),
                   "seq": at if at >= 0 else None,
                   "related_seq": None if related != related else int(related)}
        return _event(int(self.v_ts[i]), _INSTANT, int(self.v_track[i]), str(v["rule"][i]),
                      "violation", finding)


def write_perfetto(trace: Any, path: str | Path) -> dict[str, int]:
    """Write ``trace`` as a Perfetto protobuf trace, a chunk of packets at a time, in time
    order; return what it holds (counts of slices, progress and cancel flows, violations,
    tracks)."""
    from .engine.gcpause import frozen_heap

    with frozen_heap():
        plan = _Plan(trace)
        with open(path, "wb") as f:
            plan.write(f)
    return plan.counts()


def perfetto_bytes(trace: Any) -> bytes:
    """The Perfetto protobuf trace of ``trace``, in memory."""
    out = io.BytesIO()
    _Plan(trace).write(out)
    return out.getvalue()


def open_snippet(buffer: bytes, title: str = "mcp_notebook trace") -> str:
    """HTML and JavaScript that open ui.perfetto.dev and hand it ``buffer``.

    Perfetto's documented route for opening a trace from another page: open the UI
    window, send ``"PING"`` until it answers ``"PONG"``, then post
    ``{perfetto: {buffer, title}}`` to it. Browsers allow the window only on a click, so
    the snippet is a button.
    """
    data = base64.b64encode(buffer).decode("ascii")
    label = html.escape(f"Open {title} in Perfetto UI")
    return f"""<button class="mcp-notebook-perfetto">{label}</button>
<script>
(function () {{
  const button = document.currentScript.previousElementSibling;
  const origin = {json.dumps(UI_URL)};
  const b64 = {json.dumps(data)};
  const title = {json.dumps(title)};
  button.onclick = function () {{
    const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
    const win = window.open(origin);
    if (!win) {{ button.textContent = "Pop-up blocked: allow pop-ups for this page"; return; }}
    const timer = setInterval(() => win.postMessage("PING", origin), 50);
    const onMessage = (evt) => {{
      if (evt.origin !== origin || evt.data !== "PONG") return;
      clearInterval(timer);
      window.removeEventListener("message", onMessage);
      win.postMessage({{perfetto: {{buffer: bytes.buffer, title: title}}}}, origin);
    }};
    window.addEventListener("message", onMessage);
  }};
}})();
</script>"""


class PerfettoButton:
    """What :meth:`Trace.open_in_perfetto` returns: a notebook shows it as the button of
    :func:`open_snippet` (the display protocol's ``_repr_html_``; no IPython needed)."""

    def __init__(self, buffer: bytes, title: str) -> None:
        self.buffer = buffer
        self.title = title
        self.html = open_snippet(buffer, title)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<PerfettoButton {self.title!r}: {len(self.buffer)} bytes for {UI_URL}>"
