"""A blind trace: an exercise's trace with the checker's verdicts hidden until it is graded.

A learner reads the frames and the pairing (which request each frame answers), decodes
messages and draws pictures, but the findings (``violations``), the outcomes of the pairs
and the library's own reading of ``isError`` stay hidden: the exercise asks for exactly
those, so they have to come from understanding the frames. Once the exercise is graded
correct (or its solution is opened), the same object shows everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

__all__ = ["BlindTrace", "Hidden", "HIDDEN_FRAME_COLUMNS", "HIDDEN_PAIR_COLUMNS"]

#: columns that hold the checker's judgement rather than what was on the wire
HIDDEN_FRAME_COLUMNS = ("is_tool_error",)
HIDDEN_PAIR_COLUMNS = ("outcome", "cancel_seq")


class Hidden(AttributeError):
    """Asked a blind trace for what the exercise asks of the learner."""


class BlindTrace:
    """The frames of an exercise without the checker's verdicts (see the module docstring)."""

    def __init__(self, trace: Any, open_: Callable[[], bool], name: str) -> None:
        self._full = trace
        self._open = open_
        self._name = name

    def _refuse(self, what: str) -> Hidden:
        return Hidden(
            f"{what} is hidden in an exercise: it is what the exercise asks you to find. "
            "Read the frames (`ex.trace.frames`, `mn.teach.show(ex.trace, seq)`, "
            "`mn.teach.sequence(ex.trace)`), answer with `ex.check(...)`, and it opens "
            "once the exercise is graded correct.")

    # -- what is always there ------------------------------------------------------------------
    @property
    def frames(self) -> pd.DataFrame:
        f = self._full.frames
        return f if self._open() else f.drop(columns=list(HIDDEN_FRAME_COLUMNS))

    @property
    def pairs(self) -> pd.DataFrame:
        p = self._full.pairs
        return p if self._open() else p.drop(columns=list(HIDDEN_PAIR_COLUMNS))

    @property
    def paths(self) -> list[str]:
        return list(self._full.paths)

    def message(self, seq: int) -> Any:
        return self._full.message(seq)

    def sessions(self) -> list[Any]:
        return self._full.sessions()

    def __len__(self) -> int:
        return len(self._full)

    def __repr__(self) -> str:
        state = "graded: everything shown" if self._open() else "blind until graded"
        return (f"<exercise trace {self._name!r}: {len(self)} frames from "
                f"{', '.join(self.paths)} ({state})>")

    # -- what opens when graded ----------------------------------------------------------------
    @property
    def violations(self) -> pd.DataFrame:
        if not self._open():
            raise self._refuse("The checker's findings (`violations`)")
        return self._full.violations

    def summary(self) -> dict[str, Any]:
        if not self._open():
            raise self._refuse("The summary (it counts findings and outcomes)")
        return dict(self._full.summary())

    def latency_by_method(self) -> pd.DataFrame:
        if not self._open():
            raise self._refuse("`latency_by_method` (it counts errors and tool errors)")
        return self._full.latency_by_method()

    @property
    def full(self) -> Any:
        """The trace itself, checker and all (once graded)."""
        if not self._open():
            raise self._refuse("The full trace")
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if not self._open():
            raise self._refuse(f"`{name}`")
        return getattr(self._full, name)


def unblind(trace: Any) -> Any:
    """The trace behind a blind one, for the library's own use (graders, pictures)."""
    return trace._full if isinstance(trace, BlindTrace) else trace
