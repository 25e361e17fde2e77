"""The capture tools under stress: nothing complete is lost, nothing deadlocks.

The stdio tap (``python -m mcp_notebook.capture.record``) between a real client process
(this test) and real server processes (small Python programs), and the recording proxy
(``python -m mcp_notebook.capture.proxy``) in front of a real aiohttp server: a server
killed mid-frame, a client that closes early, 50 MB frames, bursts of 10,000 frames as
fast as the pipe takes them, a peer that stops reading. Each capture is then loaded with
``mn.load``: every complete frame is a row, in order, paired. Every wait is bounded.
"""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mcp_notebook as mn
from helpers import until_stable

from .corpus import ROOT

PY = sys.executable
BOUND = 120  # seconds any one exchange may take before the test fails


def tap_cmd(out: Path, code: str, *extra: str) -> list[str]:
    return [PY, "-m", "mcp_notebook.capture.record", "--out", str(out), "--session", "s",
            *extra, "--", PY, "-u", "-c", code]


def note(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}' % i


def request(i: int, pad: int = 0) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"pad":"%s"}}}' % (i, b"p" * pad))


ECHO = ("import sys, json\n"
        "for line in sys.stdin.buffer:\n"
        "    m = json.loads(line)\n"
        "    sys.stdout.buffer.write(b'{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"n\":%d}}\\n'"
        " % (m['id'], len(line)))\n"
        "    sys.stdout.buffer.flush()\n")


def _kinds(trace: mn.Trace) -> dict[str, int]:
    return {str(k): int(n) for k, n in trace.frames["kind"].value_counts().items() if n}


# -- the stdio tap ------------------------------------------------------------------------------

def test_server_killed_mid_frame(tmp_path: Path) -> None:
    out = tmp_path / "tap.jsonl"
    code = ("import os, signal, sys\n"
            f"body = b''.join({[note(i) for i in range(200)]!r}[i] + b'\\n' for i in range(200))\n"
            "sys.stdout.buffer.write(body + b'{\"jsonrpc\":\"2.0\",\"method\":\"notif')\n"
            "sys.stdout.buffer.flush()\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run(tap_cmd(out, code), input=b"", capture_output=True, timeout=BOUND,
                          cwd=ROOT)
    assert done.returncode == 128 + signal.SIGKILL
    assert done.stdout.count(b"\n") == 200 and done.stdout.endswith(b'"method":"notif')
    t = mn.load(out)
    f = t.frames
    s2c = f[f["direction"] == "s2c"]
    assert list(s2c["kind"]) == ["notification"] * 200 + ["invalid"]  # the cut frame is kept
    assert [t.message(int(q))["params"]["data"] for q in s2c["seq"][:200]] == list(range(200))
    assert "SIGKILL" in f.loc[f["kind"] == "log", "raw"].iloc[-1]


def test_client_closes_early_nothing_complete_lost(tmp_path: Path) -> None:
    """The client writes 500 requests and closes stdin at once; the server answers them
    all and then sends 2,000 more notifications on its way out."""
    out = tmp_path / "tap.jsonl"
    code = ECHO + (f"for i in range(2000): sys.stdout.buffer.write({note(0)[:-3]!r} "
                   "+ b'%d}}\\n' % i)\n")
    sent = b"".join(request(i) + b"\n" for i in range(500))
    done = subprocess.run(tap_cmd(out, code), input=sent, capture_output=True, timeout=BOUND,
                          cwd=ROOT)
    assert done.returncode == 0 and done.stdout.count(b"\n") == 2500
    t = mn.load(out)
    s = t.summary()
    assert (s["requests"], s["results"], s["notifications"]) == (500, 500, 2000)
    assert (s["pairs"], s["unanswered"], s["invalid"]) == (500, 0, 0)


