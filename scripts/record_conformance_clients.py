"""Record the conformance suite's client scenarios into ``tests/fixtures/conformance-clients/``.

Run as ``.venv/bin/python scripts/record_conformance_clients.py [SCENARIO ...]`` (no names:
those of :data:`SCENARIOS`). For each scenario the suite (``@modelcontextprotocol/
conformance``, pinned in ``scripts/npm-peers/``) starts its own test server and runs this
script as the client under test (``--client URL``): the script puts ``mcp-notebook proxy``
in front of the suite's server and drives the official Python SDK client (PyPI ``mcp``)
through it, so the HAR holds what the suite's server really sent. The ``auth/`` scenarios
use the SDK's OAuth provider; the authorization is followed without a browser (the
suite's authorization endpoint redirects at once), and the resource check is switched off
(the proxy's origin is not the resource's). The suite's verdicts are logged, not required:
the traffic is what is kept (a failed check is often the point of the scenario).

The captures are held out for ``tests/readers/test_conformance_clients.py``: other servers
than the bundled traces (hand-written by the suite, answering a notification, closing SSE
streams to test ``retry``, challenging with HTTP 401 and 403 before OAuth).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _rec  # noqa: E402
from _rec import PY, ROOT  # noqa: E402
from record_peers import NODE_ENV, NPM, ensure_npm  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "conformance-clients"
SCENARIOS = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults",
             "auth/metadata-default", "auth/scope-step-up", "auth/scope-retry-limit",
             "auth/token-endpoint-auth-basic", "auth/2025-03-26-oauth-endpoint-fallback"]


def record(scenario: str) -> Path:
    out = OUT / (scenario.replace("/", "_") + ".har")
    suite = ["node", str(NPM / "node_modules/@modelcontextprotocol/conformance/dist/index.js")]
    with tempfile.TemporaryDirectory(prefix="mcp-notebook-conformance-") as results:  # results/
        proc = subprocess.run(
            [*suite, "client", "--command", f"{PY} {Path(__file__).resolve()} --client",
             "--scenario", scenario, "--timeout", "30000"],
            cwd=results, capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, **NODE_ENV, "MCP_NOTEBOOK_HAR": str(out)})
    verdict = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "OVERALL" in ln]
    _rec.log(f"  {scenario}: {verdict[-1].strip() if verdict else proc.returncode}")
    return out


# -- the client under test (run by the suite) ----------------------------------------------

def client(url: str) -> None:
    """The proxy in front of the suite's server at ``url``, the Python SDK client through it."""
    import anyio

    parts = urlsplit(url)
    proxy = subprocess.Popen([PY, "-m", "mcp_notebook.capture.proxy", "--listen", "127.0.0.1:0",
                              "--target", f"{parts.scheme}://{parts.netloc}",
                              "--out", os.environ["MCP_NOTEBOOK_HAR"]],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proxy.stdout is not None
    line = proxy.stdout.readline()
    target = "http://127.0.0.1:" + line.split("http://127.0.0.1:")[1].split()[0] + parts.path
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        anyio.run(_drive, target, scenario.startswith("auth/"))
    except Exception as exc:  # noqa: BLE001 - the suite judges the client; the traffic is kept
        print(f"client: {exc!r}", file=sys.stderr)
    finally:
        proxy.send_signal(signal.SIGINT)
        try:
            proxy.wait(15)
        except subprocess.TimeoutExpired:
            proxy.kill()


async def _drive(target: str, auth: bool) -> None:
    from mcp import Client, MCPError, types

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={})

    async def use(c: Any) -> None:
        for tool in (await c.list_tools()).tools:
            try:
                await c.call_tool(tool.name, {"a": 2, "b": 3} if tool.name == "add_numbers"
                                  else {})
            except MCPError as exc:
                print(f"client: {tool.name}: {exc}", file=sys.stderr)

    if not auth:
        async with Client(target, mode="legacy", elicitation_callback=elicit) as c:
            await use(c)
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(auth=_oauth(target)) as http:
        async with Client(streamable_http_client(target, http_client=http), mode="legacy",
                          elicitation_callback=elicit) as c:
            await use(c)


def _oauth(target: str) -> Any:
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    class Memory:  # the TokenStorage protocol, in memory
        tokens: Any = None
        info: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.info

        async def set_client_info(self, info: Any) -> None:
            self.info = info

    got: dict[str, Any] = {}

    async def redirect(auth_url: str) -> None:  # the suite's endpoint redirects at once
        async with httpx2.AsyncClient() as h:
            r = await h.get(auth_url, follow_redirects=False)
        q = parse_qs(urlsplit(r.headers["location"]).query)
        got["code"], got["state"] = q["code"][0], (q.get("state") or [None])[0]

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=got["code"], state=got["state"])

    async def any_resource(server_url: str, resource: str | None) -> None:
        return None  # the proxy's origin is not the resource's

    meta = OAuthClientMetadata(client_name="mcp-notebook-conformance",
                               redirect_uris=["http://localhost:3000/callback"],
                               grant_types=["authorization_code", "refresh_token"],
                               response_types=["code"])
    return OAuthClientProvider(target, meta, Memory(), redirect, callback,
                               validate_resource_url=any_resource)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--client"]:
        client(argv[-1])
        return 0
    versions = ensure_npm()
    _rec.log(f"conformance {versions['@modelcontextprotocol/conformance']}")
    OUT.mkdir(parents=True, exist_ok=True)
    for scenario in argv or SCENARIOS:
        record(scenario)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
