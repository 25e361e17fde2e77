"""Record real MCP Inspector v2 exports into ``tests/fixtures/inspector-web/``.

Run as ``.venv/bin/python scripts/record_inspector_web.py [stdio] [http] [sse]`` (all
when none is named). The Inspector's web UI (npm ``@modelcontextprotocol/inspector``, pinned in
``scripts/npm-peers/``) is started on ``@modelcontextprotocol/server-everything``, over
stdio, over Streamable HTTP and over the 2024-11-05 HTTP+SSE transport, and driven in headless Chromium (Debian's
``chromium``, Playwright with ``executable_path``) as a user would: connect, call
``get-sum``, then ``trigger-long-running-operation`` (five progress notifications), then
the Protocol tab's Export button and, over HTTP, the Network tab's (the HTTP requests of
the same session). The files it downloads are kept as they are
(``inspector-protocol-<server>-<time>.json`` and ``inspector-network-...``,
``JSON.stringify(entries, null, 2)``).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _rec  # noqa: E402
from _rec import ROOT  # noqa: E402
from record_peers import NODE_ENV, NPM, ensure_npm  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "inspector-web"
CHROMIUM = "/usr/bin/chromium"


async def _drive(url: str, long_call: bool, tabs: tuple[str, ...]) -> list[Path]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await browser.new_page(accept_downloads=True,
                                      viewport={"width": 1400, "height": 900})
        await page.goto(url)
        await page.locator("[role=switch], input[type=checkbox]").first.click(force=True)
        await page.get_by_text("Connected", exact=True).first.wait_for(timeout=30_000)
        await page.get_by_text("Tools", exact=True).first.click()
        await page.get_by_text("Get Sum Tool", exact=True).first.click()
        numbers = page.locator("input[type=number], input[inputmode=decimal], "
                               "input[inputmode=numeric]")
        await numbers.nth(0).fill("2")
        await numbers.nth(1).fill("40")
        await page.get_by_role("button", name="Execute Tool").click()
        await page.wait_for_timeout(1500)
        if long_call:
            await page.get_by_text("Trigger Long Running Operation Tool", exact=True).first.click()
            await page.get_by_role("button", name="Execute Tool").click()
            await page.wait_for_timeout(13_000)  # ten seconds, five steps of progress
        saved = []
        for tab in tabs:
            await page.get_by_text(tab, exact=True).first.click()
            await page.wait_for_timeout(500)
            async with page.expect_download() as got:
                await page.get_by_role("button", name="Export").last.click()
            download = await got.value
            OUT.mkdir(parents=True, exist_ok=True)
            out = OUT / download.suggested_filename
            await download.save_as(out)
            saved.append(out)
        await browser.close()
        return saved


def main(which: tuple[str, ...] = ("stdio", "http", "sse")) -> int:
    versions = ensure_npm()
    _rec.log(f"inspector {versions['@modelcontextprotocol/inspector']}")
    everything = NPM / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    if "stdio" in which:  # (no HTTP request: the Network tab has nothing to export)
        _record(["node", str(everything), "stdio"], long_call=True, tabs=("Protocol",))
    # over Streamable HTTP, and over the 2024-11-05 HTTP+SSE transport (every server
    # message on the GET stream, which the network export does not hold)
    for name, mode, transport, path in (("http", "streamableHttp", "http", "/mcp"),
                                        ("sse", "sse", "sse", "/sse")):
        if name not in which:
            continue
        port = _rec.free_port()
        server = subprocess.Popen(["node", str(everything), mode], cwd=ROOT,
                                  env={**os.environ, **NODE_ENV, "PORT": str(port)},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _rec._wait_port(port, server)
            _record(["--transport", transport, "--server-url",
                     f"http://127.0.0.1:{port}{path}"], long_call=True,
                    tabs=("Protocol", "Network"))
        finally:
            _stop(server)
    return 0


def _record(args: list[str], long_call: bool, tabs: tuple[str, ...]) -> None:
    inspector = NPM / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    proc = subprocess.Popen(["node", str(inspector), "--web", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **NODE_ENV, "MCP_AUTO_OPEN_ENABLED": "false"})
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+\?MCP_INSPECTOR_API_TOKEN=\w+", line)
            if found:
                url = found.group(0)
                break
        if url is None:
            raise SystemExit("record_inspector_web: the Inspector did not start")
        for out in asyncio.run(_drive(url, long_call, tabs)):
            _rec.log(f"  {out.relative_to(ROOT)}: {out.stat().st_size} bytes")
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


if __name__ == "__main__":
    raise SystemExit(main(tuple(sys.argv[1:]) or ("stdio", "http", "sse")))
