"""Per-learner seeds: one learner's plant of an exercise, stable for a name."""

from __future__ import annotations

__all__ = ["seed_for"]


def seed_for(learner: str, name: str) -> int:
    """The seed of one learner's exercise: stable for a name, different between names."""
    from ..notebook import learner_seed

    return learner_seed(f"{learner.strip().lower()}\n{name}")
