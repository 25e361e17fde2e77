"""Teaching MCP's message rules on real traces: exercises that grade themselves.

:func:`exercise` plants a known fault in a bundled real trace and grades the learner's
answer ("which frames break which rule?"); :func:`cite` shows rules from the checker's
catalogue and :func:`show` frames as JSON; :func:`what_if` replays a trace with frames
changed; :func:`run_rule` tries a rule of your own; :func:`check_install` checks a
machine before a workshop; :func:`worksheets` writes each learner an exercise notebook.

Every learner gets their own plant (``learner="Ada"``); the learner's trace is blind (no
findings, no outcomes) until the exercise is graded. Two other kinds of exercise ask for
more than rule codes: :func:`classify` (a result, a tool error or a protocol error?) and
:func:`respond` (write the response the server should have sent, graded by the checker).

>>> import mcp_notebook as mn
>>> ex = mn.teach.exercise("answered-twice", learner="Ada")
>>> ex.check({0: "duplicate-response"}).correct
False
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..protocol.rules import rule
from . import faults
from ._records import what_if
from ._seed import seed_for
from .blind import BlindTrace, Hidden
from .custom import run_rule, with_rule
from .exercise import Exercise, Feedback
from .faults import ALIASES, FAULTS, Fault, plant
from .install import check_install
from .lookup import answer_to, find, request_of
from .pictures import SequenceDiagram, sequence
from .show import Cite, Frames, cite, show
from .tasks import Classify, Respond, classify, respond

__all__ = ["BASES", "FAULTS", "BlindTrace", "answer_to", "find", "request_of", "Cite", "Classify", "Exercise", "Fault", "Feedback",
           "Frames", "Hidden", "Respond", "SequenceDiagram", "check_install", "cite", "classify",
           "exercise", "exercises", "plant", "respond", "run_rule", "seed_for", "sequence",
           "show", "what_if", "with_rule", "worksheets"]

#: The bundled real traces exercises plant into (names of ``mn.datasets()``): clean sessions.
BASES = ("demo-stdio", "everything-stdio-basics", "filesystem-stdio", "memory-stdio",
         "everything-stdio-server-requests", "everything-stdio-progress-cancel")


def exercises() -> pd.DataFrame:
    """The faults an exercise can plant: name, the rule it is about, and the question."""
    return pd.DataFrame([{"name": f.name, "rule": f.rule, "severity": rule(f.rule).severity,
                          "question": f.question} for f in FAULTS.values()])


def _version(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=32)
def _bundled_base(path: str, version: tuple[int, int]) -> Any:
    """The bundled trace at ``path``, loaded once for the file's ``version`` (size and
    modification time), its tables and findings made once: every exercise of a worksheet
    or a room of learners plants in these six. Planting reads a base and never changes it
    (it edits copies of its records); the learner gets only the planted trace."""
    from .. import load

    return load(path)


@functools.lru_cache(maxsize=512)
def _bundled_sites(path: str, version: tuple[int, int], fault: str) -> int:
    """How many places the bundled trace at ``path`` offers for ``fault``. Counting them
    builds the trace's frames and pairs tables: for the six bases that was 0.1 s of the
    0.15 s an :func:`exercise` took."""
    return faults.sites(_bundled_base(path, version), fault)


def exercise(name: str, seed: int | None = None, trace: Any = None, *,
             learner: str | None = None) -> Exercise:
    """A new exercise: the fault ``name`` planted in a real trace.

    Parameters
    ----------
    name
        A fault of :func:`exercises` (e.g. ``"answered-twice"``).
    seed
        Picks the trace (among :data:`BASES`) and the place of the fault.
    learner
        A learner's name: the seed comes from it (:func:`seed_for`), so neighbours get
        different plants. Give ``seed`` or ``learner`` (neither: seed 0).
    trace
        Plant in this trace (a loaded trace or a path) instead of a bundled one.

    Raises
    ------
    KeyError
        No fault of that name.
    """
    name = ALIASES.get(name, name)
    if name not in FAULTS:
        close = difflib.get_close_matches(name, list(FAULTS), n=1)
        tip = f"; did you mean {close[0]!r}?" if close else ""
        raise KeyError(f"no exercise {name!r}{tip} (see mn.teach.exercises())")
    from .. import load, sample_path

    if seed is None:
        seed = seed_for(learner, name) if learner else 0
    if trace is not None:
        bases = [trace if hasattr(trace, "frames") else load(trace)]
        counts = [faults.sites(bases[0], name)]
    else:
        paths = []
        for stem in BASES:
            try:
                paths.append(sample_path(stem))
            except FileNotFoundError:
                continue
        found = [(str(p), _version(p)) for p in paths or [sample_path()]]
        bases = [_bundled_base(*f) for f in found]
        counts = [_bundled_sites(*f, name) for f in found]
    # every (trace, site) of every base is one option, and the seed picks one of them all:
    # neighbours with different names rarely share a plant
    options = [(b, i) for b, n in zip(bases, counts, strict=True) for i in range(n)]
    k = seed % max(len(options), 1)
    errors = []
    for base, first in options[k:] + options[:k]:
        try:
            planted, key = plant(base, name, seed, first=first)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        return Exercise(FAULTS[name], planted, key, seed)
    raise ValueError(f"cannot plant {name!r} here: {'; '.join(errors)}")


def worksheets(learners: Iterable[str], folder: str | Path,
               exercises: Sequence[str] | None = None) -> list[Path]:
    """Write one exercise notebook per learner into ``folder`` (``<name>.ipynb``).

    Every learner gets the same faults (all of :func:`exercises`, or the names given),
    each planted with a seed of their own, so neighbours cannot share answers; writing
    again for the same name gives the same sheet. Each notebook is checked with
    ``nbformat.validate`` before it is written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in worksheets(["Ada Lovelace"], d, ["call-never-returns"])]
    ['ada-lovelace.ipynb']
    """
    from ..notebook import worksheet, write

    if exercises is not None:
        exercises = [ALIASES.get(n, n) for n in exercises]  # the first edition's names too
    out = []
    for learner in learners:
        slug = re.sub(r"[^a-z0-9]+", "-", learner.lower()).strip("-") or "learner"
        out.append(write(worksheet(learner, exercises), Path(folder) / f"{slug}.ipynb"))
    return out
