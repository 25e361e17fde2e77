"""Tests of mcp_notebook.engine and the walks it runs."""
