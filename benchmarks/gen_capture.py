"""Generate deterministic, realistic MCP captures for the loader benchmarks.

Usage::

    python benchmarks/gen_capture.py --frames 100000 --format ndjson --out out/c.ndjson
    python benchmarks/gen_capture.py --frames 1000000 --format tap --clean --out out/c.jsonl

Formats: ``tap`` (the project's tap JSONL: ``{"ts", "dir", "raw", "session"}`` per line,
several concurrent sessions that end and restart, plus ``stderr`` and ``meta`` lines) and
``ndjson`` (bare stdio NDJSON: one JSON-RPC message per line, one session).

``--clean`` leaves out every malformed line (and blank line) and every id above 2**64, so
that strict readers (polars, DuckDB, pandas) can read the file at all. Otherwise the file
holds a small rate of truncated frames, log text, ``Content-Length:`` lines, ``NaN``,
trailing commas, non-object JSON, invalid UTF-8 and blank lines, like real captures.

The same seed gives byte-identical files, and a smaller file is a prefix of a larger one
(same seed and options). Next to the file, ``<file>.manifest.json`` holds the true counts
(frames by kind, pairs, orphans, duplicates, invalid lines by reason, big ids...) that a
loader's output can be checked against. The counts follow the pairing semantics of the
design: key (session, requester, id JSON text); the first response pairs, later ones are
duplicates; a response with no request (or ``id: null``) is an orphan.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from array import array
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_payloads import Pools  # noqa: E402
from gen_profiles import PROFILES  # noqa: E402
from gen_traffic import ACT, C2S, END, META, S2C, SACT, START, STDERR, Traffic  # noqa: E402

__all__ = ["generate", "DEFAULT_RATES", "GENERATOR_VERSION", "main"]

GENERATOR_VERSION = 1

#: Per-event probabilities. ``--anomaly-scale`` multiplies the anomaly ones.
DEFAULT_RATES: dict[str, float] = {
    # per client request id
    "id_over_2_64": 0.00005, "id_uint64": 0.0002, "id_snowflake": 0.02, "id_digit_str": 0.004,
    # per tools/call (cancel, wrong id type, late progress) or per request (others)
    "cancel": 0.015, "no_response": 0.003, "duplicate": 0.001, "wrong_id_type": 0.0005,
    "late_progress": 0.002, "huge": 0.0002,
    # per written line (realistic files only)
    "malformed": 0.0005,
}
_ANOMALIES = ("id_over_2_64", "id_uint64", "id_digit_str", "duplicate", "wrong_id_type",
              "late_progress", "malformed", "no_response")

_BAD = [("blank", 15), ("truncated", 33), ("log_text", 17), ("content_length", 6), ("nan", 6),
        ("trailing_comma", 5), ("non_object", 6), ("invalid_utf8", 7)]
_LOG_TEXT = ["Server started on stdio", "Traceback (most recent call last):",
             '  File "server.py", line 88, in handle', "npm WARN deprecated inflight@1.0.6",
             "[debug] tools/call handled in 12ms", "Listening...", "Killed"]
_NON_OBJECT = ['"ok"', "42", "null", "true", "[]", '"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1}"']
_PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'


class _Counter:
    """The manifest, counted online from the generator's own metadata (never from text)."""

    def __init__(self) -> None:
        self.kinds = dict.fromkeys(
            ["request", "notification", "result", "error", "invalid", "stderr", "log"], 0)
        self.blank = 0
        self.bad: dict[str, int] = {k: 0 for k, _ in _BAD if k != "blank"}
        self.methods: dict[str, int] = {}
        self.codes: dict[str, int] = {}
        self.req: dict[tuple[str, str, str], list[int]] = {}  # key -> [answered, cancelled]
        self.c = dict.fromkeys(["pairs", "orphans", "null_id_errors", "duplicates",
                                "tool_errors", "cancel_notifications", "reused_ids",
                                "progress_notifications"], 0)
        self.ids = dict.fromkeys(["int", "str", "above_2_53", "above_2_63", "above_2_64"], 0)
        self.ns: set[tuple[str, str, str]] = set()
        self.typed: set[str] = set()
        self.big_samples: dict[str, list[str]] = {"2_53": [], "2_63": [], "2_64": []}
        self.sessions: set[str] = set()

    def _id(self, sess: str, ns_dir: str, idj: str) -> None:
        self.ns.add((sess, ns_dir, idj))
        self.typed.add(idj)
        if idj[0] == '"':
            self.ids["str"] += 1
            return
        self.ids["int"] += 1
        if len(idj) >= 16:
            v = int(idj)
            if v > 2**53:
                self.ids["above_2_53"] += 1
                band = "2_53"
                if v >= 2**63:
                    self.ids["above_2_63"] += 1
                    band = "2_63"
                if v >= 2**64:
                    self.ids["above_2_64"] += 1
                    band = "2_64"
                samples = self.big_samples[band]
                if len(samples) < 10 and idj not in samples:
                    samples.append(idj)

    def frame(self, sess: str, d: str, meta: tuple) -> None:
        kind = meta[0]
        self.kinds[kind] += 1
        self.sessions.add(sess)
        if kind == "request":
            idj, method = meta[1], meta[2]
            self.methods[method] = self.methods.get(method, 0) + 1
            key = (sess, d, idj)
            if key in self.req:
                self.c["reused_ids"] += 1
            self.req[key] = [0, 0]
            self._id(sess, d, idj)
        elif kind == "notification":
            method = meta[2]
            self.methods[method] = self.methods.get(method, 0) + 1
            if method == "notifications/cancelled":
                self.c["cancel_notifications"] += 1
                st = self.req.get((sess, d, meta[3]))
                if st is not None:
                    st[1] = 1
            elif method == "notifications/progress":
                self.c["progress_notifications"] += 1
        elif kind in ("result", "error"):
            idj = meta[1]
            if kind == "result" and len(meta) > 3 and meta[3]:
                self.c["tool_errors"] += 1
            if idj is None:
                self.c["orphans"] += 1
                self.c["null_id_errors"] += 1
                return
            other = C2S if d == S2C else S2C
            self._id(sess, other, idj)
            st = self.req.get((sess, other, idj))
            if st is None:
                self.c["orphans"] += 1
            elif st[0]:
                self.c["duplicates"] += 1
            else:
                st[0] = 1
                self.c["pairs"] += 1

    def error_code(self, code: int) -> None:
        self.codes[str(code)] = self.codes.get(str(code), 0) + 1

    def result(self) -> dict[str, Any]:
        unanswered = sum(1 for a, _ in self.req.values() if not a)
        cancelled = sum(1 for a, c in self.req.values() if c and not a)
        answered_after_cancel = sum(1 for a, c in self.req.values() if c and a)
        both = {(s, d, i[1:-1]) for s, d, i in self.ns if i[0] == '"' and i[1:-1].isdigit()}
        same_digits = sum(1 for s, d, digits in both if (s, d, digits) in self.ns)
        untyped = {i.strip('"') for i in self.typed}
        return {
            "kinds": self.kinds, "blank_lines": self.blank, "invalid_by_reason": self.bad,
            "sessions": len(self.sessions),
            **self.c, "unanswered": unanswered, "cancelled": cancelled,
            "cancelled_then_answered": answered_after_cancel,
            "methods": dict(sorted(self.methods.items())),
            "error_codes": dict(sorted(self.codes.items())),
            "ids": {**self.ids, "int_str_same_digit_keys": same_digits,
                    "distinct_typed": len(self.typed), "distinct_untyped": len(untyped)},
            "big_id_samples": self.big_samples,
        }


