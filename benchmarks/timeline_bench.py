"""Timeline (and inspector) on a 1,000,000-frame trace: time to first view, bytes per update.

Not a test: a measurement to rerun after changing ``mcp_notebook/widgets``. By default it
builds the trace's DataFrames synthetically (shaped exactly like ``Trace.frames`` /
``pairs`` / ``violations``), so it measures the views and not the loader; ``--load PATH``
measures on a real capture loaded with ``mn.load`` instead.

    python benchmarks/timeline_bench.py [--frames 1000000] [--load capture.jsonl] [--json]

Results are written up in ``benchmarks/TIMELINE.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mcp_notebook.widgets.aggregate import prepare
from mcp_notebook.widgets.filters import apply_filter
from mcp_notebook.widgets.frametable import frame_table, page_rows
from mcp_notebook.widgets.inspector import Inspector
from mcp_notebook.widgets.timeline import Timeline
from mcp_notebook.widgets.viewport import view

METHODS = np.array(["tools/call", "tools/list", "resources/read", "prompts/get", "ping",
                    "completion/complete", "resources/list", "sampling/createMessage"])
NOTES = np.array(["notifications/progress", "notifications/message",
                  "notifications/resources/updated"])


@dataclass
class SynthTrace:
    frames: pd.DataFrame
    pairs: pd.DataFrame
    violations: pd.DataFrame

    def message(self, seq: int) -> Any:
        return json.loads(self.frames["raw"].iat[int(seq)])


def synth(n_frames: int, seed: int = 1) -> SynthTrace:
    """About 45% requests, 45% responses, 10% notifications over 4 sessions, ~1 hour."""
    rng = np.random.default_rng(seed)
    n_req = int(n_frames * 0.45)
    t_req = np.sort(rng.uniform(0, 3600, n_req))
    lat = rng.lognormal(np.log(0.05), 1.0, n_req)
    u = rng.uniform(size=n_req)
    outcome = np.where(u < 0.005, "unanswered", np.where(u < 0.007, "cancelled", np.where(
        u < 0.037, "error", np.where(u < 0.057, "tool_error", "result"))))
    answered = ~np.isin(outcome, ["unanswered", "cancelled"])
    n_note = n_frames - n_req - int(answered.sum())
    meth = METHODS[rng.integers(0, len(METHODS), n_req)]
    sess = rng.integers(0, 4, n_req)
    requester = np.where(meth == "sampling/createMessage", "s2c", "c2s")
    t_note = rng.uniform(0, 3600, n_note)
    # frame rows: requests, answered responses, notifications, then sorted by time
    t = np.concatenate([t_req, (t_req + lat)[answered], t_note])
    kind = np.concatenate([np.full(n_req, "request"),
                           np.where(outcome[answered] == "error", "error", "result"),
                           np.full(n_note, "notification")])
    pair_i = np.concatenate([np.arange(n_req), np.flatnonzero(answered), np.full(n_note, -1)])
    n = len(t)
    order = np.argsort(t, kind="stable")
    seq_of_row = np.empty(n, dtype=np.int64)
    seq_of_row[order] = np.arange(n)
    t, kind, pair_i = t[order], kind[order], pair_i[order]
    is_req = kind == "request"
    req_dir = requester[np.maximum(pair_i, 0)]
    direction = np.where(pair_i < 0, np.where(rng.uniform(size=n) < 0.9, "s2c", "c2s"),
                         np.where(is_req, req_dir, np.where(req_dir == "c2s", "s2c", "c2s")))
    method = np.where(is_req, meth[np.maximum(pair_i, 0)], None).astype(object)
    note_rows = pair_i < 0
    method[note_rows] = NOTES[rng.integers(0, len(NOTES), int(note_rows.sum()))]
    session = np.where(pair_i >= 0, sess[np.maximum(pair_i, 0)], rng.integers(0, 4, n))
    id_key = np.where(pair_i >= 0, pair_i.astype(str), None)
    origin = pd.Timestamp("2026-01-01", tz="UTC")
    raw = [f'{{"jsonrpc":"2.0","id":{i},"method":"{m}"}}' if k == "request" else
           f'{{"jsonrpc":"2.0","id":{i},"result":{{}}}}' if k == "result" else
           f'{{"jsonrpc":"2.0","id":{i},"error":{{"code":-32603,"message":"x"}}}}'
           if k == "error" else f'{{"jsonrpc":"2.0","method":"{m}"}}'
           for i, m, k in zip(id_key, method, kind, strict=True)]
    frames = pd.DataFrame({
        "seq": np.arange(n), "ts": origin + pd.to_timedelta(t, unit="s"),
        "session": pd.Categorical(np.char.add("s", session.astype(str))),
        "stream": pd.Categorical(np.full(n, "stdio")),
        "direction": pd.Categorical(direction), "kind": pd.Categorical(kind),
        "id": np.where(pair_i >= 0, pair_i, None), "id_key": id_key,
        "method": pd.Categorical(method),
        "error_code": pd.array(np.where(kind == "error", -32603, None), dtype="Int64"),
        "error_message": np.where(kind == "error", "x", None),
        "is_tool_error": (kind == "result") & (outcome[np.maximum(pair_i, 0)] == "tool_error"),
        "size": np.fromiter((len(r) for r in raw), dtype=np.int64, count=n),
        "raw": raw, "source": None, "batch": pd.array([None] * n, dtype="Int64"),
        "reason": None,
    })
    req_seq = seq_of_row[:n_req]
    resp_seq = np.full(n_req, -1, dtype=np.int64)
    resp_seq[answered] = seq_of_row[n_req:n_req + int(answered.sum())]
    t_request = origin + pd.to_timedelta(t_req, unit="s")
    t_response = pd.Series(origin + pd.to_timedelta(t_req + lat, unit="s")).where(answered)
    cancel = outcome == "cancelled"
    pairs = pd.DataFrame({
        "request_seq": pd.array(req_seq, dtype="Int64"),
        "response_seq": pd.array(np.where(answered, resp_seq, None), dtype="Int64"),
        "session": np.char.add("s", sess.astype(str)), "requester": requester,
        "id": np.arange(n_req), "id_key": np.arange(n_req).astype(str), "method": meth,
        "outcome": outcome,
        "error_code": pd.array(np.where(outcome == "error", -32603, None), dtype="Int64"),
        "t_request": t_request, "t_response": t_response,
        "latency": t_response - pd.Series(t_request), "cancel_seq": pd.array(
            np.where(cancel, req_seq, None), dtype="Int64"),  # synthetic: points at itself
        "progress_count": 0,
    })
    vi = rng.choice(n, 1000, replace=False)
    violations = pd.DataFrame({"rule": "synthetic", "severity": "warning", "seq": np.sort(vi),
                               "related_seq": None, "message": "m", "spec": "s",
                               "versions": "all"})
    return SynthTrace(frames, pairs, violations)


def _timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def run(trace: Any, width: int = 1000) -> dict:
    res: dict = {"frames": len(trace.frames), "python": platform.python_version(),
                 "pandas": pd.__version__, "numpy": np.__version__}
    tl, t_first = _timed(Timeline, trace)
    res["timeline_first_view_s"] = round(t_first, 3)
    res["first_view_bytes"] = tl.last_payload_bytes
    res["first_view_mode"] = tl.view["mode"]
    res["first_view_note"] = tl.view["note"]
    p = tl.prepared
    _, t_prep = _timed(prepare, trace, "direction")
    res["prepare_direction_s"] = round(t_prep, 3)
    _, t_prep_m = _timed(prepare, trace, "method")
    res["prepare_method_s"] = round(t_prep_m, 3)
    e0, e1 = p.extent
    updates = []
    for frac in (1, 0.1, 0.01, 0.001, 0.0001, 0.00001):
        span = (e1 - e0) * frac
        lo = e0 + (e1 - e0) * 0.5 - span / 2
        for step in range(5):  # pan by a tenth of the window each time
            a = lo + step * span / 10
            payload, dt = _timed(view, p, a, a + span, width)
            nbytes = len(json.dumps(payload))
            updates.append({"window_fraction": frac, "mode": payload["mode"], "bytes": nbytes,
                            "seconds": dt, "visible_spans": payload["visible"]["spans"]})
    by_frac = {}
    for u in updates:
        d = by_frac.setdefault(u["window_fraction"], {"mode": u["mode"], "bytes": [],
                                                      "ms": [], "spans": []})
        d["bytes"].append(u["bytes"])
        d["ms"].append(u["seconds"] * 1000)
        d["spans"].append(u["visible_spans"])
    res["updates"] = {str(k): {"mode": v["mode"], "max_bytes": max(v["bytes"]),
                               "median_ms": round(float(np.median(v["ms"])), 1),
                               "visible_spans": int(np.median(v["spans"]))}
                      for k, v in by_frac.items()}
    res["max_update_bytes"] = max(u["bytes"] for u in updates)
    # inspector on the same trace
    ft, t_ft = _timed(frame_table, trace)
    res["frame_table_s"] = round(t_ft, 3)
    f, t_f = _timed(apply_filter, ft, "method:tools/call outcome:error latency>100ms "
                    "-method:notifications/*", trace.violations)
    res["filter_s"] = round(t_f, 3)
    res["filter_rows"] = f.count
    _, t_txt = _timed(apply_filter, ft, "resources/read", trace.violations)
    res["free_text_filter_s"] = round(t_txt, 3)
    rows, t_page = _timed(page_rows, ft, np.flatnonzero(f.mask), 0, 50, ft["ts"].iloc[0])
    res["page_render_ms"] = round(t_page * 1000, 1)
    res["page_bytes"] = len(json.dumps(rows))
    _, t_ins = _timed(Inspector, trace)
    res["inspector_first_view_s"] = round(t_ins, 3)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=1_000_000)
    ap.add_argument("--load", help="a capture to load with mn.load instead of synthetic frames")
    ap.add_argument("--json", action="store_true", help="print the raw results as JSON")
    args = ap.parse_args()
    if args.load:
        import mcp_notebook as mn

        trace, t_gen = _timed(mn.load, args.load)
        _ = trace.pairs, trace.violations
    else:
        trace, t_gen = _timed(synth, args.frames)
    res = run(trace)
    res["build_trace_s"] = round(t_gen, 2)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"frames: {res['frames']:,} (trace built in {res['build_trace_s']} s)")
    print(f"timeline first view: {res['timeline_first_view_s']} s, "
          f"{res['first_view_bytes']:,} bytes ({res['first_view_mode']}): "
          f"{res['first_view_note']}")
    print(f"prepare: direction lanes {res['prepare_direction_s']} s, "
          f"method lanes {res['prepare_method_s']} s")
    print("view updates (5 pans per zoom level):")
    print("  window     mode   max bytes  median ms  visible requests")
    for k, v in res["updates"].items():
        print(f"  {float(k):<9g}  {v['mode']:<5}  {v['max_bytes']:>9,}  {v['median_ms']:>9}"
              f"  {v['visible_spans']:>16,}")
    print(f"inspector first view: {res['inspector_first_view_s']} s (frame_table "
          f"{res['frame_table_s']} s); filter {res['filter_s']} s ({res['filter_rows']:,} rows);"
          f" free text {res['free_text_filter_s']} s; page of 50: {res['page_render_ms']} ms, "
          f"{res['page_bytes']:,} bytes")


if __name__ == "__main__":
    main()
