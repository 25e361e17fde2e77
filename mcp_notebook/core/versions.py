"""Moved to :mod:`mcp_notebook.protocol.versions` (kept: the tutorial imports it here)."""

import sys

from ..protocol import versions as _versions

sys.modules[__name__] = _versions
