"""Every bundled trace with corpus secrets planted in every message, header and log line:
redacted by the command line, the copy is valid in its format, holds none of the secrets,
and loads to the same frames and the same pairs (count and seq pairing) as the original."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.cli import main

from . import corpus as C

DATA = Path(__file__).resolve().parents[2] / "data"
TRACES = sorted(p for p in DATA.glob("*") if p.suffix in (".jsonl", ".har"))

#: what is planted: (text that holds them, the secrets in it)
PLANT_TEXT = (f"deploy with {C.GITLAB} {C.NPM} {C.HF} {C.SENDGRID} {C.DISCORD} {C.TWILIO_SK} "
              f"https://{C.SENTRY_KEY}@o1.ingest.sentry.io/2 "
              f"https://h.example/x?key={C.QUERY_KEY}&X-Amz-Signature={C.AMZ_SIG} "
              f"--password={C.CLI_PW} --api-key {C.CLI_KEY} Bearer {C.BEARER_NODIGIT}")
PLANTED = (C.GITLAB, C.NPM, C.HF, C.SENDGRID, C.DISCORD, C.TWILIO_SK, C.SENTRY_KEY,
           C.QUERY_KEY, C.AMZ_SIG, C.CLI_PW, C.CLI_KEY, C.BEARER_NODIGIT, "hunter2-FAKE-pw")


def _plant_message(raw: str) -> str:
    """A JSON message with secrets in a new member of its params / result (ids kept)."""
    try:
        m = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(m, dict):
        return raw
    for part in ("params", "result"):
        if isinstance(m.get(part), dict):
            m[part]["x-planted"] = {"note": PLANT_TEXT, "password": "hunter2-FAKE-pw"}
            return json.dumps(m, separators=(",", ":"), ensure_ascii=False)
    return raw


def plant_tap(src: Path, dst: Path) -> None:
    out = []
    for line in src.read_text("utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("dir") in ("c2s", "s2c"):
            rec["raw"] = _plant_message(rec["raw"])
        elif rec.get("dir") in ("stderr", "meta"):
            rec["raw"] += " " + PLANT_TEXT
        out.append(json.dumps(rec, ensure_ascii=False))
    dst.write_text("\n".join(out) + "\n", "utf-8")


def _plant_body(holder: Any) -> None:
    if not isinstance(holder, dict) or not isinstance(holder.get("text"), str):
        return
    holder["text"] = re.sub(r"(?m)^(data: ?)(\{.*)$", lambda m: m.group(1) + _plant_message(
        m.group(2)), holder["text"]) if "data:" in holder["text"] else _plant_message(
        holder["text"])


def plant_har(src: Path, dst: Path) -> None:
    doc = json.loads(src.read_text("utf-8"))
    for e in doc["log"]["entries"]:
        req, resp = e["request"], e["response"]
        req["headers"].append({"name": "Authorization", "value": f"Bearer {C.BEARER_NODIGIT}"})
        req["queryString"] = req.get("queryString", []) + [{"name": "key",
                                                             "value": C.QUERY_KEY}]
        req["url"] += ("&" if "?" in req["url"] else "?") + f"key={C.QUERY_KEY}"
        _plant_body(req.get("postData"))
        _plant_body(resp.get("content"))
        for ev in resp.get("content", {}).get("_sseEvents") or []:
            if isinstance(ev.get("data"), str):
                ev["data"] = _plant_message(ev["data"])
    dst.write_text(json.dumps(doc, indent=1, ensure_ascii=False), "utf-8")


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_redacted_bundled_trace_pairs_like_the_original(trace: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    planted = tmp_path / trace.name
    (plant_har if trace.suffix == ".har" else plant_tap)(trace, planted)
    original = mn.load(planted)
    assert len(original.frames) == len(mn.load(trace).frames)
    out = tmp_path / ("clean" + trace.suffix)
    assert main(["redact", str(planted), "-o", str(out)]) == 0
    assert "redacted" in capsys.readouterr().out

    data = out.read_text("utf-8")
    if trace.suffix == ".har":
        json.loads(data)  # a HAR is one JSON document
    else:
        for line in data.splitlines():
            assert isinstance(json.loads(line), dict)  # every tap line a JSON object
    left = [s for s in PLANTED if s in data]
    assert not left, left

    clean = mn.load(out)
    assert len(clean.pairs) == len(original.pairs)
    pd.testing.assert_frame_equal(clean.pairs, original.pairs)
    assert list(clean.pairs["request_seq"]) == list(original.pairs["request_seq"])
    assert list(clean.pairs["response_seq"]) == list(original.pairs["response_seq"])
    keep = ["seq", "kind", "id", "id_key", "method", "session", "direction"]
    pd.testing.assert_frame_equal(clean.frames[keep], original.frames[keep])


def test_tap_meta_command_line(tmp_path: Path) -> None:
    """The tap's start record holds the server's command line twice (``cmd`` and ``raw``):
    no flag value survives in the redacted copy, and the copy still pairs."""
    src = DATA / "everything-stdio-basics.jsonl"
    lines = src.read_text("utf-8").splitlines()
    meta = json.loads(lines[0])
    assert meta["dir"] == "meta" and isinstance(meta.get("cmd"), list)
    meta["cmd"] += [f"--password={C.CLI_PW}", "--api-key", C.CLI_KEY, f"--token={C.CLI_TOKEN}"]
    meta["raw"] = "started " + " ".join(meta["cmd"])
    planted = tmp_path / "meta.jsonl"
    planted.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", "utf-8")
    original = mn.load(planted)
    out = tmp_path / "clean.jsonl"
    assert main(["redact", str(planted), "-o", str(out)]) == 0
    data = out.read_text("utf-8")
    assert not [s for s in (C.CLI_PW, C.CLI_KEY, C.CLI_TOKEN) if s in data]
    first = json.loads(data.splitlines()[0])
    assert first["dir"] == "meta" and "--api-key «redacted:sha256:" in first["raw"]
    pd.testing.assert_frame_equal(mn.load(out).pairs, original.pairs)
