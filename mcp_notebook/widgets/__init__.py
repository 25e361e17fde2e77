"""Jupyter views of a trace: timeline, inspector, explorer (thin widgets over pure functions)."""

from .timeline import Timeline, timeline

__all__ = ["Timeline", "timeline"]
