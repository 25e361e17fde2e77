"""``python -m mcp_notebook.cli``: the ``mcp-notebook`` command."""

import sys

from . import main

sys.exit(main())
