"""Capture readers: one module per format, a registry and a sniffer.

Adding a format is one module (``name``, ``description``, ``sniff``, ``read``) and one
line in :data:`REGISTRY`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from . import (
    boundary,
    claude_desktop,
    curl,
    har,
    inspector,
    inspector_network,
    ndjson,
    otlp,
    recorder,
    tap,
    vscode,
)
from ._markdown import detect, unwrap
from .base import BLANK, CaptureError, Record, head_lines, read_head, wrapping

__all__ = ["REGISTRY", "Record", "CaptureError", "BLANK", "sniff", "read", "formats",
           "time_notes", "wrapping", "LINE_FORMATS", "payload_free_note", "capture_notes"]

#: name -> reader module, in the order sniffing breaks ties.
REGISTRY: dict[str, ModuleType] = {m.name: m for m in (tap, ndjson)}
REGISTRY.update({m.name: m for m in (claude_desktop, vscode, har, inspector, inspector_network,
                                     recorder, curl)})
REGISTRY.update({m.name: m for m in (boundary, otlp)})  # payload-free: envelopes only


#: the formats read line by line (:func:`.base.iter_lines`), which unwrap Markdown pastes
LINE_FORMATS = ("tap", "ndjson", "claude-desktop", "vscode", "curl")


def time_notes(extra: dict[int, dict[str, Any]]) -> list[str]:
    """The trace notes on frames whose time a reader could not read (``ts_error``)."""
    from ..engine.native import extras_with

    bad = [e["ts_error"] for _, e in extras_with(extra, ("ts_error",))]
    if not bad:
        return []
    return [f"{len(bad)} frame(s) carry a time that cannot be read and have no ts (the "
            f"first: {bad[0]}); trace.extra(seq)['ts_error'] says why for each"]


def capture_notes(extra: dict[int, dict[str, Any]], kind: Any) -> list[str]:
    """The trace notes on what the frames' extras say a capture left out or could not
    read: times (:func:`time_notes`), streams a capture does not hold. ``kind``: the
    frames' kind codes (``KINDS``). One pass over every row's extra finds the rows that
    say any of it (a document has an extra on every row)."""
    from ..engine.native import extras_with

    marked = dict(extras_with(extra, _MARKS))
    return (time_notes(marked) + inspector_network.not_held_note(marked)
            + _unheld_note(marked, kind))


#: the members of a row's extra :func:`capture_notes` reads
_MARKS = ("ts_error", "events_not_held", "answer_not_held", "request_not_held")


def _unheld_note(extra: dict[int, dict[str, Any]], kind: Any) -> list[str]:
    """The note on the requests and responses whose other half may be on a stream the
    capture lacks (as the rules read the marks: on requests, on responses)."""
    from ..engine.native import extras_with
    from ..protocol.vocab import KINDS

    def count(key: str, kinds: tuple[str, ...]) -> int:
        codes = {KINDS.index(k) for k in kinds}
        return sum(1 for seq, e in extras_with(extra, (key,)) if e[key] and kind[seq] in codes)

    asked = count("answer_not_held", ("request",))
    told = count("request_not_held", ("result", "error"))
    if not asked and not told:
        return []
    return [f"{asked} request(s) may be answered, and {told} response(s) may answer "
            "requests, on event streams the capture does not hold (extra answer_not_held / "
            "request_not_held): unanswered-request and orphan-response do not report them"]


def payload_free_note(files: list[str], of: int) -> str:
    """The note of a trace loaded (in part) from payload-free files."""
    names = ", ".join(Path(f).name for f in files[:3]) + (" ..." if len(files) > 3 else "")
    what = "" if len(files) == of else f" ({len(files)} of its {of} files)"
    return boundary.PAYLOAD_FREE_NOTE.format(what=f"{names}{what}")


def formats() -> dict[str, str]:
    """The known formats: ``{name: description}``."""
    return {name: mod.description for name, mod in REGISTRY.items()}


def _known() -> str:
    return ", ".join(REGISTRY)


def sniff(path: Path) -> str:
    """The name of the format of ``path``; raises :class:`CaptureError` when none fits."""
    lines = head_lines(path)
    w = detect(lines)
    head = "\n".join(unwrap(ln, w) for ln in lines) if w else read_head(path)
    if not head.strip():
        return "ndjson"  # an empty capture: no frames, in any format
    best, score = None, 0
    for name, mod in REGISTRY.items():
        s = mod.sniff(head, path.name)
        if s > score:
            best, score = name, s
    if best is None:
        known = _not_a_capture(head)
        if known is not None:
            raise CaptureError(f"{path}: {known}")
        raise CaptureError(
            f"{path}: not a capture format mcp_notebook knows. Known formats: {_known()}. "
            "Pass format=NAME (or --format NAME) if you know what it is.")
    return best


def _not_a_capture(head: str) -> str | None:
    """What a file known not to be a capture is, and what to load instead (None: not
    one of them)."""
    text = head.lstrip()
    if text.startswith("[") and '"receivedAt"' in text[:4096] and '"params"' in text[:4096]:
        return ("the MCP Inspector's Logs export (the server's log messages, not the "
                "traffic): export the Protocol tab (or the Network tab) to load the session")
    return None


def read(path: Path, format: str = "auto", session: str | None = None,
         **options: Any) -> Iterator[Record]:
    """Yield the records of one capture file."""
    if not path.exists():
        raise CaptureError(f"{path}: no such file")
    if path.is_dir():
        raise CaptureError(f"{path}: is a folder; pass its files, or mn.load(folder)")
    name = sniff(path) if format == "auto" else format
    if name not in REGISTRY:
        raise CaptureError(f"unknown format {format!r}. Known formats: {_known()}, or 'auto'.")
    return REGISTRY[name].read(path, session=session, **options)
