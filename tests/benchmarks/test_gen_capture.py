"""The benchmark capture generator: deterministic, honest manifests, clean means clean.

The manifest is counted by the generator from its own knowledge of what it wrote; here it
is checked against a simple, independent count of the file (strict ``json`` per line).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(_BENCH))
_spec = importlib.util.spec_from_file_location("gen_capture", _BENCH / "gen_capture.py")
assert _spec is not None and _spec.loader is not None
gen_capture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_capture)

FRAMES = 2000
EDGE = 30.0  # anomaly scale: enough malformed lines and odd ids in a small file


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _strict(raw: bytes) -> Any:
    """Strict JSON: UTF-8 only, no NaN/Infinity (json.loads allows those by default)."""
    return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)


def _kind(raw: bytes) -> tuple[str, Any]:
    """(kind, message) of one frame, decided independently of the generator."""
    try:
        m = _strict(raw)
    except ValueError:
        return "invalid", None
    if not isinstance(m, dict):
        return "invalid", None
    if "method" in m:
        return ("request" if "id" in m else "notification"), m
    return ("error" if "error" in m else "result"), m


def _id_text(v: object) -> str:
    return json.dumps(v, separators=(",", ":"))


def independent_count(path: Path, tap: bool) -> dict[str, Any]:
    """Kinds, blank lines, ids and (for tap, which has directions) the pairing outcome."""
    kinds = dict.fromkeys(["request", "notification", "result", "error", "invalid", "stderr",
                           "log"], 0)
    blank = tool_errors = pairs = orphans = duplicates = above_2_64 = 0
    typed: set[str] = set()
    req: dict[tuple[str, str | None, str], list[int]] = {}
    for line in path.read_bytes().split(b"\n")[:-1]:
        if not line:
            blank += 1
            continue
        sess, d, raw = "one", None, line
        if tap:
            try:
                rec = _strict(line)
            except ValueError:
                kinds["invalid"] += 1
                continue
            if rec["dir"] in ("stderr", "meta"):
                kinds["stderr" if rec["dir"] == "stderr" else "log"] += 1
                continue
            sess, d, raw = rec["session"], rec["dir"], rec["raw"].encode("utf-8")
        kind, m = _kind(raw)
        kinds[kind] += 1
        if m is None or m.get("id") is None:
            if kind in ("result", "error"):
                orphans += 1  # id null: answers no request
            elif kind == "notification" and m["method"] == "notifications/cancelled" and d:
                st = req.get((sess, d, _id_text(m["params"]["requestId"])))
                if st:
                    st[1] = 1
            continue
        key = _id_text(m["id"])
        typed.add(key)
        if isinstance(m["id"], int) and m["id"] >= 2**64:
            above_2_64 += 1
        if kind == "result" and m["result"].get("isError") is True:
            tool_errors += 1
        if d is None:
            continue
        if kind == "request":
            req[(sess, d, key)] = [0, 0]
        else:
            st = req.get((sess, "c2s" if d == "s2c" else "s2c", key))
            if st is None:
                orphans += 1
            elif st[0]:
                duplicates += 1
            else:
                st[0] = 1
                pairs += 1
    out: dict[str, Any] = {"kinds": kinds, "blank_lines": blank, "tool_errors": tool_errors,
           "distinct_typed": len(typed), "above_2_64": above_2_64}
    if tap:
        out.update(pairs=pairs, orphans=orphans, duplicates=duplicates,
                   unanswered=sum(1 for a, _ in req.values() if not a),
                   cancelled=sum(1 for a, c in req.values() if c and not a))
    return out


CASES = [  # (format, clean)
    ("ndjson", False),
    ("ndjson", True),
    ("tap", False),
    ("tap", True),
]


@pytest.mark.parametrize("fmt,clean", CASES)
def test_manifest_matches_an_independent_count(tmp_path: Path, fmt: str, clean: bool) -> None:
    path = tmp_path / f"c.{fmt}"
    m = gen_capture.generate(path, FRAMES, fmt, clean=clean, seed=3, anomaly_scale=EDGE)
    got = independent_count(path, tap=fmt == "tap")
    assert m["frames"] == FRAMES == len(path.read_bytes().split(b"\n")) - 1
    assert m["bytes"] == path.stat().st_size
    assert got["kinds"] == m["kinds"]
    assert got["blank_lines"] == m["blank_lines"]
    assert got["tool_errors"] == m["tool_errors"]
    assert got["distinct_typed"] == m["ids"]["distinct_typed"]
    assert got["above_2_64"] == m["ids"]["above_2_64"]
    assert sum(m["invalid_by_reason"].values()) == m["kinds"]["invalid"]
    if fmt == "tap":
        for k in ("pairs", "orphans", "duplicates", "unanswered", "cancelled"):
            assert got[k] == m[k], k
    assert m["kinds"]["request"] > 0 and m["kinds"]["notification"] > 0


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
def test_generation_is_deterministic_and_prefix_stable(tmp_path: Path, fmt: str) -> None:
    a, b, small = tmp_path / "a", tmp_path / "b", tmp_path / "small"
    ma = gen_capture.generate(a, FRAMES, fmt, seed=11, anomaly_scale=EDGE)
    mb = gen_capture.generate(b, FRAMES, fmt, seed=11, anomaly_scale=EDGE)
    gen_capture.generate(small, FRAMES // 2, fmt, seed=11, anomaly_scale=EDGE)
    assert a.read_bytes() == b.read_bytes()
    assert {k: v for k, v in ma.items() if k not in ("seconds", "file")} == \
        {k: v for k, v in mb.items() if k not in ("seconds", "file")}
    assert a.read_bytes().startswith(small.read_bytes())
    c = tmp_path / "c"
    gen_capture.generate(c, FRAMES, fmt, seed=12, anomaly_scale=EDGE)
    assert c.read_bytes() != a.read_bytes()


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
def test_clean_variant_has_no_malformed_lines_and_no_huge_ids(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "clean"
    m = gen_capture.generate(path, FRAMES, fmt, clean=True, seed=5, anomaly_scale=EDGE)
    assert m["kinds"]["invalid"] == 0 and m["blank_lines"] == 0
    assert not any(m["invalid_by_reason"].values())
    assert m["ids"]["above_2_64"] == 0
    for line in path.read_bytes().split(b"\n")[:-1]:
        obj = _strict(line)  # raises on any malformed line
        assert isinstance(obj, dict)
        if fmt == "tap" and obj["dir"] in ("c2s", "s2c"):
            assert isinstance(_strict(obj["raw"].encode("utf-8")), dict)


def test_realistic_variant_has_every_kind_of_anomaly(tmp_path: Path) -> None:
    m = gen_capture.generate(tmp_path / "edge", 6000, "ndjson", seed=7, anomaly_scale=EDGE)
    assert all(v > 0 for v in m["invalid_by_reason"].values()), m["invalid_by_reason"]
    assert m["blank_lines"] > 0
    ids = m["ids"]
    assert ids["above_2_53"] > 0 and ids["above_2_63"] > 0 and ids["above_2_64"] > 0
    assert ids["int"] > 0 and ids["str"] > 0 and ids["int_str_same_digit_keys"] > 0
    assert ids["distinct_untyped"] < ids["distinct_typed"]
    for k in ("orphans", "duplicates", "unanswered", "cancelled", "tool_errors",
              "null_id_errors", "progress_notifications", "cancel_notifications"):
        assert m[k] > 0, k
    for method in ("initialize", "tools/list", "tools/call", "resources/read", "ping",
                   "prompts/get", "notifications/progress", "notifications/message",
                   "notifications/cancelled", "sampling/createMessage"):
        assert m["methods"].get(method, 0) > 0, method


def test_cli_writes_the_file_and_its_manifest(tmp_path: Path) -> None:
    out = tmp_path / "cli.jsonl"
    assert gen_capture.main(["--frames", "500", "--format", "tap", "--out", str(out)]) == 0
    m = json.loads(gen_capture.manifest_path(out).read_text())
    assert m["frames"] == 500 and m["format"] == "tap"
    assert len(out.read_bytes().splitlines()) == 500


@pytest.mark.parametrize("clean", [True, False])
def test_twin_holds_the_same_frames_as_tap_records(tmp_path: Path, clean: bool) -> None:
    """The tap twin of an NDJSON capture: the same lines, in order, each as a tap record."""
    nd, tw = tmp_path / "c.ndjson", tmp_path / "c.twin.tap.jsonl"
    m = gen_capture.generate(nd, FRAMES, "ndjson", clean=clean, seed=5, anomaly_scale=EDGE,
                             twin=tw)
    lines = nd.read_bytes().split(b"\n")[:-1]
    recs = tw.read_bytes().split(b"\n")[:-1]
    assert len(lines) == len(recs) == m["frames"]
    dirs = set()
    for line, rec in zip(lines, recs, strict=True):
        if not line:
            assert not rec  # a blank line stays blank
            continue
        r = json.loads(rec.decode("utf-8", "surrogateescape"))  # invalid UTF-8 stays as it was
        assert r["raw"].encode("utf-8", "surrogateescape") == line
        dirs.add(r["dir"])
    assert dirs == {"c2s", "s2c"}
    twin_m = json.loads(gen_capture.manifest_path(tw).read_text())
    assert twin_m["format"] == "tap" and twin_m["bytes"] == tw.stat().st_size
    skip = ("format", "bytes", "file", "twin_of", "unreadable_tap_lines")
    assert {k: v for k, v in twin_m.items() if k not in skip} \
        == {k: v for k, v in m.items() if k not in skip}


PROFILE_NAMES = ["escapes", "notifications", "base64", "long_ids", "sessions", "meta2026"]


@pytest.mark.parametrize("fmt", ["ndjson", "tap"])
@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_profile_manifest_matches_an_independent_count(tmp_path: Path, fmt: str,
                                                       profile: str) -> None:
    """Each payload profile's file is what its manifest says, and has its shape."""
    path = tmp_path / f"{profile}.{fmt}"
    m = gen_capture.generate(path, FRAMES, fmt, seed=3, anomaly_scale=EDGE, profile=profile)
    base = gen_capture.generate(tmp_path / f"default.{fmt}", FRAMES, fmt, seed=3,
                                anomaly_scale=EDGE)
    got = independent_count(path, tap=fmt == "tap")
    assert m["profile"] == profile and m["frames"] == FRAMES
    assert got["kinds"] == m["kinds"]
    assert got["distinct_typed"] == m["ids"]["distinct_typed"]
    if fmt == "tap":
        for k in ("pairs", "orphans", "duplicates", "unanswered", "cancelled"):
            assert got[k] == m[k], k
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    shape = {  # what makes the profile what it is, against the default file
        "escapes": lambda: text.count("\\\\u") > 20 * max(1, base_text.count("\\\\u")),
        "notifications": lambda: m["kinds"]["notification"] > 1.5 * base["kinds"]["notification"],
        "base64": lambda: text.count("image/png") > 3 * max(1, base_text.count("image/png")),
        "long_ids": lambda: text.count('-req-') > 100,
        "sessions": lambda: m["sessions"] > 2 * base["sessions"],
        "meta2026": lambda: text.count("io.modelcontextprotocol/clientInfo")
        >= m["kinds"]["request"] * 0.9,
    }
    base_text = (tmp_path / f"default.{fmt}").read_text(encoding="utf-8",
                                                         errors="surrogateescape")
    assert shape[profile](), profile
