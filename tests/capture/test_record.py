"""``record``'s own option reader (:func:`mcp_notebook.capture.record.parse`) against argparse.

The plain form is read without argparse (argparse and the re it imports cost the tap's
start several milliseconds); whatever it accepts must parse exactly as argparse parses it,
and whatever is unusual must be left to argparse, so that help and errors stay its own.
"""

from __future__ import annotations

import argparse

import pytest

from mcp_notebook.capture import record


def _argparse(argv: list[str]) -> dict:
    p = argparse.ArgumentParser(prog="mcp-notebook record")
    record.add_arguments(p)
    return vars(p.parse_args(argv))


PLAIN = [  # read without argparse
    ["--", "srv"],
    ["--out", "f.jsonl", "--", "srv", "a", "-b", "--c"],
    ["-o", "f.jsonl", "-s", "name", "--", "npx", "-y", "server"],
    ["--out=f.jsonl", "--session=a=b", "--grace=2.5", "--max-frame=4096", "--", "srv"],
    ["--grace", "0", "--max-frame", "1", "--", "srv"],
    ["--stall", "0.5", "--", "srv"], ["--stall=2", "--grace", "1", "--", "srv"],
    ["--grace", "1e3", "--", "srv", "--"],
    ["--grace", " 7 ", "--", "srv"],
    ["--out", "", "--session", "", "--", "srv"],
    ["--out", "a", "--out", "b", "--", "srv"],  # the last one wins, as in argparse
    ["--session", "with space", "--", "srv", "--out", "x"],
    ["--", "srv", "--help"],
]

UNUSUAL = [  # left to argparse
    [], ["--"], ["srv"], ["srv", "--out", "x"], ["-h"], ["--help"], ["--", "-x"],
    ["--", "--", "srv"], ["--out"], ["--out", "--", "srv"], ["--ou", "f", "--", "srv"],
    ["--grace", "abc", "--", "srv"], ["--grace", "-1", "--", "srv"],
    ["--max-frame", "1.5", "--", "srv"], ["--stall", "soon", "--", "srv"], ["-o=f", "--", "srv"], ["-of", "--", "srv"],
    ["--bogus", "--", "srv"], ["--out", "f"], ["--out", "-", "--", "srv"],
]


@pytest.mark.parametrize("argv", PLAIN)
def test_the_plain_form_parses_as_argparse_does(argv):
    args = record.parse(argv)
    assert args is not None
    assert vars(args) == _argparse(argv)


@pytest.mark.parametrize("argv", UNUSUAL)
def test_anything_else_is_left_to_argparse(argv):
    assert record.parse(argv) is None


def test_the_reader_knows_every_option_of_the_parser():
    """An option added to ``record.add_arguments`` must be added to the reader too (or the
    plain form would hand it on as unknown, and lose the fast start)."""
    p = argparse.ArgumentParser()
    record.add_arguments(p)
    flags = {s for a in p._actions for s in a.option_strings} - {"-h", "--help"}
    assert flags == set(record.OPTIONS)
    defaults = {a.dest: a.default for a in p._actions if a.option_strings and a.dest != "help"}
    assert vars(record.parse(["--", "srv"])) == {**defaults, "server_command": ["--", "srv"]}
