"""``python -m mcp_notebook``: the ``mcp-notebook`` command."""

import sys

from .cli import main

sys.exit(main())
