"""An exercise: a planted trace, a question, and a grader with feedback that teaches.

The learner's ``ex.trace`` is blind (:mod:`.blind`): no findings, no outcomes, until the
exercise is graded correct. Feedback says what is right, what is wrong and how much is
missing, and points at the spec sentence of the rule; naming the frames without the rules
is half right (``score`` 0.5), never correct. Hints narrow down with each attempt, and no
check ever names a frame the learner has not named. ``solution()`` opens only after two
graded attempts; instructors have every learner's answers in the instructor guide.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..protocol.rules import RULES, rule
from .blind import BlindTrace
from .faults import Fault, found

__all__ = ["Exercise", "Feedback", "Hint"]

_CODES = sorted(r.code for r in RULES)


@dataclass
class Feedback:
    """The result of a check: ``correct``, and lines of feedback (text or HTML)."""

    correct: bool
    lines: list[str]
    score: float = 0.0  # 1 correct, 0.5 the right frames without the rules, else 0

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.correct else "#9a6700"
        items = "".join(f"<li>{_md(line)}</li>" for line in self.lines[1:])
        return (f"<div class='mn-feedback' style='border-left:4px solid {color};"
                f"padding:2px 10px'><b>{_md(self.lines[0])}</b><ul>{items}</ul></div>")


class Hint(str):
    """A hint: a plain string that shows as text, not as a quoted repr, in a notebook."""

    def __repr__(self) -> str:
        return f"Hint: {self}"

    def _repr_html_(self) -> str:
        return (f"<div class='mn-hint' style='border-left:4px solid #8250df;padding:2px 10px'>"
                f"<b>Hint:</b> {_md(self)}</div>")


def _md(text: str) -> str:
    """Escape, then show `backticks` as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


