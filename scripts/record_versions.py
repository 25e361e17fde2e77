"""Record one scenario against two releases of server-everything into ``tests/fixtures/fleet/``.

Run as ``.venv/bin/python scripts/record_versions.py`` from anywhere. The two releases are
pinned side by side in ``scripts/npm-versions/package.json`` (npm aliases ``everything-old``
and ``everything-new``; ``npm install`` there, its ``node_modules`` is git-ignored). The
client is the official MCP Python SDK through the tap (``mcp-notebook record``), the same
calls against both: what differs between the two files is what the server changed, which
``tests/fleet/test_diff.py`` checks ``mn.diff`` finds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rec  # noqa: E402
from _rec import ROOT, sdk_stdio  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "fleet"
NPM = ROOT / "scripts" / "npm-versions"
ALIASES = ("everything-old", "everything-new")


def ensure_npm() -> dict[str, str]:
    """Install both releases; return ``{alias: version}``."""
    if not (NPM / "node_modules" / ".package-lock.json").exists():
        _rec.log("npm install (scripts/npm-versions)")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=NPM, check=True,
                       timeout=600, stdout=subprocess.DEVNULL)
    return {a: json.loads((NPM / "node_modules" / a / "package.json").read_text())["version"]
            for a in ALIASES}


def server(alias: str) -> list[str]:
    """The node command line of one release (relative to the project root)."""
    meta = json.loads((NPM / "node_modules" / alias / "package.json").read_text())
    bin_ = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    script = (Path("scripts/npm-versions/node_modules") / alias / bin_).as_posix()
    return ["node", "--require", f"./{_rec.LOOPBACK}", script.replace("/./", "/"), "stdio"]


async def attempt(aw):  # type: ignore[no-untyped-def]
    from mcp import MCPError

    try:
        return await aw
    except MCPError as exc:
        return exc


async def scenario(out: Path, alias: str) -> None:
    """initialize, the three lists, echo, get-sum, a prompt, a resource read, ping."""
    async with sdk_stdio(out, alias, server(alias)) as s:
        await s.initialize()
        await s.list_tools()
        await s.list_prompts()
        await s.list_resources()
        await s.call_tool("echo", {"message": "hello from mcp-notebook"})
        await attempt(s.call_tool("get-sum", {"a": 2, "b": 40}))
        await attempt(s.get_prompt("simple-prompt"))
        await attempt(s.read_resource("test://static/resource/1"))
        await s.send_ping()


def main() -> None:
    versions = ensure_npm()
    OUT.mkdir(parents=True, exist_ok=True)
    for alias in ALIASES:
        out = OUT / f"{alias}-{versions[alias]}.jsonl"
        _rec.log(f"{out.relative_to(ROOT)}")
        anyio.run(scenario, out, alias)
    (OUT / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")


if __name__ == "__main__":
    main()
