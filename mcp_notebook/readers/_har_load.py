"""A HAR file read into its entries (:class:`_Entry`, the facts the records need, times
read): the document decoded by the typed structs when it is usual, else as generic JSON,
else (JSON the decoders refuse) one entry at a time, a bad or cut entry costing itself
only. The records are made from the entries by ``_har_reader``."""

from __future__ import annotations

import io
import json
import mmap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from ._har_entry import Entry, UsualEntry, decode_usual
from ._har_session import _endpoint
from ._jsondoc import array_items
from ._logtext import looks_like_json
from ._time import read_time
from .base import UTF8_BOM, Record, open_bytes

__all__ = ["_Entry", "_Loader", "_decode", "_decode_entry", "mcp_endpoints"]


class _Entry(Entry):
    """The facts of one HAR entry the records need, with its times read."""

    __slots__ = ("start", "ts_error", "first_byte", "end")

    def __init__(self, index: int, e: Any) -> None:
        super().__init__(index, e)
        self.start, self.ts_error = read_time(self.started, numbers=False)
        self.first_byte, self.end = self.span(self.start)

    def session_header(self) -> str | None:
        return (self.req_headers.get("mcp-session-id")
                or self.resp_headers.get("mcp-session-id"))

    def posts_json(self) -> bool:
        """A POST of a JSON body."""
        return self.method == "POST" and self.body is not None and looks_like_json(self.body)

    def is_mcp(self, endpoints: set[str]) -> bool:
        """MCP traffic, given the endpoints MCP messages are POSTed to
        (:func:`mcp_endpoints`)."""
        if self.posts_json():
            return _endpoint(self.url) in endpoints
        if self.sse or self.session_header() is not None:
            return True
        return self.method in ("GET", "DELETE") and _endpoint(self.url) in endpoints


def mcp_endpoints(entries: Iterable[_Entry], fallback: bool = True) -> set[str]:
    """The endpoints MCP messages are POSTed to: those a POST's JSON body naming
    ``"jsonrpc"`` goes to (an OAuth client registration, say, POSTs JSON that is not
    MCP). Where none does and ``fallback``: every endpoint a JSON body is POSTed to."""
    posts = [(e.url, e.body) for e in entries if e.posts_json()]
    rpc = {_endpoint(u) for u, b in posts if b is not None and '"jsonrpc"' in b}
    return rpc if rpc or not fallback else {_endpoint(u) for u, _ in posts}


class _Loader:
    """The entries of a HAR file: the document decoded (typed when it is usual), each
    entry's facts read; what cannot be read is an invalid record (``bad``), one each."""

    def __init__(self, path: Path, session: str | None) -> None:
        self.name = path.name
        self.path = path
        self.default = session or path.name
        self.bad: list[Record] = []  # entries that cannot be read, one row each
        self.typed = False  # decoded by the typed structs (msgspec: valid Unicode only)

    def mapped(self) -> Any:
        """The file's bytes (decompressed), without an editor's byte order mark: through a
        read-only ``mmap`` of a plain file (no copy of it in memory; unmapped once nothing
        refers to it)."""
        with open_bytes(self.path) as f:
            if isinstance(f, io.BufferedReader):
                try:
                    view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):  # empty, or a file the system cannot map
                    view = None
                if view is not None:
                    return memoryview(view)[3:] if view[:3] == UTF8_BOM else view
            return f.read().removeprefix(UTF8_BOM)

    def load(self, held: list[Any] | None = None) -> tuple[list[_Entry] | None, str | None]:
        """The entries (None, and the problem, for a file that is not a HAR). ``held``: a
        list holding the file's bytes from :meth:`mapped` when the caller read them already
        (taken out of it, so that they are let go once decoded; a compressed file is not
        decompressed twice)."""
        data = held.pop() if held else self.mapped()
        usual = decode_usual(data)
        if usual is not None:  # typed: only the members used, and no lone surrogate
            del data  # the file's bytes are not kept beside its entries
            self.typed = True
            return self.entries(enumerate(usual)), None
        data = bytes(data)  # a mapped file: its bytes, for the decoders that need them
        try:
            doc = _decode(data)
        except (ValueError, RecursionError) as exc:
            return self.salvage(data.decode("utf-8", "surrogateescape"), exc)
        entries = doc.get("log", {}).get("entries") if isinstance(doc, dict) and isinstance(
            doc.get("log"), dict) else None
        if not isinstance(entries, list):
            return None, "not a HAR file (no log.entries array)"
        return self.entries(enumerate(entries)), None

    def entries(self, items: Iterable[tuple[int, Any]]) -> list[_Entry]:
        out = []
        for i, e in items:
            if not isinstance(e, (dict, UsualEntry)):
                self.bad.append(Record(raw=str(e)[:2000], session=self.default, stream="http",
                                       source=f"{self.name}#entry{i}", kind="invalid",
                                       reason="a HAR entry that is not an object"))
                continue
            try:
                out.append(_Entry(i, e))
            except (ValueError, TypeError, OverflowError) as exc:
                self.bad.append(Record(raw="", session=self.default, stream="http",
                                       source=f"{self.name}#entry{i}", kind="invalid",
                                       reason=f"a HAR entry that cannot be read: {exc}"))
        return out

    def salvage(self, text: str, exc: Exception) -> tuple[list[_Entry] | None, str | None]:
        """The entries of a HAR the JSON decoder refused, one at a time: a bad or cut
        entry costs itself only."""
        found, problem = array_items(text, ("log", "entries"))
        if not found:
            return None, f"not a HAR file (not valid JSON: {exc})"
        items = []
        for item in found:
            src = f"{self.name}#entry{item.position}"
            if not item.complete:
                self.bad.append(Record(raw=item.text[:2000], session=self.default,
                                       stream="http", source=src, kind="invalid",
                                       reason=f"the file ends inside this HAR entry (cut "
                                       f"after {len(item.text)} characters of it)" + (
                                           f"; {exc}" if isinstance(exc, RecursionError)
                                           else "")))
                continue
            try:
                items.append((item.position, json.loads(item.text)))
            except (ValueError, RecursionError) as why:
                self.bad.append(Record(raw=item.text[:2000], session=self.default,
                                       stream="http", source=src, kind="invalid",
                                       reason=f"a HAR entry that is not valid JSON: {why}"))
        if problem:
            self.bad.append(Record(raw=problem, session=self.default, stream="http",
                                   source=self.name, kind="log"))
        return self.entries(items), None


_decode_entry = msgspec.json.Decoder(UsualEntry).decode


def _decode(data: bytes) -> Any:
    """The JSON document (the file's bytes): by msgspec (several times faster; it refuses
    bytes that are not UTF-8, surrogates and overlong forms included), or, for what msgspec
    refuses and Python's decoder takes (``NaN``, ``1e400``, an escaped lone surrogate,
    bytes that are not UTF-8, kept as surrogate escapes), by Python's from the text, so
    the result is always ``json.loads``'s."""
    try:
        return msgspec.json.decode(data)
    except Exception:  # noqa: BLE001 - anything refused: the reference decoder decides
        return json.loads(data.decode("utf-8", "surrogateescape"))
