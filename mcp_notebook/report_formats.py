"""The findings of ``check`` in the formats CI systems read: SARIF 2.1.0, JUnit XML and
GitHub Actions workflow commands.

Each finding keeps its rule code, the rule's spec sentence and its place in the capture: a
frame's ``source`` is ``file:line`` (a JSONL line) or ``file#entryN[/eventM]`` (a HAR entry,
an SSE event), which becomes a file and line, or a file and a logical location.

>>> import mcp_notebook as mn
>>> t = mn.load(mn.sample_path("broken-duplicate-response"))
>>> print(render_findings(t, "github").splitlines()[0])  # doctest: +ELLIPSIS
::warning file=data/broken-duplicate-response.jsonl,line=7,title=orphan-response::...
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import IO, Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from . import __version__
from .protocol.rules import RULES, Rule

__all__ = ["FORMATS", "render_findings", "write_findings", "findings", "iter_findings"]

FORMATS = ("sarif", "junit", "github")
SEVERITIES = ("error", "warning", "info")
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_SOURCE = re.compile(r"^(?P<file>.*?)(?::(?P<line>\d+)|#(?P<where>[^#]*))$")
_TAIL = r"(?::\d+|#[^#]*)$"  # what _SOURCE takes off a source to leave its file
# what XML 1.0 cannot hold, and what a terminal would act on
_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class Finding:
    """One violation with its place: the capture file, a line or a logical location."""

    rule: str
    severity: str
    message: str
    spec: str
    versions: str
    seq: int | None
    related_seq: int | None
    file: str
    line: int | None
    where: str | None  # a HAR entry / SSE event, where there is no line
    related: tuple[str, int | None, str | None] | None


def _clean(text: Any) -> str:
    """Text from a trace made safe for XML, JSON and a terminal: control characters and
    undecodable bytes written as ``\\xNN`` / ``\\udcNN``."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", str(text))


def _display_paths(trace: Any) -> dict[str, str]:
    """File name in ``source`` -> the path the user gave, relative to here when under it."""
    out: dict[str, str] = {}
    here = Path.cwd()
    for p in trace.paths:
        path = Path(p)
        shown = p
        if path.is_absolute():
            try:
                shown = str(path.resolve().relative_to(here.resolve()))
            except ValueError:
                shown = str(path)
        out.setdefault(path.name, PurePath(shown).as_posix())
    return out


def _place(source: Any, paths: dict[str, str]) -> tuple[str, int | None, str | None]:
    text = "" if source is None else str(source)
    m = _SOURCE.match(text)
    if not m:
        return paths.get(text, text or "capture"), None, None
    name = m.group("file")
    line = int(m.group("line")) if m.group("line") else None
    return paths.get(name, name), line, m.group("where")


def _opt_int(value: Any) -> int | None:
    return None if value is None or bool(pd.isna(value)) else int(value)


def findings(trace: Any) -> list[Finding]:
    """The violations of ``trace``, each with its capture file and line."""
    return list(iter_findings(trace))


def iter_findings(trace: Any, chunk: int = 20_000) -> Iterator[Finding]:
    """:func:`findings` one at a time, read from the violations a chunk at a time."""
    yield from _iter_findings_at(trace, None, chunk)


def _iter_findings_at(trace: Any, order: np.ndarray | None, chunk: int = 20_000
                      ) -> Iterator[Finding]:
    """The findings at the positions ``order`` of the violations (all, in their order,
    for None), read a chunk at a time (the sources of a chunk's frames in one read)."""
    v = trace.violations
    sources = trace.frames["source"]
    paths = _display_paths(trace)
    default = next(iter(paths.values()), "capture")
    n = len(v) if order is None else len(order)
    for lo in range(0, n, chunk):
        rows = v.iloc[lo:lo + chunk] if order is None else v.iloc[order[lo:lo + chunk]]
        seqs = [_opt_int(s) for s in rows["seq"].tolist()]
        rels = [_opt_int(s) for s in rows["related_seq"].tolist()]
        wanted = sorted({s for s in seqs + rels if s is not None})
        text = dict(zip(wanted, sources.take(wanted).tolist(), strict=True))
        for row, seq, rel in zip(rows.itertuples(index=False), seqs, rels, strict=True):
            file, line, where = (_place(text[seq], paths) if seq is not None
                                 else (default, None, None))
            related = _place(text[rel], paths) if rel is not None else None
            yield Finding(str(row.rule), str(row.severity), _clean(row.message),
                          _clean(row.spec), str(row.versions), seq, rel, file, line, where,
                          related)