def test_client_stops_reading_and_goes_away(tmp_path: Path) -> None:
    """The client reads one frame and closes its end: the tap keeps recording the server."""
    out = tmp_path / "tap.jsonl"
    code = (f"import sys\nfor i in range(5000): sys.stdout.buffer.write({note(0)[:-3]!r} "
            "+ b'%d}}\\n' % i)\n")
    proc = subprocess.Popen(tap_cmd(out, code, "--grace", "5"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdout.readline()
        proc.stdout.close()
        proc.stdin.close()
        proc.wait(BOUND)
    finally:
        proc.kill()
    t = mn.load(out)
    data = [t.message(int(q))["params"]["data"] for q in t.frames.loc[
        t.frames["kind"] == "notification", "seq"]]
    assert data == list(range(5000))


def test_fifty_mb_frames_both_ways(tmp_path: Path) -> None:
    out = tmp_path / "tap.jsonl"
    blob = "b" * 50_000_000
    sent = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"blob": blob}}}).encode() + b"\n"
    code = ("import sys, json\n"
            "m = json.loads(sys.stdin.buffer.readline())\n"
            "r = {'jsonrpc': '2.0', 'id': m['id'], 'result': {'content': [{'type': 'text', "
            "'text': m['params']['arguments']['blob']}]}}\n"
            "sys.stdout.buffer.write(json.dumps(r).encode() + b'\\n')\n")
    done = subprocess.run(tap_cmd(out, code), input=sent, capture_output=True, timeout=BOUND,
                          cwd=ROOT)
    assert done.returncode == 0 and len(done.stdout) > 50_000_000
    t = mn.load(out)
    f = t.frames
    req, res = (int(f.loc[f["kind"] == k, "seq"].iloc[0]) for k in ("request", "result"))
    assert f["size"][req] == len(sent) - 1 and f["size"][res] == len(done.stdout) - 1
    assert t.pairs["outcome"].tolist() == ["result"]
    text = t.message(res)["result"]["content"][0]["text"]
    assert hashlib.sha256(text.encode()).digest() == hashlib.sha256(blob.encode()).digest()


def test_burst_of_ten_thousand_frames_each_way(tmp_path: Path) -> None:
    """10,000 requests in one write, each answered at once: all recorded, in order, paired."""
    out = tmp_path / "tap.jsonl"
    sent = b"".join(request(i) + b"\n" for i in range(10_000))
    done = subprocess.run(tap_cmd(out, ECHO), input=sent, capture_output=True, timeout=BOUND,
                          cwd=ROOT)
    assert done.returncode == 0 and done.stdout.count(b"\n") == 10_000
    t = mn.load(out)
    p = t.pairs
    assert len(p) == 10_000 and (p["outcome"] == "result").all()
    assert (p["request_seq"] < p["response_seq"]).all()  # a reply is never recorded first
    f = t.frames
    req = f[f["kind"] == "request"]
    assert [int(k) for k in req["id_key"]] == list(range(10_000))
    span = (req["ts"].max() - req["ts"].min()).total_seconds()
    print(f"10,000 requests recorded over {span:.3f} s")  # the burst's real rate, for the log


