"""A real OTLP consumer takes every bundled trace's spans: Arize Phoenix (PyPI
``arize-phoenix``), an open-source tracing server whose OTLP/HTTP receiver
(``POST /v1/traces``, protobuf) stores spans it then serves back over its REST API.

Phoenix pins its own versions of many packages, so it lives in a virtual environment of
its own; name its ``phoenix`` program with ``MCP_NOTEBOOK_PHOENIX`` (or have it on PATH)::

    python -m venv .phoenix && .phoenix/bin/pip install arize-phoenix
    MCP_NOTEBOOK_PHOENIX=.phoenix/bin/phoenix pytest tests/exports/test_otlp_consumer.py

Without it the test is skipped, saying so. The server binds 127.0.0.1 (its gRPC receiver,
which this test does not use, listens on a free port of its own) and is stopped after.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

import mcp_notebook as mn
from mcp_notebook.otlp import write_otlp
from tests.exports.captures import REPRESENTATIVE
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = os.environ.get("MCP_NOTEBOOK_PHOENIX") or shutil.which("phoenix")
pytestmark = pytest.mark.skipif(
    not PHOENIX, reason="Arize Phoenix (a real OTLP receiver) is not installed: "
    "pip install arize-phoenix in a venv of its own and set MCP_NOTEBOOK_PHOENIX")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = open(work / "server.log", "wb")
    proc = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _get(f"{url}/v1/projects")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("Phoenix did not start: "
                                       + (work / "server.log").read_text()[-2000:]) from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _for_protobuf(doc: Any) -> Any:
    """OTLP/JSON ids are hex; protobuf's JSON mapping wants base64 for bytes fields."""
    if isinstance(doc, dict):
        return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in (
            "traceId", "spanId", "parentSpanId") else _for_protobuf(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_for_protobuf(v) for v in doc]
    return doc


def _spans_of(url: str, project: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = f"{url}/v1/projects/{project}/spans?limit=1000" + (
            f"&cursor={cursor}" if cursor else "")
        try:
            page = _get(query)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # the project is made when its first span is stored
                return []
            raise
        out += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=[p.name for p in REPRESENTATIVE])
def test_phoenix_accepts_and_serves_back_every_span(path: Path, phoenix: str,
                                                    tmp_path: Path) -> None:
    trace = mn.load(path)
    doc = json.loads(write_otlp(trace, tmp_path / "spans.json").read_text("utf-8"))
    project = "mcp-" + path.stem.replace(".", "-")
    for rs in doc["resourceSpans"]:  # Phoenix files spans under this resource attribute
        rs["resource"]["attributes"].append(
            {"key": "openinference.project.name", "value": {"stringValue": project}})
    sent = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    body = ParseDict(_for_protobuf(doc), ExportTraceServiceRequest()).SerializeToString()
    request = urllib.request.Request(f"{phoenix}/v1/traces", data=body, method="POST",
                                     headers={"Content-Type": "application/x-protobuf"})
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.status == 200
        answer = ExportTraceServiceResponse.FromString(r.read())
    assert answer.partial_success.rejected_spans == 0, answer.partial_success.error_message
    # stored asynchronously: wait until every span is served back (bounded)
    deadline = time.monotonic() + 60
    while len(got := _spans_of(phoenix, project)) < len(sent) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(got) == len(sent)
    by_id = {s["context"]["span_id"]: s for s in got}
    for span in sent:
        back = by_id[span["spanId"]]
        assert back["context"]["trace_id"] == span["traceId"]
        assert back["name"] == span["name"]
        assert back["attributes"]["mcp.method.name"] == next(
            a["value"]["stringValue"] for a in span["attributes"]
            if a["key"] == "mcp.method.name")
        assert (back["parent_id"] or None) == span.get("parentSpanId")
        assert len(back.get("events") or []) == len(span.get("events", []))
        assert (back["status_code"] == "ERROR") == ("status" in span)
        # every attribute comes back as sent (server.port as an integer)
        for a in span["attributes"]:
            value = a["value"]
            want = value["stringValue"] if "stringValue" in value else int(value["intValue"])
            assert back["attributes"].get(a["key"]) == want, a["key"]
