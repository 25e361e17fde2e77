"""Perfetto export, read back with the protos of the ``perfetto`` package (its trace
processor downloads a binary at run time, so it is not used here)."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.perfetto import UI_URL, open_snippet, perfetto_bytes
from tests.exports.captures import CAPTURES

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END, INSTANT = (pb.TrackEvent.Type.Value(n)
                       for n in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END", "TYPE_INSTANT"))


def _known(msg: Any) -> None:
    """Every field of ``msg`` and of the messages in it is one the protos know (a wrong
    field number would parse, as an unknown field)."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    assert len(UnknownFieldSet(msg)) == 0, type(msg).__name__
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        for item in (value if field.is_repeated else [value]):
            _known(item)


def _read(path: Path) -> Any:
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    _known(trace)
    return trace


def _args(ev: Any) -> dict[str, Any]:
    out = {}
    for a in ev.debug_annotations:
        out[a.name] = getattr(a, a.WhichOneof("value"))
    return out


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _expected(t: mn.Trace) -> dict[str, Any]:
    """From the frames' messages, not from the exporter: the requests that get a slice,
    the progress and cancel notifications that name one of them."""
    f = t.frames
    requests = set(int(s) for s in t.pairs["request_seq"].dropna())
    by_token: dict[tuple[Any, str, str], int] = {}
    by_id: dict[tuple[Any, str, str], int] = {}
    progress, cancel = [], []
    for row in f.itertuples(index=False):
        if row.kind not in ("request", "notification"):
            continue
        msg = t.message(row.seq)
        if not isinstance(msg, dict):
            continue
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if row.kind == "request" and row.seq in requests:
            by_id[(row.session, str(row.direction), _key(msg.get("id")))] = row.seq
            meta = params.get("_meta")
            if isinstance(meta, dict) and "progressToken" in meta:
                by_token[(row.session, str(row.direction), _key(meta["progressToken"]))] = \
                    row.seq
        elif msg.get("method") == "notifications/progress" and "progressToken" in params:
            other = "s2c" if row.direction == "c2s" else "c2s"
            target = by_token.get((row.session, other, _key(params["progressToken"])))
            if target is not None:
                progress.append((row.seq, target))
        elif msg.get("method") == "notifications/cancelled" and "requestId" in params:
            target = by_id.get((row.session, str(row.direction), _key(params["requestId"])))
            if target is not None:
                cancel.append((row.seq, target))
    # the first answer to each of them: a result or error of the other side, same id
    answer: dict[int, int] = {}
    waiting = {key: seq for key, seq in by_id.items()}
    for row in f.itertuples(index=False):
        if row.kind not in ("result", "error"):
            continue
        msg = t.message(row.seq)
        if not isinstance(msg, dict):
            continue
        asker = "s2c" if row.direction == "c2s" else "c2s"
        seq = waiting.get((row.session, asker, _key(msg.get("id"))))
        if seq is not None and seq < row.seq and seq not in answer:
            answer[seq] = row.seq
    return {"requests": requests, "progress": progress, "cancel": cancel, "answer": answer}


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_every_capture_exports_and_reads_back(path: Path, tmp_path: Path) -> None:
    t = mn.load(path)
    out = tmp_path / "t.pftrace"
    t.to_perfetto(out)
    trace = _read(out)
    want = _expected(t)
    ns = {int(s): int(v.value) for s, v in zip(t.frames["seq"], t.frames["ts"], strict=True)}
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    events = [p for p in trace.packet if p.HasField("track_event")]
    assert events or not len(t.frames)
    for p in events:
        assert p.track_event.track_uuid in tracks
        assert p.trusted_packet_sequence_id == 1

    # slices: one per request, from the request's time to its first response's
    begins = [p for p in events if p.track_event.type == BEGIN]
    ends = [p for p in events if p.track_event.type == END]
    assert len(begins) == len(ends) == t.pairs["request_seq"].nunique() == len(want["requests"])
    assert {_args(p.track_event)["seq"] for p in begins} == want["requests"]
    first = t.pairs.dropna(subset=["request_seq"]).drop_duplicates("request_seq")
    answer = {int(r): (None if pd.isna(s) else int(s))
              for r, s in zip(first["request_seq"], first["response_seq"], strict=True)}
    last = max(ns.values())
    per_track: dict[int, list[tuple[int, int]]] = {}
    open_at: dict[int, list[int]] = {}
    for p in sorted(events, key=lambda p: p.timestamp):  # stable: the order written
        ev = p.track_event
        if ev.type == BEGIN:
            open_at.setdefault(ev.track_uuid, []).append(p.timestamp)
        elif ev.type == END:
            start = open_at[ev.track_uuid].pop()
            per_track.setdefault(ev.track_uuid, []).append((start, p.timestamp))
    for p in begins:
        a = _args(p.track_event)
        seq = a["seq"]
        assert p.timestamp == ns[seq]
        msg = t.message(seq)
        name = msg["method"]
        if name in ("tools/call", "prompts/get") and isinstance(msg["params"].get("name"), str):
            name += " " + msg["params"]["name"]
        assert p.track_event.name == name
        assert p.track_event.categories == ["request"]
        assert a["id"] == json.dumps(msg["id"])
        lane = tracks[p.track_event.track_uuid]
        assert re.search(r" · (client|server) requests$", lane.name)
        if lane.HasField("parent_uuid"):  # a row of a session's requester track
            assert tracks[lane.parent_uuid].name == lane.name
            assert not tracks[lane.parent_uuid].HasField("parent_uuid")
    # lanes: the slices of one lane do not overlap, so each request has its own row
    for spans in per_track.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    end_ts = sorted(p.timestamp for p in ends)
    assert end_ts == sorted(max(ns[s], ns[answer[s]] if answer[s] is not None else last)
                            for s in want["requests"])

    # flows: request -> each progress / cancel notification that names it
    instants = [p for p in events if p.track_event.type == INSTANT]
    cats = Counter(c for p in instants for c in p.track_event.categories)
    assert cats["progress"] == len(want["progress"])
    assert cats["cancel"] == len(want["cancel"])
    # each flow: the request's slice, then the notification, then (a cancel answered after
    # it) the answer; no flow forks, every flow ends
    chains: dict[int, list[tuple[str, int]]] = {}
    ended: set[int] = set()
    for p in events:
        ev = p.track_event
        point = (ev.categories[0] if ev.categories else "", _args(ev).get("seq", -1))
        for f in ev.flow_ids:
            assert f not in ended
            chains.setdefault(f, []).append(point)
        for f in ev.terminating_flow_ids:
            assert f not in ended
            chains.setdefault(f, []).append(point)
            ended.add(f)
    assert ended == set(chains)
    expect = [[("request", r), ("progress", n)] for n, r in want["progress"]] + [
        [("request", r), ("cancel", n)] + ([("response", want["answer"][r])]
                                          if r in want["answer"]
                                          and ns[want["answer"][r]] >= ns[n] else [])
        for n, r in want["cancel"]]
    assert sorted(chains.values()) == sorted(expect)
    assert cats["response"] == sum(len(c) == 3 for c in expect)
    for p in instants:
        if p.track_event.categories[0] in ("progress", "cancel"):
            assert p.timestamp == ns[_args(p.track_event)["seq"]]

    # violations: one instant each, named by rule, with the message, at its frame's time
    v = t.violations
    vi = [p for p in instants if list(p.track_event.categories) == ["violation"]]
    assert len(vi) == len(v)
    assert Counter(p.track_event.name for p in vi) == Counter(v["rule"])
    assert Counter(_args(p.track_event)["message"] for p in vi) == Counter(v["message"])
    for p in vi:
        seq = _args(p.track_event).get("seq")
        if seq is not None:
            assert p.timestamp == ns[seq]


