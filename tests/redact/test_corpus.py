"""Recall and precision of the default policy on the labelled corpus, kind by kind.

Each corpus case becomes one frame of a tap capture, which is loaded and redacted the way a
user does it. For each frame the replaced spans are recovered from the output (JSON leaf by
leaf; a base64 blob that decodes to text is compared decoded). A span that overlaps a
labelled secret is a true redaction, any other a false one; a labelled secret still visible
anywhere in the output (decoded blobs included) is a miss. ``pytest -s`` prints the table.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import mcp_notebook as mn
from mcp_notebook.redact import TOKEN_RE, Policy

from .corpus import CASES, Case, kinds

SALT = "corpus"


def _as_text(s: str) -> str | None:
    """``s`` decoded when it is a base64 blob of UTF-8 text, else None."""
    if len(s) < 16 or len(s) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", s):
        return None
    try:
        out = base64.b64decode(s, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return out if out.isprintable() or all(c.isprintable() or c in "\n\t\r" for c in out) \
        else None


_RUN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")


def _unblob(s: str) -> str:
    """``s`` with every base64 blob of text in it decoded."""
    return _RUN.sub(lambda m: _as_text(m.group(0)) or m.group(0), s)


def spans(before: str, after: str) -> list[str]:
    """The pieces of ``before`` that ``after`` shows as redaction tokens (when the tokens
    are inside base64 blobs of text, the blobs compared decoded)."""
    if before == after:
        return []
    got = _spans(before, after)
    if got is None:
        got = _spans(_unblob(before), _unblob(after))
    assert got is not None, f"the output is not the input with spans replaced:\n" \
                            f"{before!r}\n{after!r}"
    return got


def _spans(before: str, after: str) -> list[str] | None:
    pieces = TOKEN_RE.split(after)
    if len(pieces) == 1:
        return None
    rx = "".join(re.escape(p) + ("(.+?)" if i < len(pieces) - 1 else "")
                 for i, p in enumerate(pieces))
    m = re.fullmatch(rx, before, re.DOTALL)
    return list(m.groups()) if m else None


def leaf_spans(a: Any, b: Any) -> list[str]:
    """Replaced spans of a decoded JSON value, leaf by leaf (base64 text blobs decoded)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (a, b)
        return [s for k in a for s in leaf_spans(a[k], b[k])]
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        return [s for x, y in zip(a, b, strict=True) for s in leaf_spans(x, y)]
    if a == b:
        return []
    if not isinstance(a, str):
        assert isinstance(b, str) and TOKEN_RE.fullmatch(b), (a, b)
        return [json.dumps(a)]
    assert isinstance(b, str)
    return spans(a, b)


def visible(raw: str) -> str:
    """All the text a reader of the output sees, base64 text blobs decoded."""
    out = [raw]
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            out.append(v)
    walk(doc)
    return "\n".join(_unblob(s) for s in out)


def _raw(case: Case) -> str:
    if isinstance(case.frame, str):
        return case.frame
    return json.dumps(case.frame, separators=(",", ":"), ensure_ascii=False)


def _dir(case: Case) -> str:
    return case.dir or ("c2s" if isinstance(case.frame, dict) else "stderr")


def redact_corpus(tmp: Path, policy: Policy | None = None) -> list[tuple[Case, str, str]]:
    """(case, original raw, redacted raw) for every case, through load and redact."""
    path = tmp / "corpus.jsonl"
    path.write_text("".join(json.dumps({"ts": 1.0 + i, "dir": _dir(c), "session": "s",
                                        "raw": _raw(c)}) + "\n"
                            for i, c in enumerate(CASES)), "utf-8")
    t = mn.load(path)
    clean, _ = t.redact(policy, salt=SALT)
    assert len(clean.frames) == len(CASES)
    return [(c, a, b) for c, a, b in zip(CASES, t.frames["raw"], clean.frames["raw"],
                                         strict=True)]