def test_both_peers_stop_reading_then_resume(tmp_path: Path) -> None:
    """Client and server both stall (pipes full both ways): when the client reads again,
    everything flows; the tap adds no deadlock and loses nothing."""
    out = tmp_path / "tap.jsonl"
    n = 20_000
    sent = b"".join(request(i, pad=1000) + b"\n" for i in range(n))  # 20 MB
    proc = subprocess.Popen(tap_cmd(out, ECHO), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    writer = threading.Thread(target=lambda: (proc.stdin.write(sent), proc.stdin.close()),
                              daemon=True)
    try:
        writer.start()
        until_stable(out, 60.0, 0.3)  # nobody reads the server's replies: the relay is blocked
        data = proc.stdout.read()  # the client reads again
        writer.join(BOUND)
        proc.wait(BOUND)
    finally:
        proc.kill()
    assert not writer.is_alive() and data.count(b"\n") == n
    s = mn.load(out).summary()
    assert (s["requests"], s["pairs"], s["unanswered"]) == (n, n, 0)


# -- the recording proxy ------------------------------------------------------------------------

UPSTREAM = r'''
import asyncio, json
from aiohttp import web

def ev(obj):
    return b"event: message\ndata: " + json.dumps(obj).encode() + b"\n\n"

def progress(i, k, pad=""):
    return ev({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": i, "progress": k, "message": pad}})

async def handle(request):
    m = json.loads(await request.read())
    i, path = m["id"], request.path
    if path == "/big":  # a 50 MB result
        text = "b" * m["params"]["arguments"]["size"]
        return web.Response(body=json.dumps({"jsonrpc": "2.0", "id": i, "result": {
            "content": [{"type": "text", "text": text}]}}).encode(),
            content_type="application/json")
    if path == "/ok":
        return web.json_response({"jsonrpc": "2.0", "id": i, "result": {}})
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    try:
        if path == "/burst":  # 10,000 events in one write, then the result
            await resp.write(b"".join(progress(i, k) for k in range(10000)))
            await resp.write(ev({"jsonrpc": "2.0", "id": i, "result": {}}))
        elif path == "/die":  # 100 events, half of one, then the server is gone
            for k in range(100):
                await resp.write(progress(i, k))
            await resp.write(b'event: message\ndata: {"jsonrpc":"2.0","id":')
            await asyncio.sleep(0.3)
            request.transport.abort()
            return resp
        elif path == "/endless":  # until the client goes away
            for k in range(100000):
                await resp.write(progress(i, k))
                await asyncio.sleep(0.002)
        elif path == "/slow":  # 10 MB for a client that does not read at first
            for k in range(2500):
                await resp.write(progress(i, k, "x" * 4000))
            await resp.write(ev({"jsonrpc": "2.0", "id": i, "result": {}}))
    except (ConnectionError, RuntimeError):
        pass
    return resp

async def main():
    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print("PORT", runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
'''

SSE_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
IDS = {"big": 1, "burst": 2, "die": 3, "endless": 4, "slow": 5, "ok": 6}


def _call(name: str, **params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": IDS[name], "method": "tools/call",
                       "params": {"name": name, "arguments": params}}).encode()


def _read_line(proc: subprocess.Popen[bytes], prefix: bytes) -> bytes:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith(prefix), line
    return line


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    pytest.importorskip("aiohttp")
    httpx = pytest.importorskip("httpx")
    har = tmp_path_factory.mktemp("proxy") / "stress.har"
    upstream = subprocess.Popen([PY, "-u", "-c", UPSTREAM], stdout=subprocess.PIPE, cwd=ROOT)
    proxy = None
    seen: dict[str, object] = {}
    try:
        port = int(_read_line(upstream, b"PORT").split()[1])
        proxy = subprocess.Popen([PY, "-u", "-m", "mcp_notebook.capture.proxy", "--listen",
                                  "127.0.0.1:0", "--target", f"http://127.0.0.1:{port}",
                                  "--out", str(har)], stdout=subprocess.PIPE, cwd=ROOT)
        url = _read_line(proxy, b"mcp-notebook proxy: listening on").split()[4].decode()
        with httpx.Client(timeout=BOUND) as c:
            r = c.post(f"{url}/big", content=_call("big", size=50_000_000),
                       headers=SSE_HEADERS)
            seen["big"] = len(r.content) > 50_000_000 and json.loads(r.content)["result"][
                "content"][0]["text"] == "b" * 50_000_000
            with c.stream("POST", f"{url}/burst", content=_call("burst"),
                          headers=SSE_HEADERS) as r:
                seen["burst"] = b"".join(r.iter_bytes()).count(b"\n\n")
            got = bytearray()
            try:
                with c.stream("POST", f"{url}/die", content=_call("die"),
                              headers=SSE_HEADERS) as r:
                    for chunk in r.iter_bytes():
                        got += chunk
            except httpx.HTTPError:
                pass
            seen["die"] = bytes(got).count(b"\n\n")
            with c.stream("POST", f"{url}/endless", content=_call("endless"),
                          headers=SSE_HEADERS) as r:
                events = 0
                for line in r.iter_lines():
                    events += line.startswith("data:")
                    if events == 10:
                        break  # the client goes away mid-stream
            seen["endless"] = events
            with c.stream("POST", f"{url}/slow", content=_call("slow"),
                          headers=SSE_HEADERS) as r:
                time.sleep(1.5)  # the client does not read at first
                seen["slow"] = b"".join(r.iter_bytes()).count(b"\n\n")
            seen["ok"] = c.post(f"{url}/ok", content=_call("ok"),
                                headers=SSE_HEADERS).json()["result"] == {}
        proxy.send_signal(signal.SIGINT)
        proxy.wait(BOUND)
    finally:
        for p in (proxy, upstream):
            if p is not None:
                p.kill()
                p.wait(30)
    doc = json.loads(har.read_text("utf-8"))
    trace = mn.load(har)
    return {"seen": seen, "doc": doc, "trace": trace}


