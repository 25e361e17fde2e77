"""The checks of the rule catalogue, one module per group of rules (each registers its
checks with :func:`mcp_notebook.engine.checks.check` when imported; all of them are
imported on the first check). A new rule is one module here: its
:class:`~mcp_notebook.protocol.rules.Rule` and its check (``@check(RULE)``), and one row of
the rule test table (``tests/protocol/test_rules.py``)."""