def measure(rows: list[tuple[Case, str, str]]) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Counts per kind and a line for each miss or false redaction."""
    stats: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(
        ("secrets", "found", "redactions", "true", "keeps", "kept"), 0))
    problems: list[str] = []
    for case, before, after in rows:
        st = stats[case.kind]
        if isinstance(case.frame, dict):
            got = leaf_spans(json.loads(before), json.loads(after))
        else:
            got = spans(before, after)
        seen = visible(after)
        for s in case.secrets:
            st["secrets"] += 1
            if s in seen or not any(s in g or g in s for g in got):
                problems.append(f"{case.kind}: missed {s!r} in {after[:160]!r}")
            else:
                st["found"] += 1
        for g in got:
            st["redactions"] += 1
            if any(s in g or g in s for s in case.secrets):
                st["true"] += 1
            else:
                problems.append(f"{case.kind}: false redaction of {g!r} in {before[:160]!r}")
        for k in case.keep:
            st["keeps"] += 1
            if k in after or k in seen:
                st["kept"] += 1
            else:
                problems.append(f"{case.kind}: lost {k!r}: {after[:200]!r}")
    return stats, problems


def table(stats: dict[str, dict[str, int]]) -> str:
    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.0f}%" if b else "-"

    lines = [f"{'kind':<18}{'secrets':>8}{'recall':>8}{'redacted':>9}{'precision':>10}"
             f"{'kept':>9}"]
    tot = dict.fromkeys(("secrets", "found", "redactions", "true", "keeps", "kept"), 0)
    for kind in kinds():
        s = stats[kind]
        for k in tot:
            tot[k] += s[k]
        lines.append(f"{kind:<18}{s['secrets']:>8}{pct(s['found'], s['secrets']):>8}"
                     f"{s['redactions']:>9}{pct(s['true'], s['redactions']):>10}"
                     f"{s['kept']:>4}/{s['keeps']:<4}")
    lines.append(f"{'all':<18}{tot['secrets']:>8}{pct(tot['found'], tot['secrets']):>8}"
                 f"{tot['redactions']:>9}{pct(tot['true'], tot['redactions']):>10}"
                 f"{tot['kept']:>4}/{tot['keeps']:<4}")
    return "\n".join(lines)


def test_corpus_recall_and_precision_per_kind(tmp_path: Path) -> None:
    stats, problems = measure(redact_corpus(tmp_path))
    print("\nredaction corpus, default policy\n" + table(stats))
    assert sum(s["secrets"] for s in stats.values()) >= 30
    assert not problems, "\n".join(problems)


def test_corpus_with_the_detect_secrets_engine(tmp_path: Path) -> None:
    """The optional engine adds shapes and no false redaction on the corpus."""
    pytest.importorskip("detect_secrets")
    stats, problems = measure(redact_corpus(tmp_path, Policy(engines=("detect-secrets",))))
    print("\nredaction corpus, default policy + detect-secrets\n" + table(stats))
    assert not problems, "\n".join(problems)


def test_detect_secrets_engine_on_the_command_line(tmp_path: Path) -> None:
    """--engine detect-secrets adds shapes the default policy lacks (a PyPI token)."""
    pytest.importorskip("detect_secrets")
    from mcp_notebook.cli import main

    pypi = "pypi-AgEIcHlwaS5vcmc" + "FAKEtestPypiToken0123456789" * 3
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"ts": 1, "dir": "stderr", "raw": f"uploading with {pypi}"}) + "\n")
    assert main(["redact", str(src), "-o", str(out)]) == 0
    assert pypi in out.read_text()  # not a default shape
    assert main(["redact", str(src), "--engine", "detect-secrets", "-o", str(out)]) == 0
    assert pypi not in out.read_text() and "uploading with «redacted:" in out.read_text()


@pytest.mark.parametrize("case", [c for c in CASES if not c.secrets], ids=lambda c: c.kind)
def test_near_misses_are_left_alone(case: Case, tmp_path: Path) -> None:
    """Each near miss alone: nothing redacted, the frame byte for byte as it was."""
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"ts": 1, "dir": _dir(case), "raw": _raw(case)}) + "\n")
    t = mn.load(path)
    clean, report = t.redact(salt=SALT)
    assert report.empty, report.to_dict("records")
    assert list(clean.frames["raw"]) == [_raw(case)]


def test_default_engine_needs_no_detect_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """With detect-secrets not importable the default policy still finds the whole corpus,
    and asking for the engine is a clear error naming the extra to install."""
    import sys

    from mcp_notebook.cli import main

    for mod in ("detect_secrets", "detect_secrets.core.plugins.util",
                "detect_secrets.plugins.base"):
        monkeypatch.setitem(sys.modules, mod, None)
    stats, problems = measure(redact_corpus(tmp_path))
    assert not problems and sum(s["found"] for s in stats.values()) >= 30
    src = tmp_path / "corpus.jsonl"
    assert main(["redact", str(src), "--engine", "detect-secrets",
                 "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "mcp_notebook[redact]" in err and err.count("\n") == 1
    with pytest.raises(ImportError, match=r"mcp_notebook\[redact\]"):
        mn.load(src).redact(Policy(engines=("detect-secrets",)))


@pytest.mark.parametrize("keep", ["api_key", "API-Key", r"api.*"])
def test_keep_keys_plain_names_or_regexes(keep: str) -> None:
    """A kept name is given as the user spells it (normalised like keys) or as a regex."""
    from mcp_notebook.redact import Redactor

    r = Redactor(Policy().extend(keep_keys=[keep]), salt=SALT)
    assert not r.secret_key("api_key") and r.secret_key("password")
    assert Redactor(salt=SALT).secret_key("api_key")


def test_default_policy_against_detect_secrets_alone(tmp_path: Path) -> None:
    """What adopting detect-secrets as the engine would give, measured on the same corpus
    (its default plugins, keyword and entropy ones included, line by line with blobs
    decoded): the default policy's recall and precision are not below it."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    secrets = found = flagged = true = 0
    with default_settings():
        for case in CASES:
            got = {s.secret_value for line in (_unblob(_raw(case)).splitlines() or [""])
                   for s in scan_line(line) if s.secret_value}
            secrets += len(case.secrets)
            found += sum(any(s in g or g in s for g in got) for s in case.secrets)
            flagged += len(got)
            true += sum(any(s in g or g in s for s in case.secrets) for g in got)
    stats, problems = measure(redact_corpus(tmp_path))
    ours = sum(s["found"] for s in stats.values()), sum(s["true"] for s in stats.values())
    mine = sum(s["redactions"] for s in stats.values())
    print(f"\ndetect-secrets alone: recall {found}/{secrets} = {found / secrets:.0%}, precision "
          f"{true}/{flagged} = {true / max(flagged, 1):.0%}; default policy: recall "
          f"{ours[0]}/{secrets}, precision {ours[1]}/{mine}")
    assert not problems
    assert ours[0] / secrets >= found / secrets and ours[1] / mine >= true / max(flagged, 1)
