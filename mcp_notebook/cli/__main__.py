"""``python -m mcp_notebook.cli``: the ``mcp-notebook`` command."""

from . import entry

entry()
