"""The answers of every exercise, per learner name or seed: for the instructor only.

Usage::

    python notebooks/instructor/answers.py "Ada Lovelace" "Grace Hopper"   # your room
    python notebooks/instructor/answers.py --write                         # answers.md

Each exercise is planted from the learner's name (``learner=``, what the notebooks use)
or from a seed; this prints, for each, the frames and rule codes a right answer names
(consequences the checker also marks are in brackets: naming them is optional), the
classification of the four answers of ``classify``, and the case of ``respond``.
``--write`` rewrites ``answers.md`` beside this file for the name the notebooks use by
default and for seeds 0 to 3; a test checks that it is current.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_notebook as mn
from mcp_notebook.teach import FAULTS

HERE = Path(__file__).resolve().parent
DEFAULT_LEARNER = "your name"  # what LEARNER says in the notebooks as shipped


def _fault(ex) -> str:
    parts = []
    for seq, rules in sorted(ex._key.items()):
        for code, required in sorted(rules.items()):
            parts.append(f"{seq}: `{code}`" if required else f"[{seq}: `{code}`]")
    return ", ".join(parts)


def rows(learner: str | None = None, seed: int | None = None) -> list[tuple[str, str, str]]:
    """``(exercise, trace, answer)`` for one learner name or one seed."""
    out = []
    for name in FAULTS:
        ex = mn.teach.exercise(name, seed=seed, learner=learner)
        out.append((name, Path(ex.trace.paths[0]).name, _fault(ex)))
    c = mn.teach.classify(learner, seed=seed)
    out.append(("classify", Path(c.trace.paths[0]).name,
                ", ".join(f"{s}: {k}" for s, k in sorted(c._key.items()))))
    r = mn.teach.respond(learner, seed=seed)
    code = f" {r.case.code}" if r.case.code is not None else ""
    out.append(("respond", r.case.trace + " (its answer removed)",
                f"request {r.request_seq}: a {r.case.kind}{code} ({r.case.name})"))
    return out


def table(title: str, body: list[tuple[str, str, str]]) -> str:
    lines = [f"## {title}", "", "| exercise | trace | answer |", "|---|---|---|"]
    lines += [f"| `{a}` | `{b}` | {c} |" for a, b, c in body]
    return "\n".join(lines) + "\n"


def document() -> str:
    head = ("# Answers per seed (instructors only)\n\n"
            "Written by `python notebooks/instructor/answers.py --write`; do not hand it out. "
            "Learners who kept `LEARNER = \"your name\"` get the first table; for the names "
            "in your room run `python notebooks/instructor/answers.py NAME ...`. Brackets "
            "mark consequences the checker also reports (optional in an answer). The "
            "answers follow the bundled traces: re-run after `make data`.\n\n")
    parts = [table(f"Learner name {DEFAULT_LEARNER!r}", rows(DEFAULT_LEARNER))]
    parts += [table(f"Seed {s}", rows(seed=s)) for s in range(4)]
    return head + "\n".join(parts)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        (HERE / "answers.md").write_text(document(), encoding="utf-8")
        return 0
    for name in argv or [DEFAULT_LEARNER]:
        print(table(f"Learner {name!r}", rows(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
