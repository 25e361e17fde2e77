"""Redact a HAR document in place: headers, cookies, query strings, URLs and bodies.

Bodies are redacted like frames (JSON member by member, else as text); an SSE body
line by line (each ``data:`` line is a frame), counting events the way the HAR reader
does so that every finding names the frame it is in (``file#entry<N>/event<M>``).
Header, cookie and parameter *names* are kept; the ``Mcp-Session-Id`` header is not a
secret by default (the HAR reader groups sessions by it).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from .frames import redact_frame
from .policy import Hit
from .redactor import Redactor
from .shapes import placeholder

__all__ = ["redact_har"]

_LINE_END = re.compile(r"(\r\n|\r|\n)")

Rows = list[tuple[str, Hit]]


class _Har:
    def __init__(self, r: Redactor, name: str) -> None:
        self.r = r
        self.name = name
        self.rows: Rows = []

    def add(self, source: str, hits: list[Hit]) -> None:
        self.rows.extend((source, h) for h in hits)

    def text(self, value: Any, where: str, source: str) -> Any:
        if not isinstance(value, str):
            return value
        hits: list[Hit] = []
        out = self.r.text(value, where, hits)
        self.add(source, hits)
        return out

    def pairs(self, items: Any, part: str, source: str, always: bool = False,
              query: bool = False) -> None:
        """A HAR ``[{name, value}]`` list: headers, cookies, query string, form params
        (``query``: names like ``key`` and ``sig`` hold secrets there too)."""
        if not isinstance(items, list):
            return
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("value"), str):
                continue
            name = str(item.get("name", ""))
            where = f"{part}.{name}"
            value = item["value"]
            if value and (always or self.r.secret_key(name, query)) and "«redacted:" not in value \
                    and not placeholder(value):
                tok = self.r.token(value)
                kind = part.rsplit(".", 1)[-1].rstrip("s").lower()
                self.add(source, [Hit(where, f"{kind}:{name.lower()}", tok)])
                item["value"] = tok
            else:
                item["value"] = self.text(value, where, source)

    def body(self, holder: Any, source: str, sse: bool) -> None:
        """``postData`` / ``content``: its ``text`` (base64 or not) redacted as frames
        (``source`` names the frame; for an SSE body, the entry its events belong to)."""
        if not isinstance(holder, dict) or not isinstance(holder.get("text"), str):
            return
        text = holder["text"]
        b64 = holder.get("encoding") == "base64"
        if b64:
            try:
                text = base64.b64decode(text).decode("utf-8", "surrogateescape")
            except ValueError:
                b64 = False
        new = self.sse(text, source) if sse else self.frame(text, source)
        if new != text:
            holder["text"] = (base64.b64encode(new.encode("utf-8", "surrogateescape"))
                              .decode("ascii") if b64 else new)

    def frame(self, text: str, source: str) -> str:
        hits: list[Hit] = []
        out = redact_frame(text, self.r, hits)
        self.add(source, hits)
        return out

    def sse(self, body: str, src: str) -> str:
        """An SSE body line by line; events counted as :func:`readers._sse.parse_sse` does."""
        parts = _LINE_END.split(body)
        index, fields, comments = 0, False, False
        for k in range(0, len(parts), 2):
            line = parts[k]
            source = f"{src}/event{index}"
            if line == "":
                if k == len(parts) - 1:
                    break  # the empty text after the last line break
                if fields or comments:
                    index += 1
                fields = comments = False
            elif line.startswith(":"):
                comments = True
                parts[k] = self.text(line, "text", source)
            else:
                fields = True
                name, sep, value = line.partition(":")
                if name == "data" and sep:
                    lead = " " if value.startswith(" ") else ""
                    parts[k] = f"data:{lead}{self.frame(value[len(lead):], source)}"
        return "".join(parts)

    def entry(self, i: int, e: dict[str, Any]) -> None:
        src = f"{self.name}#entry{i}"
        req = e.get("request")
        if isinstance(req, dict):
            req["url"] = self.text(req.get("url"), "request.url", src)
            self.pairs(req.get("headers"), "request.headers", src)
            self.pairs(req.get("cookies"), "request.cookies", src, self.r.policy.all_cookies)
            self.pairs(req.get("queryString"), "request.queryString", src, query=True)
            post = req.get("postData")
            self.body(post, src, sse=False)
            if isinstance(post, dict):
                self.pairs(post.get("params"), "request.postData.params", src, query=True)
        resp = e.get("response")
        if isinstance(resp, dict):
            rsrc = f"{src}/response"
            self.pairs(resp.get("headers"), "response.headers", rsrc)
            self.pairs(resp.get("cookies"), "response.cookies", rsrc, self.r.policy.all_cookies)
            resp["redirectURL"] = self.text(resp.get("redirectURL"), "response.redirectURL",
                                            rsrc)
            content = resp.get("content")
            if isinstance(content, dict):
                mime = str(content.get("mimeType") or "") + " ".join(
                    str(h.get("value", "")) for h in resp.get("headers") or []
                    if isinstance(h, dict) and str(h.get("name", "")).lower() == "content-type")
                sse = "text/event-stream" in mime.lower()
                self.body(content, src if sse else rsrc, sse=sse)
                events = content.get("_sseEvents")
                if isinstance(events, list):
                    for m, ev in enumerate(events):
                        if isinstance(ev, dict) and isinstance(ev.get("data"), str):
                            ev["data"] = self.frame(ev["data"], f"{src}/event{m}")
                        if isinstance(ev, dict) and isinstance(ev.get("comment"), str):
                            ev["comment"] = self.text(ev["comment"], "text", f"{src}/event{m}")
        for key in ("_proxyError", "comment"):
            if isinstance(e.get(key), str):
                e[key] = self.text(e[key], key, src)


def redact_har(doc: Any, r: Redactor, name: str) -> Rows:
    """Redact a decoded HAR document in place; return ``(source, hit)`` for each secret.

    ``source`` is the frame source the HAR reader gives the part that held the secret
    (``name#entry3``, ``name#entry3/response``, ``name#entry3/event2``).
    """
    h = _Har(r, name)
    log = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(log, dict):
        return h.rows
    if isinstance(log.get("comment"), str):
        log["comment"] = h.text(log["comment"], "log.comment", name)
    entries = log.get("entries")
    for i, e in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(e, dict):
            h.entry(i, e)
    return h.rows
