"""HAR 1.2 captures of MCP over HTTP: Streamable HTTP (2025-03-26 on) and HTTP+SSE (2024-11-05).

Every entry of an MCP endpoint gives records:

- a POST body is one client-to-server frame (``source`` = ``file#entry<N>``, N counts
  ``log.entries`` from 0);
- an ``application/json`` response is one server-to-client frame
  (``file#entry<N>/response``);
- a ``text/event-stream`` response (a POST's reply stream or a GET stream) gives one
  frame per SSE event with data (``file#entry<N>/event<M>``, M counts the event blocks of
  the body from 0); priming events (no data), keep-alive comments and retry hints make
  no row. An event whose type is not ``message`` is kept with ``extra["sse_event"]``
  set (the old transport's ``endpoint`` event is a ``log`` row that names the session);
- a GET or DELETE with no messages, a transport failure the server answered with a
  non-JSON body, and anything the proxy noted (``_proxyError``) are ``log`` rows.

``extra`` keeps the HTTP facts: ``status`` (on the request frame and on response
frames: a 202 is visible there), ``reply`` (a short non-JSON body such as the old
transport's ``Accepted``, kept on the POST it answers), ``event_id`` (the SSE ``id``),
``transport_error`` (the status, on bodies of 4xx/5xx replies), ``sse_incomplete`` (the
stream ended inside the event) and ``ts_estimated`` (see below). A body of an HTTP
error reply that is a JSON-RPC response to an id (the 2026-07-28 Streamable HTTP
answers a bad request with a JSON-RPC error and status 400 or 404) is paired like any
other answer, its status beside it; one that names no id (``"id": null``) answers no
request it can name and is an orphan, as on stdio.

A POST answered by an authorization challenge (401, or 403 with ``WWW-Authenticate``: the
MCP authorization spec's "authorization required" and "insufficient scope") carried no
message the server read: its body and the reply are ``log`` rows (``reason``: refused by
the server), so the request is not left unanswered, nor in flight when the client sends
it again once authorized. An endpoint of the same origin that is never sent JSON-RPC (an
OAuth client registration, say) is not MCP traffic: its entries are left out, named in
one ``log`` row, as every other entry that is not MCP traffic.

An event stream the HAR does not hold (no body and no stamped events: a browser's HAR
keeps none of a stream's) is a ``log`` row. Where a HAR lacks one, what the client POSTed
may answer a request made on such a stream (``extra["request_not_held"]``), and, where
its reply held no message, has its answer, if any, on one (``extra["answer_not_held"]``:
over the 2024-11-05 transport every answer is on the GET stream). The pairs keep such
requests unanswered and such responses unasked, as captured; ``unanswered-request`` and
``orphan-response`` do not report them.

Sessions: the ``Mcp-Session-Id`` header (request, else response); for the old transport
the ``sessionId`` / ``session_id`` query parameter of the endpoint URL given by the
``endpoint`` event; else the ``session`` argument or the file name. A POST of the
stateless revision (``MCP-Protocol-Version`` 2026-07-28 or later, no session id) is an
exchange of its own: its session is ``<name> entry <N>``, so that two clients (or two
runs of one) that number their requests alike are not taken for one client reusing ids;
the request's answer and the notifications of its reply stream are in its body.

Times: a request at ``startedDateTime``; a JSON reply at the entry's end; an SSE event
at its own arrival time when the HAR has one (``response.content._sseEvents[i].t``,
written by mcp-notebook's recording proxy). Without it, the events of a POST's reply
stream are placed from the entry's timings (the last at the entry's end, the others at
its first byte; ``extra["ts_estimated"]``), and the events of a GET stream, which may
arrive at any time while it is open, get no time. Records come out sorted by time
(stable), so with arrival times the events of a long GET stream fall between the POSTs
they interleave with; without them, such an event is placed causally and keeps no time:
a response right after the POST that asked; any other event in its stream's order, just
before the next response of the stream (after the last one where none follows; at the
stream's opening where no response is placed), and a server request before the POST
that answers it. A call's progress so stays between the call and its result.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

# the reader and its helpers live in ``_har_*`` modules: ``_har_load`` (the file into
# entries), ``_har_reader`` (entries into records), ``_har_session``, ``_har_unicode``,
# ``_har_order``, and the column path ``_har_columns``; the helper names callers and tests
# take from here stay importable from here
from ._har_order import _in_time_order as _in_time_order
from ._har_reader import _Reader
from ._har_session import STATELESS_FROM as STATELESS_FROM
from ._har_session import _session_from_url as _session_from_url
from ._har_session import _stateless as _stateless
from ._har_unicode import _escaped as _escaped
from ._spans import Blocks
from .base import Record

__all__ = ["name", "description", "sniff", "read"]

name = "har"
description = "HAR 1.2 of MCP over HTTP (Streamable HTTP and 2024-11-05 HTTP+SSE)"


def sniff(head: str, filename: str) -> int:
    text = head.lstrip()
    if text.startswith("{") and '"log"' in head[:4096] and '"entries"' in head:
        return 95 if filename.lower().endswith(".har") else 90
    return 30 if filename.lower().endswith(".har") else 0


def read(path: Path, session: str | None = None, **options: Any) -> Iterator[Record]:
    """Yield the records of a HAR file: entries in file order, each carrying the step
    (``arrange``) by which the table puts them in time order once it has classified them
    (:func:`mcp_notebook.table.settled`); for the table (``blocks()``), a usual HAR's
    records already in that order, its messages as spans of one buffer."""
    return Blocks(_Reader(path, session))  # records, and blocks() for the table


