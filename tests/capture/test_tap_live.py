"""Live: the official Python SDK client and server talk through ``mcp-notebook record``.

The chain is ``SDK client -> spy A -> tap -> spy B -> SDK server`` where the spies
(``pipe_spy.py``) log every byte they pass. What the client sent must equal what the
server received and the other way round, and the tap's own record must hold the same
bytes. Python only: the server is ``scripts/demo_server.py`` (Python SDK).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import anyio
import pytest

from .conftest import ROOT, read_records, wire_bytes

# the SDK is imported where it is used, not at collection (0.8 s of CPU in every worker)
pytestmark = [pytest.mark.live, pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None,
    reason="the official MCP SDK is needed: pip install -e '.[dev]'")]
SPY = str(Path(__file__).with_name("pipe_spy.py"))


async def _sampling(ctx, params):
    from mcp import types as mt

    return mt.CreateMessageResult(role="assistant", model="canned",
                                  content=mt.TextContent(type="text", text="42"))


async def _elicit(ctx, params):
    from mcp import types as mt

    return mt.ElicitResult(action="accept", content={"confirm": True, "note": "ok"})


async def _session(capture: Path, spy: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    tap = [sys.executable, "-m", "mcp_notebook.capture.record", "--out", str(capture),
           "--session", "live", "--", sys.executable, SPY, str(spy) + "-B", "--",
           sys.executable, "scripts/demo_server.py"]
    params = StdioServerParameters(command=sys.executable, args=[SPY, str(spy) + "-A", "--", *tap],
                                   cwd=str(ROOT))
    seen: dict = {}
    with anyio.fail_after(90):
        async with stdio_client(params) as (r, w), ClientSession(
                r, w, sampling_callback=_sampling, elicitation_callback=_elicit) as s:
            seen["init"] = await s.initialize()
            seen["tools"] = await s.list_tools()
            seen["add"] = await s.call_tool("add", {"a": 2, "b": 3})
            seen["divide"] = await s.call_tool("divide", {"a": 1, "b": 0})
            seen["llm"] = await s.call_tool("ask_llm", {"question": "six times seven?"})
            seen["user"] = await s.call_tool("ask_user", {"action": "deploy"})
            seen["ping"] = await s.send_ping()
            seen["big"] = await s.call_tool("big", {"kib": 300})
            async with anyio.create_task_group() as tg:
                for i in range(4):
                    tg.start_soon(s.call_tool, "slow", {"steps": 2, "delay": 0.01 * i})
            seen["prompt"] = await s.get_prompt("review", {"code": "x = 1"})
    return seen


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    d = tmp_path_factory.mktemp("live")
    capture, spy = d / "live.jsonl", d / "spy"
    seen = anyio.run(_session, capture, spy)
    return capture, spy, seen


def test_client_got_real_answers(live):
    _, _, seen = live
    assert seen["init"].server_info.name == "mcp-notebook-demo"
    assert seen["add"].structured_content == {"result": 5}
    assert seen["divide"].is_error is True
    assert seen["llm"].content[0].text == "42"
    assert len(seen["big"].content[0].text) == 300 * 1024


def test_each_side_received_what_the_other_sent(live):
    capture, spy, _ = live
    a = {d: Path(f"{spy}-A.{d}").read_bytes() for d in ("c2s", "s2c")}
    b = {d: Path(f"{spy}-B.{d}").read_bytes() for d in ("c2s", "s2c")}
    assert a["c2s"] and a["s2c"]
    assert a["c2s"] == b["c2s"], "the server did not receive exactly what the client sent"
    assert a["s2c"] == b["s2c"], "the client did not receive exactly what the server sent"
    recs = read_records(capture)
    assert wire_bytes(recs, "c2s") == a["c2s"]
    assert wire_bytes(recs, "s2c") == a["s2c"]
    assert {r["session"] for r in recs} == {"live"}


def test_capture_loads_with_every_request_paired(live):
    import mcp_notebook as mn

    if not hasattr(mn, "load"):
        pytest.skip("mn.load is not there yet")
    capture, _, _ = live
    t = mn.load(capture)
    pairs = t.pairs
    assert len(pairs) > 0
    assert set(pairs["outcome"]) <= {"result", "error", "tool_error"}, pairs["outcome"].tolist()
    assert (pairs["response_seq"].notna()).all()
    s = t.summary()
    assert s["unanswered"] == 0 and s["orphans"] == 0 and s["duplicates"] == 0
    assert s["tool_errors"] == 1
    # both sides' requests are there: sampling and elicitation go server to client
    assert {"sampling/createMessage", "elicitation/create", "tools/call"} <= set(pairs["method"])
    assert set(pairs["requester"]) == {"c2s", "s2c"} or len(set(pairs["requester"])) == 2
