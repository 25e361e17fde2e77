"""Live: the official Python SDK client through ``mcp-notebook proxy`` to a Python SDK server.

Streamable HTTP and the old HTTP+SSE transport, both on 127.0.0.1. The HAR must hold
the POST bodies and the SSE bodies with their events in order, and SSE must pass through
live: the ``wait_gate`` call only ends after the client, having seen its progress event
while the stream is still open, opens the gate with a second call.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

# the SDK is imported by the tests that use it, not at collection, where it cost every
# worker 0.8 s of CPU (the workers that do not run this module too)
from helpers import free_port

from .conftest import ROOT

pytestmark = [pytest.mark.live, pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("aiohttp", "mcp")),
    reason="the official MCP SDK and aiohttp are needed: pip install -e '.[dev]'")]


def _wait_port(port: int, proc: subprocess.Popen, limit: float = 30) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


async def _sampling(ctx, params):
    from mcp import types as mt

    return mt.CreateMessageResult(role="assistant", model="canned",
                                  content=mt.TextContent(type="text", text="42"))


async def _session(url: str, transport: str) -> dict:
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    seen: dict = {"progress": []}
    client = streamable_http_client(url) if transport == "streamable-http" else sse_client(url)
    with anyio.fail_after(60):
        async with client as streams, ClientSession(streams[0], streams[1],
                                                    sampling_callback=_sampling) as s:
            seen["init"] = await s.initialize()
            seen["tools"] = await s.list_tools()

            async def progress(p, total, message):
                seen["progress"].append(message)

            seen["slow"] = await s.call_tool("slow", {"steps": 3, "delay": 0.05},
                                             progress_callback=progress)
            seen["llm"] = await s.call_tool("ask_llm", {"question": "six times seven?"})
            gate_seen = anyio.Event()

            async def gate_progress(p, total, message):
                gate_seen.set()

            async def held() -> None:
                seen["gate"] = await s.call_tool("wait_gate", {"name": "g"},
                                                 progress_callback=gate_progress)

            async with anyio.create_task_group() as tg:
                tg.start_soon(held)
                await gate_seen.wait()  # only possible if the open stream was passed on live
                seen["open"] = await s.call_tool("open_gate", {"name": "g"})
            await s.send_ping()
    return seen


def _record(tmp_path: Path, transport: str) -> tuple[dict, dict, Path]:
    sport = free_port()
    server = subprocess.Popen([sys.executable, "scripts/demo_server.py", transport, str(sport)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    har = tmp_path / f"{transport}.har"
    proxy = subprocess.Popen([sys.executable, "-m", "mcp_notebook.capture.proxy", "--listen",
                              "127.0.0.1:0", "--target", f"http://127.0.0.1:{sport}",
                              "--out", str(har)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        _wait_port(sport, server)
        assert proxy.stdout is not None
        line = proxy.stdout.readline()
        pport = int(line.split("http://127.0.0.1:")[1].split()[0])
        path = "/mcp" if transport == "streamable-http" else "/sse"
        seen = anyio.run(_session, f"http://127.0.0.1:{pport}{path}", transport)
    finally:
        _stop(proxy)
        _stop(server)
    assert proxy.returncode == 0
    return seen, json.loads(har.read_text("utf-8")), har


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def recorded(request, tmp_path_factory):
    return (request.param, *_record(tmp_path_factory.mktemp(request.param), request.param))


def _entries(har: Path) -> list[dict]:
    try:
        return json.loads(har.read_text("utf-8"))["log"]["entries"]
    except (OSError, ValueError):
        return []


def _posted(entries: list[dict]) -> list[dict]:
    return [json.loads(e["request"]["postData"]["text"]) for e in entries
            if e["request"]["method"] == "POST"]


def _sse_messages(entries: list[dict]) -> list[dict]:
    out = []
    for e in entries:
        for ev in e["response"]["content"].get("_sseEvents", []):
            if ev.get("data", "").startswith("{"):
                out.append(json.loads(ev["data"]))
    return out


def test_client_got_real_answers(recorded):
    _, seen, _, _ = recorded
    assert seen["slow"].content[0].text == "done after 3 steps"
    assert seen["progress"] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    assert seen["gate"].content[0].text == "gate g passed"


def test_har_is_valid_har_1_2(recorded):
    _, _, har, _ = recorded
    log = har["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "mcp-notebook proxy"
    starts = [e["startedDateTime"] for e in log["entries"]]
    assert starts == sorted(starts)
    for e in log["entries"]:
        assert {"startedDateTime", "time", "request", "response", "cache", "timings"} <= set(e)
        assert {"method", "url", "httpVersion", "cookies", "headers", "queryString",
                "headersSize", "bodySize"} <= set(e["request"])
        assert {"status", "statusText", "httpVersion", "cookies", "headers", "content",
                "redirectURL", "headersSize", "bodySize"} <= set(e["response"])
        assert {"size", "mimeType"} <= set(e["response"]["content"])
        assert {"send", "wait", "receive"} <= set(e["timings"])
        assert e["time"] >= 0 and e["request"]["url"].startswith("http://127.0.0.1:")


def test_har_holds_the_post_bodies(recorded):
    _, _, har, _ = recorded
    posted = _posted(har["log"]["entries"])
    methods = [m.get("method") for m in posted]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert methods.count("tools/call") == 4 and "ping" in methods
    # the client's answer to the server's sampling request went up in a POST as well
    assert any("result" in m and m["result"].get("model") == "canned" for m in posted)


def test_sse_bodies_intact_with_events_in_order(recorded):
    _, _, har, _ = recorded
    entries = har["log"]["entries"]
    streams = [e for e in entries if e["response"]["content"]["mimeType"].startswith(
        "text/event-stream")]
    assert streams
    for e in streams:
        content = e["response"]["content"]
        text, events = content["text"], content["_sseEvents"]
        assert content["size"] == len(text.encode())
        for ev in events:  # every event's data is in the intact body, in order
            if ev.get("data"):
                pos = text.index(ev["data"].split("\n")[0])
                text = text[pos:]
        times = [ev["t"] for ev in events]
        assert times == sorted(times)
    messages = _sse_messages(entries)
    progress = [m["params"]["message"] for m in messages
                if m.get("method") == "notifications/progress"]
    assert progress[:3] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    slow_result = next(i for i, m in enumerate(messages)
                       if "done after 3 steps" in json.dumps(m.get("result", {})))
    assert slow_result > max(i for i, m in enumerate(messages)
                             if m.get("params", {}).get("message") == "step 3 of 3")
    assert any(m.get("method") == "sampling/createMessage" for m in messages)


def test_old_transport_endpoint_event_recorded(recorded):
    transport, _, har, _ = recorded
    if transport != "sse":
        pytest.skip("HTTP+SSE only")
    gets = [e for e in har["log"]["entries"] if e["request"]["method"] == "GET"]
    first = gets[0]["response"]["content"]["_sseEvents"][0]
    assert first["event"] == "endpoint" and first["data"].startswith("/messages")
    assert {e["response"]["status"] for e in har["log"]["entries"]
            if e["request"]["method"] == "POST"} == {202}


def test_har_loads_with_the_right_pairs(recorded):
    from mcp_notebook.readers import REGISTRY

    if "har" not in REGISTRY:
        pytest.skip("the HAR reader is not registered yet")
    import mcp_notebook as mn

    _, _, har, path = recorded
    t = mn.load(path)
    s = t.summary()
    assert s["unanswered"] == 0 and s["orphans"] == 0 and s["duplicates"] == 0
    assert s["invalid"] == 0 and s["violations"]["by_severity"].get("error", 0) == 0
    pairs = t.pairs
    assert set(pairs["outcome"]) == {"result"}
    methods = pairs["method"].tolist()
    assert methods.count("tools/call") == 4
    assert {"initialize", "tools/list", "ping", "sampling/createMessage"} <= set(methods)


def test_har_survives_a_killed_proxy(tmp_path):
    """SIGKILL mid-session (the GET stream still open): finished entries are valid HAR."""
    sport = free_port()
    server = subprocess.Popen([sys.executable, "scripts/demo_server.py", "streamable-http",
                               str(sport)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    har = tmp_path / "killed.har"
    proxy = subprocess.Popen([sys.executable, "-m", "mcp_notebook.capture.proxy", "--listen",
                              "127.0.0.1:0", "--target", f"http://127.0.0.1:{sport}",
                              "--out", str(har)], cwd=ROOT, stdout=subprocess.PIPE, text=True)

    async def partial(url: str) -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(30):
            async with streamable_http_client(url) as streams, ClientSession(
                    streams[0], streams[1]) as s:
                await s.initialize()
                await s.list_tools()
                # entries are written when they finish: wait for the three POSTs, then
                # kill the proxy while the GET stream is still open
                end = time.monotonic() + 10
                while time.monotonic() < end and len(_posted(_entries(har))) < 3:
                    await anyio.sleep(0.05)
                proxy.kill()
                proxy.wait(10)

    try:
        _wait_port(sport, server)
        assert proxy.stdout is not None
        pport = int(proxy.stdout.readline().split("http://127.0.0.1:")[1].split()[0])
        try:
            anyio.run(partial, f"http://127.0.0.1:{pport}/mcp")
        except Exception:
            pass  # the client may complain that its server went away
    finally:
        proxy.kill()
        _stop(server)
    log = json.loads(har.read_text("utf-8"))["log"]  # valid JSON although the proxy died
    assert not any(e["request"]["method"] == "GET" for e in log["entries"])  # still open: lost
    posted = _posted(log["entries"])
    assert [m.get("method") for m in posted][:3] == ["initialize", "notifications/initialized",
                                                     "tools/list"]
