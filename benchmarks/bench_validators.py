"""Which JSON Schema validator the conversation checker uses: jsonschema-rs, fastjsonschema
or jsonschema, on the messages of the bundled traces.

Usage::

    .venv/bin/python benchmarks/bench_validators.py

For every request, notification and result of ``data/`` and ``tests/fixtures/peers/``
whose method names a definition of its version's official schema, each validator compiles
the definition once (timed apart) and validates the message (best of 5 passes over all
messages). It also reports whether each compiles the schema's dialect (draft-07 up to
2025-06-18, 2020-12 after) and what it says about one broken message (the pointer and the
expectation).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

import mcp_notebook as mn  # noqa: E402
from mcp_notebook.conversation import schemas as S  # noqa: E402
from mcp_notebook.protocol import versions as V  # noqa: E402


def messages() -> list[tuple[str, str, Any]]:
    out = []
    paths = sorted((ROOT / "data").glob("*.*")) + sorted((ROOT / "tests/fixtures/peers").glob("*.*"))
    for path in paths:
        if path.suffix not in (".jsonl", ".har"):
            continue
        t = mn.load(path)
        f, p = t.frames, t.pairs
        for seq, kind, session, method in zip(f["seq"], f["kind"], f["session"], f["method"],
                                              strict=True):
            if kind in ("request", "notification") and isinstance(method, str):
                version = V.normalise(t.versions.get(session))
                d = S.definition_for(version, method, "message")
                msg = t.message(int(seq))
                if d and isinstance(msg, dict):
                    out.append((version, d, msg))
        for req, resp, method, session in zip(p["request_seq"], p["response_seq"], p["method"],
                                              p["session"], strict=True):
            if pd.isna(resp) or pd.isna(req) or not isinstance(method, str):
                continue
            msg = t.message(int(resp))
            result = msg.get("result") if isinstance(msg, dict) else None
            version = V.normalise(t.versions.get(session))
            d = S.definition_for(version, method, "result", result, t.message(int(req)))
            if d and isinstance(result, dict):
                out.append((version, d, result))
    return out


def root(version: str, definition: str) -> dict[str, Any]:
    doc = S._document(version)
    key = "$defs" if "$defs" in doc else "definitions"
    return {"$schema": doc["$schema"], key: doc[key], "$ref": f"#/{key}/{definition}"}


def rs(schema: dict[str, Any]) -> Any:
    import jsonschema_rs

    v = jsonschema_rs.validator_for(schema)
    return v.is_valid, lambda m: [("/" + "/".join(map(str, e.instance_path)), e.message)
                                  for e in v.iter_errors(m)]


def fast(schema: dict[str, Any]) -> Any:
    import fastjsonschema

    f = fastjsonschema.compile(schema)

    def ok(m: Any) -> bool:
        try:
            f(m)
            return True
        except fastjsonschema.JsonSchemaException:
            return False

    def errors(m: Any) -> list[tuple[str, str]]:
        try:
            f(m)
            return []
        except fastjsonschema.JsonSchemaException as e:  # the first error only
            return [(str(getattr(e, "path", "")), e.message)]
    return ok, errors


def js(schema: dict[str, Any]) -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    v = cls(schema)
    return v.is_valid, lambda m: [("/" + "/".join(map(str, e.absolute_path)), e.message)
                                  for e in v.iter_errors(m)]


def main() -> None:
    msgs = messages()
    defs = sorted({(v, d) for v, d, _ in msgs})
    print(f"{len(msgs)} messages, {len(defs)} definitions "
          f"({sorted({v for v, _ in defs})})")
    broken = ("2025-06-18", "CallToolRequest", {"method": "tools/call",
                                                 "params": {"name": 3, "arguments": []}})
    for name, make in (("jsonschema-rs", rs), ("fastjsonschema", fast), ("jsonschema", js)):
        t0 = time.perf_counter()
        compiled: dict[tuple[str, str], Any] = {}
        failed: dict[str, str] = {}
        for v, d in defs:
            try:
                compiled[(v, d)] = make(root(v, d))
            except Exception as e:  # noqa: BLE001 - a report of what does not compile
                failed.setdefault(v, f"{type(e).__name__}: {str(e)[:80]}")
        compile_s = time.perf_counter() - t0
        todo = [(compiled[(v, d)][0], m) for v, d, m in msgs if (v, d) in compiled]
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            invalid = sum(not ok(m) for ok, m in todo)
            best = min(best, time.perf_counter() - t0)
        per = best / max(len(todo), 1) * 1e6
        try:
            said = make(root(broken[0], broken[1]))[1](broken[2])
        except Exception as e:  # noqa: BLE001
            said = [("", f"{type(e).__name__}")]
        print(f"\n{name}: compiled {len(compiled)}/{len(defs)} in {compile_s * 1000:.0f} ms; "
              f"validated {len(todo)} in {best * 1000:.1f} ms ({per:.1f} µs each), "
              f"{invalid} invalid")
        for v, why in failed.items():
            print(f"  does not compile {v}: {why}")
        print(f"  on a broken tools/call: {said}")


if __name__ == "__main__":
    main()
