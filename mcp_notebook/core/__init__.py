"""Moved (issue 16): the vocabulary, envelope, versions and rules are in
:mod:`mcp_notebook.protocol`, the walks and checks in :mod:`mcp_notebook.engine`. Only the
two paths the tutorial notebooks import are kept here (``core.rules``, ``core.versions``)."""
