"""The conversation rules and their checks, family by family (what the catalogue imports:
the catalogue registers :data:`RULES` from here, so this module imports no checker)."""

from __future__ import annotations

from collections.abc import Callable

from ..protocol.rules import Rule
from . import capabilities, contracts, errors, payload, rev2026, schemas
from ._view import Hit, View

__all__ = ["RULES", "CODES", "CHECKS"]

FAMILIES = (schemas, capabilities, contracts, errors, payload, rev2026)

#: every conversation rule, family by family
RULES: tuple[Rule, ...] = tuple(r for fam in FAMILIES for r in fam.RULES)
CODES = frozenset(r.code for r in RULES)
CHECKS: dict[str, Callable[[View], list[Hit]]] = {
    code: fn for fam in FAMILIES for code, fn in fam.CHECKS.items()}
