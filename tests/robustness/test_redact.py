"""Redaction: planted secrets of every kind in real captures are 100% removed, pairing is
unchanged, and the report names every secret at the right frame and place."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import mcp_notebook as mn
from mcp_notebook.cli import main
from mcp_notebook.redact import Policy, redact_file

from .corpus import ROOT, seed

DATA = ROOT / "data"

PW = "Pl4nted-hunter2-pw"
KEYS = {"password": PW, "apiKey": "Pl4nted-apikey-0001", "api_key": "Pl4nted-apikey-0002",
        "access_token": "Pl4nted-access-0003", "client_secret": "Pl4nted-client-0004",
        "token": "Pl4nted-token-0005", "secret": "Pl4nted-secret-0006"}
BEARER = "pl4ntedBearerTok3n0007"
SK = "sk-proj-Pl4ntedOpenAIkey0008abcdef"
GHP = "ghp_Pl4ntedGithubToken0009abcdefghijklmn"
AKIA = "AKIAPL4NTED00000010A"
AWS_SECRET = "Pl4ntedAwsSecretKey0011abcdefghijklmnopq"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbDRudGVkIn0.Pl4ntedJwtSig0012"
COOKIE = "Pl4ntedCookie0013"
BEARER2 = "pl4ntedBearerTok3n0014"
ERR_TOKEN = "Pl4nted-errtoken-0015"
GHP2 = "ghp_Pl4ntedGithubToken0016abcdefghijklmn"
CUT_PW = "Pl4nted-cut-0017"
SECRETS = [*KEYS.values(), BEARER, SK, GHP, AKIA, AWS_SECRET, JWT, COOKIE, BEARER2, ERR_TOKEN,
           GHP2, CUT_PW]
assert len(AWS_SECRET) == 40 and len(AKIA) == 20


def _tap_source() -> Path:
    p = DATA / "everything-stdio-basics.jsonl"
    return p if p.is_file() else _write_seed("tap")


def _har_source() -> Path:
    p = DATA / "demo-http.har"
    return p if p.is_file() else _write_seed("har")


def _write_seed(fmt: str) -> Path:
    import tempfile

    name, data, _ = seed(fmt)
    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(data)
    return path


def plant_tap(src: Path, dst: Path) -> list[tuple[int, str]]:
    """Plant every kind of secret into a real tap capture; return (line, where) of each."""
    lines = src.read_text("utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    want: list[tuple[int, str]] = []
    done: set[str] = set()

    def msg(r: dict[str, Any]) -> Any:
        try:
            return json.loads(r["raw"])
        except ValueError:
            return None

    for n, r in enumerate(recs, 1):
        m = msg(r) if r["dir"] in ("c2s", "s2c") else None
        if not isinstance(m, dict):
            if r["dir"] == "stderr" and "stderr" not in done:
                r["raw"] += f" password={PW} {GHP2} Cookie: session={COOKIE}"
                want += [(n, "text")] * 3
                done.add("stderr")
            continue
        params = m.get("params")
        if m.get("method") == "tools/call" and "args" not in done:
            params.setdefault("arguments", {}).update(KEYS)
            want += [(n, f"$.params.arguments.{k}") for k in KEYS]
            done.add("args")
        elif isinstance(params, dict) and "id" in m and "headers" not in done and (
                m.get("method") != "initialize"):
            params["headers"] = {"Authorization": f"Bearer {BEARER}", "Cookie": f"sid={COOKIE}"}
            want += [(n, "$.params.headers.Authorization"), (n, "$.params.headers.Cookie")]
            done.add("headers")
        elif isinstance(m.get("result"), dict) and isinstance(
                m["result"].get("content"), list) and "result" not in done:
            k = len(m["result"]["content"])
            m["result"]["content"].append({"type": "text", "text": (
                f"keys {SK} {GHP} {AKIA} aws_secret_access_key={AWS_SECRET} {JWT}")})
            want += [(n, f"$.result.content[{k}].text")] * 5
            done.add("result")
        elif isinstance(m.get("error"), dict) and "error" not in done:
            m["error"]["message"] += f" (Authorization: Bearer {BEARER2})"
            m["error"]["data"] = {"token": ERR_TOKEN}
            want += [(n, "$.error.message"), (n, "$.error.data.token")]
            done.add("error")
        else:
            continue
        r["raw"] = json.dumps(m, separators=(",", ":"))
    assert done == {"args", "headers", "result", "error", "stderr"}, done
    cut = {"ts": recs[-1]["ts"], "dir": "c2s", "session": recs[-1].get("session"),
           "raw": '{"jsonrpc":"2.0","id":991,"method":"x","params":{"password":"' + CUT_PW}
    recs.append(cut)
    want.append((len(recs), "text"))
    dst.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), "utf-8")
    return want


def _same_apart_from_text(a: mn.Trace, b: mn.Trace) -> None:
    """Pairs identical; frames identical except the text that held secrets."""
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    drop = ["raw", "size", "error_message", "source", "info"]  # info is made from raw
    pd.testing.assert_frame_equal(a.frames.drop(columns=drop), b.frames.drop(columns=drop))
    assert list(a.frames["source"].str.split(r"[:#]").str[-1]) == list(
        b.frames["source"].str.split(r"[:#]").str[-1])


def _check_report(report: pd.DataFrame, want: list[tuple[int, str]], texts: dict[int, str]
                  ) -> None:
    got = list(zip(report["seq"].astype(int), report["where"], strict=True))
    missing = [w for w in want if w not in got]
    assert not missing, f"secrets not in the report: {missing}"
    for w in set(want):  # as many rows as secrets planted there
        assert got.count(w) >= want.count(w), w
    for seq, rep in zip(report["seq"], report["replacement"], strict=True):
        assert rep in texts[int(seq)]  # the replacement is really in that frame


def test_planted_secrets_in_a_real_tap_capture(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    planted = tmp_path / "planted.jsonl"
    lines = plant_tap(_tap_source(), planted)
    original = mn.load(planted)
    line_seq = {int(s.rsplit(":", 1)[1]): i for i, s in enumerate(original.frames["source"])}
    want = [(line_seq[n], where) for n, where in lines]

    # the library
    clean, report = original.redact(salt="test")
    texts = {i: "\n".join(str(v) for v in row) for i, row in enumerate(
        clean.frames[["raw", "error_message", "reason"]].itertuples(index=False))}
    assert not [s for s in SECRETS if any(s in t for t in texts.values())]
    _check_report(report, want, texts)
    pd.testing.assert_frame_equal(original.pairs, clean.pairs)

    # the command line: a file that loads and pairs like the original
    out, rep = tmp_path / "clean.jsonl", tmp_path / "report.csv"
    assert main(["redact", str(planted), "--out", str(out), "--report", str(rep)]) == 0
    assert "redacted" in capsys.readouterr().out
    data = out.read_bytes()
    assert not [s for s in SECRETS if s.encode() in data]
    reloaded = mn.load(out)
    _same_apart_from_text(original, reloaded)
    csv = pd.read_csv(rep)
    assert len(csv) == len(report) and set(csv["where"]) == set(report["where"])


def plant_har(src: Path, dst: Path) -> list[tuple[str, str]]:
    """Plant secrets in a real HAR's headers, cookies, URL, bodies and SSE events; return
    (frame source, where) of each."""
    doc = json.loads(src.read_text("utf-8"))
    entries = doc["log"]["entries"]
    name = dst.name
    e0 = entries[0]
    req, resp = e0["request"], e0["response"]
    req["headers"] += [{"name": "Authorization", "value": f"Bearer {BEARER}"},
                       {"name": "Cookie", "value": f"sid={COOKIE}"},
                       {"name": "x-api-key", "value": KEYS["apiKey"]}]
    req.setdefault("cookies", []).append({"name": "sid", "value": COOKIE})
    req["url"] += f"?api_key={KEYS['api_key']}"
    req.setdefault("queryString", []).append({"name": "api_key", "value": KEYS["api_key"]})
    resp["headers"].append({"name": "Set-Cookie", "value": f"sid={COOKIE}; HttpOnly"})
    src0 = f"{name}#entry0"
    want = [(src0, "request.headers.Authorization"), (src0, "request.headers.Cookie"),
            (src0, "request.headers.x-api-key"), (src0, "request.cookies.sid"),
            (src0, "request.url"), (src0, "request.queryString.api_key"),
            (f"{src0}/response", "response.headers.Set-Cookie")]
    last = entries[-1]
    session = next((h for h in entries[1]["request"]["headers"]
                    if h["name"].lower() == "mcp-session-id"), None)
    for k, (mime, text) in enumerate([
            ("application/json", json.dumps({"jsonrpc": "2.0", "id": 9001, "result": {
                "content": [{"type": "text", "text": f"here: {GHP} and {SK}"}]}})),
            ("text/event-stream", "event: message\ndata: " + json.dumps(
                {"jsonrpc": "2.0", "id": 9002, "result": {"token": ERR_TOKEN,
                                                          "note": JWT}}) + "\n\n")]):
        e = copy.deepcopy(last)
        e["request"]["method"] = "POST"
        e["request"]["headers"] = [session] if session else []
        e["request"]["postData"] = {"mimeType": "application/json", "text": json.dumps(
            {"jsonrpc": "2.0", "id": 9001 + k, "method": "tools/call",
             "params": {"name": "echo", "arguments": {"password": PW}}})}
        e["response"]["status"] = 200
        e["response"]["headers"] = [{"name": "Content-Type", "value": mime}]
        e["response"]["content"] = {"mimeType": mime, "size": len(text), "text": text}
        if k == 1:
            e["response"]["content"]["_sseEvents"] = [
                {"t": e["startedDateTime"], "event": "message", "data": text[21:-2]}]
        i = len(entries)
        entries.append(e)
        want.append((f"{name}#entry{i}", "$.params.arguments.password"))
        if k == 0:
            want += [(f"{name}#entry{i}/response", "$.result.content[0].text")] * 2
        else:
            want += [(f"{name}#entry{i}/event0", "$.result.token"),
                     (f"{name}#entry{i}/event0", "$.result.note")]
    dst.write_text(json.dumps(doc, indent=1), "utf-8")
    return want


def test_planted_secrets_in_a_real_har(tmp_path: Path) -> None:
    planted = tmp_path / "planted.har"
    want = plant_har(_har_source(), planted)
    original = mn.load(planted)
    out = tmp_path / "clean.har"
    report = redact_file(planted, out, salt="test")
    data = out.read_bytes()
    assert not [s for s in SECRETS if s.encode() in data]
    assert json.loads(data)["log"]["entries"][0]["request"]["headers"][-1]["name"] == "x-api-key"
    reloaded = mn.load(out)
    _same_apart_from_text(original, reloaded)
    got = list(zip(report["source"], report["where"], strict=True))
    missing = [w for w in want if w not in got]
    assert not missing, f"secrets not in the report: {missing}"
    for w in set(want):
        assert got.count(w) == want.count(w), w  # the proxy's _sseEvents copy is not doubled
    seqs = dict(zip(original.frames["source"], original.frames["seq"], strict=True))
    for source, seq in zip(report["source"], report["seq"], strict=True):
        assert int(seq) == seqs.get(source, seqs.get(source.rsplit("/", 1)[0]))


def test_equal_secrets_get_equal_replacements_and_salts_matter(tmp_path: Path) -> None:
    planted = tmp_path / "planted.jsonl"
    plant_tap(_tap_source(), planted)
    t = mn.load(planted)
    _, r1 = t.redact(salt="a")
    _, r2 = t.redact(salt="a")
    _, r3 = t.redact(salt="b")
    _, r4 = t.redact()
    _, r5 = t.redact()
    assert list(r1["replacement"]) == list(r2["replacement"])
    assert not set(r1["replacement"]) & set(r3["replacement"])
    assert not set(r4["replacement"]) & set(r5["replacement"])  # a random salt per run
    pw = r1.loc[r1["where"].isin(["$.params.arguments.password", "text"]), "replacement"]
    assert pw.value_counts().max() >= 2  # the password in params and in stderr: one token


def test_redaction_is_idempotent_and_keeps_ids(tmp_path: Path) -> None:
    planted = tmp_path / "planted.jsonl"
    plant_tap(_tap_source(), planted)
    clean, report = mn.load(planted).redact(salt="x")
    again, report2 = clean.redact(salt="y")
    assert len(report) > 0 and len(report2) == 0
    assert list(again.frames["raw"]) == list(clean.frames["raw"])


@pytest.mark.parametrize("text, found", [
    ('{"jsonrpc":"2.0","id":"sk-proj-aaaaaaaaaaaaaaaaaaaaaaaa","method":"x"}', False),
    ('{"jsonrpc":"2.0","id":1,"method":"notifications/progress",'
     '"params":{"progressToken":"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","progress":1}}', False),
    ('{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"maxTokens":100}}',
     False),
    ('{"jsonrpc":"2.0","id":1,"result":{"token_type":"Bearer","expires_in":3600}}', False),
    ('{"jsonrpc":"2.0","id":1,"result":{"access_token":"abc"}}', True),
    ("GET /x?code=1&client_secret=abc HTTP/1.1", True),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", True),
    ("postgres://admin:s3cr3t@db:5432/x", True),
    ("plain words about a token bucket and a password policy", False),
])
def test_what_the_default_policy_finds(text: str, found: bool, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"ts": 1, "dir": "c2s", "raw": text}) + "\n")
    t = mn.load(path)
    clean, report = t.redact(salt="s")
    assert (len(report) > 0) == found, report
    pd.testing.assert_frame_equal(t.pairs, clean.pairs)
    assert list(clean.frames["id_key"]) == list(t.frames["id_key"])


def test_policy_is_data_the_user_extends(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    raw = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"pin":"4242","note":"TKT-123456"}}'
    path.write_text(json.dumps({"ts": 1, "dir": "c2s", "raw": raw}) + "\n")
    t = mn.load(path)
    assert len(t.redact()[1]) == 0
    policy = Policy().extend(keys=[r"pin"], values={"ticket": r"TKT-\d{6}"})
    clean, report = t.redact(policy)
    assert sorted(report["kind"]) == ["key:pin", "ticket"]
    assert "4242" not in clean.frames["raw"][0] and "TKT-123456" not in clean.frames["raw"][0]
    assert Policy.from_dict(policy.to_dict()) == policy
    spec = tmp_path / "policy.json"
    spec.write_text(json.dumps({"keys": ["pin"], "values": {"ticket": r"TKT-\d{6}"}}))
    out = tmp_path / "out.jsonl"
    assert main(["redact", str(path), "--policy", str(spec), "-o", str(out)]) == 0
    assert "4242" not in out.read_text() and "TKT-123456" not in out.read_text()
    spec.write_text(json.dumps({"values": {"bad": "("}}))
    assert main(["redact", str(path), "--policy", str(spec), "-o", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_redact_refuses_to_overwrite_its_input(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"ts": 1, "dir": "c2s", "raw": "{}"}) + "\n")
    assert main(["redact", str(path), "-o", str(path)]) == 2
    assert "overwrite" in capsys.readouterr().err
    assert main(["redact", str(tmp_path / "missing.jsonl")]) == 2
