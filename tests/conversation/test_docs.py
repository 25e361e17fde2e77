"""docs/conversation.md is generated from the package and kept current."""

from pathlib import Path

from mcp_notebook.conversation import RULES
from mcp_notebook.conversation.capabilities import TABLE
from mcp_notebook.conversation.docs import render_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conversation.md"


def test_docs_conversation_md_is_current():
    assert DOCS.read_text(encoding="utf-8") == render_markdown(), "run `make docs`"


def test_every_rule_and_capability_row_is_on_the_page():
    page = render_markdown()
    assert all(f"| `{r.code}` |" in page for r in RULES)
    assert all(n.spec in page for n in TABLE)