def _pick(rng: random.Random, table: list[tuple[str, int]]) -> str:
    r = rng.random() * sum(w for _, w in table)
    for name, w in table:
        r -= w
        if r < 0:
            return name
    return table[-1][0]


def _bad_line(rng: random.Random, cat: str) -> str:
    if cat == "log_text":
        return rng.choice(_LOG_TEXT)
    if cat == "content_length":
        return f"Content-Length: {rng.randint(40, 4000)}"
    if cat == "nan":
        return ('{"jsonrpc":"2.0","method":"notifications/progress","params":'
                f'{{"progressToken":"p{rng.randint(1, 999)}","progress":'
                f'{rng.choice(["NaN", "Infinity", "-Infinity"])},"total":100}}}}')
    if cat == "trailing_comma":
        return ('{"jsonrpc":"2.0","method":"notifications/message","params":'
                '{"level":"info","data":"done",},}')
    if cat == "non_object":
        return rng.choice(_NON_OBJECT)
    # invalid_utf8: a Latin-1 byte inside a payload string (kept as a surrogate escape)
    return ('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
            '"data":"caf\udce9 cr\udce8me br\udcfbl\udce9e"}}')


def _percentiles(sizes: array) -> dict[str, int | float]:
    s = sorted(sizes)
    n = len(s)
    if not n:
        return {}

    def q(p: float) -> int:
        return s[min(n - 1, int(p * n))]
    return {"median": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999), "max": s[-1],
            "mean": round(sum(s) / n, 1)}


