"""Per-learner seeds: one learner's plant of an exercise, stable for a name."""

from __future__ import annotations

import hashlib

__all__ = ["learner_seed", "seed_for"]


def learner_seed(learner: str) -> int:
    """A stable seed per learner name (the same sheet every time it is written).

    Here, not in :mod:`mcp_notebook.notebook` (which re-exports it): that module imports
    nbformat, hence jsonschema, whose format checkers build their grammars at import (about
    1.3 s of CPU), and an exercise with ``learner=`` in a fresh kernel needs only a hash."""
    return int.from_bytes(hashlib.sha256(learner.encode("utf-8")).digest()[:4], "big")


def seed_for(learner: str, name: str) -> int:
    """The seed of one learner's exercise: stable for a name, different between names."""
    return learner_seed(f"{learner.strip().lower()}\n{name}")
