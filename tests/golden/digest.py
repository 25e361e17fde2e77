"""Digests of the three tables of every bundled capture and fixture (the golden test's data).

``python tests/golden/digest.py`` writes ``golden.json`` next to this file; the test
(:mod:`test_golden`) loads every file again and compares. A table's digest is one SHA-256
per column over its name, its dtype and the ``repr`` of each value, so a difference names
the column that moved.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden.json")
#: what mn.load reads as notes, not captures, when walking a folder
_NOT_CAPTURES = (".md", ".json", ".source.txt", ".py", ".ipynb", ".xsd")


def files() -> list[Path]:
    """Every capture of ``data/`` and ``tests/fixtures/`` (the wild samples included)."""
    found = [*ROOT.joinpath("data").rglob("*"), *ROOT.joinpath("tests", "fixtures").rglob("*")]
    return sorted(p for p in found if p.is_file() and not p.name.endswith(_NOT_CAPTURES))


def _value(v: object) -> str:
    if v is None:
        return "None"
    if isinstance(v, float) and v != v:
        return "nan"
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return repr(v)
    except ImportError:  # pragma: no cover
        pass
    return repr(v)


def table_digest(df: object) -> dict[str, str]:
    out = {"rows": str(len(df))}  # type: ignore[arg-type]
    for name in df.columns:  # type: ignore[attr-defined]
        col = df[name]  # type: ignore[index]
        h = hashlib.sha256(f"{name}|{col.dtype}|".encode())
        for v in col.astype(object).tolist():
            h.update(_value(v).encode("utf-8", "surrogateescape"))
            h.update(b"\x00")
        out[name] = h.hexdigest()[:16]
    return out


#: the rule codes of the catalogue when ``golden.json`` was written: the violations digest
#: holds their findings only (a rule added since is held by its rows of the rule table)
RULES = frozenset(json.loads(Path(__file__).with_name("rules.json").read_text()))


def file_digest(path: Path) -> dict[str, object]:
    import mcp_notebook as mn

    try:
        t = mn.load(path)
    except mn.CaptureError as exc:
        msg = str(exc).replace(str(path), "<path>")
        return {"error": msg}
    return {"frames": table_digest(t.frames), "pairs": table_digest(t.pairs),
            "violations": table_digest(t.violations[t.violations["rule"].isin(list(RULES))]
                                       .reset_index(drop=True))}


def all_digests() -> dict[str, dict[str, object]]:
    return {p.relative_to(ROOT).as_posix(): file_digest(p) for p in files()}


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(all_digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN.relative_to(ROOT)}", file=sys.stderr)
