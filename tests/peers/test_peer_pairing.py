"""Held-out real traffic from official peers: the library's pairing equals an independent count.

The captures in ``tests/fixtures/peers/`` (recorded by ``scripts/record_peers.py``, see the
README there) and the bundled traces in ``data/`` are paired twice: by ``mn.load`` and by
``scripts/count_trace.py``, which shares no code with the library and follows the spec
(pairing on session, requesting side and the id's exact JSON text; FIFO for an id reused
while in flight; notifications have no id; a response with a null or absent id answers
nothing: an orphan). For every capture the two agree on each pair (which request seq each response
answers, with its requester, id and method), the unanswered requests, the orphans, the
duplicates and the cancelled requests.

Where a capture shows one of issue 13's known defects the case is a strict xfail naming
it, so that it turns into a failure (an unexpected pass) once the fix lands.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "fixtures" / "peers"
DATA = ROOT / "data"
MESSAGE_KINDS = ("request", "notification", "result", "error")


def _counter() -> Any:
    spec = importlib.util.spec_from_file_location("count_trace",
                                                  ROOT / "scripts" / "count_trace.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


COUNT = _counter()


def _captures(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".har"))


CAPTURES = _captures(PEERS) + _captures(DATA)

#: capture name -> a known disagreement its pairs show (a strict xfail that says why); none
#: is left: the HTTP error bodies (issue 13, defect 4), first-in-first-out reuse (defect 6)
#: and the stateless POSTs, each an exchange of its own, pair as the count does
KNOWN: dict[str, str] = {}
KNOWN_COUNTS = KNOWN
KNOWN_ORPHANS = KNOWN


def _param(path: Path, known: dict[str, str]) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=known[path.name])] if path.name in known \
        else []
    return pytest.param(path, id=f"{path.parent.name}/{path.name}", marks=marks)


def _params(known: dict[str, str]) -> list[Any]:
    return [_param(p, known) for p in CAPTURES]


def test_there_are_enough_held_out_captures():
    names = [p.name for p in _captures(PEERS)]
    assert len(names) >= 8
    assert any(n.endswith(".har") for n in names) and any(n.endswith(".jsonl") for n in names)
    assert sum(p.stat().st_size for p in _captures(PEERS)) < 1_000_000


_LOADED: dict[Path, tuple[Any, dict[str, Any]]] = {}


def _both(path: Path) -> tuple[Any, dict[str, Any]]:
    if path not in _LOADED:
        import mcp_notebook as mn

        _LOADED[path] = (mn.load(path), COUNT.pair_file(path))
    return _LOADED[path]


def _library_messages(frames: pd.DataFrame) -> list[tuple[int, str, Any]]:
    """``(seq, direction, message)`` of the library's message frames (a batch element
    is the element its ``batch`` column points at)."""
    out = []
    for row in frames[frames["kind"].isin(MESSAGE_KINDS)].itertuples():
        msg = json.loads(row.raw)
        if isinstance(msg, list):
            msg = msg[int(row.batch)]
        out.append((int(row.seq), row.direction, msg))
    return out


def _seq_map(path: Path) -> dict[int, int]:
    """Counter seq -> library seq, once both list the same messages in the same order."""
    t, counted = _both(path)
    mine = [(seq, d, {k: v for k, v in m.items() if k != "@session"})
            for seq, kind, d, m in counted["frames"] if m is not None]
    theirs = _library_messages(t.frames)
    assert [(d, m) for _, d, m in theirs] == [(d, m) for _, d, m in mine], \
        "the library and the counter see different messages or a different order"
    return {a: b for (a, _, _), (b, _, _) in zip(mine, theirs, strict=True)}


def _na(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _library_pairing(t: Any) -> dict[str, Any]:
    p = t.pairs
    pairs, unanswered, orphans, duplicates, cancelled, keys = set(), set(), set(), set(), set(), {}
    for row in p.itertuples():
        req = None if _na(row.request_seq) else int(row.request_seq)
        resp = None if _na(row.response_seq) else int(row.response_seq)
        if req is not None and not _na(row.cancel_seq):
            cancelled.add(req)
        if row.outcome == "duplicate":
            duplicates.add((req, resp))
        elif req is None:
            orphans.add(resp)
        elif resp is None:
            unanswered.add(req)
        else:
            pairs.add((req, resp))
        if req is not None:
            keys[req] = (row.requester, row.id_key, row.method)
    return {"pairs": pairs, "unanswered": unanswered, "orphans": orphans,
            "duplicates": duplicates, "cancelled": cancelled, "keys": keys}


def _counted_pairing(path: Path) -> dict[str, Any]:
    _, c = _both(path)
    m = _seq_map(path)
    return {"pairs": {(m[a], m[b]) for a, b in c["pairs"]},
            "unanswered": {m[a] for a in c["unanswered"]},
            "orphans": {m[a] for a in c["orphans"] + c["null_id"]},  # as on stdio
            "null_id": {m[a] for a in c["null_id"]},
            "duplicates": {(m[a], m[b]) for a, b in c["duplicates"]},
            "cancelled": {m[a] for a in c["cancelled"]},
            "keys": {m[s]: (d, k, meth) for s, (_, d, k, meth) in c["requests"].items()}}


@pytest.mark.parametrize("path", _params({}))
def test_library_and_counter_see_the_same_messages_in_the_same_order(path):
    _seq_map(path)


@pytest.mark.parametrize("path", _params(KNOWN))
def test_pairs_equal_the_independent_count(path):
    lib = _library_pairing(_both(path)[0])
    want = _counted_pairing(path)
    assert sorted(lib["pairs"]) == sorted(want["pairs"])
    assert sorted(lib["unanswered"]) == sorted(want["unanswered"])
    assert sorted(lib["duplicates"]) == sorted(want["duplicates"])
    assert sorted(lib["cancelled"]) == sorted(want["cancelled"])


@pytest.mark.parametrize("path", _params(KNOWN_ORPHANS))
def test_orphans_equal_the_independent_count(path):
    t, c = _both(path)
    lib = _library_pairing(t)
    assert sorted(lib["orphans"]) == sorted(_counted_pairing(path)["orphans"])
    assert t.summary()["orphans"] == len(c["orphans"]) + len(c["null_id"])


@pytest.mark.parametrize("path", _params({}))
def test_each_request_is_keyed_by_requester_id_and_method(path):
    lib = _library_pairing(_both(path)[0])["keys"]
    want = _counted_pairing(path)["keys"]
    assert lib == want


@pytest.mark.parametrize("path", _params({}))
def test_responses_with_a_null_id_pair_with_nothing(path):
    lib = _library_pairing(_both(path)[0])
    answered = {resp for _, resp in lib["pairs"] | lib["duplicates"]}
    assert not answered & _counted_pairing(path)["null_id"]


@pytest.mark.parametrize("path", _params(KNOWN))
def test_id_findings_blame_only_what_the_count_sees(path):
    """``request-id-in-flight`` exactly on the requests that reuse an open id, and
    ``duplicate-response`` exactly on the responses to an answered request."""
    t, c = _both(path)
    m = _seq_map(path)
    v = t.violations
    got = {rule: sorted(v.loc[v["rule"] == rule, "seq"].astype(int))
           for rule in ("request-id-in-flight", "duplicate-response")}
    assert got == {"request-id-in-flight": sorted(m[s] for s in c["reused_in_flight"]),
                   "duplicate-response": sorted(m[b] for _, b in c["duplicates"])}


@pytest.mark.parametrize("path", _params(KNOWN_COUNTS))
def test_summary_counts_equal_the_independent_count(path):
    t, c = _both(path)
    s = t.summary()
    got = {k: s[k] for k in ("requests", "pairs", "unanswered", "cancelled", "duplicates")}
    want = {"requests": len(c["requests"]), "pairs": len(c["pairs"]),
            "unanswered": len(c["unanswered"]), "cancelled": len(c["cancelled"]),
            "duplicates": len(c["duplicates"])}
    assert got == want


def test_the_stateless_capture_holds_what_it_is_kept_for():
    """2026-07-28, no session id, JSON-RPC errors with HTTP 400 and 404."""
    har = json.loads((PEERS / "python-2026-stateless-http.har").read_text("utf-8"))
    entries = har["log"]["entries"]
    statuses = [e["response"]["status"] for e in entries]
    assert 400 in statuses and 404 in statuses and 202 in statuses
    assert not any(h["name"].lower() == "mcp-session-id" and h["value"] != "no-such-session"
                   for e in entries for h in e["request"]["headers"] + e["response"]["headers"])
    versions = []
    for e in entries:
        try:
            msg = json.loads(e["request"]["postData"]["text"])
        except ValueError:
            continue  # the one unparsable body, sent on purpose
        if isinstance(msg, dict) and isinstance(msg.get("params"), dict):
            versions.append(msg["params"].get("_meta", {}).get(
                "io.modelcontextprotocol/protocolVersion"))
    assert versions.count("2026-07-28") >= 15
    c = COUNT.pair_file(PEERS / "python-2026-stateless-http.har")
    errors_4xx = 0
    for e in entries:
        body = e["response"]["content"].get("text", "")
        if e["response"]["status"] >= 400 and body.startswith("{"):
            msg = json.loads(body)
            errors_4xx += msg.get("id") is not None and "error" in msg
    assert errors_4xx >= 8
    assert len(c["pairs"]) >= 20 and len(c["null_id"]) == 2


def _late_requests(path: Path) -> list[int]:
    """Counter seqs of the server's unanswered requests sent after the tap's ``stdin-eof``
    record of their session (the client had gone: issue 13, defect 7)."""
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    c = COUNT.pair_file(path)
    assert len(c["frames"]) == len(records)  # no batches: a record is a frame
    eof: dict[Any, int] = {}
    for i, rec in enumerate(records):
        if rec.get("event") == "stdin-eof":
            eof.setdefault(rec.get("session"), i)
    return [seq for seq in c["unanswered"] if c["requests"][seq][1] == "s2c"
            and seq > eof.get(c["requests"][seq][0], len(records))]


LATE = [p for p in CAPTURES if p.suffix == ".jsonl" and _late_requests(p)]


def test_some_capture_has_requests_sent_after_the_client_left():
    assert any(p.parent == PEERS for p in LATE)


@pytest.mark.parametrize("path", [_param(p, {}) for p in LATE])
def test_unanswered_after_the_client_left_is_info(path):
    t, _ = _both(path)
    m = _seq_map(path)
    late = {m[s] for s in _late_requests(path)}
    v = t.violations
    found = v[(v["rule"] == "unanswered-after-close") & v["seq"].isin(late)]
    assert sorted(found["seq"].astype(int)) == sorted(late)
    assert set(found["severity"]) == {"info"}
    assert not (v["seq"].isin(late) & (v["rule"] == "unanswered-request")).any()


def _readme_table() -> dict[str, dict[str, int]]:
    text = (PEERS / "README.md").read_text("utf-8").split("## Counts", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    return {cells[0].strip("`"): dict(zip(header[1:], map(int, cells[1:]), strict=True))
            for cells in ([c.strip() for c in line.strip("|").split("|")] for line in rows[2:])}


def test_the_readme_describes_and_counts_every_capture():
    table = _readme_table()
    names = [p.name for p in _captures(PEERS)]
    assert sorted(table) == names
    text = (PEERS / "README.md").read_text("utf-8")
    for name in names:
        assert f"`{name}`" in text.split("## Counts")[0], f"{name} is not described"
        counted = COUNT.count_file(PEERS / name)
        null_id = len(COUNT.pair_file(PEERS / name)["null_id"])
        want = {k: counted[k] for k in table[name] if k in counted}
        want["orphans"] -= null_id
        want["null id"] = null_id
        assert table[name] == want, name


@pytest.mark.parametrize("path", _captures(PEERS), ids=lambda p: p.name)
def test_capture_is_small_and_names_no_machine_path(path):
    data = path.read_bytes()
    assert len(data) < 120_000
    for needle in (b"/work/", b"/tmp/", b"/root/", b"/home/"):
        assert needle not in data, f"{path.name} names a machine path ({needle!r})"


def test_the_readme_names_the_recorded_peer_versions():
    versions = json.loads((PEERS / "versions.json").read_text("utf-8"))
    table = (PEERS / "README.md").read_text("utf-8").split("## Peers and versions", 1)[1]
    table = table.split("\n## ", 1)[0]
    for name, version in versions.items():
        assert f"| {version} |" in table, f"{name} {version} is not in the README"