def _entry_frames(proxied: dict[str, object], name: str) -> tuple[dict, object]:
    doc, trace = proxied["doc"], proxied["trace"]
    index = next(i for i, e in enumerate(doc["log"]["entries"])  # type: ignore[index]
                 if e["request"]["url"].endswith("/" + name))
    f = trace.frames  # type: ignore[attr-defined]
    src = f["source"].str.split("#").str[-1]
    mine = f[(src == f"entry{index}") | src.str.startswith(f"entry{index}/")]
    return doc["log"]["entries"][index], mine  # type: ignore[index]


def test_proxy_fifty_mb_bodies(proxied: dict[str, object]) -> None:
    assert proxied["seen"]["big"] is True  # type: ignore[index]
    entry, f = _entry_frames(proxied, "big")
    assert list(f["kind"]) == ["request", "result"]
    assert f["size"].iloc[1] > 50_000_000 and "_truncated" not in entry["response"]["content"]
    t = proxied["trace"]
    res = int(f["seq"].iloc[1])
    assert len(t.message(res)["result"]["content"][0]["text"]) == 50_000_000  # type: ignore


def test_proxy_sse_burst_of_ten_thousand_events(proxied: dict[str, object]) -> None:
    assert proxied["seen"]["burst"] == 10_001  # type: ignore[index]
    entry, f = _entry_frames(proxied, "burst")
    assert len(entry["response"]["content"]["_sseEvents"]) == 10_001
    kinds = f["kind"].value_counts()
    assert (kinds["request"], kinds["notification"], kinds["result"]) == (1, 10_000, 1)
    t = proxied["trace"]
    progress = [t.message(int(q))["params"]["progress"]  # type: ignore[attr-defined]
                for q in f.loc[f["kind"] == "notification", "seq"]]
    assert progress == list(range(10_000))  # in order


def test_proxy_server_dies_mid_stream_keeps_complete_events(proxied: dict[str, object]) -> None:
    assert proxied["seen"]["die"] == 100  # type: ignore[index]
    entry, f = _entry_frames(proxied, "die")
    assert entry.get("_aborted") == "server"
    events = entry["response"]["content"]["_sseEvents"]
    assert len([e for e in events if e.get("data", "").endswith("}")]) == 100
    assert int((f["kind"] == "notification").sum()) == 100  # every complete event loads


def test_proxy_client_goes_away_mid_stream(proxied: dict[str, object]) -> None:
    assert proxied["seen"]["endless"] == 10 and proxied["seen"]["ok"] is True  # type: ignore
    entry, f = _entry_frames(proxied, "endless")
    assert entry.get("_aborted") == "client"
    assert int((f["kind"] == "notification").sum()) >= 10  # what the client saw, at least


def test_proxy_client_that_stops_reading(proxied: dict[str, object]) -> None:
    assert proxied["seen"]["slow"] == 2501  # type: ignore[index]
    _, f = _entry_frames(proxied, "slow")
    kinds = f["kind"].value_counts()
    assert (kinds["notification"], kinds["result"]) == (2500, 1)
