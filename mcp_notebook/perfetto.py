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
    """Each frame's time in ns; a frame with no time has the time of the one before."""
    ts = trace.frames["ts"]
    ns = pd.Series(ts.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype("int64"),
                   dtype="Int64").where(ts.notna().to_numpy(), pd.NA)  # not float: ns of 2026
    return ns.ffill().fillna(0).to_numpy(dtype=np.int64)


def _label(session: Any) -> str:
    return "-" if session is None or (not isinstance(session, str) and pd.isna(session)) \
        else str(session)


def _packets(trace: Any) -> tuple[list[bytes], dict[str, int]]:
    from .boundary import boundary_of, error_type

    ns = _times(trace)
    end_of_capture = int(ns.max()) if len(ns) else 0
    p = trace.pairs
    p = p[p["request_seq"].notna()].drop_duplicates("request_seq", keep="first")
    p = p.sort_values("request_seq", kind="stable")
    b = boundary_of(trace)
    reqs = b[(b["kind"] == "request") & b["request_seq"].notna()]
    names = dict(zip(reqs["request_seq"].astype("int64"), reqs["name"], strict=True))

    uuids = iter(range(1, 1 << 62))
    out: list[bytes] = []
    tracks: dict[tuple[str, str], int] = {}
    names_of: dict[int, str] = {}

    def track(session: Any, what: str) -> int:
        key = (_label(session), what)
        if key not in tracks:
            tracks[key] = next(uuids)
            names_of[tracks[key]] = f"{key[0]} · {what}"
            out.append(_track(tracks[key], names_of[tracks[key]], ordering=_CHRONOLOGICAL))
        return tracks[key]

    # requests: lanes under the (session, requester) track
    lanes: dict[int, list[tuple[int, int]]] = {}  # parent -> [(lane uuid, busy until)]
    begins: list[tuple[int, int, dict[str, Any], str, int]] = []
    events: list[tuple[int, bytes]] = []  # (time, packet)
    slices: list[tuple[int, bytes]] = []
    by_id: dict[tuple[str, str, Any], int] = {}
    by_token: dict[tuple[str, str, Any], int] = {}
    answer: dict[int, int] = {}  # slice -> seq of its (first) response
    n_slices = 0
    for row in p.itertuples(index=False):
        seq = int(row.request_seq)
        start = int(ns[seq])
        end = int(ns[int(row.response_seq)]) if pd.notna(row.response_seq) else end_of_capture
        end = max(end, start)
        requester = str(row.requester)
        parent = track(row.session, "client requests" if requester == "c2s"
                       else "server requests")
        pool = lanes.setdefault(parent, [(parent, 0)])  # the first lane: the track itself
        for i, (lane, busy) in enumerate(pool):
            if busy <= start:
                pool[i] = (lane, end)
                break
        else:  # a child track of the same name: the UI shows them as one, in rows
            lane = next(uuids)
            out.append(_track(lane, names_of[parent], parent=parent, rank=len(pool)))
            pool.append((lane, end))
        target = names.get(seq)
        name = f"{row.method} {target}" if isinstance(target, str) and row.method in (
            "tools/call", "prompts/get") else str(row.method)
        code = None if pd.isna(row.error_code) else int(row.error_code)
        args = {"seq": seq, "id": None if row.id is None else json.dumps(row.id),
                "outcome": str(row.outcome), "error_code": code,
                "error_type": error_type(code, row.outcome == "tool_error")}
        begins.append((start, lane, args, name, end))
        idx = len(begins) - 1
        if pd.notna(row.response_seq):
            answer[idx] = int(row.response_seq)
        session = _label(row.session)
        by_id[(session, requester, row.id_key)] = idx
        n_slices += 1
    position = {args["seq"]: i for i, (_, _, args, _, _) in enumerate(begins)}
    tokens = b[(b["kind"] == "request") & b["request_seq"].notna() & b["ref"].notna()]
    for seq, session, requester, ref in zip(tokens["request_seq"], tokens["session"],
                                            tokens["requester"], tokens["ref"], strict=True):
        pos = position.get(int(seq))
        if pos is not None:
            by_token[(_label(session), str(requester), ref)] = pos
    flows: dict[int, list[int]] = {}
    n_flows = {"progress": 0, "cancel": 0}
    nots = b[(b["kind"] == "notification") & b["ref"].notna() & b["method"].isin(
        ["notifications/progress", "notifications/cancelled"])]
    next_flow = 1
    for row in nots.itertuples(index=False):
        session, requester = _label(row.session), str(row.requester)
        if row.method == "notifications/progress":  # sent by the answering side
            other = "s2c" if requester == "c2s" else "c2s"
            target, cat = by_token.get((session, other, row.ref)), "progress"
        else:
            target, cat = by_id.get((session, requester, row.ref)), "cancel"
        if target is None:
            continue
        flow = next_flow
        next_flow += 1
        flows.setdefault(target, []).append(flow)
        seq = int(row.request_seq)
        note: dict[str, Any] = {"seq": seq, "request_seq": begins[target][2]["seq"]}
        if cat == "progress" and pd.notna(row.progress):
            note["progress"] = str(row.progress)
        reply = answer.get(target) if cat == "cancel" else None
        if reply is not None and ns[reply] < ns[seq]:
            reply = None  # answered before the cancel: the flow ends at the cancel
        on = track(row.session, "notifications")
        events.append((int(ns[seq]), _event(int(ns[seq]), _INSTANT, on, str(row.method), cat,
                                             note, flows=[flow] if reply is not None else (),
                                             ends=[flow] if reply is None else ())))
        if reply is not None:  # the flow goes on to the answer that came after the cancel
            events.append((int(ns[reply]), _event(
                int(ns[reply]), _INSTANT, on, "response after cancel", "response",
                {"seq": reply, "request_seq": note["request_seq"]}, ends=[flow])))
        n_flows[cat] += 1
    for i, (start, lane, args, name, end) in enumerate(begins):
        slices.append((start, _event(start, _BEGIN, lane, name, "request", args,
                                     flows=flows.get(i, []))))
        slices.append((end, _event(end, _END, lane)))
    events[:0] = slices  # a slice before a notification of the same time
    v = trace.violations
    sessions = trace.frames["session"].astype(object).to_numpy()
    for row in v.itertuples(index=False):
        at = None if pd.isna(row.seq) else int(row.seq)
        where = sessions[at] if at is not None else None
        ts = int(ns[at]) if at is not None else (int(ns[0]) if len(ns) else 0)
        finding = {"message": row.message, "severity": str(row.severity), "seq": at,
                   "related_seq": None if pd.isna(row.related_seq) else int(row.related_seq)}
        events.append((ts, _event(ts, _INSTANT, track(where, "violations"), str(row.rule),
                                  "violation", finding)))
    counts = {"slices": n_slices, "progress_flows": n_flows["progress"],
              "cancel_flows": n_flows["cancel"], "violations": len(v), "tracks": len(tracks)}
    first = _vint(10, _SEQ) + _vint(13, 1)  # SEQ_INCREMENTAL_STATE_CLEARED
    events.sort(key=lambda e: e[0])  # in time order (stable: a slice's begin, then its end)
    return [first, *out, *(e for _, e in events)], counts


def _write(packets: list[bytes], f: IO[bytes]) -> None:
    for pk in packets:
        f.write(_bytes(1, pk))  # Trace.packet


def write_perfetto(trace: Any, path: str | Path) -> dict[str, int]:
    """Write ``trace`` as a Perfetto protobuf trace; return what it holds (counts of slices,
    progress and cancel flows, violations, tracks)."""
    packets, counts = _packets(trace)
    with open(path, "wb") as f:
        _write(packets, f)
    return counts


def perfetto_bytes(trace: Any) -> bytes:
    """The Perfetto protobuf trace of ``trace``, in memory."""
    packets, _ = _packets(trace)
    return b"".join(_bytes(1, pk) for pk in packets)


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
