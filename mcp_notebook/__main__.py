"""``python -m mcp_notebook``: the ``mcp-notebook`` command."""

from .cli import entry

entry()
