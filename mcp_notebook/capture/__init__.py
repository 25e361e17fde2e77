"""Capture tools: produce capture files from live MCP traffic.

- :mod:`~mcp_notebook.capture.tap` -- ``mcp-notebook record``: a byte-exact stdio tap
  writing tap JSONL (standard library only); :mod:`~mcp_notebook.capture.record` reads its
  options and starts the server (:mod:`~mcp_notebook.capture.spawn`) before the relays load;
- :mod:`~mcp_notebook.capture.proxy` -- ``mcp-notebook proxy``: a recording reverse
  proxy for Streamable HTTP and HTTP+SSE writing HAR 1.2 (needs the ``capture`` extra);
- :mod:`~mcp_notebook.capture.cli` -- the two sub-commands for the ``mcp-notebook`` CLI.

Importing this package imports nothing heavy.
"""
