"""The line shapes of Claude Desktop's logs (every era): a timestamp, a level, a server
name, in the orders the eras wrote them. Shared by the reader and its de-duplication."""

from __future__ import annotations

import re

_TS = r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|\d\d:\d\d:\d\d\.\d{3}Z)"
_LVL = r"(?P<level>info|error|warn|warning|debug|trace|verbose)"
_MSG = r"(?: (?P<msg>.*))?$"
_LEVEL_SERVER = re.compile(rf"{_TS} \[{_LVL}\] \[(?P<server>.+?)\](?= |$){_MSG}")
_SERVER_LEVEL = re.compile(rf"{_TS} \[(?P<server>.+?)\] \[{_LVL}\]{_MSG}")
_LEVEL_ONLY = re.compile(rf"{_TS} \[{_LVL}\]{_MSG}")
_SERVER_ONLY = re.compile(rf"{_TS} \[(?P<server>.+?)\]{_MSG}")
_NO_TS = re.compile(rf"\[{_LVL}\] (?:\[(?P<server>.+?)\] )?(?P<msg>Message from (?:client|server):.*)$")
_ENTRY_TS = (_LEVEL_SERVER, _SERVER_LEVEL, _LEVEL_ONLY, _SERVER_ONLY)
_PER_SERVER_FIRST = (_SERVER_LEVEL, _LEVEL_SERVER, _LEVEL_ONLY, _SERVER_ONLY)  # faster there


def _match(line: str, order: tuple[re.Pattern[str], ...] | None = None) -> re.Match[str] | None:
    c = line[:1]
    if c.isdigit():
        for rx in order or _ENTRY_TS:
            m = rx.match(line)
            if m:
                return m
        return None
    if c == "[":
        return _NO_TS.match(line)
    return None
