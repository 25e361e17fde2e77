"""Tests of mcp_notebook.protocol."""
