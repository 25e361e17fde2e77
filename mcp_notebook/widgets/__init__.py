"""Jupyter views of a trace (timeline, inspector and explorer) and of a collection (fleet).

Thin widgets over pure functions (``aggregate``, ``frametable``, ``filters``, ``render``,
``links``), so the logic is testable without a kernel or a browser. Everything shown
from a trace is escaped or set as text.
"""

from .explorer import Explorer, explore
from .filters import FilterError, apply_filter
from .fleet import FleetView, fleet
from .frametable import frame_table
from .inspector import Inspector, inspect
from .sequence import Sequence, sequence
from .timeline import Timeline, timeline

__all__ = ["Explorer", "FilterError", "FleetView", "Inspector", "Sequence", "Timeline", "apply_filter",
           "explore", "fleet", "frame_table", "inspect", "sequence", "timeline"]