def generate(out: Path, frames: int, fmt: str = "ndjson", *, clean: bool = False,
             seed: int = 7, sessions: int | None = None, anomaly_scale: float = 1.0,
             chunk: int = 20000, twin: Path | None = None,
             profile: str = "default") -> dict[str, Any]:
    """Write ``frames`` lines of capture to ``out`` and its manifest; return the manifest.

    ``twin`` (NDJSON only): also write there the same lines as tap records (the frames as
    they are, with their time, direction and session), and its manifest: the same
    capture in the two formats, to compare the formats' cost on the same frames.
    ``profile``: the shape of the traffic (:data:`gen_profiles.PROFILES`).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}")
    prof = PROFILES[profile]
    if fmt not in ("ndjson", "tap"):
        raise ValueError(f"unknown format {fmt!r}: use 'ndjson' or 'tap'")
    t0 = time.perf_counter()
    tap = fmt == "tap"
    slots = sessions if sessions is not None else (
        max(12, prof.ndjson_slots) if tap else prof.ndjson_slots)
    rates = {k: v * (anomaly_scale if k in _ANOMALIES else 1.0) for k, v in DEFAULT_RATES.items()}
    rng = random.Random(seed)
    pools = Pools(random.Random(seed + 1), dense=prof.dense_escapes)
    traffic = Traffic(rng, pools, clean=clean, tap=tap, slots=slots, rates=rates, profile=prof)
    wrng = random.Random(seed + 2)  # the writer's anomalies: the traffic stays the same
    cnt = _Counter()
    sizes = array("I")
    p_bad = 0.0 if clean else rates["malformed"]
    if twin is not None and tap:
        raise ValueError("a twin is written for an NDJSON capture")
    buf: list[bytes] = []
    twin_buf: list[bytes] = []
    n_bytes = twin_bytes = 0
    written = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    tf = open(twin, "wb") if twin is not None else None  # noqa: SIM115 - closed below
    with open(out, "wb") as f:
        def tap_line(text: str, t: float, d: str, sess: str) -> str:
            if text or d != "blank":
                return (f'{{"ts":{t:.6f},"dir":"{d}","raw":{encode_basestring(text)},'
                        f'"session":"{sess}"}}')
            return text

        def put(text: str, t: float, d: str, sess: str) -> None:
            nonlocal written, n_bytes, twin_bytes
            if tf is not None:
                tb = tap_line(text, t, d, sess).encode("utf-8", "surrogateescape")
                twin_buf.append(tb)
                twin_bytes += len(tb) + 1
            if tap:
                text = tap_line(text, t, d, sess)
            b = text.encode("utf-8", "surrogateescape")
            buf.append(b)
            sizes.append(len(b))
            n_bytes += len(b) + 1
            written += 1
            if len(buf) >= chunk:
                f.write(b"\n".join(buf) + b"\n")
                buf.clear()
                if tf is not None:
                    tf.write(b"\n".join(twin_buf) + b"\n")
                    twin_buf.clear()

        while written < frames:
            t, _, typ, s, data = traffic.pop()
            if typ == START:
                traffic.start(t, bool(data))
                continue
            if s.dead:
                continue
            if typ == ACT:
                traffic.client_action(s, t)
                continue
            if typ == SACT:
                traffic.server_action(s, t)
                continue
            if typ == END:
                s.dead = True
                continue
            d, line, meta = data
            if p_bad and d in (C2S, S2C) and wrng.random() < p_bad:
                cat = _pick(wrng, _BAD)
                if cat == "blank":
                    cnt.blank += 1
                    put("", t, "blank", s.name)
                elif cat == "truncated" and len(line) > 20:
                    cnt.bad["truncated"] += 1
                    cnt.kinds["invalid"] += 1
                    put(line[:wrng.randint(10, len(line) - 2)], t, d, s.name)
                    if d == C2S and wrng.random() < 0.5:
                        traffic.frame(t + 0.002, s, S2C, _PARSE_ERROR, ("error", None))
                    continue  # the frame is lost: its response becomes an orphan
                elif cat != "truncated":
                    bad_dir = S2C if cat == "log_text" else d
                    cnt.bad[cat] += 1
                    cnt.kinds["invalid"] += 1
                    put(_bad_line(wrng, cat), t, bad_dir, s.name)
                    if bad_dir == C2S and wrng.random() < 0.5:
                        traffic.frame(t + 0.002, s, S2C, _PARSE_ERROR, ("error", None))
                if written >= frames:
                    break
            if not tap and d in (STDERR, META):
                continue
            cnt.frame(s.name, d, meta)
            if meta[0] == "error":
                i = line.find('"code"')
                j = line.find(",", i)
                cnt.error_code(int(line[i + 6:j].strip(": ")))
            put(line, t, d, s.name)
        if buf:
            f.write(b"\n".join(buf) + b"\n")
        if tf is not None:
            if twin_buf:
                tf.write(b"\n".join(twin_buf) + b"\n")
            tf.close()
    res = cnt.result()
    manifest = {
        "generator": "gen_capture", "generator_version": GENERATOR_VERSION, "seed": seed,
        "format": fmt, "clean": clean, "anomaly_scale": anomaly_scale, "slots": slots,
        "profile": profile,
        "frames": written, "bytes": n_bytes, "file": out.name,
        "line_bytes": _percentiles(sizes),
        "large_frames_over_150k": sum(1 for x in sizes if x > 150_000),
        # tap lines that are not valid tap records at all (invalid UTF-8 in the tap line)
        "unreadable_tap_lines": cnt.bad["invalid_utf8"] if tap else 0,
        **res,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    manifest_path(out).write_text(json.dumps(manifest, indent=1) + "\n")
    if twin is not None:
        twin_manifest = {**manifest, "format": "tap", "file": twin.name, "bytes": twin_bytes,
                         "twin_of": out.name,
                         "unreadable_tap_lines": cnt.bad["invalid_utf8"]}
        manifest_path(twin).write_text(json.dumps(twin_manifest, indent=1) + "\n")
    return manifest


def manifest_path(out: Path) -> Path:
    """Where the manifest of a generated capture is written."""
    return out.with_name(out.name + ".manifest.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=100_000, help="lines to write (default 100000)")
    ap.add_argument("--format", choices=["ndjson", "tap"], default="ndjson")
    ap.add_argument("--clean", action="store_true",
                    help="no malformed/blank lines and no ids above 2**64")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sessions", type=int, default=None,
                    help="concurrent sessions (default: 12 for tap, 1 for ndjson)")
    ap.add_argument("--anomaly-scale", type=float, default=1.0,
                    help="multiply the anomaly rates (e.g. 20 for an edge-case file)")
    ap.add_argument("--profile", choices=list(PROFILES), default="default",
                    help="the shape of the traffic (see gen_profiles.py)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    m = generate(a.out, a.frames, a.format, clean=a.clean, seed=a.seed, sessions=a.sessions,
                 anomaly_scale=a.anomaly_scale, profile=a.profile)
    print(f"{a.out.name}: {m['frames']} lines, {m['bytes'] / 1e6:.1f} MB, "
          f"{m['sessions']} sessions, {m['kinds']}, {m['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
