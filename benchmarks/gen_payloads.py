"""Payload pools and envelope templates for the synthetic MCP capture generator.

Everything here is precomputed once per run from the seed, so that the per-frame work of
:mod:`gen_capture` is a few slices and one string format:

- a text corpus that is already JSON-string-escaped (quotes, newlines, tabs, non-ASCII
  text), sliced at safe points for payloads from a few bytes up to ~1 MB;
- a base64 corpus for binary resources (images, blobs);
- per-session tool, resource and prompt catalogues (the ``tools/list`` etc. results);
- envelope templates in the three key orders seen in real SDK output (Python SDK
  compact, TypeScript SDK ``result``-first, ``json.dumps`` with spaces).
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass

__all__ = ["Pools", "Style", "STYLES", "Catalogue", "make_catalogue"]

_WORDS = (
    "the of and to in is for on with as by at from file line data value error result request "
    "response server client tool call list read write open close path name type text content "
    "json rpc message notification progress token cancel session stream buffer cache index "
    "query search match user model prompt sample resource template schema object array string "
    "number boolean null true false id method params status ok fail retry timeout latency "
    "weather forecast temperature city Paris London Tokyo Berlin repository commit branch diff "
    "patch issue pull review test build deploy config env secret key vault table column row "
    "select where order group count sum avg max min join left right inner outer limit offset"
).split() + ["café", "naïve", "résumé", "日本語", "中文", "Ελληνικά", "🚀", "✓", "—", "…"]

# two-character escapes only, so that every backslash in the corpus starts an escape
_SPECIAL = ["\\n", "\\n", "\\t", '\\"', ", ", ". ", ": ", "\\n\\n"]
# the dense corpus of the ``escapes`` profile: every kind of escape, \\uXXXX and surrogate
# pairs included; it is only ever cut at a space (no escape holds one)
_DENSE = ["\\n", "\\t", '\\"', "\\\\", "\\u00e9", "\\u2014", "\\ud83d\\ude80", "\\r\\n",
          "\\/", '\\"\\\\n\\"', "\\b", "\\f"]


def _corpus(rng: random.Random, n_chars: int) -> str:
    words = rng.choices(_WORDS, k=n_chars // 5)
    out: list[str] = []
    for i, w in enumerate(words):
        out.append(w)
        out.append(_SPECIAL[i % len(_SPECIAL)] if rng.random() < 0.12 else " ")
    text = "".join(out)
    while len(text) < n_chars:
        text += text
    return text[:n_chars]


def _dense_corpus(rng: random.Random, n_chars: int) -> str:
    words = rng.choices(_WORDS, k=n_chars // 5)
    out: list[str] = []
    for w in words:
        out.append(w)
        out.append(rng.choice(_DENSE) if rng.random() < 0.5 else " ")
        if rng.random() < 0.3:
            out.append(" ")
    text = "".join(out)
    while len(text) < n_chars:
        text += " " + text
    return text[:text.rfind(" ", 0, n_chars)]


class Pools:
    """Sliceable JSON-escaped text and base64 pools (``dense``: the escapes profile's)."""

    def __init__(self, rng: random.Random, text_chars: int = 1_300_000,
                 blob_chars: int = 1_100_000, dense: bool = False) -> None:
        self.text = _corpus(rng, text_chars)
        raw = rng.randbytes(blob_chars * 3 // 4)
        self.blob = base64.b64encode(raw).decode()
        self._tlen = len(self.text)
        self._blen = len(self.blob)
        self.dense = _dense_corpus(rng, text_chars) if dense else ""

    def dense_of(self, rng: random.Random, n: int) -> str:
        """About ``n`` characters of the dense corpus, cut at spaces (never in an escape)."""
        d = self.dense
        n = max(1, min(n, len(d) // 2))
        start = d.find(" ", int(rng.random() * (len(d) - n - 1)))
        end = d.rfind(" ", start + 1, start + n + 1)
        return d[start + 1:end] if end > start else "x"

    def text_of(self, rng: random.Random, n: int) -> str:
        """About ``n`` characters of escaped JSON string content (no quotes around it)."""
        n = max(1, min(n, self._tlen - 2))
        start = int(rng.random() * (self._tlen - n - 1))
        if start and self.text[start - 1] == "\\":
            start += 1  # do not begin on the second char of an escape
        s = self.text[start:start + n]
        if s.endswith("\\"):
            s = s[:-1]  # do not end in the middle of an escape
        return s

    def blob_of(self, rng: random.Random, n: int) -> str:
        """About ``n`` characters of base64 (a multiple of 4)."""
        n = max(4, min(n, self._blen - 4)) // 4 * 4
        start = int(rng.random() * (self._blen - n)) // 4 * 4
        return self.blob[start:start + n]


@dataclass(frozen=True)
class Style:
    """Envelope templates of one serializer (member order and separators)."""

    name: str
    sep: str  # between members
    colon: str

    def request(self, idj: str, method: str, params: str | None) -> str:
        c, s = self.colon, self.sep
        if self.name == "ts":
            p = f'"params"{c}{params}{s}' if params is not None else ""
            return f'{{"method"{c}"{method}"{s}{p}"jsonrpc"{c}"2.0"{s}"id"{c}{idj}}}'
        p = f'{s}"params"{c}{params}' if params is not None else ""
        return f'{{"jsonrpc"{c}"2.0"{s}"id"{c}{idj}{s}"method"{c}"{method}"{p}}}'

    def notification(self, method: str, params: str | None) -> str:
        c, s = self.colon, self.sep
        if self.name == "ts":
            p = f'"params"{c}{params}{s}' if params is not None else ""
            return f'{{"method"{c}"{method}"{s}{p}"jsonrpc"{c}"2.0"}}'
        p = f'{s}"params"{c}{params}' if params is not None else ""
        return f'{{"jsonrpc"{c}"2.0"{s}"method"{c}"{method}"{p}}}'

    def result(self, idj: str, result: str) -> str:
        c, s = self.colon, self.sep
        if self.name == "ts":
            return f'{{"result"{c}{result}{s}"jsonrpc"{c}"2.0"{s}"id"{c}{idj}}}'
        return f'{{"jsonrpc"{c}"2.0"{s}"id"{c}{idj}{s}"result"{c}{result}}}'

    def error(self, idj: str, code: int, message: str, data: str | None = None) -> str:
        c, s = self.colon, self.sep
        d = f'{s}"data"{c}{data}' if data is not None else ""
        err = f'{{"code"{c}{code}{s}"message"{c}"{message}"{d}}}'
        return f'{{"jsonrpc"{c}"2.0"{s}"id"{c}{idj}{s}"error"{c}{err}}}'


STYLES = {
    "py": Style("py", ",", ":"),  # Python SDK (pydantic model_dump_json)
    "ts": Style("ts", ",", ":"),  # TypeScript SDK (JSON.stringify of zod output)
    "dumps": Style("dumps", ", ", ": "),  # hand-rolled json.dumps with default separators
}


@dataclass
class Catalogue:
    """What one server offers: the list results and the names used in later calls."""

    tools: list[str]
    tools_list: str
    resources: list[str]
    resources_list: str
    templates_list: str
    prompts: list[str]
    prompts_list: str


_TOOL_STEMS = ["search", "read_file", "write_file", "list_dir", "get_weather", "run_query",
               "fetch_url", "create_issue", "git_diff", "git_log", "summarize", "translate",
               "calc", "lookup_user", "send_email", "get_time", "screenshot", "exec"]


def make_catalogue(rng: random.Random, pools: Pools) -> Catalogue:
    """A random but plausible catalogue for one server."""
    n_tools = rng.randint(3, 30)
    tools = [f"{rng.choice(_TOOL_STEMS)}_{i}" if i >= len(_TOOL_STEMS) else _TOOL_STEMS[i]
             for i in range(n_tools)]
    rng.shuffle(tools)
    tdefs = []
    for t in tools:
        desc = pools.text_of(rng, rng.randint(40, 400))
        props = ",".join(
            f'"arg{j}":{{"type":"{rng.choice(["string", "integer", "boolean"])}",'
            f'"description":"{pools.text_of(rng, rng.randint(10, 60))}"}}'
            for j in range(rng.randint(0, 4)))
        tdefs.append(f'{{"name":"{t}","description":"{desc}","inputSchema":'
                     f'{{"type":"object","properties":{{{props}}}}}}}')
    n_res = rng.randint(0, 40)
    resources = [f"file:///project/src/module_{i}.py" for i in range(n_res)]
    rdefs = [f'{{"uri":"{u}","name":"module_{i}.py","mimeType":"text/x-python"}}'
             for i, u in enumerate(resources)]
    prompts = [f"prompt_{i}" for i in range(rng.randint(0, 8))]
    pdefs = [f'{{"name":"{p}","description":"{pools.text_of(rng, rng.randint(20, 120))}",'
             f'"arguments":[{{"name":"topic","required":true}}]}}' for p in prompts]
    return Catalogue(
        tools=tools or ["noop"],
        tools_list=f'{{"tools":[{",".join(tdefs)}]}}',
        resources=resources or ["file:///project/README.md"],
        resources_list=f'{{"resources":[{",".join(rdefs)}]}}',
        templates_list='{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files"}]}',
        prompts=prompts or ["default"],
        prompts_list=f'{{"prompts":[{",".join(pdefs)}]}}',
    )
