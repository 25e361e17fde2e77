"""ISO 8601 times: every form the capture formats write, read the same on every Python."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

import mcp_notebook as mn
from mcp_notebook.readers import har, inspector, tap, vscode
from mcp_notebook.readers._time import parse_iso, read_time
from mcp_notebook.table import settled

from . import harkit

NOON = datetime(2025, 6, 18, 12, 0, tzinfo=timezone.utc).timestamp()

FORMS = [
    ("2025-06-18T12:00:00Z", 0.0, False),
    ("2025-06-18T12:00:00.1Z", 0.1, False),  # 1 digit: NaT on Python 3.10
    ("2025-06-18T12:00:00.12Z", 0.12, False),
    ("2025-06-18T12:00:00.123Z", 0.123, False),
    ("2025-06-18T12:00:00.1234Z", 0.1234, False),
    ("2025-06-18T12:00:00.12345Z", 0.12345, False),
    ("2025-06-18T12:00:00.123456Z", 0.123456, False),
    ("2025-06-18T12:00:00.1234567Z", 0.1234567, False),  # .NET, Go
    ("2025-06-18T12:00:00.12345678Z", 0.12345678, False),
    ("2025-06-18T12:00:00.123456789Z", 0.123456789, False),  # nanoseconds
    ("2025-06-18T12:00:00,5Z", 0.5, False),  # a decimal comma
    ("2025-06-18t12:00:00z", 0.0, False),
    ("2025-06-18T12:00:00+00:00", 0.0, False),
    ("2025-06-18T14:00:00+02:00", 0.0, False),
    ("2025-06-18T14:00:00+0200", 0.0, False),
    ("2025-06-18T14:00:00+02", 0.0, False),
    ("2025-06-18T07:30:00.25-04:30", 0.25, False),
    ("2025-06-18 12:00:00.5+00:00", 0.5, False),  # space separator (Python's str())
    ("2025-06-18 12:00:00 UTC", 0.0, False),
    ("2025-06-18T12:00:00", 0.0, True),  # no offset: taken as UTC, and said so
    ("2025-06-18T12:00:00.7", 0.7, True),
    ("2025-06-18T12:00", 0.0, True),
    ("20250618T120000Z", 0.0, False),  # basic format
    ("20250618T140000.5+0200", 0.5, False),
    ("2025-06-18T11:59:60Z", 0.0, False),  # a leap second: the next second's start
    ("2025-06-17T24:00:00Z", -43200.0, False),  # the end of the 17th
    ("  2025-06-18T12:00:00Z ", 0.0, False),
]


@pytest.mark.parametrize("text,offset,naive", FORMS)
def test_every_form(text, offset, naive):
    got = parse_iso(text)
    assert got.seconds == pytest.approx(NOON + offset, abs=1e-6)
    assert got.naive is naive


@pytest.mark.parametrize("text,why", [
    ("2025-13-01T00:00:00Z", "month must be in 1..12"),
    ("2025-02-30T00:00:00Z", "day is out of range"),
    ("2025-06-18T25:00:00Z", "no such time of day"),
    ("2025-06-18T12:61:00Z", "no such time of day"),
    ("2025-06-18T24:00:01Z", "no such time of day"),
    ("2025-06-18T12:00:00+25:00", "no such zone offset"),
    ("2025-06-18T12:00:00.Z", "not an ISO 8601 time"),
    ("yesterday", "not an ISO 8601 time"),
    ("", "not an ISO 8601 time"),
])
def test_impossible_times_say_why(text, why):
    with pytest.raises(ValueError, match=why):
        parse_iso(text)
    ts, problem = read_time(text)
    assert ts is None and why in problem


@pytest.mark.parametrize("value,problem", [
    (None, None), (1.5, None), (True, "a time that is True"), ([1], "a JSON list"),
    (float("nan"), "a time that is nan")])
def test_read_time_of_any_json_value(value, problem):
    ts, why = read_time(value)
    assert (why is None) if problem is None else (problem in why)


def test_text_only_formats_refuse_numbers():
    ts, why = read_time(1750248000000, numbers=False)  # ms? s? the format does not say
    assert ts is None and "not an ISO 8601 text" in why


def test_nanoseconds_are_kept_beyond_microseconds():
    assert parse_iso("2025-06-18T12:00:00.0000005Z").seconds > NOON
    assert parse_iso("2025-06-18T12:00:00.1234567Z").seconds != parse_iso(
        "2025-06-18T12:00:00.123456Z").seconds


def _tap(path: Path, stamps: list[object]) -> Path:
    lines = [json.dumps({"ts": s, "dir": "c2s", "raw": json.dumps(
        {"jsonrpc": "2.0", "id": i, "method": "ping"})}) for i, s in enumerate(stamps)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tap_reads_every_form_and_says_which_it_cannot(tmp_path):
    stamps = [f for f, _, _ in FORMS] + ["2025-13-01T00:00:00Z", "noon"]
    path = _tap(tmp_path / "t.jsonl", stamps)
    recs = list(tap.read(path))
    for rec, (_, offset, _) in zip(recs, FORMS, strict=False):
        assert rec.ts == pytest.approx(NOON + offset, abs=1e-6), rec.source
        assert "ts_error" not in rec.extra
    assert recs[-2].ts is None and "month must be in 1..12" in recs[-2].extra["ts_error"]
    assert recs[-1].ts is None and "not an ISO 8601 time" in recs[-1].extra["ts_error"]
    # the same through mn.load (its fast path) and a note on the trace
    t = mn.load(path)
    assert t.frames.ts.isna().sum() == 2
    assert t.extra(len(FORMS))["ts_error"] == recs[-2].extra["ts_error"]
    assert any("2 frame(s) carry a time that cannot be read" in n for n in t.notes)


def test_har_times_of_any_precision(tmp_path):
    e = harkit.entry("POST", body=harkit.msg(id=1, method="ping"), mime="application/json",
                     reply=harkit.js(harkit.msg(id=1, result={})))
    e["startedDateTime"] = "2025-06-18T14:00:00.1234567+02:00"
    bad = harkit.entry("POST", body=harkit.msg(id=2, method="ping"))
    bad["startedDateTime"] = "2025-06-18T12:00:00.5"  # no zone
    worse = harkit.entry("POST", body=harkit.msg(id=3, method="ping"))
    worse["startedDateTime"] = "18/06/2025 12:00"
    path = harkit.write(tmp_path / "t.har", [e, bad, worse])
    recs = {r.source.split("#")[1]: r for r in settled(har.read(path))}
    assert recs["entry0"].ts == pytest.approx(NOON + 0.1234567, abs=1e-6)
    assert recs["entry1"].ts == pytest.approx(NOON + 0.5)
    assert recs["entry2"].ts is None
    assert "not an ISO 8601 time" in recs["entry2"].extra["ts_error"]


def test_inspector_times_of_any_precision(tmp_path):
    entries = [{"timestamp": ts, "direction": "request", "origin": "client",
                "message": {"jsonrpc": "2.0", "id": i, "method": "ping"}}
               for i, ts in enumerate(["2025-06-18T12:00:00.1Z", "2025-06-18T12:00:00.12345Z",
                                       "2025-06-18T12:00:99Z"])]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    recs = list(inspector.read(path, ))
    assert [r.ts for r in recs[:2]] == pytest.approx([NOON + 0.1, NOON + 0.12345])
    assert recs[2].ts is None and "no such time of day" in recs[2].extra["ts_error"]


def test_vscode_impossible_date_costs_only_its_time(tmp_path):
    path = tmp_path / "mcp.log"
    path.write_text(
        "2025-06-18 12:00:00.000 [info] Starting server srv\n"
        '2025-13-18 12:00:00.100 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,'
        '"method":"ping"}\n'
        '2025-06-18 12:00:00.200 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,'
        '"result":{}}\n', encoding="utf-8")
    recs = list(vscode.read(path))
    assert [r.ts is None for r in recs] == [False, True, False]
    assert "month must be in 1..12" in recs[1].extra["ts_error"]
    assert recs[1].local_time is False  # no time, so no local time either
    assert mn.load(path).pairs.outcome.astype(str).tolist() == ["result"]


def test_the_usual_stamp_reads_as_the_general_expression_reads_it(monkeypatch):
    """``YYYY-MM-DDTHH:MM:SS[.f]Z`` is read without the general expression: the same
    seconds, or the same error, on random stamps (days and times that do not exist too)."""
    import random
    import re

    from mcp_notebook.readers import _time

    def read(text: str) -> object:
        try:
            return _time.parse_iso(text)
        except ValueError as exc:
            return str(exc)

    rng = random.Random(26)
    stamps = []
    for _ in range(20000):
        y, mo, d = rng.randint(1, 9999), rng.randint(0, 13), rng.randint(0, 32)
        h, mi, s = rng.randint(0, 25), rng.randint(0, 61), rng.randint(0, 62)
        t = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"
        if rng.random() < 0.7:
            t += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))
        stamps.append(t + "Z")
    fast = [read(t) for t in stamps]
    monkeypatch.setattr(_time, "_USUAL", re.compile(r"(?!)"))  # the general path only
    assert fast == [read(t) for t in stamps]
