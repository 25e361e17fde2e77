"""The recording proxy under faults: the HAR on disk is valid JSON whatever happens.

A real proxy process (``python -m mcp_notebook.capture.proxy``) in front of a real
aiohttp server, a real HTTP client (httpx): a full disk (a file-size limit, a small
tmpfs), SIGKILL mid-session, SIGHUP with a stream open.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from .conftest import PY, ROOT

httpx = pytest.importorskip("httpx")
pytest.importorskip("aiohttp")

BOUND = 60

UPSTREAM = r'''
import asyncio, json
from aiohttp import web

async def ok(request):  # a JSON-RPC result padded to the size asked for
    m = json.loads(await request.read())
    return web.json_response({"jsonrpc": "2.0", "id": m["id"],
                              "result": {"pad": "r" * m["params"]["size"]}})

async def stream(request):  # three events, then open until the client goes
    m = json.loads(await request.read())
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for k in range(3):
        await resp.write(b"event: message\ndata: " + json.dumps({"jsonrpc": "2.0",
            "method": "notifications/progress", "params": {"progressToken": m["id"],
            "progress": k}}).encode() + b"\n\n")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        pass
    return resp

async def main():
    app = web.Application()
    app.router.add_post("/ok", ok)
    app.router.add_post("/stream", stream)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print("PORT", runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
'''

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _call(i: int, size: int = 0) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": "pad", "size": size}}).encode()


class Proxied:
    """An upstream server and the proxy in front of it, recording to ``har``."""

    def __init__(self, har: Path, preexec=None) -> None:
        self.har = har
        self.upstream = subprocess.Popen([PY, "-u", "-c", UPSTREAM], stdout=subprocess.PIPE,
                                         cwd=ROOT)
        assert self.upstream.stdout is not None
        port = int(self.upstream.stdout.readline().split()[1])
        self.proxy = subprocess.Popen(
            [PY, "-u", "-m", "mcp_notebook.capture.proxy", "--listen", "127.0.0.1:0",
             "--target", f"http://127.0.0.1:{port}", "--out", str(har)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, preexec_fn=preexec)
        assert self.proxy.stdout is not None
        line = self.proxy.stdout.readline().decode()
        assert line.startswith("mcp-notebook proxy: listening on"), line
        self.url = line.split()[4]

    def stop(self, sig: int) -> bytes:
        """Signal the proxy, wait for it; its stderr."""
        self.proxy.send_signal(sig)
        self.proxy.wait(BOUND)
        assert self.proxy.stderr is not None
        return self.proxy.stderr.read()

    def close(self) -> None:
        for p in (self.proxy, self.upstream):
            p.kill()
            p.wait(30)


@pytest.fixture
def proxied(tmp_path: Path):
    made: list[Proxied] = []

    def start(har: Path | None = None, preexec=None) -> Proxied:
        made.append(Proxied(har or tmp_path / "s.har", preexec))
        return made[-1]

    yield start
    for p in made:
        p.close()


def _entries(har: Path) -> list[dict]:
    return json.loads(har.read_text("utf-8"))["log"]["entries"]


def _ids(entries: list[dict]) -> list[int]:
    return sorted(json.loads(e["request"]["postData"]["text"])["id"] for e in entries)


def test_full_disk_keeps_proxying_and_the_har_stays_valid(proxied, small_disk):
    """40 responses of 16 KB through a proxy whose disk takes 64 KiB: the client gets
    every byte, stderr says once that recording stopped (no traceback per request), and
    the HAR left is valid JSON holding whole entries only."""
    folder, preexec = small_disk
    p = proxied(folder / "s.har", preexec)
    with httpx.Client(timeout=BOUND) as c:
        for i in range(40):
            r = c.post(f"{p.url}/ok", content=_call(i, 16_000), headers=HEADERS)
            assert r.json() == {"jsonrpc": "2.0", "id": i, "result": {"pad": "r" * 16_000}}
    err = p.stop(signal.SIGINT)
    assert p.proxy.returncode == 0
    assert err.count(b"recording stopped") == 1 and b"Traceback" not in err, err[-3000:]
    entries = _entries(p.har)  # valid JSON
    ids = _ids(entries)
    assert 0 < len(ids) < 40 and ids == list(range(len(ids)))
    assert all(len(json.loads(e["response"]["content"]["text"])["result"]["pad"]) == 16_000
               for e in entries)


def test_sigkill_mid_session_leaves_a_valid_har_and_loses_no_finished_entry(proxied,
                                                                           tmp_path: Path):
    p = proxied()
    with httpx.Client(timeout=BOUND) as c:
        for i in range(30):
            assert c.post(f"{p.url}/ok", content=_call(i, 100), headers=HEADERS).json()["id"] == i
        with c.stream("POST", f"{p.url}/stream", content=_call(99), headers=HEADERS) as r:
            events = 0
            for line in r.iter_lines():
                events += line.startswith("data:")
                if events == 3:
                    break
            p.stop(signal.SIGKILL)
    assert _ids(_entries(p.har)) == list(range(30))  # valid JSON, every finished entry
    # the next proxy on the same file keeps them, and adds its own session
    q = proxied(p.har)
    with httpx.Client(timeout=BOUND) as c:
        assert c.post(f"{q.url}/ok", content=_call(30), headers=HEADERS).json()["id"] == 30
    err = q.stop(signal.SIGTERM)
    assert b"left by a proxy that died: its 30 entries are kept" in err
    assert _ids(_entries(p.har)) == list(range(31))
    assert not Path(str(p.har) + ".journal").exists()


def test_sighup_keeps_the_open_stream_as_an_incomplete_entry(proxied):
    p = proxied()
    with httpx.Client(timeout=BOUND) as c:
        assert c.post(f"{p.url}/ok", content=_call(1), headers=HEADERS).json()["id"] == 1
        with c.stream("POST", f"{p.url}/stream", content=_call(2), headers=HEADERS) as r:
            events = 0
            for line in r.iter_lines():
                events += line.startswith("data:")
                if events == 3:
                    break
            p.stop(signal.SIGHUP)
    assert p.proxy.returncode == 0
    entries = _entries(p.har)
    assert _ids(entries) == [1, 2]
    stream = next(e for e in entries if e["request"]["url"].endswith("/stream"))
    assert stream["_incomplete"] is True
    assert len(stream["response"]["content"]["_sseEvents"]) == 3


def test_recover_folds_a_journal_into_the_har(tmp_path: Path):
    """What a killed proxy leaves when its last version lags: the journal completes it."""
    from mcp_notebook.capture.har import HarWriter, recover

    har = tmp_path / "x.har"
    w = HarWriter(har, {"name": "t", "version": "1"})
    w.add({"_seq": 0, "startedDateTime": "2025-01-01T00:00:00Z", "request": {}})
    (tmp_path / "x.har.journal").write_bytes(
        json.dumps({"_seq": 1, "startedDateTime": "2025-01-01T00:00:01Z", "request": {}})
        .encode() + b'\n{"_seq": 2, "startedDa')  # the last line was cut by the crash
    assert recover(har) == 2
    assert [e["_seq"] for e in _entries(har)] == [0, 1]
    assert not (tmp_path / "x.har.journal").exists() and recover(har) == -1


def test_sigkill_with_a_large_har_the_journal_completes_it(proxied):
    """Past 1 MiB the file is rewritten at most 10% of the time: after SIGKILL it is valid
    JSON and, with its journal, holds every finished entry."""
    p = proxied()
    with httpx.Client(timeout=BOUND) as c:
        for i in range(40):
            assert c.post(f"{p.url}/ok", content=_call(i, 100_000),
                          headers=HEADERS).json()["id"] == i
    p.stop(signal.SIGKILL)
    held = _ids(_entries(p.har))  # valid JSON
    assert held == list(range(len(held)))
    from mcp_notebook.capture.har import recover

    assert recover(p.har) == 40 and _ids(_entries(p.har)) == list(range(40))