class Exercise:
    """A planted fault to find: ``trace`` and ``question``; ``check``, ``hint``, ``solution``."""

    def __init__(self, fault: Fault, trace: Any, key: dict[int, dict[str, bool]],
                 seed: int) -> None:
        self.fault = fault
        self._planted = trace
        self.solved = False
        self.trace = BlindTrace(trace, lambda: self.solved, fault.name)
        self.seed = seed
        self.attempts = 0
        self._key = key
        self._hints = 0

    @property
    def name(self) -> str:
        """The fault's name (a row of ``mn.teach.exercises()``)."""
        return self.fault.name

    @property
    def question(self) -> str:
        """What to find, in words."""
        return self.fault.question

    def __repr__(self) -> str:
        return f"Exercise {self.name!r} (seed {self.seed}): {self.question}"

    def _repr_html_(self) -> str:
        return (f"<div class='mn-exercise' style='border-left:4px solid #8250df;"
                f"padding:2px 10px'><b>Exercise: {html.escape(self.name)}</b> "
                f"<small>(seed {self.seed}, {len(self.trace)} frames in "
                f"<code>ex.trace</code>)</small><p>{_md(self.question)}</p><small>Answer with "
                "<code>ex.check({seq: 'rule-code'})</code>; <code>ex.hint()</code> when stuck; "
                "the codes are in <code>mn.rules()</code>.</small></div>")

    # -- hints ---------------------------------------------------------------------------------
    def hint(self) -> Hint:
        """The next hint: general first, then narrower; the last one narrows to a few frames."""
        self._hints += 1
        return Hint(self._hint(self._hints - 1))

    def _hint(self, level: int) -> str:
        seqs = sorted(self._key)
        lo, hi = max(seqs[0] - 3, 0), min(seqs[-1] + 3, len(self.trace) - 1)
        window = (f"Look between seq {lo} and seq {hi}. `ex.solution()` shows the answer "
                  "when you want it.")
        hints = [*self.fault.hints, window.replace(
            "`ex.solution()` shows", "after two tries `ex.solution()` shows")]
        return hints[min(level, len(hints) - 1)]

    # -- grading -------------------------------------------------------------------------------
    def check(self, answer: Mapping[int, str | Iterable[str]] | None = None, *,
              seqs: Iterable[int] | None = None, rule: str | None = None) -> Feedback:
        """Grade an answer.

        Parameters
        ----------
        answer
            ``{seq: "rule-code"}`` (or ``{seq: ["code", ...]}``): which frames break which
            rules.
        seqs, rule
            The other form: these frames break ``rule``. Without ``rule``, only the frames
            are graded: the right frames are half right (``score`` 0.5), not correct.
        """
        named: dict[int, set[str]] = {}
        for s, codes in dict(answer or {}).items():
            named.setdefault(int(s), set()).update({codes} if isinstance(codes, str) else codes)
        for s in seqs or ():
            named.setdefault(int(s), set()).update({rule} if rule else set())
        if not named:
            return Feedback(False, ["Nothing to grade yet.",
                                    "Answer with `ex.check({seq: 'rule-code'})`."])
        self.attempts += 1
        feedback = self._grade(named, frames_only=not answer and rule is None)
        self.solved = self.solved or feedback.correct
        return feedback

    def _grade(self, named: dict[int, set[str]], frames_only: bool) -> Feedback:
        key = self._key
        required = {(s, r) for s, rs in key.items() for r, req in rs.items() if req}
        original = found(self._planted) - {(s, r) for s, rs in key.items() for r in rs}
        right: list[str] = []
        wrong: list[str] = []
        notes: list[str] = []
        for s in sorted(named):
            if s not in key:
                flagged = sorted(r for q, r in original if q == s)
                if flagged:
                    notes.append(f"seq {s}: the checker flags it for `{'`, `'.join(flagged)}`, "
                                 "but that is in the original capture, not the planted fault.")
                else:
                    wrong.append(f"seq {s}: this frame is fine; it breaks no planted rule.")
            elif frames_only:
                right.append(f"seq {s}: yes, this frame is part of the fault.")
            else:
                for c in sorted(named[s]):
                    right_or_wrong = self._one(s, c)
                    (right if right_or_wrong[0] else wrong).append(right_or_wrong[1])
        if frames_only:
            missing = {s for s, _ in required} - set(named)
            correct = not wrong and not missing
        else:
            missing = {s for s, _ in required if s not in named}
            correct = not wrong and not missing and all(r in named.get(s, ()) for s, r in required)
        if correct and frames_only:
            return Feedback(False, [
                "Half right: these are the frames. Now say which rule each one breaks: "
                "`ex.check({seq: 'rule-code'})` (the codes are in `mn.rules()`).",
                *right, *notes], 0.5)
        if correct:
            lines = ["Correct! Every planted finding is named.", *right, *notes]
            for s, rs in sorted(key.items()):
                for r, req in rs.items():
                    if not req and r not in named.get(s, set()):
                        lines.append(f"The checker also marks a consequence: seq {s} `{r}` "
                                     f"({rule(r).title.lower()}).")
            return Feedback(True, lines, 1.0)
        lines = [f"Not yet (attempt {self.attempts}).", *right, *wrong, *notes]
        if missing:
            n = len(missing)
            lines.append(f"{n} planted frame{'s are' if n > 1 else ' is'} still missing. "
                         f"The rule to look for: {rule(self.fault.rule).cite}")
        lines.append("Hint: " + self._hint(self.attempts - 1))
        return Feedback(False, lines)

    def _one(self, seq: int, code: str) -> tuple[bool, str]:
        if code in self._key[seq]:
            return True, f"seq {seq}: `{code}` ✓"
        if code not in _CODES:
            close = difflib.get_close_matches(code, _CODES, n=1)
            tip = f" Did you mean `{close[0]}`?" if close else ""
            return False, f"seq {seq}: `{code}` is not a rule code (see `mn.rules()`).{tip}"
        spec = " / ".join(rule(r).cite for r in self._key[seq])
        return False, (f"seq {seq}: right frame, but it does not break `{code}`. "
                       f"The sentence it breaks: {spec}")

    def solution(self) -> pd.DataFrame | Hint:
        """The answer: the planted findings as the checker reports them (``required`` column).

        Only after two graded attempts (before that, a hint); it opens ``ex.trace``.
        """
        if self.attempts < 2 and not self.solved:
            return Hint(f"Try first: `ex.solution()` opens after two graded attempts "
                        f"({self.attempts} so far). `ex.hint()` narrows it down.")
        self.solved = True
        v = self._planted.violations
        ours = {(s, r) for s, rs in self._key.items() for r in rs}
        out = v[[(int(s), r) in ours for s, r in zip(v["seq"], v["rule"], strict=True)]].copy()
        out.insert(2, "required", [self._key[int(s)][r]
                                   for s, r in zip(out["seq"], out["rule"], strict=True)])
        return out.reset_index(drop=True)
