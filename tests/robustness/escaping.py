"""A capture full of markup, and a checker that HTML made from it is inert.

The capture carries ``<script>``, ``<img onerror>``, ``javascript:`` links, HTML entities
and terminal escape sequences in every place a trace's text can come from: the file name,
the session, methods, ids, the protocol version, params, results, error messages,
stderr, unparsable lines. Each payload sets ``window.__pwned`` if it ever runs.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
LINK = '<a href="javascript:window.__pwned=3">click</a>'
ENTITIES = "&lt;b&gt;not bold&lt;/b&gt; &amp; &#60;i&#62;"
SVG = "<svg onload=window.__pwned=4>"
ANSI = "\x1b]0;pwned\x07\x1b[2J"
PAYLOADS = [SCRIPT, IMG, LINK, ENTITIES, SVG]
FILE_NAME = "evil<img src=x onerror=window.__pwned=6>.jsonl"

_ALLOWED_TAGS = {"div", "span", "table", "thead", "tbody", "tr", "th", "td", "b", "i", "small",
                 "details", "summary", "pre", "code", "style", "br", "em", "strong", "p", "h3",
                 "h4", "ul", "li"}


def hostile_capture(folder: Path) -> Path:
    """Write the hostile tap capture; return its path (the file name is hostile too)."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": SCRIPT, "capabilities": {},
        "clientInfo": {"name": SCRIPT, "version": IMG}}}
    rows = [
        ("c2s", init),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": IMG, "capabilities": {},
            "serverInfo": {"name": IMG, "version": "javascript:window.__pwned=3"},
            "instructions": ENTITIES + ANSI}}),
        ("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ("c2s", {"jsonrpc": "2.0", "id": SCRIPT, "method": "tools/call", "params": {
            "name": SCRIPT, "arguments": {IMG: LINK, "href": "javascript:window.__pwned=3",
                                          "<b>key</b>": ENTITIES}}}),
        ("s2c", {"jsonrpc": "2.0", "id": SCRIPT, "error": {"code": -32602,
                                                           "message": SCRIPT + IMG + ANSI,
                                                           "data": SVG}}),
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": SCRIPT + ANSI, "params": {"a": SVG}}),
        ("s2c", {"jsonrpc": "2.0", "id": 3, "result": {"content": [
            {"type": "text", "text": LINK + IMG}], "isError": True}}),
        ("c2s", {"jsonrpc": "2.0", "id": 4, "method": IMG}),
        ("s2c", {"jsonrpc": "2.0", "id": 4, "result": {"x": ENTITIES}}),
        ("stderr", SCRIPT + " " + IMG + " " + ENTITIES + ANSI),
        ("c2s", '{"jsonrpc":"2.0","id":5,"method":"' + SVG.replace('"', "'")),
        ("s2c", {"jsonrpc": "2.0", "id": 99, "result": {"x": SCRIPT}}),
    ]
    path = folder / FILE_NAME
    with open(path, "w", encoding="utf-8") as f:
        for i, (d, m) in enumerate(rows):
            raw = m if isinstance(m, str) else json.dumps(m)
            f.write(json.dumps({"ts": 1.75e9 + i / 10, "dir": d, "raw": raw,
                                "session": "evil" + SCRIPT}) + "\n")
    return path


class _Inert(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        self._in_style = tag == "style"
        for name, value in attrs:
            if name.startswith("on") or name in ("href", "src", "srcdoc", "formaction"):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if value and "javascript:" in value.lower():
                self.problems.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if not self._in_style:
            self.text.append(data)


def assert_inert(html: str, shows: list[str] = ()) -> str:
    """``html`` has no active markup; each of ``shows`` appears in it as text. Returns the
    text content."""
    parser = _Inert()
    parser.feed(html)
    parser.close()
    assert not parser.problems, parser.problems[:5]
    text = "".join(parser.text)
    for s in shows:
        assert s in text, f"{s!r} is not shown as text"
    return text
