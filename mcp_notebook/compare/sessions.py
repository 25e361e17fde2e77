"""What one session of each trace says about its server, and which sessions are compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class Side:
    """One session of a trace, with its server's name and ``initialize`` result."""

    trace: Any
    session: Any
    server: str | None = None
    init: dict[str, Any] = field(default_factory=dict)


def pairs_of(t: Any, session: Any) -> pd.DataFrame:
    p = t.pairs
    if session is None and p["session"].isna().all():
        return p
    return p[p["session"] == session]


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def result_of(t: Any, seq: Any) -> dict[str, Any]:
    msg = t.message(int(seq)) if pd.notna(seq) else None
    res = msg.get("result") if isinstance(msg, dict) else None
    return res if isinstance(res, dict) else {}


def _server_info(t: Any, session: Any) -> tuple[str | None, dict[str, Any]]:
    p = pairs_of(t, session)
    init = p[(p["method"] == "initialize") & (p["outcome"] == "result")]
    if init.empty:
        init = p[(p["method"] == "server/discover") & (p["outcome"] == "result")]
    if init.empty:
        return None, {}
    res = result_of(t, init["response_seq"].iloc[-1])
    if (init["method"] == "initialize").any():  # what the trace says of its peers
        return t.peers().get(session, {}).get("server_name"), res
    name = as_dict(res.get("serverInfo")).get("name")  # 2026-07-28: server/discover
    return (name if isinstance(name, str) else None), res


def sides(t: Any) -> list[Side]:
    out = []
    for s in t.sessions():
        name, init = _server_info(t, s)
        out.append(Side(t, s, name, init))
    return out


def match_sessions(a: Any, b: Any, session_a: Any = None, session_b: Any = None
                   ) -> list[tuple[Side, Side]]:
    """Sessions of ``a`` and ``b`` paired by server name and position (or as the user says)."""
    sa, sb = sides(a), sides(b)
    if session_a is not None or session_b is not None:
        def pick(sides: list[Side], name: Any, label: str) -> Side:
            if name is None:
                if len(sides) != 1:
                    raise ValueError(f"trace {label} has {len(sides)} sessions: name one")
                return sides[0]
            for s in sides:
                if str(s.session) == str(name):
                    return s
            known = ", ".join(str(s.session) for s in sides)
            raise ValueError(f"no session {name!r} in trace {label}; known: {known}")
        return [(pick(sa, session_a, "a"), pick(sb, session_b, "b"))]
    if len(sa) == 1 and len(sb) == 1:  # one each: the same server, whatever its name
        return [(sa[0], sb[0])]
    pairs: list[tuple[Side, Side]] = []
    for name in dict.fromkeys(s.server for s in sa):
        left = [s for s in sa if s.server == name]
        right = [s for s in sb if s.server == name]
        pairs.extend(zip(left, right, strict=False))
    if not pairs:  # no server name in common: by position
        pairs = list(zip(sa, sb, strict=False))
    return pairs


def plain(value: Any) -> Any:
    """A session label as JSON: ``None``, a string or a number as they are, else its text."""
    return value if value is None or isinstance(value, (str, int)) else str(value)


def unmatched(t: Any, taken: list[Any], label: str) -> list[dict[str, Any]]:
    other = "b" if label == "a" else "a"
    return [dict(area="session", item=str(x.session), change=f"only in {label}",
                 detail=f"no session of {other} matched it (server {x.server})",
                 a=str(x.session) if label == "a" else "", b=str(x.session) if label == "b" else "",
                 severity="info", **{f"session_{label}": plain(x.session),
                                     f"session_{other}": None})
            for x in sides(t) if x.session not in taken]
