"""What ``initialize`` says of a trace's peers, per session (:meth:`Trace.peers`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .protocol import versions as V

__all__ = ["peers_of", "PEER_FIELDS"]

PEER_FIELDS = ("protocol_version", "client_name", "client_version", "server_name",
               "server_version")


def peers_of(trace: Any) -> dict[Any, dict[str, str | None]]:
    """See :meth:`mcp_notebook.trace.Trace.peers`."""
    p = trace.pairs
    inits = p[(p["method"] == "initialize") & p["request_seq"].notna()]
    answered = inits[inits["outcome"] == "result"]
    out: dict[Any, dict[str, str | None]] = {}
    for session in trace.sessions():
        mine = answered[answered["session"] == session] if session is not None else \
            answered[answered["session"].isna()]
        if mine.empty:
            mine = inits[inits["session"] == session] if session is not None else \
                inits[inits["session"].isna()]
        info: dict[str, str | None] = dict.fromkeys(PEER_FIELDS)
        if not mine.empty:
            row = mine.iloc[-1]
            req = trace.message(int(row["request_seq"])) or {}
            res = trace.message(int(row["response_seq"])) \
                if pd.notna(row["response_seq"]) else None
            params = req.get("params") if isinstance(req, dict) else None
            result = res.get("result") if isinstance(res, dict) else None
            for side, body, member in (("client", params, "clientInfo"),
                                       ("server", result, "serverInfo")):
                peer = body.get(member) if isinstance(body, dict) else None
                if isinstance(peer, dict):
                    info[f"{side}_name"] = _text_or_none(peer.get("name"))
                    info[f"{side}_version"] = _text_or_none(peer.get("version"))
            for body in (params, result):
                if isinstance(body, dict) and isinstance(body.get("protocolVersion"), str):
                    info["protocol_version"] = body["protocolVersion"]
        if info["protocol_version"] is None:
            found = trace.versions_named()
            if session in found:
                info["protocol_version"] = V.normalise(found[session])
        out[session] = info
    return out


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