def test_progress_and_cancel_are_in_the_bundled_captures() -> None:
    """The flow checks above are not vacuous: the bundled captures hold progress and cancel
    notifications that name their requests."""
    t = mn.load(ROOT / "data" / "everything-stdio-progress-cancel.jsonl")
    want = _expected(t)
    assert len(want["progress"]) == 10 and len(want["cancel"]) == 1
    # and one cancelled request answered after its cancel (its flow has three points)
    t = mn.load(ROOT / "data" / "demo-http.har")
    want = _expected(t)
    [(cancel, request)] = want["cancel"]
    assert want["answer"][request] > cancel


def test_overlapping_requests_take_separate_lanes(tmp_path: Path) -> None:
    t = mn.load(ROOT / "data" / "everything-stdio-progress-cancel.jsonl")
    p = t.pairs.dropna(subset=["t_response"])
    overlapping = any(a.t_request < b.t_response and b.t_request < a.t_response
                      and a.session == b.session and a.requester == b.requester
                      for i, a in enumerate(p.itertuples()) for b in p.iloc[i + 1:].itertuples())
    t.to_perfetto(tmp_path / "t.pftrace")
    trace = _read(tmp_path / "t.pftrace")
    lanes = [p.track_descriptor for p in trace.packet
             if p.HasField("track_descriptor") and p.track_descriptor.HasField("parent_uuid")]
    assert overlapping and lanes


def test_open_in_perfetto_snippet() -> None:
    t = mn.load(ROOT / "data" / "everything-stdio-basics.jsonl")
    data = perfetto_bytes(t)
    html = open_snippet(data, "basics")
    assert "window.open(origin)" in html and json.dumps(UI_URL) in html
    assert 'postMessage("PING", origin)' in html and '"PONG"' in html
    assert "postMessage({perfetto: {buffer: bytes.buffer, title: title}}, origin)" in html
    b64 = re.search(r'const b64 = "([A-Za-z0-9+/=]*)";', html)
    assert b64 is not None and base64.b64decode(b64[1]) == data
    back = pb.Trace()
    back.ParseFromString(base64.b64decode(b64[1]))
    _known(back)
    assert sum(p.track_event.type == BEGIN for p in back.packet) == t.pairs["request_seq"].nunique()
    shown = t.open_in_perfetto("basics")
    assert shown._repr_html_() == html and shown.buffer == data


def test_the_module_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest

    import mcp_notebook.perfetto as module

    monkeypatch.chdir(ROOT)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
