"""``mcp-notebook proxy``: a recording reverse proxy for MCP over HTTP, writing HAR 1.2.

Point an MCP client at the proxy instead of the server::

    mcp-notebook proxy --listen 127.0.0.1:8765 --target http://127.0.0.1:3001 --out s.har
    # client URL: http://127.0.0.1:8765/mcp   (the path is kept: -> http://127.0.0.1:3001/mcp)

It speaks both MCP HTTP transports: Streamable HTTP (POST answered with JSON or an SSE
stream, GET for the standalone stream, DELETE) and the old HTTP+SSE transport (a GET
``/sse`` stream whose ``endpoint`` event names the POST URL). Responses are passed on
chunk by chunk as they arrive -- an SSE stream is never buffered to its end -- while the
proxy records each exchange as a HAR entry with headers, bodies, timings and the arrival
time of every SSE event (see :mod:`mcp_notebook.capture.har` for the ``_sseEvents``
extension and the crash-tolerant file).

Paths: the client's path and query are kept. ``--target`` gives the origin; a path on
it is used for requests to ``/``. Headers are passed on except hop-by-hop ones and
``Host``; ``Accept-Encoding`` is sent upstream as ``identity`` so recorded bodies are
plain text (the HAR keeps the headers the client really sent). A server that announces
an *absolute* ``endpoint`` URL on the old transport sends its client past the proxy; the
proxy records a warning in ``log.comment`` for it.

Why aiohttp: one library gives both a streaming server and a streaming client with the
raw header lists (case and order) that HAR wants, it is the project's ``capture`` extra,
and the proxy then needs neither the ``mcp`` package nor an ASGI server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from .har import HarWriter, SseParser, body_content, header_list, iso

__all__ = ["main", "add_arguments", "run", "RecordingProxy"]

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
              "accept-encoding"}
DEFAULT_MAX_BODY = 64 * 1024 * 1024


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("mcp_notebook")
    except Exception:  # pragma: no cover - running from a source tree without metadata
        return "0"


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host defaults to 127.0.0.1)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


class RecordingProxy:
    """The proxy: an aiohttp application forwarding to ``target`` and recording to ``writer``.

    Parameters
    ----------
    target
        The server's URL (``http://host:port`` with an optional path).
    writer
        The HAR file being written.
    max_body
        The most bytes of one body kept in the HAR (all bytes are still relayed).
    """

    def __init__(self, target: str, writer: HarWriter, max_body: int = DEFAULT_MAX_BODY) -> None:
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--target must be an http(s) URL, not {target!r}")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base_path = parts.path.rstrip("/")
        self.writer = writer
        self.max_body = max_body
        self._seq = 0
        self._live: dict[int, dict[str, Any]] = {}
        self._session: Any = None

    def upstream_url(self, path_qs: str) -> str:
        """The target URL for a client path (with query)."""
        if self.base_path and (path_qs == "/" or path_qs.startswith("/?")):
            return self.origin + self.base_path + path_qs[1:]
        return self.origin + path_qs

    # -- one exchange --------------------------------------------------------------------
    async def handle(self, request: Any) -> Any:
        from aiohttp import ClientError, web

        seq, self._seq = self._seq, self._seq + 1
        started = time.time()
        t0 = time.monotonic()
        body = await request.read()
        url = self.upstream_url(request.path_qs)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        headers.append(("Accept-Encoding", "identity"))
        entry: dict[str, Any] = {
            "_seq": seq, "startedDateTime": iso(started), "time": 0,
            "request": self._har_request(request, url, body),
            "response": None, "cache": {},
            "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": 0,
                        "receive": 0, "ssl": -1},
        }
        state: dict[str, Any] = {"entry": entry, "t0": t0, "chunks": bytearray(), "size": 0,
                                 "sse": None, "t_headers": None}
        self._live[seq] = state
        try:
            try:
                upstream = await self._session.request(
                    request.method, url, headers=headers, data=body if body else None,
                    allow_redirects=False,
                    skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"))
            except (ClientError, OSError, asyncio.TimeoutError) as exc:
                reason = f"{type(exc).__name__}: {exc}"
                entry["_proxyError"] = reason
                state["response"] = (502, "Bad Gateway", [("Content-Type", "text/plain")], "HTTP/1.1")
                state["chunks"] += f"mcp-notebook proxy: cannot reach {url}: {reason}".encode()
                state["size"] = len(state["chunks"])
                return web.Response(status=502, text=state["chunks"].decode())
            async with upstream:
                return await self._relay(request, upstream, state)
        finally:
            self._record(state)

    def _record(self, state: dict[str, Any]) -> None:
        """Write the exchange's entry once (before the client sees the end, when possible)."""
        if not state.get("recorded"):
            state["recorded"] = True
            self._live.pop(state["entry"]["_seq"], None)
            self.writer.add(self._finish(state))

    async def _relay(self, request: Any, upstream: Any, state: dict[str, Any]) -> Any:
        from aiohttp import ClientError, web

        state["t_headers"] = time.monotonic()
        version = f"HTTP/{upstream.version.major}.{upstream.version.minor}"
        raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in upstream.raw_headers]
        state["response"] = (upstream.status, upstream.reason or "", raw, version)
        ctype = upstream.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() == "text/event-stream":
            state["sse"] = SseParser()
        resp = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for k, v in raw:
            if k.lower() not in HOP_BY_HOP:
                resp.headers.add(k, v)
        if upstream.headers.get("Content-Length") is not None and state["sse"] is None:
            resp.content_length = int(upstream.headers["Content-Length"])
        await resp.prepare(request)
        # a body of known length is complete for the client with its last byte, before the
        # end of the stream: keep each chunk back until the next has come, so that the
        # entry is on disk before the last one goes (an event stream is relayed at once)
        lag = resp.content_length is not None
        held = b""
        try:
            async for chunk in upstream.content.iter_any():
                now = time.time()
                self._keep(state, chunk, now)
                if lag:
                    chunk, held = held, chunk
                try:
                    if chunk:
                        await resp.write(chunk)
                except (ConnectionError, RuntimeError):
                    state["entry"]["_aborted"] = "client"
                    return resp
        except (ClientError, OSError, asyncio.IncompleteReadError) as exc:
            state["entry"]["_aborted"] = "server"
            state["entry"]["_proxyError"] = f"{type(exc).__name__}: {exc}"
            self._record(state)
            with contextlib.suppress(ConnectionError, RuntimeError):
                if held:  # what the server did send reaches the client
                    await resp.write(held)
            return resp
        self._record(state)  # on disk before the client sees the end of the response
        try:
            if held:
                await resp.write(held)
            await resp.write_eof()
        except (ConnectionError, RuntimeError):
            state["entry"]["_aborted"] = "client"
        return resp

    def _keep(self, state: dict[str, Any], chunk: bytes, now: float) -> None:
        state["size"] += len(chunk)
        room = self.max_body - len(state["chunks"])
        if room > 0:
            state["chunks"] += chunk[:room]
        if state["sse"] is not None:
            state["sse"].feed(chunk, now)

    @staticmethod
    def _har_request(request: Any, url: str, body: bytes) -> dict[str, Any]:
        har: dict[str, Any] = {
            "method": request.method, "url": url,
            "httpVersion": f"HTTP/{request.version.major}.{request.version.minor}",
            "cookies": [], "headers": header_list(request.raw_headers),
            "queryString": [{"name": k, "value": v} for k, v in request.rel_url.query.items()],
            "headersSize": -1, "bodySize": len(body),
        }
        if body:
            content = body_content(body)
            post = {"mimeType": request.headers.get("Content-Type", ""), "text": content["text"]}
            if "encoding" in content:
                post["_encoding"] = content["encoding"]
            har["postData"] = post
        return har

    def _finish(self, state: dict[str, Any], incomplete: bool = False) -> dict[str, Any]:
        """The HAR entry of an exchange, finished or cut short."""
        entry = state["entry"]
        end = time.monotonic()
        t_headers = state["t_headers"] or end
        status, reason, raw, version = state.get("response") or (0, "", [], "HTTP/1.1")
        data = bytes(state["chunks"])
        content: dict[str, Any] = {"size": state["size"], "mimeType": ""}
        for k, v in raw:
            if k.lower() == "content-type":
                content["mimeType"] = v
        content.update(body_content(data))
        if state["size"] > len(data):
            content["_truncated"] = state["size"]
        if state["sse"] is not None:
            state["sse"].close(time.time())
            content["_sseEvents"] = state["sse"].events
        entry["response"] = {"status": status, "statusText": reason, "httpVersion": version,
                             "cookies": [], "headers": header_list(raw), "content": content,
                             "redirectURL": "", "headersSize": -1, "bodySize": state["size"]}
        wait = (t_headers - state["t0"]) * 1000
        receive = (end - t_headers) * 1000
        entry["timings"].update(wait=round(wait, 3), receive=round(receive, 3))
        entry["time"] = round(wait + receive, 3)
        if incomplete:
            entry["_incomplete"] = True
        return entry

    # -- lifecycle -----------------------------------------------------------------------
    async def serve(self, host: str, port: int, stop: asyncio.Event,
                    announce: Any = None) -> None:
        """Serve until ``stop`` is set, then record what is still in flight and finish."""
        import aiohttp
        from aiohttp import web

        timeout = aiohttp.ClientTimeout(total=None, connect=30, sock_connect=30, sock_read=None)
        self._session = aiohttp.ClientSession(auto_decompress=False, timeout=timeout)
        app = web.Application(client_max_size=self.max_body)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        addresses = runner.addresses
        bound = addresses[0][1] if addresses else port
        if announce is not None:
            announce(host, bound)

        async def flush() -> None:  # entries waiting in the journal reach the file
            while True:
                await asyncio.sleep(0.25)
                self.writer.flush()

        flusher = asyncio.ensure_future(flush())
        try:
            await stop.wait()
        finally:
            flusher.cancel()
            for state in list(self._live.values()):
                state["entry"]["_incomplete"] = True
            await runner.cleanup()
            await self._session.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``proxy`` options to ``parser``."""
    parser.add_argument("--listen", "-l", default="127.0.0.1:8765", metavar="HOST:PORT",
                        help="where the client connects (default 127.0.0.1:8765; port 0 picks "
                             "a free port)")
    parser.add_argument("--target", "-t", required=True, metavar="URL",
                        help="the MCP server's URL, e.g. http://127.0.0.1:3001")
    parser.add_argument("--out", "-o", metavar="FILE.har",
                        help="the HAR file to write (default mcp-proxy-YYYYmmddTHHMMSS.har)")
    parser.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY, metavar="BYTES",
                        help="keep at most this many bytes of one body (default 64 MiB)")


def run(args: argparse.Namespace) -> int:
    """Run ``proxy`` from parsed arguments until SIGINT, SIGTERM or SIGHUP; return the exit
    status."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        sys.stderr.write("mcp-notebook proxy needs aiohttp: pip install 'mcp_notebook[capture]'\n")
        return 2
    host, port = parse_listen(args.listen)
    if host not in ("127.0.0.1", "::1", "localhost"):
        sys.stderr.write(f"mcp-notebook proxy: warning: listening on {host}, not loopback: "
                         "anyone who can reach it can use the server and is recorded\n")
    out = args.out or time.strftime("mcp-proxy-%Y%m%dT%H%M%S.har", time.gmtime())
    if hasattr(signal, "SIGXFSZ"):  # a file-size limit fails the write instead of killing us
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def stopped(reason: str) -> None:
        sys.stderr.write(f"mcp-notebook proxy: recording stopped: {reason}; still proxying, "
                         f"unrecorded from here on ({out} keeps what was recorded)\n")
        sys.stderr.flush()

    recovering = os.path.exists(out + ".journal")
    try:
        writer = HarWriter(out, {"name": "mcp-notebook proxy", "version": _version()},
                           comment=f"MCP traffic to {args.target}; SSE event arrival times "
                                   "in response.content._sseEvents", on_stop=stopped)
    except OSError as exc:
        sys.stderr.write(f"mcp-notebook proxy: cannot write {out!r}: {exc}\n")
        return 2
    if recovering and len(writer):
        sys.stderr.write(f"mcp-notebook proxy: {out} was left by a proxy that died: its "
                         f"{len(writer)} entries are kept, this session is added\n")
    try:
        proxy = RecordingProxy(args.target, writer, max_body=args.max_body)
    except ValueError as exc:
        sys.stderr.write(f"mcp-notebook proxy: {exc}\n")
        return 2

    def announce(h: str, p: int) -> None:
        print(f"mcp-notebook proxy: listening on http://{h}:{p} -> {args.target}, "
              f"recording to {out}", flush=True)

    async def go() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await proxy.serve(host, port, stop, announce)

    try:
        asyncio.run(go())
    except OSError as exc:
        sys.stderr.write(f"mcp-notebook proxy: cannot listen on {host}:{port}: {exc}\n")
        return 2
    finally:
        writer.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mcp_notebook.capture.proxy --target URL [--listen H:P] [--out F.har]``."""
    parser = argparse.ArgumentParser(
        prog="mcp-notebook proxy",
        description="Record MCP HTTP traffic (Streamable HTTP, HTTP+SSE) to HAR 1.2.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
