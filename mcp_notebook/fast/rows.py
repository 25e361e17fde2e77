"""Row values of one part of a capture, as the fast loader gathers them.

Per-row values that most rows have (kind, id, id key, method, line) are plain lists;
values that few rows have (error code, reason, flags, progress token, ...) are kept by
row number. :meth:`Rows.add_columns` appends rows that the reference path built (a
:class:`~mcp_notebook.table.Columns`), so that anything unusual is decided by exactly the
code the reference loader runs.
"""

from __future__ import annotations

from typing import Any

from ..table import Columns

__all__ = ["Rows", "KINDS", "KIND_CODE", "DIR_CODE"]

KINDS = ("request", "notification", "result", "error", "invalid", "stderr", "log")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
DIR_CODE: dict[Any, int] = {"c2s": 0, "s2c": 1, None: -1}

#: sparse per-row values, by name
SPARSE = ("error_code", "error_message", "is_tool_error", "batch", "reason", "ref", "progress",
          "version", "local_time")


class Rows:
    """The rows of one part of a capture (a file, or a byte range of one)."""

    def __init__(self, per_row_context: bool) -> None:
        self.kind: list[int] = []
        self.id: list[object] = []
        self.id_key: list[str | None] = []
        self.method: list[str | None] = []
        self.line: list[int] = []  # line index (0-based, within the part) of each row
        self.size: list[int] = []  # filled for tap rows (the size of raw, not of the line)
        # per-row context, for formats that carry it on every line (tap)
        self.context = per_row_context
        self.ts: list[float | None] = []
        self.session: list[object] = []
        self.direction: list[int] = []
        self.stream: list[str] = []
        self.tap_raw: list[bool] = []  # raw is the tap record's "raw" member (else the line)
        # sparse
        self.sparse: dict[str, dict[int, Any]] = {name: {} for name in SPARSE}
        self.flags: list[tuple[int, tuple[str, ...]]] = []
        self.extra: dict[int, dict[str, Any]] = {}
        self.raw_over: dict[int, str] = {}  # raw text that is neither the line nor its tap raw
        self.source_over: dict[int, str] = {}
        self.blank = 0
        self.lines = 0  # lines seen (blank ones included)

    def __len__(self) -> int:
        return len(self.kind)

    def add_columns(self, c: Columns, line: int, source: str, raw_mode: str = "line",
                    line_text: str | None = None) -> None:
        """Append the rows of ``c`` (built by the reference path) as rows of ``line``.

        ``raw_mode`` says where the lazy raw column will find the text: ``"line"``,
        ``"tap"`` (the record's ``raw`` member), or ``"keep"`` (keep ``c.raw`` here).
        With ``"auto"`` the text is compared with ``line_text`` to pick line or keep.
        ``source`` is the label the row gets unless the reference gave another.
        """
        self.blank += c.blank_lines
        base = len(self.kind)
        sp = self.sparse
        for i in range(len(c)):
            r = base + i
            self.kind.append(KINDS.index(c.kind[i]))
            self.id.append(c.id[i])
            self.id_key.append(c.id_key[i])
            self.method.append(c.method[i])
            self.line.append(line)
            self.size.append(c.size[i])
            if self.context:
                self.ts.append(c.ts[i])
                self.session.append(c.session[i])
                self.direction.append(DIR_CODE.get(c.direction[i], -1))
                self.stream.append(c.stream[i])
            for name in SPARSE:
                v = getattr(c, name)[i]
                if v is not None and v is not False:
                    sp[name][r] = v
            if c.flags[i]:
                self.flags.append((r, c.flags[i]))
            if i in c.extra:
                self.extra[r] = c.extra[i]
            mode = raw_mode
            if mode == "auto":
                mode = "line" if c.raw[i] == line_text else "keep"
            if self.context:
                self.tap_raw.append(mode == "tap")
            if mode == "keep":
                self.raw_over[r] = c.raw[i]
            if c.source[i] != source:
                self.source_over[r] = c.source[i]