def render_findings(trace: Any, fmt: str, *, fail_on: str = "error") -> str:
    """The findings of ``trace`` as ``sarif``, ``junit`` or ``github`` text.

    ``fail_on`` (JUnit only): findings at or above it are ``<failure>`` elements; those
    below are listed in the test case's ``<system-out>``, so a CI run fails as ``check``
    would. SARIF and GitHub annotations carry every finding with its own level.
    """
    out = io.StringIO()
    write_findings(trace, fmt, out, fail_on=fail_on)
    return out.getvalue()


def write_findings(trace: Any, fmt: str, out: IO[str], *, fail_on: str = "error") -> None:
    """:func:`render_findings` written to ``out`` as it goes, a finding at a time (JUnit's
    counts, which its headers need first, from the findings' columns)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown findings format {fmt!r}: one of {', '.join(FORMATS)}")
    if fail_on not in SEVERITIES:
        raise ValueError(f"fail_on {fail_on!r}: one of {', '.join(SEVERITIES)}")
    from .engine.gcpause import frozen_heap

    with frozen_heap():
        _write_findings(trace, fmt, out, fail_on)


def _write_findings(trace: Any, fmt: str, out: IO[str], fail_on: str) -> None:
    if fmt == "sarif":
        _write_sarif(iter_findings(trace), out)
    elif fmt == "junit":
        _write_junit(trace, out, SEVERITIES[: SEVERITIES.index(fail_on) + 1])
    else:
        for line in _github(iter_findings(trace)):
            out.write(line + "\n")


# -- SARIF 2.1.0 ----------------------------------------------------------------------------
def _uri(path: str) -> str:
    p = PurePath(path)
    if p.is_absolute():
        return Path(path).as_uri()
    return quote(p.as_posix(), safe="/")


def _location(file: str, line: int | None, where: str | None, seq: int | None,
              text: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(file)}}
    if line is not None:
        physical["region"] = {"startLine": line}
    loc: dict[str, Any] = {"physicalLocation": physical}
    if where:
        loc["logicalLocations"] = [{"fullyQualifiedName": where, "kind": "element"}]
    if text:
        loc["message"] = {"text": text}
    if seq is not None:
        loc["properties"] = {"seq": seq}
    return loc


def _descriptor(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": "".join(w.capitalize() for w in rule.code.split("-")),
        "shortDescription": {"text": _clean(rule.title)},
        "fullDescription": {"text": _clean(rule.cite)},
        "help": {"text": _clean(f"{rule.cite}\n\n{rule.advice}")},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": [rule.topic], "versions": list(rule.versions)},
    }


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "level": _SARIF_LEVEL.get(f.severity, "note"),
        "message": {"text": f.message},
        "locations": [_location(f.file, f.line, f.where, f.seq)],
    }
    if f.rule in index:
        result["ruleIndex"] = index[f.rule]
    if f.related is not None:
        result["relatedLocations"] = [
            {"id": 1, **_location(*f.related, f.related_seq, "the related frame")}]
    return result


def _sarif(found: Iterable[Finding]) -> dict[str, Any]:
    """The SARIF log as one document (what :func:`_write_sarif` writes piece by piece)."""
    out = io.StringIO()
    _write_sarif(found, out)
    return dict(json.loads(out.getvalue()))


def _write_sarif(found: Iterable[Finding], out: IO[str]) -> None:
    """A SARIF 2.1.0 log with one run, its results written one at a time (the artifacts
    they name come after them: JSON members have no order)."""
    index = {r.code: i for i, r in enumerate(RULES)}
    artifacts: dict[str, None] = {}
    head = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcp-notebook", "version": __version__,
                                "rules": [_descriptor(r) for r in RULES]}},
            "columnKind": "unicodeCodePoints",
            "results": [],
        }],
    }
    text = json.dumps(head, indent=2, ensure_ascii=False)
    cut = text.rindex('"results": []') + len('"results": [')
    out.write(text[:cut])
    for k, f in enumerate(found):
        artifacts.setdefault(f.file)
        body = json.dumps(_sarif_result(f, index), indent=2, ensure_ascii=False)
        out.write(("," if k else "") + "\n        " + body.replace("\n", "\n        "))
    listed = json.dumps([{"location": {"uri": _uri(a)}} for a in artifacts], indent=2,
                        ensure_ascii=False).replace("\n", "\n      ")
    out.write(("\n      " if artifacts else "") + f"],\n      \"artifacts\": {listed}\n    }}\n  ]\n}}\n")


# -- JUnit XML --------------------------------------------------------------------------------
def _capture_versions(trace: Any, paths: dict[str, str], chunk: int = 50_000
                      ) -> dict[str, set[str]]:
    """Per capture file: the protocol versions its sessions are checked against (the
    frames' files and sessions read a chunk at a time)."""
    f = trace.frames
    versions = trace.versions
    out: dict[str, set[str]] = {}
    for lo in range(0, len(f), chunk):
        part = f.iloc[lo:lo + chunk]
        files = part["source"].str.replace(_TAIL, "", regex=True).astype(object)
        pairs = pd.DataFrame({"file": files.where(files.notna(), ""),
                              "session": part["session"].astype(object)})
        for file, session in pairs.drop_duplicates().itertuples(index=False):
            key = None if session is None or bool(pd.isna(session)) else session
            name = paths.get(file, file or "capture")
            out.setdefault(name, set()).add(versions.get(key, ""))
    return out


def _xml_attr(text: str) -> str:
    """An XML attribute value, escaped as ElementTree escapes it."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\r", "&#13;").replace("\n", "&#10;")
            .replace("\t", "&#09;"))


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _finding_files(trace: Any, v: pd.DataFrame, paths: dict[str, str],
                   chunk: int = 20_000) -> tuple[np.ndarray, list[str]]:
    """The capture file of each finding (its frame's ``source`` placed as
    :func:`iter_findings` places it), as codes into a list of the files."""
    sources = trace.frames["source"]
    default = next(iter(paths.values()), "capture")
    seqs = v["seq"].to_numpy(dtype="float64", na_value=np.nan)
    names: dict[str, int] = {}
    codes = np.empty(len(v), dtype=np.int64)
    for lo in range(0, len(v), chunk):
        part = seqs[lo:lo + chunk]
        known = ~np.isnan(part)
        texts = iter(sources.take(part[known].astype(np.int64)).tolist())
        for k, has in enumerate(known.tolist(), start=lo):
            file = _place(next(texts), paths)[0] if has else default
            codes[k] = names.setdefault(file, len(names))
    return codes, list(names)


@dataclass
class _JUnitPlan:
    """What the headers need, from the findings' columns: the files (suites) in order,
    per suite its failed and skipped cases; and the order to read the findings in."""

    files: list[str]
    hit: set[tuple[int, int]]  # (file, rule) with a finding
    failed: list[int]  # per file: cases with a finding at or above fail_on
    skipped: list[set[int]]  # per file: rules for none of its versions, and no finding
    order: np.ndarray  # positions in the violations: by file, rule, failing first, position
    keys: np.ndarray  # (file, rule) of each position in ``order``, as file * rules + rule


def _junit_plan(trace: Any, failing: tuple[str, ...]) -> _JUnitPlan:
    v = trace.violations
    paths = _display_paths(trace)
    per_file: dict[str, set[str]] = {p: set() for p in paths.values()}  # even a file of no frames
    for file, versions in _capture_versions(trace, paths).items():
        per_file.setdefault(file, set()).update(versions)
    codes, names = _finding_files(trace, v, paths)
    for name in names:
        per_file.setdefault(name, set())
    files = list(per_file)
    rank_of = {file: k for k, file in enumerate(files)}
    file_rank = np.array([rank_of[n] for n in names], dtype=np.int64)[codes]
    rule_of = {r.code: k for k, r in enumerate(RULES)}
    rules = v["rule"].astype("category")
    lookup = np.array([rule_of.get(str(c), -1) for c in rules.cat.categories] + [-1],
                      dtype=np.int64)
    rule_rank = lookup[rules.cat.codes.to_numpy()]  # code -1 (none): the last, -1
    passing = ~v["severity"].astype(str).isin(failing).to_numpy()
    known = rule_rank >= 0  # a finding of a rule outside the catalogue has no case
    order = np.lexsort((np.arange(len(v)), passing, rule_rank, file_rank))
    order = order[known[order]]
    keys = file_rank[order] * len(RULES) + rule_rank[order]
    hit = {(int(k) // len(RULES), int(k) % len(RULES)) for k in np.unique(keys)}
    failed_keys = np.unique(keys[~passing[order]])
    failed = np.bincount(failed_keys // max(len(RULES), 1), minlength=len(files)).tolist()
    skipped: list[set[int]] = []
    for k, file in enumerate(files):
        versions = per_file[file] - {""}
        skipped.append({i for i, rule in enumerate(RULES) if (k, i) not in hit and versions
                        and not versions & set(rule.versions)})
    return _JUnitPlan(files, hit, [int(x) for x in failed], skipped, order, keys)


def _write_junit(trace: Any, out: IO[str], failing: tuple[str, ...],
                 chunk: int = 20_000) -> None:
    """JUnit XML written element by element: the counts each ``<testsuite>`` header needs
    come first from the findings' columns (:func:`_junit_plan`), then the cases, their
    findings read in (file, rule) order a chunk at a time. The text is the one
    ElementTree writes for the same tree, indented as ``ET.indent`` indents it."""
    plan = _junit_plan(trace, failing)
    n = len(RULES)
    out.write("<?xml version='1.0' encoding='utf-8'?>\n")
    head = (f'<testsuites name="mcp-notebook check" tests="{n * len(plan.files)}" '
            f'failures="{sum(plan.failed)}" errors="0"')
    if not plan.files:
        out.write(head + " />\n")
        return
    out.write(head + ">\n")
    found = zip(map(int, plan.keys), _iter_findings_at(trace, plan.order, chunk), strict=True)
    pending = next(found, None)
    for k, file in enumerate(plan.files):
        out.write(f'  <testsuite name="{_xml_attr(file)}" tests="{n}" '
                  f'failures="{plan.failed[k]}" errors="0" '
                  f'skipped="{len(plan.skipped[k])}">\n')
        for i, rule in enumerate(RULES):
            case = (f'    <testcase name="{_xml_attr(rule.code)}" '
                    f'classname="{_xml_attr("mcp-notebook." + rule.topic)}"')
            if i in plan.skipped[k]:
                why = _xml_attr(f"applies to {', '.join(rule.versions)} only")
                out.write(f'{case}>\n      <skipped message="{why}" />\n    </testcase>\n')
                continue
            if (k, i) not in plan.hit:
                out.write(case + " />\n")
                continue
            out.write(case + ">\n")
            below = 0  # findings below fail_on: one <system-out>, after the failures
            while pending is not None and pending[0] == k * n + i:
                f = pending[1]
                if f.severity in failing:
                    out.write(f'      <failure type="{_xml_attr(f.severity)}" '
                              f'message="{_xml_attr(f.message)}">'
                              f"{_xml_text(_finding_text(f))}</failure>\n")
                else:
                    out.write("      <system-out>" if not below else "\n\n")
                    out.write(_xml_text(f"{f.severity}: {f.message}\n{_finding_text(f)}"))
                    below += 1
                pending = next(found, None)
            out.write("</system-out>\n" if below else "")
            out.write("    </testcase>\n")
        out.write("  </testsuite>\n")
    out.write("</testsuites>\n")


def _where(file: str, line: int | None, where: str | None) -> str:
    return f"{file}:{line}" if line is not None else f"{file}#{where}" if where else file


def _finding_text(f: Finding) -> str:
    lines = [f"at {_where(f.file, f.line, f.where)} (frame {f.seq})"]
    if f.related is not None:
        lines.append(f"related: {_where(*f.related)} (frame {f.related_seq})")
    lines.append(f"spec: {f.spec}")
    lines.append(f"versions: {f.versions}")
    return "\n".join(lines)


# -- GitHub Actions workflow commands -----------------------------------------------------------
def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(found: Iterable[Finding]) -> Iterator[str]:
    for f in found:
        props = [f"file={_gh_property(f.file)}"]
        if f.line is not None:
            props.append(f"line={f.line}")
        props.append(f"title={_gh_property(f.rule)}")
        where = "" if f.line is not None or not f.where else f" [{f.where}]"
        message = f"{f.message}{where}\nspec: {f.spec}"
        yield f"::{_GITHUB_LEVEL.get(f.severity, 'notice')} {','.join(props)}::{_gh_data(message)}"
