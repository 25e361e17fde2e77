"""``unanswered-after-close`` reads the tap's events: the reader keeps a meta record's
``event`` in the frame's context, and the check goes by it, not by the record's words."""

from __future__ import annotations

import json

import mcp_notebook as mn
from helpers import INIT, req


def _write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for i, rec in enumerate(records):
            f.write(json.dumps({"ts": 1_800_000_000.0 + i, **rec}) + "\n")
    return path


def _rows(meta):
    rows = [{"dir": d, "raw": json.dumps(m)} for d, m in INIT]
    return rows + [meta, {"dir": "c2s", "raw": json.dumps(req(1, "tools/list"))}]


def test_the_event_is_in_the_context_and_decides(tmp_path):
    worded_otherwise = {"dir": "meta", "event": "exit", "signal": "SIGKILL", "raw": "gone"}
    t = mn.load(_write(tmp_path / "a.jsonl", _rows(worded_otherwise)))
    assert t.extra(3) == {"tap_event": "exit", "tap_signal": "SIGKILL"}
    v = t.violations.set_index("rule")
    assert "unanswered-request" not in v.index
    assert "the server had been killed" in v.loc["unanswered-after-close", "message"]


def test_an_event_that_closes_nothing_excuses_nothing(tmp_path):
    """Words that would once have matched do not close a side when the event says not."""
    misleading = {"dir": "meta", "event": "stderr-closed", "raw": "server exited with code 0"}
    t = mn.load(_write(tmp_path / "b.jsonl", _rows(misleading)))
    assert set(t.violations["rule"]) >= {"unanswered-request"}
    assert "unanswered-after-close" not in set(t.violations["rule"])


def test_a_record_without_an_event_is_known_by_its_words(tmp_path):
    old = {"dir": "meta", "raw": "server exited with code 0"}
    t = mn.load(_write(tmp_path / "c.jsonl", _rows(old)))
    assert t.extra(3) == {}
    assert "unanswered-after-close" in set(t.violations["rule"])
