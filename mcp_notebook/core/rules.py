"""Moved to :mod:`mcp_notebook.protocol.rules` (kept: the tutorial imports it here)."""

from ..protocol.rules import *  # noqa: F403
from ..protocol.rules import __all__  # noqa: F401
