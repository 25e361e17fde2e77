"""The vocabulary is declared once: the C header is generated from the enums, and the
tables' categories are the enums' labels."""

from __future__ import annotations

from pathlib import Path

import mcp_notebook as mn
from mcp_notebook.protocol import vocab

CSRC = Path(vocab.__file__).resolve().parents[1] / "engine" / "csrc"


def test_the_c_header_is_generated_from_the_enums():
    assert (CSRC / "vocab.h").read_text(encoding="utf-8") == vocab.c_header(), \
        "run `python setup.py build_ext --inplace` (it writes csrc/vocab.h)"


def test_the_c_code_declares_no_codes_of_its_own():
    """No hand-written enum of kinds, outcomes or findings is left in the C sources."""
    for path in CSRC.glob("*.[ch]"):
        if path.name == "vocab.h":
            continue
        text = path.read_text(encoding="utf-8")
        for name in ("K_REQUEST", "O_RESULT", "PF_ORPHAN_RESPONSE"):
            assert f"enum {{ {name}" not in text and f"    {name} =" not in text, path.name


def test_the_tables_categories_are_the_enums_labels():
    t = mn.load(mn.sample_path("demo-stdio"))
    assert tuple(t.frames["kind"].cat.categories) == vocab.KINDS
    assert tuple(t.frames["direction"].cat.categories) == vocab.DIRECTIONS
    assert tuple(t.pairs["outcome"].cat.categories) == vocab.OUTCOMES
    assert tuple(t.pairs["requester"].cat.categories) == vocab.DIRECTIONS


def test_every_pairing_finding_is_a_rule():
    assert set(vocab.FINDINGS) <= {r.code for r in mn.RULES}
