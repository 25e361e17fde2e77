"""The boundary view: one row per operation, what crossed the server boundary, no payload.

A row is a request with its response (or an orphan or duplicate response, as the pairs
have them), or a notification. It keeps what a dashboard of tool usage, durations, errors
and sessions needs — the method, the tool, prompt or resource it names, timing, outcome,
error code and type, sizes, and the versions and peers agreed at ``initialize`` — and none
of the payload text: no arguments, no results, no error messages.

>>> import mcp_notebook as mn
>>> b = mn.load(mn.sample_path("everything-stdio-basics")).boundary()
>>> b.loc[b["method"] == "tools/call", "name"].iloc[0]
'echo'

The package's parts: :mod:`.view` builds the frame (a chunk of operations at a time),
:mod:`.links` finds the request each progress or cancel names, :mod:`.files` writes and
reads boundary files.
"""

from __future__ import annotations

from ..readers.boundary_table import BOUNDARY_COLUMNS, ERROR_TYPES, normalise, read_boundary
from .files import stream_boundary, trace_from_boundary, write_boundary
from .view import boundary_frame, iter_boundary, latency_table

__all__ = ["BOUNDARY_COLUMNS", "ERROR_TYPES", "boundary_frame", "iter_boundary",
           "write_boundary", "stream_boundary",
           "read_boundary", "normalise", "latency_table", "trace_from_boundary"]
