"""OTLP/JSON trace exports of MCP spans (``mcp-notebook export --otlp``, or any tracer
that follows the OpenTelemetry MCP conventions): payload-free events.

Each span with an ``mcp.method.name`` is a request and its response; its progress and
cancel events are notifications (see :func:`mcp_notebook.otlp.boundary_from_otlp` for
what spans do not say and how it is inferred). The trace is payload-free.

A file cut short keeps the resource spans before the cut (each found by its brackets);
what cannot be read -- the cut one, a span that is not an object or has no readable
times, a document that is not an OTLP trace export -- is an ``invalid`` row saying where
and why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ._jsondoc import salvage
from .base import CaptureError, Record, open_bytes

name = "otlp"
description = "OTLP/JSON spans of MCP requests (export --otlp): payload-free events"
#: the loader marks a trace read from this format payload-free
payload_free = True


def sniff(head: str, filename: str) -> int:
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith("{") and '"resourceSpans"' in text[:4096]:
        return 95
    return 0


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the envelope-only frames of the MCP spans of an OTLP/JSON file."""
    from .boundary import records_of
    from .otlp_spans import boundary_from_otlp

    sess = session or path.name
    with open_bytes(path) as f:
        data = f.read()
    tail: list[Record] = []
    try:
        doc: Any = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        items = salvage(data, ("resourceSpans",), what="an OTLP/JSON trace export",
                        unit="resourceSpans", name=path.name, sess=sess, exc=exc, tail=tail)
        doc = {"resourceSpans": []}
        for position, text in items:
            try:
                doc["resourceSpans"].append(msgspec.json.decode(text))
            except (msgspec.DecodeError, RecursionError) as err:
                tail.append(Record(raw=text.decode("utf-8", "replace")[:2000], session=sess,
                                   kind="invalid", source=f"{path.name}#resourceSpans{position}",
                                   reason=f"not JSON ({err})"))
    problems: list[tuple[str, str]] = []
    try:
        b = boundary_from_otlp(doc, problems)
    except (TypeError, ValueError, OverflowError) as exc:  # a shape no check foresaw
        raise CaptureError(f"{path}: an OTLP/JSON document that cannot be read as MCP "
                           f"spans ({type(exc).__name__}: {exc})") from None
    yield from records_of(b, path.name, sess, [f"{path.name}#op{i}" for i in range(len(b))])
    for where, why in problems:
        if where == "document" and tail:
            continue  # the salvage said it already
        yield Record(raw="", session=sess, kind="invalid", source=f"{path.name}#{where}",
                     reason=why)
    yield from tail
