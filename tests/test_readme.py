"""The README's first example runs, and prints what the README says it prints."""

import doctest
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_example(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has no python example"
    monkeypatch.chdir(ROOT)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(blocks[0], {}, "README.md", "README.md", 0)
    assert test.examples, "the README example has no doctest lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, "README example output differs (see above)"


def test_readme_names_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text[: text.index("## A first look")]
    assert "make lab" in head and "make test" in head
    assert os.path.exists(ROOT / ".ci" / "run")
